package sheet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"slices"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// maxMergedRanges bounds the merged ranges of a worksheet that
// openWorkbook reads, each kept in memory while the rows are read: a
// contact sheet has a few, a worksheet with more is refused.
var maxMergedRanges = 1 << 20

// mergeRange is a merged range of cells, its rows and columns counted
// from 1, both ends included.
type mergeRange struct {
	top, left, bottom, right int
}

// worksheetSurvey is what openWorkbook learns of a worksheet before its
// rows are read: its merged ranges, the first formula cell whose value
// was never computed, and the rows the workbook hides.
type worksheetSurvey struct {
	// merges are the worksheet's merged ranges, by top row, then left
	// column.
	merges []mergeRange
	// mergeSum hashes the merged ranges' references in the order the
	// worksheet lists them; the reading of the rows checks it against the
	// ranges its parser finds.
	mergeSum uint64
	// uncomputed names the first formula cell with no saved value ("" if
	// none), in row uncomputedRow.
	uncomputed    string
	uncomputedRow int
	// formula names the first formula cell ("" if none), in row
	// formulaRow.
	formula    string
	formulaRow int
	// facts holds the rows the worksheet hides (a row hidden="1", or
	// "true" as LibreOffice and excelize write it, or of height 0) that
	// hold a cell with a value, a formula or an inline string: hidden by
	// hand, by a filter or in a collapsed outline. A hidden row of empty cells, as
	// a sheet hidden below its last row holds, hides nobody.
	facts Workbook
}

