package sheet

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestWorkbookHiddenRowsAndTabs: the survey of a worksheet tells the rows
// the workbook hides, as Excel and openpyxl (hidden="1"), LibreOffice and
// excelize (hidden="true") write them, and not those LibreOffice marks
// hidden="false"; the reader lists the workbook's tabs, a hidden one
// marked so; a workbook read again from the text a Workbooks kept tells
// the same.
func TestWorkbookHiddenRowsAndTabs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "leads.xlsx")
	f := excelize.NewFile()
	rows := [][]any{{"Name", "Phone"}, {"Ada", "+14155550100"}, {"Bo", "+14155550101"}, {"Cy", "+14155550102"}, {"Di", "+14155550103"}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{3, 5} {
		if err := f.SetRowVisible("Sheet1", n, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.NewSheet("Do Not Call"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetSheetVisible("Do Not Call", false); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	check := func(t *testing.T, path string, want []int, tabs []Tab, o Options) {
		t.Helper()
		wb := readWorkbookFacts(t, path, o)
		if wb == nil {
			t.Fatal("no workbook facts")
		}
		if wb.HiddenRows != len(want) || !slices.Equal(wb.FirstHidden, want) {
			t.Errorf("hidden rows %d %v, want %v", wb.HiddenRows, wb.FirstHidden, want)
		}
		for n := 0; n < 8; n++ {
			if got := wb.RowHidden(n); got != slices.Contains(want, n) {
				t.Errorf("RowHidden(%d) = %v", n, got)
			}
		}
		if tabs != nil && !slices.Equal(wb.Tabs, tabs) {
			t.Errorf("tabs %v, want %v", wb.Tabs, tabs)
		}
	}
	tabs := []Tab{{Name: "Sheet1"}, {Name: "Do Not Call", Hidden: true}}
	check(t, path, []int{3, 5}, tabs, Options{})
	wbs := &Workbooks{}
	check(t, path, []int{3, 5}, tabs, Options{Workbooks: wbs})
	check(t, path, []int{3, 5}, tabs, Options{Workbooks: wbs}) // from the kept text
	if wbs.Unpacked() != 1 {
		t.Errorf("unpacked %d times", wbs.Unpacked())
	}

	// Excel and openpyxl write hidden="1"; LibreOffice hidden="false"
	// on every row it shows. An empty hidden row holds nobody. A row of
	// no height is hidden too.
	base := corpusWorkbook(t, t.TempDir())
	sheet := shapeSheet(mainNS,
		`<row r="1" hidden="false"><c r="A1" t="inlineStr"><is><t>Phone</t></is></c></row>`+
			`<row r="2" spans="1:1" hidden="1" x14ac:dyDescent="0.25" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac"><c r="A2"><v>14155550100</v></c></row>`+
			`<row r="3" hidden="false"><c r="A3"><v>14155550101</v></c></row>`+
			`<row r="4" customFormat="false" ht="12.8" hidden="true" customHeight="false" outlineLevel="0" collapsed="false"><c r="A4"><v>14155550102</v></c></row>`+
			`<row r="5" hidden="1"/>`+
			`<row r="6" customFormat="false" ht="12.8" hidden="true" customHeight="false" outlineLevel="0" collapsed="false"><c r="A6" s="1"/><c r="B6" s="1"></c></row>`+
			`<row r="7" hidden="1"><c r="A7" t="inlineStr"><is><t>+14155550107</t></is></c></row>`+
			// A row of height 0, which Excel draws as hidden; one of
			// height 0.5 it shows.
			`<row r="8" ht="0" customHeight="1"><c r="A8"><v>14155550108</v></c></row>`+
			`<row r="9" ht="0.5" customHeight="1"><c r="A9"><v>14155550109</v></c></row>`)
	edited := withParts(t, base, map[string]string{"xl/worksheets/sheet1.xml": sheet})
	check(t, edited, []int{2, 4, 7, 8}, nil, Options{})

	// A text file has no workbook.
	csv := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(csv, []byte("Phone\n+14155550100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenWith(csv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Workbook() != nil || r.Workbook().RowHidden(2) {
		t.Error("a CSV file has workbook facts")
	}
}
