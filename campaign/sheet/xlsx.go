package sheet

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"github.com/xuri/nfp"
)

// worksheetReader streams the rows of one worksheet of an .xlsx workbook
// in a single pass over its XML, as excelize's Rows gives them with
// RawCellValue (a number by its full value, a shared or inline string by
// its text), but a number in a date or time format as a date. openWorkbook
// uses it instead of two of excelize's Rows (values as stored, values as
// shown), each of which decodes the whole worksheet with encoding/xml, many
// times slower than this scanner. A cell or element it cannot read is an
// error naming the cell, never an empty value; so is a formula whose value
// was never computed. The cells of a merged range below the header read
// as the range's top-left value.
type worksheetReader struct {
	x        *xmlScanner
	strings  []string // the workbook's shared strings
	dates    []bool   // by style index: the style's number format shows a date or time
	date1904 bool
	// survey is what surveyWorksheet found of the worksheet: its merged
	// ranges, whose cells read as the value each range shows.
	survey *worksheetSurvey
	// mergeCount and mergeSum count and hash the merged ranges the
	// reading finds, to check them against the survey's.
	mergeCount int
	mergeSum   hash.Hash64
}

// worksheetPart returns the name, in the workbook's zip archive, of the
// XML of the worksheet named sheet, resolved as excelize resolves it: the
// workbook's relationship for the sheet, relative to the workbook's part,
// found by the package's relationship of either kind of workbook
// (transitional, or the Strict Open XML Excel can also save).
func worksheetPart(wb *excelize.File, sheet string) (string, error) {
	wbPath := workbookPart(wb)
	relsPath := strings.TrimPrefix(path.Dir(wbPath)+"/_rels/"+path.Base(wbPath)+".rels", "/")
	if path.Dir(wbPath) == "." {
		relsPath = "_rels/" + path.Base(wbPath) + ".rels"
	}
	rels, err := partRels(wb, relsPath)
	if err != nil {
		return "", err
	}
	if wb.WorkBook != nil && wb.WorkBook.Sheets.Sheet != nil {
		for _, s := range wb.WorkBook.Sheets.Sheet {
			if !strings.EqualFold(s.Name, sheet) {
				continue
			}
			for _, r := range rels {
				if r.ID != s.ID {
					continue
				}
				if strings.HasPrefix(r.Target, "/") {
					return strings.TrimPrefix(path.Clean(strings.ReplaceAll(r.Target, `\`, "/")), "/"), nil
				}
				return strings.TrimPrefix(path.Clean(strings.ReplaceAll(path.Dir(wbPath)+"/"+r.Target, `\`, "/")), "/"), nil
			}
		}
	}
	return "", fmt.Errorf("the workbook does not say where worksheet %q is", sheet)
}

// workbookPart is the name of wb's workbook part, as the package's
// relationships name it ("" if they do not).
func workbookPart(wb *excelize.File) string {
	if rels, err := partRels(wb, "_rels/.rels"); err == nil {
		for _, r := range rels {
			if r.Type == excelize.SourceRelationshipOfficeDocument || r.Type == excelize.StrictSourceRelationshipOfficeDocument {
				return strings.TrimPrefix(r.Target, "/")
			}
		}
	}
	return ""
}

// staleCalc says why the saved values of wb's formulas cannot be trusted,
// from its calculation properties (calcPr) as its workbook part in z
// writes them, or "" if they can. It reads the part itself, since
// excelize's reading of it cannot tell a calcId of 0 from none; a part it
// cannot read is judged by excelize's reading.
func staleCalc(wb *excelize.File, z *zip.Reader) string {
	name := workbookPart(wb)
	if name == "" {
		name = "xl/workbook.xml"
	}
	rc, err := openPart(z, name, true)
	if err != nil || rc == nil {
		return staleCalcRead(wb)
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return ""
		}
		if err != nil {
			return staleCalcRead(wb)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "calcPr" {
			continue
		}
		attr := func(name string) (string, bool) {
			for _, a := range se.Attr {
				if a.Name.Local == name {
					return strings.TrimSpace(a.Value), true
				}
			}
			return "", false
		}
		on := func(name string) bool {
			v, _ := attr(name)
			return v == "1" || v == "true"
		}
		id, hasID := attr("calcId")
		mode, _ := attr("calcMode")
		switch {
		case on("fullCalcOnLoad"):
			return staleFormula
		case hasID && id == "0":
			return calcIDZeroFormula
		case mode == "manual":
			return manualFormula
		}
		// A workbook has one calcPr; should it have more, each is read.
	}
}

// staleCalcRead is [staleCalc] from excelize's reading of wb's calcPr,
// which has no calcId of 0.
func staleCalcRead(wb *excelize.File) string {
	if wb.WorkBook == nil || wb.WorkBook.CalcPr == nil {
		return ""
	}
	switch c := wb.WorkBook.CalcPr; {
	case c.FullCalcOnLoad:
		return staleFormula
	case c.CalcMode == "manual":
		return manualFormula
	}
	return ""
}

// relationship is one entry of a relationships part of a workbook.
type relationship struct {
	ID     string `xml:"Id,attr"`
	Target string `xml:"Target,attr"`
	Type   string `xml:"Type,attr"`
}

// partRels reads the relationships part name of wb, as excelize keeps it.
func partRels(wb *excelize.File, name string) ([]relationship, error) {
	v, ok := wb.Pkg.Load(name)
	b, _ := v.([]byte)
	if !ok || b == nil {
		return nil, fmt.Errorf("the workbook has no %s", name)
	}
	var rels struct {
		Rels []relationship `xml:"Relationship"`
	}
	if err := xml.Unmarshal(b, &rels); err != nil {
		return nil, fmt.Errorf("reading %s: %v", name, err)
	}
	return rels.Rels, nil
}

// dateStyles returns, by style index, whether the style's number format
// shows a number as a date or time: the format excelize would apply (a
// custom format of that number first, else a built-in one) starts, in
// its section for positive numbers, with a date or time part before any
// digit placeholder, which is when excelize formats the number as a date.
func dateStyles(wb *excelize.File) []bool {
	wb.GetStyle(0) // reads the workbook's styles into wb.Styles
	ss := wb.Styles
	if ss == nil || ss.CellXfs == nil {
		return nil
	}
	dates := make([]bool, len(ss.CellXfs.Xf))
	for i, xf := range ss.CellXfs.Xf {
		id := 0
		if xf.NumFmtID != nil {
			id = *xf.NumFmtID
		}
		code, custom := "", false
		if ss.NumFmts != nil {
			for _, nf := range ss.NumFmts.NumFmt {
				if nf.NumFmtID == id {
					code, custom = nf.FormatCode, true
					if nf.FormatCode16 != "" {
						code = nf.FormatCode16
					}
					break
				}
			}
		}
		if custom {
			dates[i] = isDateFormat(code)
		} else {
			// excelize's built-in formats that show a date or time.
			dates[i] = (14 <= id && id <= 22) || (45 <= id && id <= 47)
		}
	}
	return dates
}

// isDateFormat reports whether excelize shows a positive number in the
// number format code as a date or time.
func isDateFormat(code string) bool {
	p := nfp.NumberFormatParser()
	for _, section := range p.Parse(code) {
		if section.Type != nfp.TokenSectionPositive {
			continue
		}
		for _, t := range section.Items {
			switch t.TType {
			case nfp.TokenTypeGeneral,
				nfp.TokenTypeDenominator, nfp.TokenTypeDigitalPlaceHolder, nfp.TokenTypeExponential,
				nfp.TokenTypeFraction, nfp.TokenTypeHashPlaceHolder, nfp.TokenTypePercent, nfp.TokenTypeZeroPlaceHolder:
				return false
			case nfp.TokenTypeDateTimes, nfp.TokenTypeElapsedDateTimes:
				return true
			}
		}
		return false
	}
	return false
}

// openPart opens the part name of the zip archive z, found as excelize
// finds it (backslashes read as slashes; the shared strings whatever
// their case). It returns nil when there is no such part.
func openPart(z *zip.Reader, name string, anyCase bool) (io.ReadCloser, error) {
	for _, f := range z.File {
		n := strings.ReplaceAll(f.Name, `\`, "/")
		if n == name || anyCase && strings.EqualFold(n, name) {
			return f.Open()
		}
	}
	return nil, nil
}

// readSharedStrings reads the workbook's shared strings, each as
// excelize gives it: its text and the text of its runs, the phonetic
// runs left out, escapes such as _x000D_ decoded.
func readSharedStrings(z *zip.Reader) ([]string, error) {
	rc, err := openPart(z, "xl/sharedStrings.xml", true)
	if err != nil || rc == nil {
		return nil, err
	}
	defer rc.Close()
	x := newXMLScanner(rc)
	var out []string
	for {
		tok, err := x.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the shared strings: %v", err)
		}
		// A table's strings are the si elements of its root: an si
		// anywhere else (an extension's) would shift the numbers of
		// those after it.
		if tok == tokStart && string(x.name) == "si" && len(x.starts) == 2 {
			s := ""
			if !x.empty {
				if s, err = x.richText(); err != nil {
					return nil, fmt.Errorf("reading shared string %d: %v", len(out), err)
				}
			}
			out = append(out, s)
		}
	}
}

// writeCSV writes the rows of the worksheet to w as CSV text, as
// openWorkbook describes, until the worksheet ends or w is closed.
func (wr *worksheetReader) writeCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	x := wr.x
	for {
		tok, err := x.next()
		if err == io.EOF {
			if err := wr.checkMerges(); err != nil {
				return err
			}
			return bw.Flush() // no rows
		}
		if err != nil {
			return fmt.Errorf("reading the worksheet: %v", err)
		}
		if tok == tokStart && string(x.name) == "mergeCell" {
			wr.countMerge()
		}
		if tok == tokStart && string(x.name) == "sheetData" {
			if len(x.starts) != 2 {
				return errors.New("reading the worksheet: it holds rows (sheetData) elsewhere than as its own")
			}
			if x.empty {
				return wr.rest(bw)
			}
			break
		}
	}
	width, last := -1, 0
	var cells []string
	fill := wr.newMergeFill()
	for {
		tok, err := x.next()
		if err == io.EOF {
			return fmt.Errorf("reading the worksheet: it ends inside its rows (after row %d)", last)
		}
		if err != nil {
			return fmt.Errorf("reading the worksheet after row %d: %v", last, err)
		}
		switch {
		case tok == tokEnd && string(x.name) == "sheetData":
			return wr.rest(bw)
		case tok == tokStart && string(x.name) == "row":
			n := last + 1
			if r, ok := x.attr("r"); ok {
				if n, err = strconv.Atoi(r); err != nil || n < 1 {
					return fmt.Errorf("reading the worksheet: after row %d, a row numbered %q", last, r)
				}
			}
			if n <= last {
				return fmt.Errorf("reading the worksheet: row %d comes after row %d", n, last)
			}
			if n > excelize.TotalRows {
				return fmt.Errorf("reading the worksheet: row %d is past the last row Excel allows", n)
			}
			for ; last+1 < n; last++ { // rows the worksheet skips are empty
				if width < 0 {
					width = 0
				}
				bw.WriteByte('\n')
			}
			last = n
			cells = cells[:0]
			if !x.empty {
				if cells, err = wr.row(n, cells); err != nil {
					return err
				}
			}
			if width < 0 {
				width = len(cells)
			}
			cells = fill.row(n, cells)
			if err := writeCSVRow(bw, cells, width); err != nil {
				return err
			}
		case tok == tokStart && !x.empty:
			if err := x.skip(); err != nil {
				return fmt.Errorf("reading the worksheet after row %d: %v", last, err)
			}
		}
	}
}

// rest reads the worksheet after its rows to its end, which must hold no
// rows again, and flushes bw.
func (wr *worksheetReader) rest(bw *bufio.Writer) error {
	for {
		tok, err := wr.x.next()
		if err == io.EOF {
			if err := wr.checkMerges(); err != nil {
				return err
			}
			return bw.Flush()
		}
		if err != nil {
			return fmt.Errorf("reading the worksheet after its rows: %v", err)
		}
		if tok == tokStart && string(wr.x.name) == "sheetData" {
			return errors.New("reading the worksheet: it holds its rows (sheetData) twice")
		}
		if tok == tokStart && string(wr.x.name) == "mergeCell" {
			wr.countMerge()
		}
	}
}

// countMerge counts and hashes the merged range (mergeCell) whose start
// tag the scanner is at.
func (wr *worksheetReader) countMerge() {
	if wr.mergeSum == nil {
		wr.mergeSum = fnv.New64a()
	}
	ref, _ := rawAttr(wr.x.attrs, "ref")
	mergeRefSum(wr.mergeSum, ref)
	wr.mergeCount++
}

// checkMerges returns an error unless the merged ranges the reading found
// are those the survey found, by which the rows were read.
func (wr *worksheetReader) checkMerges() error {
	sum := uint64(0)
	if wr.mergeSum != nil {
		sum = wr.mergeSum.Sum64()
	} else {
		sum = fnv.New64a().Sum64()
	}
	if wr.survey != nil && (wr.mergeCount != len(wr.survey.merges) || sum != wr.survey.mergeSum) {
		return errors.New("reading the worksheet: its merged cells (mergeCells) cannot be told apart from the rest of its XML")
	}
	return nil
}

// writeCSVRow writes cells as a line of CSV text, every field quoted, as
// wide as width at least unless the row is empty.
func writeCSVRow(bw *bufio.Writer, cells []string, width int) error {
	n := len(cells)
	if n > 0 && n < width {
		n = width
	}
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('"')
		if i < len(cells) {
			v := cells[i]
			for {
				j := strings.IndexByte(v, '"')
				if j < 0 {
					bw.WriteString(v)
					break
				}
				bw.WriteString(v[:j+1])
				bw.WriteByte('"')
				v = v[j+1:]
			}
		}
		bw.WriteByte('"')
	}
	return bw.WriteByte('\n')
}

// row reads the cells of row n, the scanner just past its start tag,
// appending their values to cells: a cell with neither a value nor a
// formula is left out, as excelize leaves it out, and the cells before
// it that the worksheet skips are empty.
func (wr *worksheetReader) row(n int, cells []string) ([]string, error) {
	x := wr.x
	col := 0
	for {
		tok, err := x.next()
		if err != nil {
			return cells, fmt.Errorf("reading row %d of the worksheet: %v", n, noEOF(err))
		}
		switch {
		case tok == tokEnd:
			if string(x.name) == "row" {
				return cells, nil
			}
			return cells, fmt.Errorf("reading row %d of the worksheet: unexpected </%s>", n, x.name)
		case tok == tokStart && string(x.name) == "c":
			ref, hasRef := x.attr("r")
			c := col + 1
			if hasRef {
				if c, _, err = excelize.CellNameToCoordinates(ref); err != nil {
					return cells, fmt.Errorf("reading row %d of the worksheet: a cell named %q", n, ref)
				}
			} else if ref, err = excelize.CoordinatesToCellName(c, n); err != nil {
				return cells, fmt.Errorf("reading row %d of the worksheet: %v", n, err)
			}
			if c <= col {
				return cells, fmt.Errorf("reading cell %s (row %d): it comes after the cell of column %d", ref, n, col)
			}
			col = c
			v, hasF, err := wr.cell()
			if err != nil {
				return cells, fmt.Errorf("reading cell %s (row %d, column %s): %v", ref, n, columnName(c), err)
			}
			if v != "" || hasF {
				for len(cells) < c-1 {
					cells = append(cells, "")
				}
				cells = append(cells, v)
			}
		case tok == tokStart && !x.empty:
			if err := x.skip(); err != nil {
				return cells, fmt.Errorf("reading row %d of the worksheet: %v", n, noEOF(err))
			}
		}
	}
}

func columnName(c int) string {
	name, _ := excelize.ColumnNumberToName(c)
	return name
}

// noEOF says that the XML ended too soon rather than passing io.EOF on.
func noEOF(err error) error {
	if err == io.EOF {
		return errors.New("the XML ends too soon")
	}
	return err
}

// cell reads the cell whose start tag the scanner is at: its value as
// callrun takes it, and whether it has a formula.
func (wr *worksheetReader) cell() (string, bool, error) {
	x := wr.x
	typ, _ := x.attr("t")
	style := 0
	if s, ok := x.attr("s"); ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			return "", false, fmt.Errorf("its style %q is not a number", s)
		}
		style = n
	}
	var v, inline string
	hasV, hasF, hasIS := false, false, false
	if !x.empty {
		for {
			tok, err := x.next()
			if err != nil {
				return "", false, noEOF(err)
			}
			if tok == tokEnd {
				break // </c>: the scanner checks that tags match
			}
			if tok != tokStart {
				continue
			}
			switch string(x.name) {
			case "v":
				if v, err = x.text(); err != nil {
					return "", false, err
				}
				hasV = true
			case "f":
				hasF = true
				err = x.skipIf()
			case "is":
				hasIS = true
				inline = ""
				if !x.empty {
					inline, err = x.richText()
				}
			default:
				err = x.skipIf()
			}
			if err != nil {
				return "", false, noEOF(err)
			}
		}
	}
	if hasF && (!hasV || v == "" && typ != "str" && typ != "inlineStr") {
		return "", false, errors.New(uncomputedFormula)
	}
	switch typ {
	case "s":
		if v == "" {
			return "", hasF, nil
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= len(wr.strings) {
			return "", false, fmt.Errorf("it names shared string %q, and the workbook has %d", v, len(wr.strings))
		}
		return wr.strings[i], hasF, nil
	case "inlineStr":
		if hasIS {
			return inline, hasF, nil
		}
		return v, hasF, nil
	case "str", "b", "d":
		return v, hasF, nil
	}
	if hasV && style > 0 && style < len(wr.dates) && wr.dates[style] {
		if d, ok := dateText(v, wr.date1904); ok {
			return d, hasF, nil
		}
	}
	return wholeNumber(v), hasF, nil
}

// staleFormula says what is wrong with a formula cell of a workbook that
// asks to be computed again when opened (calcPr fullCalcOnLoad), whose
// saved values callrun cannot trust, and what to do.
const staleFormula = "it holds a formula, and the workbook asks to be computed again when opened: it was written by a program that may have saved any value for its formulas (XlsxWriter and pandas save 0), which callrun cannot trust: open it in Excel or LibreOffice and save it, then run again"

// calcIDZeroFormula says what is wrong with a formula cell of a workbook
// whose calculation engine is given as 0 (calcPr calcId="0"), which asks
// for every formula to be computed again when opened: Apache POI's way to
// ask for it, and Apache POI saves 0 as a new formula's value.
const calcIDZeroFormula = "it holds a formula, and the workbook asks to be computed again when opened (calcId 0): it was written by a program that may have saved any value for its formulas (Apache POI saves 0), which callrun cannot trust: open it in Excel or LibreOffice and save it, then run again"

// manualFormula says what is wrong with a formula cell of a workbook set to
// calculate by hand (calcPr calcMode="manual"), whose saved values may be
// older than the cells they are computed from, and what to do.
const manualFormula = "it holds a formula, and the workbook is set to calculate by hand, so the values saved for its formulas may be older than the cells they are computed from: set calculation to automatic (Excel: Formulas, Calculation Options, Automatic; LibreOffice: Data, Calculate, AutoCalculate), save it, then run again"

// uncomputedFormula says what is wrong with a formula cell whose value was
// never computed, which callrun cannot read, and what to do.
const uncomputedFormula = "it holds a formula whose value was never computed (the file was written by a program, not saved by Excel): open it in Excel or LibreOffice and save it, then run again"

// wholeNumber is the number raw, stored in scientific notation, written
// out in full when it is a whole number, not negative, of at most 15
// digits (all a workbook's number keeps), else raw. Apache POI, which CRM exports use,
// stores a number as Java writes a double, in scientific notation from
// 10^7 and without trailing zeros: the phone number 15555550100 is
// 1.55555501E10, which read as written looks like a number Excel cut
// short.
func wholeNumber(raw string) string {
	if !strings.ContainsAny(raw, "eE") {
		return raw
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f >= 1e15 {
		return raw
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// dateText is the date or time of the serial number raw, ISO 8601: a
// date, a time of day alone (a serial below 1), or both.
func dateText(raw string, date1904 bool) (string, bool) {
	serial, err := strconv.ParseFloat(raw, 64)
	if err != nil || serial < 0 || serial > 2958465 { // 9999-12-31
		return "", false
	}
	t, err := excelize.ExcelDateToTime(serial, date1904)
	if err != nil {
		return "", false
	}
	switch {
	case serial < 1:
		return t.Format("15:04:05"), true
	case serial == float64(int64(serial)):
		return t.Format("2006-01-02"), true
	}
	return t.Format("2006-01-02 15:04:05"), true
}

// Token kinds of xmlScanner.
const (
	tokStart = iota + 1
	tokEnd
	tokText
)

// xmlScanner reads the elements and text of a workbook part's XML as a
// stream, far faster than encoding/xml: names without their namespace
// prefix, text with its entities decoded and its line ends read as XML
// reads them. It rejects a document type declaration, text that is not
// UTF-8 and tags that do not match.
type xmlScanner struct {
	r     *bufio.Reader
	buf   []byte // the current token's bytes
	name  []byte // the current tag's local name
	attrs []byte // the current start tag's attributes
	empty bool   // the current start tag closes itself
	chars []byte // the current text, decoded
	// names holds the names of the open elements one after another,
	// starts where each begins.
	names  []byte
	starts []int
}

func newXMLScanner(r io.Reader) *xmlScanner {
	return &xmlScanner{r: bufio.NewReaderSize(r, 64<<10)}
}

// next reads the next start tag, end tag or text. A self-closing tag is
// one start tag, x.empty set.
func (x *xmlScanner) next() (int, error) {
	if x.empty {
		x.pop()
		x.empty = false
	}
	for {
		c, err := x.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(x.starts) > 0 {
				return 0, fmt.Errorf("the XML ends inside <%s>", x.top())
			}
			return 0, err
		}
		if c != '<' {
			x.r.UnreadByte()
			raw, err := x.until("<")
			if err == io.EOF {
				if len(bytes.TrimSpace(raw)) > 0 || len(x.starts) > 0 {
					return 0, errors.New("the XML ends in text")
				}
				return 0, io.EOF
			}
			if err != nil {
				return 0, err
			}
			x.r.UnreadByte()
			if bytes.Contains(raw, []byte("]]>")) {
				return 0, errors.New("the XML's text holds ]]>, which only ends a CDATA section")
			}
			if err := x.decode(raw[:len(raw)-1], true); err != nil {
				return 0, err
			}
			return tokText, nil
		}
		c, err = x.r.ReadByte()
		if err != nil {
			return 0, noEOF(err)
		}
		switch c {
		case '?':
			raw, err := x.until("?>")
			if err != nil {
				return 0, noEOF(err)
			}
			if bytes.HasPrefix(raw, []byte("xml ")) {
				if m := xmlEncoding.FindSubmatch(raw); m != nil && !strings.EqualFold(string(m[2]), "utf-8") {
					return 0, fmt.Errorf("the XML is in %s, not UTF-8", m[2])
				}
			}
			continue
		case '!':
			head, _ := x.r.Peek(7)
			switch {
			case bytes.HasPrefix(head, []byte("--")):
				if _, err := x.until("-->"); err != nil {
					return 0, noEOF(err)
				}
				continue
			case bytes.HasPrefix(head, []byte("[CDATA[")):
				x.r.Discard(7)
				raw, err := x.until("]]>")
				if err != nil {
					return 0, noEOF(err)
				}
				if err := x.decode(raw[:len(raw)-3], false); err != nil {
					return 0, err
				}
				return tokText, nil
			}
			return 0, errors.New("the XML has a document type declaration, which a workbook does not")
		case '/':
			raw, err := x.until(">")
			if err != nil {
				return 0, noEOF(err)
			}
			name := trimXMLSpaceRight(raw[:len(raw)-1])
			if len(x.starts) == 0 || !bytes.Equal(x.top(), name) {
				return 0, fmt.Errorf("unexpected </%s>", name)
			}
			x.pop()
			x.name = localName(name)
			return tokEnd, nil
		}
		x.r.UnreadByte()
		raw, err := x.tag()
		if err != nil {
			return 0, noEOF(err)
		}
		raw = raw[:len(raw)-1]
		if x.empty = len(raw) > 0 && raw[len(raw)-1] == '/'; x.empty {
			raw = raw[:len(raw)-1]
		}
		i := bytes.IndexAny(raw, " \t\r\n")
		if i < 0 {
			i = len(raw)
		}
		if !isName(raw[:i]) {
			return 0, fmt.Errorf("a tag named %q", raw[:i])
		}
		if err := checkAttrs(raw[i:]); err != nil {
			return 0, fmt.Errorf("in <%s>: %v", raw[:i], err)
		}
		x.starts = append(x.starts, len(x.names))
		x.names = append(x.names, raw[:i]...)
		x.name, x.attrs = localName(raw[:i]), raw[i:]
		return tokStart, nil
	}
}

// isName reports whether b is an XML name (any character past ASCII is
// taken for a letter, but it must be UTF-8).
func isName(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i, c := range b {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= 0x80
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '-' || c == '.')) {
			return false
		}
	}
	return len(b) > 0
}

// maxAttrs bounds the attributes of a tag, which checkAttrs compares
// pairwise: a workbook's tags have a few.
const maxAttrs = 64

// checkAttrs returns an error unless a is a start tag's attributes as XML
// allows them: UTF-8 without control characters, each a name, =, and a
// quoted value without <, no name twice.
func checkAttrs(a []byte) error {
	if !utf8.Valid(a) {
		return errors.New("attributes that are not UTF-8")
	}
	if err := checkChars(a); err != nil {
		return err
	}
	var seen [][]byte
	for {
		n := len(a)
		a = trimXMLSpaceLeft(a)
		if len(a) == 0 {
			return nil
		}
		if len(a) == n {
			return errors.New("attributes not apart")
		}
		eq := bytes.IndexByte(a, '=')
		name := trimXMLSpaceRight(a[:max(eq, 0)])
		if eq < 0 || !isName(name) {
			return errors.New("an attribute without a value")
		}
		for _, s := range seen {
			if bytes.Equal(s, name) {
				return fmt.Errorf("attribute %s twice", name)
			}
		}
		if seen = append(seen, name); len(seen) > maxAttrs {
			return fmt.Errorf("more than %d attributes", maxAttrs)
		}
		a = trimXMLSpaceLeft(a[eq+1:])
		if len(a) == 0 || a[0] != '"' && a[0] != '\'' {
			return errors.New("an attribute value without quotes")
		}
		end := bytes.IndexByte(a[1:], a[0])
		if end < 0 || bytes.IndexByte(a[1:end+1], '<') >= 0 {
			return errors.New("an attribute value with <")
		}
		a = a[end+2:]
	}
}

// top is the name of the innermost open element.
func (x *xmlScanner) top() []byte { return x.names[x.starts[len(x.starts)-1]:] }

// pop closes the innermost open element.
func (x *xmlScanner) pop() {
	x.names = x.names[:x.starts[len(x.starts)-1]]
	x.starts = x.starts[:len(x.starts)-1]
}

var xmlEncoding = regexp.MustCompile(`encoding\s*=\s*(["'])([^"']*)["']`)

func localName(name []byte) []byte {
	if i := bytes.IndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// until reads up to and including delim into x.buf and returns it.
func (x *xmlScanner) until(delim string) ([]byte, error) {
	x.buf = x.buf[:0]
	last := delim[len(delim)-1]
	for {
		b, err := x.r.ReadSlice(last)
		x.buf = append(x.buf, b...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return x.buf, err
		}
		if bytes.HasSuffix(x.buf, []byte(delim)) {
			return x.buf, nil
		}
	}
}

// tag reads a start tag's name and attributes up to and including its
// '>', which may not stand inside a quoted attribute value.
func (x *xmlScanner) tag() ([]byte, error) {
	var err error
	x.buf, err = scanTag(x.r, x.buf[:0])
	return x.buf, err
}

// scanTag appends to buf what br holds up to and including the '>' that
// ends a tag, one that does not stand inside a quoted attribute value.
func scanTag(br *bufio.Reader, buf []byte) ([]byte, error) {
	var quote byte
	for {
		b, err := br.ReadSlice('>')
		buf = append(buf, b...)
		for _, c := range b {
			switch {
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case c == quote:
				quote = 0
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		if quote == 0 {
			return buf, nil
		}
	}
}

// decode sets x.chars to raw with its entities decoded (unless cdata) and
// its line ends (CR LF, or CR alone) read as LF, as XML reads them.
func (x *xmlScanner) decode(raw []byte, entities bool) error {
	if !utf8.Valid(raw) {
		return errors.New("the XML's text is not UTF-8")
	}
	if bytes.IndexByte(raw, '\r') < 0 && (!entities || bytes.IndexByte(raw, '&') < 0) {
		x.chars = raw
		return checkChars(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\r':
			out = append(out, '\n')
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
		case c == '&' && entities:
			j := bytes.IndexByte(raw[i:], ';')
			if j < 0 {
				return errors.New("an & that starts no entity")
			}
			r, ok := entity(string(raw[i+1 : i+j]))
			if !ok {
				return fmt.Errorf("an unknown entity %q", raw[i:i+j+1])
			}
			out = utf8.AppendRune(out, r)
			i += j
		default:
			if c < 0x20 && c != '\t' && c != '\n' {
				return fmt.Errorf("a control character %#x in the XML's text", c)
			}
			out = append(out, c)
		}
	}
	x.chars = out
	return nil
}

func checkChars(b []byte) error {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return fmt.Errorf("a control character %#x in the XML's text", c)
		}
	}
	return nil
}

// entity is the character the entity name (between & and ;) stands for.
func entity(name string) (rune, bool) {
	switch name {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	if !strings.HasPrefix(name, "#") {
		return 0, false
	}
	var n uint64
	var err error
	if strings.HasPrefix(name, "#x") {
		n, err = strconv.ParseUint(name[2:], 16, 32)
	} else {
		n, err = strconv.ParseUint(name[1:], 10, 32)
	}
	r := rune(n)
	if err != nil || !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
		return 0, false
	}
	return r, true
}

// attr returns the value of the current start tag's attribute whose
// local name is name.
func (x *xmlScanner) attr(name string) (string, bool) {
	a := x.attrs
	for {
		a = trimXMLSpaceLeft(a)
		eq := bytes.IndexByte(a, '=')
		if eq < 0 {
			return "", false
		}
		key := trimXMLSpaceRight(a[:eq])
		a = trimXMLSpaceLeft(a[eq+1:])
		if len(a) == 0 || a[0] != '"' && a[0] != '\'' {
			return "", false
		}
		end := bytes.IndexByte(a[1:], a[0])
		if end < 0 {
			return "", false
		}
		val := a[1 : end+1]
		a = a[end+2:]
		if string(localName(key)) != name || bytes.HasPrefix(key, []byte("xmlns")) {
			continue
		}
		if bytes.IndexByte(val, '&') < 0 && bytes.IndexByte(val, '\r') < 0 {
			return string(val), true
		}
		saved := x.chars
		if err := x.decode(val, true); err != nil {
			x.chars = saved
			return string(val), true
		}
		v := string(x.chars)
		x.chars = saved
		return v, true
	}
}

// skip reads past the end of the element whose start tag was just read.
func (x *xmlScanner) skip() error {
	depth := len(x.starts)
	for len(x.starts) >= depth {
		if _, err := x.next(); err != nil {
			return noEOF(err)
		}
	}
	return nil
}

// skipIf skips the element just started unless it closed itself.
func (x *xmlScanner) skipIf() error {
	if x.empty {
		return nil
	}
	return x.skip()
}

// text reads the text of the element just started, to its end: its own
// text only, nested elements skipped, as encoding/xml reads an element
// into a string.
func (x *xmlScanner) text() (string, error) {
	if x.empty {
		return "", nil
	}
	depth := len(x.starts)
	var s []byte
	for {
		tok, err := x.next()
		if err != nil {
			return "", noEOF(err)
		}
		if len(x.starts) < depth {
			return string(s), nil
		}
		switch {
		case tok == tokText && len(x.starts) == depth:
			s = append(s, x.chars...)
		case tok == tokStart:
			if err := x.skipIf(); err != nil {
				return "", err
			}
		}
	}
}

// richText reads a shared string (si) or an inline string (is) just
// started: its text (t) and the text of its runs (r), the phonetic runs
// (rPh) left out, as excelize's xlsxSI.String gives it.
func (x *xmlScanner) richText() (string, error) {
	var t string
	var runs []string
	err := x.children(func(name string) error {
		var err error
		switch name {
		case "t":
			t, err = x.text()
		case "r":
			rt := ""
			err = x.children(func(name string) error {
				var err error
				if name == "t" {
					rt, err = x.text()
				}
				return err
			})
			runs = append(runs, rt)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return bstrUnmarshal(t + strings.Join(runs, "")), nil
}

// children reads the element just started to its end, calling fn with
// the name of each child element as it starts; fn may read the child, and
// a child it leaves is skipped.
func (x *xmlScanner) children(fn func(name string) error) error {
	if x.empty {
		return nil
	}
	depth := len(x.starts)
	for {
		tok, err := x.next()
		if err != nil {
			return noEOF(err)
		}
		if len(x.starts) < depth {
			return nil
		}
		if tok != tokStart {
			continue
		}
		open := len(x.starts)
		if err := fn(string(x.name)); err != nil {
			return err
		}
		if len(x.starts) == open {
			if err := x.skipIf(); err != nil {
				return err
			}
		}
	}
}

var bstrEscape = regexp.MustCompile(`_x[a-fA-F\d]{4}_`)

// bstrUnmarshal decodes the escapes (_x000D_) with which a workbook
// writes characters XML cannot hold, as excelize decodes them.
func bstrUnmarshal(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	cursor := 0
	for _, m := range bstrEscape.FindAllStringIndex(s, -1) {
		b.WriteString(s[cursor:m[0]])
		cursor = m[1]
		if s[m[0]:m[1]] == "_x005F_" {
			b.WriteByte('_')
			continue
		}
		v, _ := strconv.Unquote(`"\u` + s[m[0]+2:m[1]-1] + `"`)
		b.WriteString(v)
	}
	b.WriteString(s[cursor:])
	return b.String()
}

// isXMLSpace reports whether c is white space in XML: space, tab, CR, LF.
func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimXMLSpaceLeft is b without its leading XML white space: what
// bytes.TrimLeft(b, " \t\r\n") returns, without building the set on
// each call (the scanner trims every attribute of every cell).
func trimXMLSpaceLeft(b []byte) []byte {
	for len(b) > 0 && isXMLSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// trimXMLSpaceRight is b without its trailing XML white space.
func trimXMLSpaceRight(b []byte) []byte {
	for len(b) > 0 && isXMLSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