// surveyWorksheet reads a worksheet's XML once, cheaply, before
// worksheetReader reads its rows: a tag's name and the attributes it
// needs are all it looks at (worksheetReader, which reads every cell as
// XML, checks the rest). The merged ranges (mergeCells) come after the
// rows in a worksheet, and the value a merged cell shows is needed as its
// rows are read; a formula cell with no saved value makes the whole sheet
// unreadable, which must be known before any row of it is read; and
// the rows the workbook hides are told before any row is read, for the
// campaign to stop on them or skip them as the reader streams them.
func surveyWorksheet(r io.Reader) (*worksheetSurvey, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	sv := &worksheetSurvey{}
	sum := fnv.New64a()
	var (
		inRows, inCell, inV      bool
		cellDepth                int
		hasF, hasV, hasIS, vText bool
		// rowHidden: the row being read is hidden and none of its cells
		// read so far holds anything.
		rowHidden               bool
		row, cellsSinceRef      int
		cellAttrs, lastRef, tag []byte
	)
	for {
		text, err := skipText(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		vText = vText || inV && text
		head, _ := br.Peek(9)
		switch {
		case bytes.HasPrefix(head, []byte("!--")):
			if err := skipThrough(br, "-->"); err != nil {
				return nil, err
			}
			continue
		case bytes.HasPrefix(head, []byte("![CDATA[")):
			br.Discard(8)
			if n, _ := br.Peek(3); inV && !bytes.Equal(n, []byte("]]>")) {
				vText = true
			}
			if err := skipThrough(br, "]]>"); err != nil {
				return nil, err
			}
			continue
		case bytes.HasPrefix(head, []byte("?")), bytes.HasPrefix(head, []byte("!")):
			if err := skipThrough(br, ">"); err != nil {
				return nil, err
			}
			continue
		}
		if tag, err = readTag(br, tag[:0]); err != nil {
			return nil, err
		}
		end := len(tag) > 0 && tag[0] == '/'
		if end {
			tag = tag[1:]
		}
		empty := !end && len(tag) > 0 && tag[len(tag)-1] == '/'
		if empty {
			tag = tag[:len(tag)-1]
		}
		i := bytes.IndexAny(tag, " \t\r\n")
		if i < 0 {
			i = len(tag)
		}
		name, attrs := string(localName(tag[:i])), tag[i:]
		if end {
			switch {
			case inCell && cellDepth > 0:
				cellDepth--
				inV = false
			case inCell && name == "c":
				inCell = false
				if rowHidden && (hasV || hasF || hasIS) {
					sv.facts.hide(row)
					rowHidden = false
				}
				if hasF && sv.formula == "" {
					sv.formula, sv.formulaRow = cellRef(cellAttrs, lastRef, cellsSinceRef, row), row
				}
				if hasF && sv.uncomputed == "" && uncomputed(cellAttrs, hasV, vText) {
					sv.uncomputed, sv.uncomputedRow = cellRef(cellAttrs, lastRef, cellsSinceRef, row), row
				}
			case name == "sheetData":
				inRows = false
			}
			continue
		}
		switch {
		case inCell:
			if cellDepth == 0 {
				switch name {
				case "f":
					hasF = true
				case "v":
					hasV, inV = true, !empty
				case "is":
					hasIS = true
				}
			}
			if !empty {
				cellDepth++
			}
		case inRows && name == "row":
			n := row + 1
			if v, ok := rawAttr(attrs, "r"); ok {
				if n, err = strconv.Atoi(string(v)); err != nil {
					n = row + 1 // worksheetReader names the row it cannot read
				}
			}
			row, lastRef, cellsSinceRef = n, lastRef[:0], 0
			h, _ := rawAttr(attrs, "hidden")
			// A row of no height shows nothing either: Excel draws ht="0"
			// as hidden.
			ht, hasHt := rawAttr(attrs, "ht")
			zero := false
			if hasHt {
				f, err := strconv.ParseFloat(string(ht), 64)
				zero = err == nil && f == 0
			}
			rowHidden = !empty && (string(h) == "1" || string(h) == "true" || zero)
		case inRows && name == "c":
			cellsSinceRef++
			if v, ok := rawAttr(attrs, "r"); ok {
				lastRef, cellsSinceRef = append(lastRef[:0], v...), 0
			}
			if !empty {
				inCell, cellDepth, hasF, hasV, hasIS, vText = true, 0, false, false, false, false
				cellAttrs = append(cellAttrs[:0], attrs...)
			}
		case name == "sheetData":
			inRows = !empty
		case name == "mergeCell":
			ref, _ := rawAttr(attrs, "ref")
			m, err := parseMergeRef(string(ref))
			if err != nil {
				return nil, err
			}
			if len(sv.merges) == maxMergedRanges {
				return nil, fmt.Errorf("it has more than %d merged ranges of cells: unmerge them (select all, then Merge & Center, Unmerge Cells) and save it", maxMergedRanges)
			}
			sv.merges = append(sv.merges, m)
			mergeRefSum(sum, ref)
		}
	}
	sv.mergeSum = sum.Sum64()
	slices.SortFunc(sv.merges, func(a, b mergeRange) int {
		if a.top != b.top {
			return a.top - b.top
		}
		return a.left - b.left
	})
	return sv, nil
}

// uncomputed reports whether a formula cell, of the attributes attrs,
// holds no value the program that wrote it computed: no value at all, or
// an empty one where its type is not text (Excel and LibreOffice save a
// formula whose result is the empty text as an empty value of type str).
func uncomputed(attrs []byte, hasV, vText bool) bool {
	if !hasV {
		return true
	}
	if vText {
		return false
	}
	t, _ := rawAttr(attrs, "t")
	return string(t) != "str" && string(t) != "inlineStr"
}

// cellRef names a cell of row row: by its reference, else as the
// cellsSinceRef-th cell after the one whose reference is lastRef (or of
// the row).
func cellRef(attrs, lastRef []byte, cellsSinceRef, row int) string {
	if v, ok := rawAttr(attrs, "r"); ok {
		return string(v)
	}
	col := 0
	if len(lastRef) > 0 {
		col, _, _ = excelize.CellNameToCoordinates(string(lastRef))
	}
	name, err := excelize.CoordinatesToCellName(col+cellsSinceRef, max(row, 1))
	if err != nil {
		return fmt.Sprintf("%d of row %d", col+cellsSinceRef, row)
	}
	return name
}

// parseMergeRef reads a merged range's reference, such as D2:D4.
func parseMergeRef(ref string) (mergeRange, error) {
	first, last, ok := bytes.Cut([]byte(ref), []byte(":"))
	if !ok {
		last = first
	}
	c1, r1, err1 := excelize.CellNameToCoordinates(string(first))
	c2, r2, err2 := excelize.CellNameToCoordinates(string(last))
	if err := errors.Join(err1, err2); err != nil {
		return mergeRange{}, fmt.Errorf("it merges cells %q, which is no range of cells", ref)
	}
	return mergeRange{top: min(r1, r2), left: min(c1, c2), bottom: max(r1, r2), right: max(c1, c2)}, nil
}

// mergeRefSum adds a merged range's reference, as its attribute holds
// it, to the hash sum, as surveyWorksheet does.
func mergeRefSum(sum hash.Hash64, ref []byte) {
	sum.Write(ref)
	sum.Write([]byte{0})
}

// skipText reads up to and including the next '<', and reports whether
// there was text before it; io.EOF when there is no '<' left.
func skipText(br *bufio.Reader) (bool, error) {
	text := false
	for {
		b, err := br.ReadSlice('<')
		switch err {
		case nil:
			return text || len(b) > 1, nil
		case bufio.ErrBufferFull:
			text = true
		default:
			return false, err
		}
	}
}

// skipThrough reads up to and including delim.
func skipThrough(br *bufio.Reader, delim string) error {
	last := delim[len(delim)-1]
	var tail []byte
	for {
		b, err := br.ReadSlice(last)
		if err != nil && err != bufio.ErrBufferFull {
			return noEOF(err)
		}
		tail = append(tail, b...)
		if len(tail) > len(delim) {
			tail = tail[len(tail)-len(delim):]
		}
		if err == nil && bytes.HasSuffix(tail, []byte(delim)) {
			return nil
		}
	}
}

// readTag reads a tag after its '<' up to its '>', which may not stand
// inside a quoted attribute value, and returns it, without the '>',
// appended to buf.
func readTag(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf, err := scanTag(br, buf)
	if err != nil {
		return nil, noEOF(err)
	}
	return buf[:len(buf)-1], nil
}

// rawAttr returns the undecoded value of the attribute named name (no
// namespace prefix) in a tag's attributes.
func rawAttr(a []byte, name string) ([]byte, bool) {
	for {
		a = trimXMLSpaceLeft(a)
		eq := bytes.IndexByte(a, '=')
		if eq < 0 {
			return nil, false
		}
		key := trimXMLSpaceRight(a[:eq])
		a = trimXMLSpaceLeft(a[eq+1:])
		if len(a) == 0 || a[0] != '"' && a[0] != '\'' {
			return nil, false
		}
		end := bytes.IndexByte(a[1:], a[0])
		if end < 0 {
			return nil, false
		}
		if string(key) == name {
			return a[1 : end+1], true
		}
		a = a[end+2:]
	}
}

// mergeFill gives the cells of a worksheet's merged ranges the value
// each range shows, its top-left cell's, as worksheetReader reads the
// rows: what a person sees, so that a "Yes" merged down a do-not-call
// column says so in every row it covers. Only the ranges below the header
// are filled, and only across the header's columns: the header is read
// as stored, and so are the titles above it. The header is the first row
// that holds more than text in its first cell, as the sheet reader finds
// a header below a title. A row that holds, as stored, nothing or text in
// its first cell alone (a group's title, a footer) is left as stored too,
// for the sheet reader to tell it as such.
type mergeFill struct {
	merges []mergeRange // by top row
	next   int          // the first of merges not yet reached
	header int          // the header's row, 0 until it is read
	width  int          // the header's cells
	active []filledMerge
}

// filledMerge is a merged range the rows being read are in, and the value
// it shows.
type filledMerge struct {
	mergeRange
	value string
}

func (wr *worksheetReader) newMergeFill() *mergeFill {
	if wr.survey == nil {
		return &mergeFill{}
	}
	return &mergeFill{merges: wr.survey.merges}
}

// row gives the cells of row n, as stored, the values of the merged
// ranges that cover them, and returns them. Rows come in order.
func (mf *mergeFill) row(n int, cells []string) []string {
	if len(mf.merges) == 0 {
		return cells
	}
	if mf.header == 0 {
		if !isBlank(cells) && !lineOfText(cells) {
			mf.header, mf.width = n, len(cells)
		}
		return cells
	}
	for mf.next < len(mf.merges) && mf.merges[mf.next].top <= n {
		m := mf.merges[mf.next]
		mf.next++
		if m.top <= mf.header || m.bottom < n || m.left > mf.width {
			continue
		}
		value := "" // a range whose top row the worksheet skips shows nothing
		if m.top == n && m.left <= len(cells) {
			value = cells[m.left-1]
		}
		mf.active = append(mf.active, filledMerge{m, value})
	}
	if len(mf.active) == 0 {
		return cells
	}
	lone := isBlank(cells) || lineOfText(cells)
	kept := mf.active[:0]
	for _, m := range mf.active {
		if m.bottom < n {
			continue
		}
		kept = append(kept, m)
		if lone {
			continue
		}
		right := min(m.right, mf.width)
		for len(cells) < right {
			cells = append(cells, "")
		}
		for c := m.left; c <= right; c++ {
			cells[c-1] = m.value
		}
	}
	mf.active = kept
	return cells
}
