package sheet

import (
	"archive/zip"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Comment is a comment on a cell of the worksheet read (a note, or a
// threaded comment): the cell it is on ("B3") and its text.
type Comment struct {
	Cell string
	Text string
}

// RowComments returns the comments on cells of row n (counted as a
// spreadsheet counts it) of the worksheet read, notes first, then
// threaded comments, each in its part's order; nil on a nil w. The
// campaign reads them for a person's request not to be called.
func (w *Workbook) RowComments(n int) []Comment {
	if w == nil {
		return nil
	}
	return w.comments[n]
}

// HasComments reports whether the worksheet read has a comment on any
// cell; false on a nil w.
func (w *Workbook) HasComments() bool { return w != nil && len(w.comments) > 0 }

// addComment keeps a comment on cell ref. Every one is kept, however
// many a row has: the one that asks not to be called may come last.
func (w *Workbook) addComment(ref, text string) {
	_, row, err := excelize.CellNameToCoordinates(ref)
	if err != nil {
		return
	}
	if w.comments == nil {
		w.comments = map[int][]Comment{}
	}
	w.comments[row] = append(w.comments[row], Comment{Cell: strings.ToUpper(ref), Text: text})
}

// Relationship types of a worksheet's comments parts: notes (legacy
// comments, transitional or strict) and threaded comments.
const (
	relComments         = "/comments"
	relThreadedComments = "/threadedComment"
)

// readComments adds to facts the comments of the worksheet at part of
// the workbook wb, whose archive z is: the parts its relationships name
// as its comments (notes, and threaded comments, which Excel mirrors
// as notes too). A worksheet with no relationships part has none. A
// comments part named and missing, or that cannot be read, is an error:
// a comment may ask not to call the row's person.
func readComments(wb *excelize.File, z *zip.Reader, part string, facts *Workbook) error {
	relsName := path.Dir(part) + "/_rels/" + path.Base(part) + ".rels"
	if _, ok := wb.Pkg.Load(relsName); !ok {
		return nil
	}
	rels, err := partRels(wb, relsName)
	if err != nil {
		return err
	}
	var threaded []string
	for _, r := range rels {
		var legacy bool
		switch {
		case strings.HasSuffix(r.Type, relComments):
			legacy = true
		case strings.HasSuffix(r.Type, relThreadedComments):
		default:
			continue
		}
		target := strings.ReplaceAll(r.Target, `\`, "/")
		if strings.HasPrefix(target, "/") {
			target = strings.TrimPrefix(path.Clean(target), "/")
		} else {
			target = strings.TrimPrefix(path.Clean(path.Dir(part)+"/"+target), "/")
		}
		if !legacy {
			threaded = append(threaded, target)
			continue
		}
		if err := readCommentsPart(z, target, "comment", facts); err != nil {
			return err
		}
	}
	for _, target := range threaded {
		if err := readCommentsPart(z, target, "threadedComment", facts); err != nil {
			return err
		}
	}
	return nil
}

// readCommentsPart adds to facts the comments of the comments part
// name of z, whose elements of a comment are named elem (comment, or
// threadedComment) and hold the comment's text in a text element: rich
// text in a note, plain in a threaded comment.
func readCommentsPart(z *zip.Reader, name, elem string, facts *Workbook) error {
	rc, err := openPart(z, name, false)
	if err == nil && rc == nil {
		err = fmt.Errorf("the workbook has no %s, which the worksheet names as its comments", name)
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	x := newXMLScanner(rc)
	for {
		tok, err := x.next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading the comments %s: %v", name, err)
		}
		if tok != tokStart || string(x.name) != elem {
			continue
		}
		ref, _ := x.attr("ref")
		var text string
		err = x.children(func(child string) error {
			if child != "text" {
				return nil
			}
			var err error
			if elem == "comment" {
				text, err = x.richText()
			} else {
				text, err = x.text()
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("reading the comments %s: %v", name, err)
		}
		if strings.TrimSpace(text) != "" {
			facts.addComment(ref, text)
		}
	}
}
