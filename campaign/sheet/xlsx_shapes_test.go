package sheet

import (
	"archive/zip"
	"fmt"
	"io"
	"strings"
	"testing"
)

// shapeStyles is a styles part as the programs below write it: General,
// the built-in date formats 14 and 22, a custom ISO date, Text (49), a
// custom "0", Excel's special format for US phone numbers, and a custom
// format of leading zeros.
const shapeStyles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
	`<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="4"><numFmt numFmtId="164" formatCode="yyyy\-mm\-dd"/><numFmt numFmtId="165" formatCode="0"/>` +
	`<numFmt numFmtId="166" formatCode="[&lt;=9999999]###\-####;\(###\)\ ###\-####"/><numFmt numFmtId="167" formatCode="00000000000"/></numFmts>` +
	`<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills>` +
	`<borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
	`<cellXfs count="8"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
	`<xf numFmtId="22" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
	`<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
	`<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="167" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>` +
	`</styleSheet>`

// shapeSheet wraps rows in a worksheet as the programs below open it.
func shapeSheet(head, rows string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + head + `<sheetData>` + rows + `</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`
}

const mainNS = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`

// TestWorksheetReaderToolShapes: workbooks shaped as LibreOffice Calc,
// Google Sheets, openpyxl, Apache POI (XSSF and its streaming SXSSF, which
// CRM exports use) and Numbers write them read as excelize reads them,
// and the cells callrun decides on (phone, consent date, do-not-call)
// read as the program meant them.
func TestWorksheetReaderToolShapes(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	for _, tt := range []struct {
		tool, sst, sheet, workbook string
		want                       []string // fragments of the CSV text
	}{
		{
			tool: "LibreOffice Calc",
			sst: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
				`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="8" uniqueCount="8"><si><t xml:space="preserve">Name</t></si><si><t xml:space="preserve">Phone</t></si>` +
				`<si><t xml:space="preserve">Consent</t></si><si><t xml:space="preserve">DNC</t></si><si><t xml:space="preserve"> Ada  Lovelace </t></si><si><t xml:space="preserve">Yes</t></si>` +
				`<si><t xml:space="preserve">+44 7700 900123</t></si><si><t xml:space="preserve">line one` + "\r\n" + `line two&#13;</t></si></sst>`,
			sheet: shapeSheet(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheetPr filterMode="false"><pageSetUpPr fitToPage="false"/></sheetPr><dimension ref="A1:E4"/><sheetViews><sheetView showFormulas="false" workbookViewId="0"><selection pane="topLeft" activeCell="A1" activeCellId="0" sqref="A1"/></sheetView></sheetViews><sheetFormatPr defaultColWidth="11.53515625" defaultRowHeight="12.8" zeroHeight="false" outlineLevelRow="0" outlineLevelCol="0"/>`,
				`<row r="1" customFormat="false" ht="12.8" hidden="false" customHeight="false" outlineLevel="0" collapsed="false"><c r="A1" s="0" t="s"><v>0</v></c><c r="B1" s="0" t="s"><v>1</v></c><c r="C1" s="0" t="s"><v>2</v></c><c r="D1" s="0" t="s"><v>3</v></c><c r="E1" s="0" t="s"><v>7</v></c></row>`+
					`<row r="2" customFormat="false" ht="12.8" hidden="false" customHeight="false" outlineLevel="0" collapsed="false"><c r="A2" s="0" t="s"><v>4</v></c><c r="B2" s="0" t="n"><v>447700900123</v></c><c r="C2" s="1" t="n"><v>45352</v></c><c r="D2" s="0" t="s"><v>5</v></c><c r="E2" s="0" t="str"><f aca="false">A2&amp;B2</f><v> Ada  Lovelace 447700900123</v></c></row>`+
					`<row r="3" customFormat="false" ht="12.8" hidden="false" customHeight="false" outlineLevel="0" collapsed="false"><c r="A3" s="0" t="s"><v>6</v></c><c r="B3" s="0" t="s"><v>6</v></c><c r="C3" s="2" t="n"><v>45352.6041666667</v></c><c r="D3" s="0" t="b"><v>1</v></c><c r="E3" s="0" t="e"><f aca="false">1/0</f><v>#DIV/0!</v></c></row>`+
					`<row r="4" customFormat="false" ht="12.8" hidden="false" customHeight="false" outlineLevel="0" collapsed="false"><c r="B4" s="5" t="n"><v>14155550100</v></c><c r="C4" s="3" t="n"><v>45352</v></c></row>`),
			want: []string{`" Ada  Lovelace ","447700900123","2024-03-01","Yes"`, `"+44 7700 900123","+44 7700 900123","2024-03-01 14:30:00","1","#DIV/0!"`, `,"14155550100","2024-03-01"`, "line one\nline two\r"},
		},
		{
			tool: "Google Sheets",
			sst: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
				`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="6" uniqueCount="6"><si><t>Name</t></si><si><t>Phone</t></si><si><t>Consent</t></si><si><t>DNC</t></si><si><t>Grace</t></si><si><t>0014155550132</t></si></sst>`,
			sheet: shapeSheet(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:etc="http://www.wps.cn/officeDocument/2017/etCustomData"><sheetPr><outlinePr summaryBelow="0" summaryRight="0"/></sheetPr><sheetViews><sheetView workbookViewId="0"/></sheetViews><sheetFormatPr customHeight="1" defaultColWidth="12.63" defaultRowHeight="15.75"/><cols><col customWidth="1" min="1" max="4" width="12.63"/></cols>`,
				`<row r="1"><c r="A1" s="1" t="s"><v>0</v></c><c r="B1" s="1" t="s"><v>1</v></c><c r="C1" s="1" t="s"><v>2</v></c><c r="D1" s="1" t="s"><v>3</v></c></row>`+
					`<row r="2"><c r="A2" s="4" t="s"><v>4</v></c><c r="B2" s="4" t="s"><v>5</v></c><c r="C2" s="3"><v>45352.0</v></c><c r="D2" s="4" t="b"><v>1</v></c></row>`+
					`<row r="3"><c r="A3" s="4" t="str"><f>UPPER(A2)</f><v>GRACE</v></c><c r="B3" s="4"><v>1.4155550132E10</v></c><c r="C3" s="4"/><c r="D3" s="4"/></row>`),
			// Google writes a header row styled with the date format (s="1"): its text stays text.
			want: []string{`"Name","Phone","Consent","DNC"`, `"Grace","0014155550132","2024-03-01","1"`, `"GRACE","14155550132"`},
		},
		{
			tool: "openpyxl",
			sst: `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" uniqueCount="5"><si><t>Name</t></si><si><t>Phone</t></si><si><t>Consent</t></si><si><t>DNC</t></si>` +
				`<si><t xml:space="preserve">  Zoë  </t></si></sst>`,
			sheet: shapeSheet(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetPr><outlinePr summaryBelow="1" summaryRight="1"/><pageSetUpPr/></sheetPr><dimension ref="A1:E2"/><sheetViews><sheetView workbookViewId="0"><selection activeCell="A1" sqref="A1"/></sheetView></sheetViews><sheetFormatPr baseColWidth="8" defaultRowHeight="15"/>`,
				`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row>`+
					`<row r="2"><c r="A2" t="s"><v>4</v></c><c r="B2" t="n"><v>447700900123</v></c><c r="C2" s="2" t="n"><v>45352.5</v></c><c r="D2" t="b"><v>0</v></c></row>`+
					`<row r="3"><c r="A3" t="inlineStr"><is><t>+447700900123</t></is></c><c r="B3" t="n"><v>4.47700900123e+11</v></c><c r="C3" s="1" t="n"><v>45352</v></c><c r="D3" t="str"><v>Yes</v></c></row>`),
			want: []string{`"  Zoë  ","447700900123","2024-03-01 12:00:00","0"` + "\n", `"+447700900123","447700900123","2024-03-01","Yes"` + "\n"},
		},
		{
			tool: "Apache POI (XSSF)",
			sst: `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
				`<sst count="5" uniqueCount="5" xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>Name</t></si><si><t>Phone</t></si><si><t>Consent</t></si><si><t>Do Not Call</t></si><si><t>Yes</t></si></sst>`,
			sheet: shapeSheet(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:D3"/><sheetViews><sheetView workbookViewId="0" tabSelected="true"/></sheetViews><sheetFormatPr defaultRowHeight="15.0"/>`,
				`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row>`+
					`<row r="2"><c r="A2" t="s"><v>4</v></c><c r="B2" t="n"><v>1.55555501E10</v></c><c r="C2" s="1" t="n"><v>45352.0</v></c><c r="D2" t="s"><v>4</v></c></row>`+
					`<row r="3"><c r="A3" t="n"><v>4.47700900123E11</v></c><c r="B3" s="6" t="n"><v>4.1555501E9</v></c><c r="C3" s="3" t="n"><v>1.0E-4</v></c><c r="D3" t="b"><v>true</v></c></row>`),
			// Java writes a double's shortest form, in scientific notation
			// from 10^7: the phone number 15555550100 is 1.55555501E10.
			want: []string{`"Yes","15555550100","2024-03-01","Yes"`, `"447700900123","4155550100",`},
		},
		{
			tool: "Apache POI (SXSSF, streaming)",
			sheet: shapeSheet(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1"/><sheetViews><sheetView workbookViewId="0" tabSelected="true"/></sheetViews><sheetFormatPr defaultRowHeight="15.0"/>`,
				`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Phone</t></is></c><c r="C1" t="inlineStr"><is><t>Consent</t></is></c><c r="D1" t="inlineStr"><is><t>DNC</t></is></c></row>`+
					`<row r="2"><c r="A2" t="inlineStr"><is><t xml:space="preserve">Ada&#xd;&#xa;Lovelace </t></is></c><c r="B2" t="n"><v>1.4155550100E10</v></c><c r="C2" s="1" t="n"><v>45352.0</v></c><c r="D2" t="b"><v>1</v></c></row>`+
					`<row r="3"><c r="A3" t="inlineStr"><is><t>&lt;Bo&gt; &amp; Co</t></is></c><c r="B3" t="inlineStr"><is><t>+14155550132</t></is></c><c r="C3" t="inlineStr"><is><t>2024-03-01</t></is></c><c r="D3" t="inlineStr"><is><t>Yes</t></is></c></row>`),
			want: []string{"\"Ada\r\nLovelace \",\"14155550100\",\"2024-03-01\",\"1\"", `"<Bo> & Co","+14155550132","2024-03-01","Yes"`},
		},
		{
			tool:     "Numbers, 1904 calendar",
			workbook: "1904",
			sst: "\ufeff" + `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
				`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4" uniqueCount="4"><si><t>Phone</t></si><si><t>Consent</t></si><si><t>DNC</t></si><si><r><rPr><sz val="10"/></rPr><t xml:space="preserve">Ye</t></r><r><t>s</t></r></si></sst>`,
			sheet: strings.Replace(shapeSheet(mainNS+`<sheetViews><sheetView workbookViewId="0"/></sheetViews>`,
				`<row r="1"><c r="A1" s="0" t="s"><v>0</v></c><c r="B1" s="0" t="s"><v>1</v></c><c r="C1" s="0" t="s"><v>2</v></c></row>`+
					`<row r="2"><c r="A2" s="5"><v>447700900123</v></c><c r="B2" s="1"><v>43890</v></c><c r="C2" s="0" t="s"><v>3</v></c></row>`), "<?xml", "\ufeff<?xml", 1),
			want: []string{`"447700900123","2024-03-01","Yes"`},
		},
	} {
		parts := map[string]string{"xl/worksheets/sheet1.xml": tt.sheet, "xl/styles.xml": shapeStyles}
		if tt.sst != "" {
			parts["xl/sharedStrings.xml"] = tt.sst
		}
		if tt.workbook == "1904" {
			parts["xl/workbook.xml"] = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
				`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><workbookPr date1904="1"/><bookViews><workbookView/></bookViews><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`
		}
		path := withParts(t, base, parts)
		got, err := workbookText(path)
		if err != nil {
			t.Errorf("%s: %v", tt.tool, err)
			continue
		}
		if want := excelizeText(t, path); got != want {
			t.Errorf("%s: differs from excelize\n got %q\nwant %q", tt.tool, got, want)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not hold %q", tt.tool, got, w)
			}
		}
	}
}

