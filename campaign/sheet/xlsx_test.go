package sheet

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// excelizeText is the CSV text of the first worksheet of the workbook at
// path as excelize gives it: two of its readers in step, one with the
// values as stored, one as shown, a cell shown as a date (the shown text
// looks like one) taken as its date. It is how callrun read workbooks
// before worksheetReader, which must give the same text, but for a whole
// number stored in scientific notation, which worksheetReader writes out
// (wholeNumber).
func excelizeText(t *testing.T, path string) string {
	t.Helper()
	wb, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	name := wb.GetSheetList()[0]
	date1904 := false
	if p, err := wb.GetWorkbookProps(); err == nil && p.Date1904 != nil {
		date1904 = *p.Date1904
	}
	raw, err := wb.Rows(name)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := wb.Rows(name)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	width, row := -1, 0
	for raw.Next() {
		shown.Next()
		row++
		rv, err := raw.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		sv, err := shown.Columns()
		if err != nil {
			t.Fatal(err)
		}
		if width < 0 {
			width = len(rv)
		}
		for i, v := range rv {
			if i < len(sv) {
				rv[i] = shownDate(v, sv[i], date1904)
			}
			if rv[i] == v && scientific.MatchString(v) {
				cell, _ := excelize.CoordinatesToCellName(i+1, row)
				if typ, _ := wb.GetCellType(name, cell); typ == excelize.CellTypeNumber || typ == excelize.CellTypeUnset {
					rv[i] = wholeNumber(v)
				}
			}
		}
		writeCSVRow(bw, rv, width)
	}
	bw.Flush()
	return buf.String()
}

var (
	scientific = regexp.MustCompile(`^[-+]?\d+(\.\d+)?[eE][-+]?\d+$`)
	dateShown  = regexp.MustCompile(`(?i)\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d:\d\d|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`)
)

// shownDate is the rule callrun took a date by before worksheetReader:
// a cell whose shown text looks like a date or a time.
func shownDate(raw, shown string, date1904 bool) string {
	if raw == shown || scientific.MatchString(shown) || !dateShown.MatchString(shown) {
		return raw
	}
	if d, ok := dateText(raw, date1904); ok {
		return d
	}
	return raw
}

