package sheet

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/xuri/excelize/v2"
)

// commentsWorkbook writes a workbook of a header and three rows, with
// the comments excelize writes (notes, as Excel writes them) on cells.
func commentsWorkbook(t *testing.T, comments ...excelize.Comment) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "leads.xlsx")
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{{"Name", "Phone"}, {"Ada", "+14155550100"}, {"Ben", "+14155550101"}, {"Cy", "+14155550102"}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range comments {
		if err := f.AddComment("Sheet1", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// readWorkbookFacts reads the workbook at path to its end and returns its
// facts.
func readWorkbookFacts(t *testing.T, path string, o Options) *Workbook {
	t.Helper()
	r, err := OpenWith(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	return r.Workbook()
}

// TestWorkbookComments: the comments on a worksheet's cells are told by
// row: the notes excelize writes as Excel does, and, in parts built by
// hand, a note of rich text and a threaded comment, found through the
// worksheet's relationships by an absolute and a relative target; a
// workbook read again from the text a Workbooks kept tells the same;
// a comments part the worksheet names and the workbook lacks refuses the
// sheet.
func TestWorkbookComments(t *testing.T) {
	t.Parallel()
	path := commentsWorkbook(t,
		excelize.Comment{Cell: "B3", Author: "Sam", Paragraph: []excelize.RichTextRun{{Text: "DO NOT CALL - asked on 3/1, email only"}}},
		excelize.Comment{Cell: "A1", Author: "Sam", Paragraph: []excelize.RichTextRun{{Text: "the header"}}})
	wbs := &Workbooks{}
	for _, o := range []Options{{}, {Workbooks: wbs}, {Workbooks: wbs}} {
		wb := readWorkbookFacts(t, path, o)
		if !wb.HasComments() {
			t.Fatal("no comments")
		}
		got := wb.RowComments(3)
		if len(got) != 1 || got[0].Cell != "B3" || !slices.Contains([]string{"DO NOT CALL - asked on 3/1, email only", "Sam:DO NOT CALL - asked on 3/1, email only"}, got[0].Text) {
			t.Errorf("row 3 comments %q", got)
		}
		if got := wb.RowComments(2); got != nil {
			t.Errorf("row 2 comments %q", got)
		}
		if got := wb.RowComments(1); len(got) != 1 {
			t.Errorf("row 1 comments %q", got)
		}
	}

	// A row of many comments keeps every one: the one that asks not to
	// be called may be the last.
	var many []excelize.Comment
	for c := 'A'; c <= 'J'; c++ {
		text := "checked field " + string(c)
		if c == 'J' {
			text = "DO NOT CALL - asked on 3/1"
		}
		many = append(many, excelize.Comment{Cell: string(c) + "5", Author: "Sam", Paragraph: []excelize.RichTextRun{{Text: text}}})
	}
	if got := readWorkbookFacts(t, commentsWorkbook(t, many...), Options{}).RowComments(5); len(got) != 10 || got[9].Cell != "J5" {
		t.Errorf("a row of ten comments keeps %d: %q", len(got), got)
	}

	plain := commentsWorkbook(t)
	if wb := readWorkbookFacts(t, plain, Options{}); wb.HasComments() {
		t.Errorf("comments in a workbook with none: %v", wb.comments)
	}
	rels := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments" Target="/xl/comments7.xml"/>` +
		`<Relationship Id="rId2" Type="http://schemas.microsoft.com/office/2017/10/relationships/threadedComment" Target="../threadedComments/threadedComment1.xml"/>` +
		`</Relationships>`
	legacy := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<comments xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><authors><author>Sam</author></authors><commentList>` +
		`<comment ref="B3" authorId="0"><text><r><rPr><b/></rPr><t>DO NOT CALL</t></r><r><t xml:space="preserve"> - asked on 3/1, email only</t></r><rPh sb="0" eb="1"><t>x</t></rPh></text></comment>` +
		`</commentList></comments>`
	threaded := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments" xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
		`<threadedComment ref="A4" dT="2026-03-01T10:00:00.00" personId="{1}" id="{2}"><text>Please stop calling me</text></threadedComment>` +
		`</ThreadedComments>`
	built := withParts(t, plain, map[string]string{
		"xl/worksheets/_rels/sheet1.xml.rels":      rels,
		"xl/comments7.xml":                         legacy,
		"xl/threadedComments/threadedComment1.xml": threaded,
	})
	wb := readWorkbookFacts(t, built, Options{})
	if got, want := wb.RowComments(3), []Comment{{Cell: "B3", Text: "DO NOT CALL - asked on 3/1, email only"}}; !slices.Equal(got, want) {
		t.Errorf("row 3 comments %q, want %q", got, want)
	}
	if got, want := wb.RowComments(4), []Comment{{Cell: "A4", Text: "Please stop calling me"}}; !slices.Equal(got, want) {
		t.Errorf("row 4 comments %q, want %q", got, want)
	}

	missing := withParts(t, plain, map[string]string{"xl/worksheets/_rels/sheet1.xml.rels": rels})
	if _, err := OpenWith(missing, Options{}); err == nil {
		t.Error("a worksheet whose comments part is missing was opened")
	}
}