// TestWholeNumber: a whole number of at most 15 digits in scientific
// notation is written out; anything else (more digits than a workbook's
// number keeps, not whole, negative, which no phone number is) stays as
// stored.
func TestWholeNumber(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"1.55555501E10":          "15555550100",
		"4.47700900123E+11":      "447700900123",
		"4.47700900123e+11":      "447700900123",
		"1.5E3":                  "1500",
		"-1.4155550132E+10":      "-1.4155550132E+10",
		"447700900123":           "447700900123",
		"1.2345678901234567E+16": "1.2345678901234567E+16",
		"1E+15":                  "1E+15",
		"1.5E-3":                 "1.5E-3",
		"1.0E-4":                 "1.0E-4",
		"12.5":                   "12.5",
		"#N/A":                   "#N/A",
		"E5":                     "E5",
	} {
		if got := wholeNumber(raw); got != want {
			t.Errorf("wholeNumber(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzSharedStringsXML reads arbitrary shared strings, each named by a
// cell of the worksheet: the reader must not panic, and whatever it reads
// without an error must be the text excelize's readers give. Run it with:
//
//	go test ./campaign/sheet -run '^$' -fuzz FuzzSharedStringsXML -fuzztime 60s
func FuzzSharedStringsXML(f *testing.F) {
	for _, s := range []string{
		`<si><t>Phone</t></si><si><t xml:space="preserve"> +44 7700 900123 </t></si><si><r><rPr><b/></rPr><t>Ye</t></r><r><t>s</t></r><rPh sb="0" eb="1"><t>x</t></rPh></si>`,
		`<si><t>a_x000D_b&#13;c` + "\r\n" + `d</t></si><si><t/></si><x:si><x:t>Q</x:t></x:si><si><t><![CDATA[0044]]></t></si>`,
	} {
		f.Add(s)
	}
	base := corpusWorkbook(f, f.TempDir())
	f.Fuzz(func(t *testing.T, items string) {
		n := min(strings.Count(items, "si>")/2, 8)
		var rows strings.Builder
		for i := range n {
			fmt.Fprintf(&rows, `<row r="%d"><c r="A%d" t="s"><v>%d</v></c></row>`, i+1, i+1, i)
		}
		path := withParts(t, base, map[string]string{
			"xl/sharedStrings.xml":     `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + items + `</sst>`,
			"xl/worksheets/sheet1.xml": `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + rows.String() + `</sheetData></worksheet>`,
		})
		got, err := workbookText(path)
		if err != nil {
			return
		}
		if want := excelizeText(t, path); got != want {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
}

// TestWorksheetReaderStrict: a workbook Excel saved as Strict Open XML
// Spreadsheet (its namespaces and relationship types under
// purl.oclc.org) reads as excelize reads it.
func TestWorksheetReaderStrict(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	zr, err := zip.OpenReader(base)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]string{}
	strict := strings.NewReplacer(
		"http://schemas.openxmlformats.org/officeDocument/2006/relationships", "http://purl.oclc.org/ooxml/officeDocument/relationships",
		"http://schemas.openxmlformats.org/spreadsheetml/2006/main", "http://purl.oclc.org/ooxml/spreadsheetml/main")
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s := strict.Replace(string(b)); s != string(b) {
			parts[f.Name] = s
		}
	}
	zr.Close()
	if !strings.Contains(parts["_rels/.rels"], "purl.oclc.org/ooxml/officeDocument/relationships/officeDocument") {
		t.Fatalf("the package's relationships are not strict: %q", parts["_rels/.rels"])
	}
	path := withParts(t, base, parts)
	got, err := workbookText(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := excelizeText(t, path); got != want {
		t.Errorf("differs from excelize\n got %q\nwant %q", got, want)
	}
}

// TestSharedStringsOnlyTheTable: an si element that is not one of the
// table's own (inside an extension) is no shared string, so the strings
// after it keep their numbers: a cell names the string excelize gives.
func TestSharedStringsOnlyTheTable(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	path := withParts(t, base, map[string]string{
		"xl/sharedStrings.xml": `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
			`<extLst><ext uri="{x}"><si><t>+14155550100</t></si></ext></extLst><si><t>Phone</t></si><si><t>+14155550132</t></si></sst>`,
		"xl/worksheets/sheet1.xml": shapeSheet(mainNS, `<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>`),
	})
	got, err := workbookText(path)
	if want := "\"Phone\"\n\"+14155550132\"\n"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if want := excelizeText(t, path); got != want {
		t.Errorf("differs from excelize\n got %q\nwant %q", got, want)
	}
}

// TestWorksheetRowsOnce: a worksheet whose rows (sheetData) stand
// elsewhere than as its own, or twice, is an error; excelize read the
// rows of both, one after the other, and the scanner the first.
func TestWorksheetRowsOnce(t *testing.T) {
	t.Parallel()
	base := corpusWorkbook(t, t.TempDir())
	rows := func(phone string) string {
		return `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Phone</t></is></c></row><row r="2"><c r="A2"><v>` + phone + `</v></c></row></sheetData>`
	}
	for _, tt := range []struct{ body, want string }{
		{`<extLst><ext uri="{x}">` + rows("14155550100") + `</ext></extLst>` + rows("14155550132"), "elsewhere than as its own"},
		{rows("14155550132") + rows("14155550100"), "twice"},
		{rows("14155550132") + `<pageMargins left="0.7"/><extLst><ext uri="{x}">` + rows("14155550100") + `</ext></extLst>`, "twice"},
	} {
		path := withWorksheet(t, base, `<?xml version="1.0" encoding="UTF-8"?>`+mainNS+tt.body+`</worksheet>`)
		got, err := workbookText(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %q, %v; want an error saying %q", tt.body, got, err, tt.want)
		}
	}
}