// workbookText is the CSV text openWorkbook gives of the first worksheet
// of the workbook at path, or its error.
func workbookText(path string) (string, error) {
	rc, _, err := openWorkbook(path, "")
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// corpusWorkbook writes a workbook of every kind of cell a CRM export
// holds: shared and rich text, booleans, errors, formulas, phone numbers
// stored as numbers (also in scientific form), percentages, money, dates
// and times in every built-in format and common custom ones, skipped
// cells and rows, merged cells, escapes, quotes and line ends.
func corpusWorkbook(t testing.TB, dir string) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sh := "Sheet1"
	set := func(cell string, v any) {
		t.Helper()
		if err := f.SetCellValue(sh, cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range []string{"First Name", "Last Name", "Phone", "Email", "Created", "Amount", "Opted Out", "Note"} {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		set(cell, h)
	}
	row := 2
	style := func(s *excelize.Style) int {
		id, err := f.NewStyle(s)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	put := func(col int, v any, styleID int) {
		cell, _ := excelize.CoordinatesToCellName(col, row)
		set(cell, v)
		if styleID > 0 {
			f.SetCellStyle(sh, cell, cell, styleID)
		}
	}
	// Every built-in number format, on a date with a time, a date, a
	// time of day, a phone number and a fraction.
	for id := 0; id <= 58; id++ {
		s := style(&excelize.Style{NumFmt: id})
		for _, v := range []float64{45352.5, 45352, 0.75, 447700900123, 0.125} {
			put(1, fmt.Sprintf("fmt %d", id), 0)
			put(5, v, s)
			row++
		}
	}
	for _, code := range []string{"yyyy-mm-dd", "dd.mm.yyyy", "m/d/yyyy h:mm", "d-mmm-yy", "mmm yyyy", "[h]:mm:ss", "h:mm AM/PM",
		"dd/mm/yyyy hh:mm:ss", "0.00%", "\"$\"#,##0.00", "0", "@", "#,##0", "[$-409]mmmm d, yyyy", "yyyy\\-mm\\-dd\\ hh:mm", "0.0E+00", "000000000000"} {
		s := style(&excelize.Style{CustomNumFmt: &code})
		for _, v := range []float64{45352.5, 45352, 0.75, 447700900123} {
			put(1, code, 0)
			put(5, v, s)
			row++
		}
	}
	text := style(&excelize.Style{NumFmt: 49})
	put(1, "Ada", 0)
	put(2, "Lovelace", 0)
	put(3, "4.47700900123E+11", 0)
	f.SetCellFloat(sh, "C"+strconv.Itoa(row), 447700900123, -1, 64)
	put(4, "ada@example.com", 0)
	put(7, true, 0)
	put(8, "says \"hi\",\ntwice\r\n_x000D_ and _x005F_x000D_", 0)
	row++
	put(1, "Grace", 0)
	put(3, "14155550132", text)
	put(7, false, 0)
	// Formulas with the values saved beside them, as Excel saves them.
	f.SetCellInt(sh, "F"+strconv.Itoa(row), 7)
	f.SetCellFormula(sh, "F"+strconv.Itoa(row), "3+4")
	f.SetCellInt(sh, "H"+strconv.Itoa(row), 0)
	f.SetCellFormula(sh, "H"+strconv.Itoa(row), "CONCAT(A1,B1)")
	row++
	if err := f.SetCellRichText(sh, "A"+strconv.Itoa(row), []excelize.RichTextRun{{Text: "Zo"}, {Text: "ë", Font: &excelize.Font{Bold: true}}, {Text: " Ørsted "}}); err != nil {
		t.Fatal(err)
	}
	put(3, 4520123456, 0)
	put(6, 0.12, style(&excelize.Style{NumFmt: 9}))
	put(8, "  spaced  ", 0)
	row += 3 // rows the worksheet skips
	put(2, "only B", 0)
	put(6, -1234.5, style(&excelize.Style{NumFmt: 4}))
	put(8, "<&>'\"", 0)
	f.MergeCell(sh, "A"+strconv.Itoa(row+1), "C"+strconv.Itoa(row+1))
	row++
	put(1, "merged", 0)
	row++
	put(12, "past the header", 0)
	path := filepath.Join(dir, "corpus.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// withWorksheet writes a copy of the workbook at path whose first
// worksheet's XML is sheetXML, and returns the copy's path.
func withWorksheet(t *testing.T, path, sheetXML string) string {
	t.Helper()
	return withParts(t, path, map[string]string{"xl/worksheets/sheet1.xml": sheetXML})
}

// withParts writes a copy of the workbook at path with the parts named
// in parts replaced (or added, when it has none of the name), and
// returns the copy's path.
func withParts(t *testing.T, path string, parts map[string]string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := filepath.Join(t.TempDir(), "edited.xlsx")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := parts[f.Name]; ok {
			io.WriteString(w, p)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, rc)
		rc.Close()
	}
	// Parts the workbook does not have are added.
	var added []string
	for name := range parts {
		if !slices.ContainsFunc(zr.File, func(f *zip.File) bool { return f.Name == name }) {
			added = append(added, name)
		}
	}
	slices.Sort(added)
	for _, name := range added {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, parts[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWorksheetReaderMatchesExcelize: every workbook in the repository,
// and a corpus of every kind of cell, read by worksheetReader give the
// text excelize's readers gave, cell for cell. The one difference is
// meant: a date in a date format whose shown text does not look like a
// date (a year alone, a weekday, a month's initial) was its serial
// number and is now its date.
func TestWorksheetReaderMatchesExcelize(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*.xlsx"))
	for _, dir := range []string{filepath.Join("..", "testdata"), "testdata", filepath.Join("..", "..", "examples")} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".xlsx") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 3 {
		t.Fatalf("found %d workbooks in the repository: %q", len(paths), paths)
	}
	paths = append(paths, corpusWorkbook(t, t.TempDir()))
	for _, p := range paths {
		got, err := workbookText(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		want := excelizeText(t, p)
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Errorf("%s: line %d\n got %s\nwant %s", p, i+1, gl[i], wl[i])
					break
				}
			}
			if len(gl) != len(wl) {
				t.Errorf("%s: %d lines, excelize %d", p, len(gl), len(wl))
			}
		}
	}
}

// TestWorksheetReaderDateFormats: a date in a date format whose shown text
// excelize's rule did not take for a date (a year alone, a weekday, a
// month's initial) is read as its date.
func TestWorksheetReaderDateFormats(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	defer f.Close()
	f.SetCellValue("Sheet1", "A1", "Signed Up")
	for i, code := range []string{"yyyy", "dddd", "mmmmm", "yyyy-mm-dd"} {
		s, err := f.NewStyle(&excelize.Style{CustomNumFmt: &code})
		if err != nil {
			t.Fatal(err)
		}
		cell := "A" + strconv.Itoa(i+2)
		f.SetCellValue("Sheet1", cell, 45352)
		f.SetCellStyle("Sheet1", cell, cell, s)
	}
	path := filepath.Join(t.TempDir(), "dates.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	got, err := workbookText(path)
	if want := "\"Signed Up\"\n" + strings.Repeat("\"2024-03-01\"\n", 4); err != nil || got != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}

// TestWorksheetReaderXML: worksheet XML as other programs than Excel
// write it (namespace prefixes, comments, CDATA, cells and rows without
// their reference, entities, line ends, self-closing elements, a formula
// whose saved value is the empty text, an inline string with runs, a
// merged range past the rows) reads as excelize reads it.
func TestWorksheetReaderXML(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	for _, body := range []string{
		`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Phone</t></is></c></row>` +
			`<row r="2"><c r="A2" t="inlineStr" cm='a>"b' d="1&gt;0"><is><t xml:space="preserve"> Ada &amp; Bo&#x41;&#66; </t></is></c><c r="B2"><v>447700900123</v></c></row>` +
			`<row><c t="inlineStr"><is><r><t>Gr</t></r><r><rPr><b/></rPr><t>ace</t></r><rPh><t>x</t></rPh></is></c><c><v>4.47700900123E+11</v></c></row>` +
			`<row r="6" spans="1:2"><c r="B6" s="0" t="str"><f>A1</f><v></v></c></row><row r="7"/><row r="8"><c r="A8" t="b"><v>1</v></c><c r="B8" t="e"><v>#N/A</v></c></row>` +
			`<row r="9"><c r="A9" t="str"><v>line1` + "\r\n" + `line2` + "\r" + `line3</v></c><c r="B9"><v><![CDATA[12]]></v></c></row>` +
			`<!-- a comment --><row r="10"><c r="A10" t="inlineStr"><is><t>a<!-- x -->b</t></is></c><c r="C10" t="d"><v>2024-03-01T00:00:00Z</v></c></row>`,
		`<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>Name</x:t></x:is></x:c><x:c r="B1"><x:v>1</x:v></x:c></x:row>` +
			`<x:row r="2"><x:c r="A2" t="s"><x:v>0</x:v></x:c><x:c r="B2" ><x:v >2</x:v></x:c></x:row>`,
		``,
	} {
		prefix := ""
		if strings.Contains(body, "<x:") {
			prefix = "x:"
		}
		sheet := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
			`<` + prefix + `worksheet xmlns` + strings.TrimSuffix(":"+prefix, ":") + `="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<` + prefix + `dimension ref="A1:C10"/><` + prefix + `sheetData>` + body + `</` + prefix + `sheetData><` + prefix + `mergeCells count="1"><` + prefix + `mergeCell ref="A20:B21"/></` + prefix + `mergeCells></` + prefix + `worksheet>`
		path := withWorksheet(t, base, sheet)
		got, err := workbookText(path)
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if want := excelizeText(t, path); got != want {
			t.Errorf("%s:\n got %q\nwant %q", body, got, want)
		}
	}
}

// TestWorksheetReaderFailsClosed: a cell or worksheet it cannot read is
// an error naming the cell, or the row after which the worksheet broke,
// never an empty value or a sheet that silently ends (excelize read
// each of these as an empty cell, or as the end of the worksheet).
func TestWorksheetReaderFailsClosed(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	head := `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Phone</t></is></c></row>`
	for _, tt := range []struct{ rows, want string }{
		{`<row r="2"><c r="A2" t="s"><v>99999</v></c></row></sheetData></worksheet>`, `cell A2 (row 2, column A): it names shared string "99999", and the workbook has`},
		{`<row r="2"><c r="A2" t="s"><v>x</v></c></row></sheetData></worksheet>`, `cell A2 (row 2, column A): it names shared string "x"`},
		{`<row r="2"><c r="A2" s="x"><v>1</v></c></row></sheetData></worksheet>`, `cell A2 (row 2, column A): its style "x" is not a number`},
		{`<row r="2"><c r="A2"><v>1</v></c></row><row r="3"><c r="A3"><v>1`, `reading cell A3 (row 3, column A): the XML ends in text`},
		{`<row r="2"><c r="A2"><v>1</v></c></row><row r="3"><c r="A3"><v>1</c></row></sheetData></worksheet>`, `unexpected </c>`},
		{`<row r="2"><c r="A2"><v>&bogus;</v></c></row></sheetData></worksheet>`, `cell A2 (row 2, column A): an unknown entity "&bogus;"`},
		{`<row r="3"><c r="A3"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData></worksheet>`, `row 2 comes after row 3`},
		{`<row r="2"><c r="B2"><v>1</v></c><c r="A2"><v>2</v></c></row></sheetData></worksheet>`, `reading cell A2 (row 2): it comes after the cell of column 2`},
		{`<row r="2"><c r="A2"><v>1</v></c></row>`, `the XML ends inside <sheetData>`},
		{"<row r=\"2\"><c r=\"A2\" t=\"inlineStr\"><is><t>\xff</t></is></c></row></sheetData></worksheet>", `cell A2 (row 2, column A): the XML's text is not UTF-8`},
		{`<row r="2"><c r="A2"><v>]]></v></c></row></sheetData></worksheet>`, `cell A2 (row 2, column A): the XML's text holds ]]>`},
		{"<row r=\"2\"><c r=\"A2\" t=\"inlineStr\"><is><t\xa1\xdc/><t>x</t></is></c></row></sheetData></worksheet>", `cell A2 (row 2, column A): a tag named "t\xa1\xdc"`},
		{"<row r=\"2\"><c r=\"A2\" t=\"s\xff\"><v>1</v></c></row></sheetData></worksheet>", `attributes that are not UTF-8`},
	} {
		path := withWorksheet(t, base, head+tt.rows)
		got, err := workbookText(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %q, %v; want an error saying %q", tt.rows, got, err, tt.want)
		}
	}
	// Read as a sheet, the error names the file too.
	path := withWorksheet(t, base, head+`<row r="2"><c r="A2" t="s"><v>99999</v></c></row></sheetData></worksheet>`)
	s, err := OpenWith(path, Options{})
	if err == nil {
		defer s.Close()
		for err == nil {
			_, err = s.Next()
		}
	}
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "cell A2 (row 2, column A)") {
		t.Errorf("read as a sheet: %v", err)
	}
}

// FuzzWorksheetXML reads arbitrary rows of a worksheet's XML: the reader
// must not panic, and whatever it reads without an error must be the text
// excelize's readers give. Run it with:
//
//	go test ./campaign/sheet -run '^$' -fuzz FuzzWorksheetXML -fuzztime 60s
func FuzzWorksheetXML(f *testing.F) {
	for _, s := range []string{
		`<row r="1"><c r="A1" t="inlineStr"><is><t>Phone</t></is></c><c r="B1" t="s"><v>0</v></c></row><row r="2"><c r="A2"><v>4.47700900123E+11</v></c><c r="C2" s="1"><v>45352.5</v></c></row>`,
		`<row><c t="inlineStr"><is><r><t>a</t></r><r><t xml:space="preserve"> b&amp;</t></r></is></c><c t="b"><v>1</v></c><c t="e"><v>#N/A</v></c></row><row r="4"/>`,
		`<row r="1"><c r="B1" t="str"><f>A1</f><v>x` + "\r\n" + `y</v></c><c r="D1"><v><![CDATA[7]]></v></c></row><!-- c --><row r="3"><c r="A3" t="d"><v>2024-03-01</v></c></row>`,
	} {
		f.Add(s)
	}
	base := corpusWorkbook(f, f.TempDir())
	f.Fuzz(func(t *testing.T, rows string) {
		path := withWorksheet(t, base, `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+rows+`</sheetData></worksheet>`)
		got, err := workbookText(path)
		if err != nil {
			return
		}
		if want := excelizeText(t, path); got != want {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
}

// TestWorksheetReaderExcelShape: a worksheet and shared strings as Excel
// itself writes them (every cell styled, empty styled cells, row
// attributes of its extensions, shared formulas with their cached values,
// shared strings with rich runs and phonetic runs, a date in a custom
// format) read as excelize reads them.
func TestWorksheetReaderExcelShape(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	sst := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
		`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="6" uniqueCount="6">` +
		`<si><t>First Name</t></si><si><t>Phone</t></si><si><t>Created</t></si>` +
		`<si><r><rPr><b/><sz val="11"/><rFont val="Calibri"/></rPr><t>Jür</t></r><r><rPr><sz val="11"/></rPr><t xml:space="preserve">gen </t></r><rPh sb="0" eb="1"><t>ユ</t></rPh><phoneticPr fontId="1"/></si>` +
		`<si><t>Line one_x000D_` + "\n" + `line two</t></si><si><t/></si></sst>`
	sheet := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
		`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac xr" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision">` +
		`<dimension ref="A1:D4"/><sheetViews><sheetView tabSelected="1" workbookViewId="0"/></sheetViews><sheetFormatPr defaultRowHeight="15" x14ac:dyDescent="0.25"/><cols><col min="1" max="1" width="12" customWidth="1"/></cols>` +
		`<sheetData><row r="1" spans="1:4" x14ac:dyDescent="0.25"><c r="A1" s="1" t="s"><v>0</v></c><c r="B1" s="1" t="s"><v>1</v></c><c r="C1" s="1" t="s"><v>2</v></c><c r="D1" s="1"/></row>` +
		`<row r="2" spans="1:4" x14ac:dyDescent="0.25"><c r="A2" s="1" t="s"><v>3</v></c><c r="B2" s="1"><v>4.47700900123E+11</v></c><c r="C2" s="2"><v>45352.604166666664</v></c><c r="D2" s="1"><f>B2*2</f><v>895401800246</v></c></row>` +
		`<row r="3" spans="1:4" ht="30" customHeight="1" x14ac:dyDescent="0.25"><c r="A3" s="1" t="s"><v>4</v></c><c r="B3" s="1"/><c r="C3" s="2"/><c r="D3" s="1"><f t="shared" ref="D3:D4" si="0">B3*2</f><v>0</v></c></row>` +
		`<row r="4" spans="1:4"><c r="A4" t="s"><v>5</v></c><c r="D4" s="1"><f t="shared" si="0"/><v>0</v></c></row>` +
		`</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`
	styles := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
		`<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy\ hh:mm"/></numFmts>` +
		`<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
		`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
		`<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
		`<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>` +
		`<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`
	sheet = strings.ReplaceAll(sheet, `<c r="C3" s="2"/>`, `<c r="C3" s="3"><v>45352</v></c>`)
	path := withParts(t, base, map[string]string{"xl/worksheets/sheet1.xml": sheet, "xl/sharedStrings.xml": sst, "xl/styles.xml": styles})
	got, err := workbookText(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := excelizeText(t, path); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if want := `"Jürgen ","447700900123","2024-03-01 14:30:00","895401800246"`; !strings.Contains(got, want) || !strings.Contains(got, `"2024-03-01","0"`) {
		t.Errorf("the rich text or the phone number is not as written: %q", got)
	}
}
