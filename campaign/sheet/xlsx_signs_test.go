package sheet

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
)

// inline is a cell of inline text.
func inline(ref, text string) string {
	return `<c r="` + ref + `" t="inlineStr"><is><t>` + text + `</t></is></c>`
}

// TestWorkbookFormulaNeverComputed: a formula cell whose value was never
// computed, as excelize (type str, no value), openpyxl (no type, an empty
// value) and a shared formula's other cells leave it, makes the whole
// worksheet unreadable: opening it fails, before any row is read, naming
// the file, the worksheet, the row and the cell. A formula whose value
// was saved reads as that value, the empty text Excel saves for a
// formula that gives "" included.
func TestWorkbookFormulaNeverComputed(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	head := inline("A1", "Phone") + inline("B1", "Do Not Call")
	for _, tt := range []struct{ name, cell string }{
		{"excelize", `<c r="B5" t="str"><f>IF(A5="dnc",TRUE,FALSE)</f></c>`},
		{"openpyxl", `<c r="B5"><f>IF(A5="dnc",TRUE,FALSE)</f><v></v></c>`},
		{"openpyxl, self-closing value", `<c r="B5"><f>IF(A5="dnc",TRUE,FALSE)</f><v/></c>`},
		{"shared formula", `<c r="B5" t="b"><f t="shared" si="0"/></c>`},
		{"boolean", `<c r="B5" t="b"><f>TRUE</f><v></v></c>`},
		{"prefixed", `<x:c r="B5"><x:f>1</x:f></x:c>`},
		{"no reference", `<c><v>14155550104</v></c><c><f>1</f></c>`},
	} {
		cell := tt.cell
		if tt.name != "no reference" {
			cell = `<c r="A5"><v>14155550104</v></c>` + cell
		}
		body := `<row r="1">` + head + `</row>`
		for r := 2; r <= 4; r++ {
			body += fmt.Sprintf(`<row r="%d"><c r="A%d"><v>1415555010%d</v></c></row>`, r, r, r)
		}
		body += `<row r="5">` + cell + `</row><row r="6"><c r="A6"><v>14155550106</v></c></row>`
		path := withWorksheet(t, base, `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+body+`</sheetData></worksheet>`)
		s, err := Open(path)
		var se *Error
		if !errors.As(err, &se) || se.File != path || se.Row != 5 {
			t.Errorf("%s: Open: %v, %v; want a *sheet.Error of row 5", tt.name, s, err)
			continue
		}
		want := path + ` row 5: worksheet "Sheet1", cell B5: it holds a formula whose value was never computed (the file was written by a program, not saved by Excel): open it in Excel or LibreOffice and save it, then run again`
		if err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, err, want)
		}
	}
	body := `<row r="1">` + head + `</row>` +
		`<row r="2"><c r="A2"><v>14155550102</v></c><c r="B2" t="str"><f>IF(A2=0,"yes","")</f><v></v></c></row>` +
		`<row r="3"><c r="A3"><v>14155550103</v></c><c r="B3" t="b"><f>A3&gt;0</f><v>1</v></c></row>` +
		`<row r="4"><c r="A4"><f>14155550100+4</f><v>14155550104</v></c><c r="B4" t="str"><f t="shared" ref="B4:B5" si="0">"yes"</f><v>yes</v></c></row>` +
		`<row r="5"><c r="A5"><v>14155550105</v></c><c r="B5" t="str"><f t="shared" si="0"/><v>yes</v></c></row>`
	path := withWorksheet(t, base, shapeSheet(mainNS, body))
	got, err := workbookText(path)
	want := `"Phone","Do Not Call"` + "\n" + `"14155550102",""` + "\n" + `"14155550103","1"` + "\n" + `"14155550104","yes"` + "\n" + `"14155550105","yes"` + "\n"
	if err != nil || got != want {
		t.Errorf("formulas with their values: %q, %v; want %q", got, err, want)
	}
}

// TestWorkbookFormulaStale: a workbook that asks to be computed again
// when opened (calcPr fullCalcOnLoad="1", what XlsxWriter and so pandas
// write, each formula saved as 0), or whose calculation engine is 0
// (Apache POI's way to ask), or that is set to calculate by hand
// (calcMode="manual", its values maybe older than its cells), refuses a
// worksheet with a formula, naming its first: a flag's =IF(...) saved as
// 0 would read as a no. One without a formula reads; so does one whose
// workbook does not ask, and one that asks only for every calculation in
// full (forceFullCalc alone), which Excel keeps when it saves computed
// values: refused, a file saved by Excel as the message says would be
// refused again.
func TestWorkbookFormulaStale(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	zr, err := zip.OpenReader(base)
	if err != nil {
		t.Fatal(err)
	}
	var book string
	for _, f := range zr.File {
		if f.Name == "xl/workbook.xml" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			book = string(b)
		}
	}
	zr.Close()
	if !strings.Contains(book, "</workbook>") {
		t.Fatalf("the workbook part: %q", book)
	}
	// The corpus's workbook has a calcPr of its own, which goes.
	book = regexp.MustCompile(`<calcPr[^>]*(/>|></calcPr>)`).ReplaceAllString(book, "")
	calc := func(attrs string) string {
		return strings.Replace(book, "</workbook>", `<calcPr calcId="124519"`+attrs+`/></workbook>`, 1)
	}
	head := `<row r="1">` + inline("A1", "Phone") + inline("B1", "Do Not Call") + `</row>`
	formulas := head + `<row r="2"><c r="A2"><v>14155550102</v></c><c r="B2"><v>0</v></c></row>` +
		`<row r="3"><c r="A3"><v>14155550103</v></c><c r="B3"><f>IF(A3=0,"yes","no")</f><v>0</v></c></row>`
	values := head + `<row r="2"><c r="A2"><v>14155550102</v></c><c r="B2"><v>0</v></c></row>`
	for _, tt := range []struct{ name, book, want string }{
		{"fullCalcOnLoad (XlsxWriter, pandas)", calc(` fullCalcOnLoad="1"`), staleFormula},
		{"fullCalcOnLoad true", calc(` fullCalcOnLoad="true"`), staleFormula},
		{"both, and automatic", calc(` calcMode="auto" fullCalcOnLoad="1" forceFullCalc="1"`), staleFormula},
		{"calcId 0 (Apache POI)", strings.Replace(book, "</workbook>", `<calcPr calcId="0"/></workbook>`, 1), calcIDZeroFormula},
		{"manual", calc(` calcMode="manual"`), manualFormula},
		{"manual, prefixed", strings.Replace(book, "</workbook>", `<x:calcPr xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" calcId="191029" calcMode="manual"/></workbook>`, 1), manualFormula},
	} {
		path := withParts(t, base, map[string]string{"xl/workbook.xml": tt.book, "xl/worksheets/sheet1.xml": shapeSheet(mainNS, formulas)})
		_, err = Open(path)
		var se *Error
		want := path + ` row 3: worksheet "Sheet1", cell B3: ` + tt.want
		if !errors.As(err, &se) || se.Row != 3 || err.Error() != want {
			t.Errorf("%s: a formula: %v; want %s", tt.name, err, want)
		}
		path = withParts(t, base, map[string]string{"xl/workbook.xml": tt.book, "xl/worksheets/sheet1.xml": shapeSheet(mainNS, values)})
		if got, err := workbookText(path); err != nil || got != `"Phone","Do Not Call"`+"\n"+`"14155550102","0"`+"\n" {
			t.Errorf("%s: no formula: %q, %v", tt.name, got, err)
		}
	}
	for _, tt := range []struct{ name, book string }{
		{"Excel", calc("")},
		{"automatic", calc(` calcMode="auto" fullCalcOnLoad="0" forceFullCalc="false"`)},
		{"forceFullCalc alone (Excel's ForceFullCalculation)", calc(` forceFullCalc="1"`)},
		{"no calcPr", book},
		{"manual tables only", calc(` calcMode="autoNoTable"`)},
	} {
		path := withParts(t, base, map[string]string{"xl/workbook.xml": tt.book, "xl/worksheets/sheet1.xml": shapeSheet(mainNS, formulas)})
		if got, err := workbookText(path); err != nil || !strings.HasSuffix(got, `"14155550103","0"`+"\n") {
			t.Errorf("%s: a formula in a workbook Excel saved: %q, %v", tt.name, got, err)
		}
	}
}

// TestWorksheetReaderFormulaNeverComputed: the reading of the rows, too,
// refuses a formula cell without a value, should one pass the survey
// before it, naming the cell.
func TestWorksheetReaderFormulaNeverComputed(t *testing.T) {
	t.Parallel()
	xml := `<worksheet><sheetData><row r="1">` + inline("A1", "Phone") + `</row><row r="2"><c r="A2"><f>1+1</f></c></row></sheetData></worksheet>`
	wr := &worksheetReader{x: newXMLScanner(strings.NewReader(xml))}
	var b strings.Builder
	err := wr.writeCSV(&b)
	if err == nil || !strings.Contains(err.Error(), "reading cell A2 (row 2, column A): it holds a formula whose value was never computed") {
		t.Errorf("writeCSV: %v", err)
	}
}

// TestWorkbookMergedCells: every cell of a merged range below the header
// reads as the range's top-left cell, the value a person sees: a "Yes"
// merged down a do-not-call column, or across from the column beside
// it. A title merged across the row above the header, a footer merged
// below the rows, a range past the last row or right of the header's
// columns read as the workbook stores them.
func TestWorkbookMergedCells(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	rows := `<row r="1">` + inline("A1", "Call list") + `</row>` +
		`<row r="2">` + inline("A2", "Phone") + inline("B2", "Name") + inline("C2", "Notes") + inline("D2", "Do Not Call") + `</row>` +
		`<row r="3"><c r="A3"><v>14155550103</v></c>` + inline("B3", "Ada") + inline("D3", "Yes") + `</row>` +
		`<row r="4"><c r="A4"><v>14155550104</v></c>` + inline("B4", "Bo") + `<c r="D4"/></row>` +
		`<row r="5"><c r="A5"><v>14155550105</v></c><c r="D5" t="inlineStr"><is><t>No</t></is></c></row>` + // hidden under D3:D5
		`<row r="6"><c r="A6"><v>14155550106</v></c>` + inline("C6", "Yes") + `</row>` +
		`<row r="7"><c r="A7"><v>14155550107</v></c>` + inline("F7", "x") + `</row>` +
		`<row r="8">` + inline("A8", "Total: 5") + `</row>`
	merges := []string{"A1:D1", "D3:D5", "C6:D6", "F7:G8", "A8:D8", "A20:D22"}
	var m strings.Builder
	fmt.Fprintf(&m, `<mergeCells count="%d">`, len(merges))
	for _, ref := range merges {
		m.WriteString(`<mergeCell ref="` + ref + `"/>`)
	}
	m.WriteString(`</mergeCells>`)
	sheet := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + mainNS + `<sheetData>` + rows + `</sheetData>` + m.String() + `<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`
	path := withWorksheet(t, base, sheet)
	got, err := workbookText(path)
	want := `"Call list"` + "\n" +
		`"Phone","Name","Notes","Do Not Call"` + "\n" +
		`"14155550103","Ada","","Yes"` + "\n" +
		`"14155550104","Bo","","Yes"` + "\n" +
		`"14155550105","","","Yes"` + "\n" +
		`"14155550106","","Yes","Yes"` + "\n" +
		`"14155550107","","","","","x"` + "\n" +
		`"Total: 5"` + "\n"
	if err != nil || got != want {
		t.Fatalf("got %q (%v)\nwant %q", got, err, want)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h := s.Header(); strings.Join(h, "|") != "Phone|Name|Notes|Do Not Call" {
		t.Errorf("header %q; want row 2's", h)
	}
}

// TestWorkbookMergedCellsBound: a worksheet with more merged ranges than
// the reader keeps is refused, with what to do.
func TestWorkbookMergedCellsBound(t *testing.T) {
	defer func(n int) { maxMergedRanges = n }(maxMergedRanges)
	maxMergedRanges = 3
	base := corpusWorkbook(t, t.TempDir())
	rows := `<row r="1">` + inline("A1", "Phone") + inline("B1", "Do Not Call") + `</row>`
	merges := `<mergeCells count="4"><mergeCell ref="B2:B3"/><mergeCell ref="B4:B5"/><mergeCell ref="B6:B7"/><mergeCell ref="B8:B9"/></mergeCells>`
	sheet := `<?xml version="1.0" encoding="UTF-8"?>` + mainNS + `<sheetData>` + rows + `</sheetData>` + merges + `</worksheet>`
	_, err := Open(withWorksheet(t, base, sheet))
	if err == nil || !strings.Contains(err.Error(), `cannot read worksheet "Sheet1": it has more than 3 merged ranges of cells: unmerge them`) {
		t.Errorf("Open: %v", err)
	}
}
