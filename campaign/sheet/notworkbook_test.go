package sheet

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeZip writes a zip archive of the named entries, in order.
func writeZip(t *testing.T, path string, entries ...[2]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range entries {
		w, err := z.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestZipThatIsNoWorkbook: a spreadsheet of another program, or a CRM's
// export downloaded as a .zip, is a zip archive as an .xlsx is. They were
// refused as "looks like an Excel workbook (.xlsx) but cannot be read as
// one (EOF): open it in Excel and save it again", which sends a LibreOffice
// or Numbers user to a program they may not have, and a .zip's to Excel
// with a file it cannot open. Each now says what the file is and how to
// make a sheet of it. The shapes: OpenDocument's first entry is
// "mimetype", stored, holding application/vnd.oasis.opendocument.spreadsheet
// (OASIS ODF 1.2, part 3, section 3.3); a Numbers document holds Index.zip
// (iWork '13, github.com/obriensp/iWorkFileFormat, docs/index.md) or
// Index/*.iwa entries (SheetJS, bits/83_numbers.js), or, before 2013,
// index.xml.gz.
func TestZipThatIsNoWorkbook(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		entries [][2]string
		want    string
	}{
		{"contacts.ods", [][2]string{{"mimetype", "application/vnd.oasis.opendocument.spreadsheet"}, {"content.xml", "<office:document-content/>"}, {"META-INF/manifest.xml", "<manifest/>"}},
			"contacts.ods: the file is an OpenDocument spreadsheet (.ods, LibreOffice or OpenOffice), which callrun does not read: in LibreOffice use File > Save As > Excel 2007-365 (.xlsx)"},
		{"contacts.numbers", [][2]string{{"Index/Document.iwa", "\x00\x01"}, {"Index/Tables/DataList.iwa", "\x00"}, {"Metadata/Properties.plist", "<plist/>"}, {"preview.jpg", "\xff\xd8"}},
			"contacts.numbers: the file is an Apple Numbers document, which callrun does not read: in Numbers use File > Export To > CSV"},
		{"old.numbers", [][2]string{{"Index.zip", "PK"}, {"Metadata/Properties.plist", "<plist/>"}},
			"the file is an Apple Numbers document"},
		{"renamed.csv", [][2]string{{"Index/Document.iwa", "\x00"}}, "renamed.csv: the file is an Apple Numbers document"},
		{"hubspot-export.zip", [][2]string{{"hubspot-crm-exports-all-contacts/", ""}, {"hubspot-crm-exports-all-contacts/all-contacts.csv", "Phone\n+14155550100\n"}},
			`hubspot-export.zip: the file is a zip archive, not an Excel workbook (.xlsx); it holds "hubspot-crm-exports-all-contacts/all-contacts.csv": unzip it`},
	} {
		path := filepath.Join(dir, c.name)
		writeZip(t, path, c.entries...)
		r, err := Open(path)
		if err == nil {
			r.Close()
			t.Errorf("%s: opened", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant it to contain %q", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "open it in Excel") {
			t.Errorf("%s: %v sends the user to Excel", c.name, err)
		}
	}
	// A Numbers document kept as a folder, as Finder shows it.
	bundle := filepath.Join(dir, "Leads.numbers")
	os.MkdirAll(filepath.Join(bundle, "Index"), 0o755)
	if _, err := Open(bundle); err == nil || !strings.Contains(err.Error(), "Leads.numbers: cannot open the sheet: it is an Apple Numbers document, which callrun does not read") {
		t.Errorf("bundle: %v", err)
	}
	// A workbook is still read.
	r, err := Open("../../testdata/exports/hubspot.xlsx")
	if err != nil {
		t.Fatalf("workbook: %v", err)
	}
	r.Close()
}

// TestExportToExcelThatIsNoWorkbook: many reporting tools' "Export to
// Excel" write a web page of a table under an .xls name (Oracle BI
// Publisher's, as its blog says, 2011-12-07 "Excel 2007 Warnings"; Excel's
// own "Web Page" shape, <html xmlns:x="urn:schemas-microsoft-com:office:excel">
// with <meta name=ProgId content=Excel.Sheet>, as a SoftMaker forum thread
// quotes it, viewtopic.php?f=87&t=6467), or Excel 2003's XML Spreadsheet.
// Read as CSV, the first line's quotes made the message "a field that is
// not in quotes contains a quote ... as in "5"" screen"". Each now says
// what the file is and how to save it as a sheet.
func TestExportToExcelThatIsNoWorkbook(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"report.xls": {"<html xmlns:v=\"urn:schemas-microsoft-com:vml\"\r\nxmlns:o=\"urn:schemas-microsoft-com:office:office\"\r\nxmlns:x=\"urn:schemas-microsoft-com:office:excel\">\r\n<head>\r\n<meta name=ProgId content=Excel.Sheet>\r\n</head><body><table><tr><td>Phone</td></tr><tr><td>+14155550132</td></tr></table></body></html>\r\n",
			"report.xls: the file is a web page (HTML), not a CSV sheet: an \"Export to Excel\" often writes one under an .xls name"},
		"export.csv": {"\ufeff\r\n<!DOCTYPE html><html><body><table><tr><th>Phone</th></tr></table></body></html>", "export.csv: the file is a web page (HTML)"},
		"contacts.xml.xls": {"<?xml version=\"1.0\"?>\r\n<?mso-application progid=\"Excel.Sheet\"?>\r\n<Workbook xmlns=\"urn:schemas-microsoft-com:office:spreadsheet\"\r\n xmlns:ss=\"urn:schemas-microsoft-com:office:spreadsheet\">\r\n<Worksheet ss:Name=\"Contacts\"><Table><Row><Cell><Data ss:Type=\"String\">Phone</Data></Cell></Row></Table></Worksheet></Workbook>\r\n",
			"contacts.xml.xls: the file is an Excel 2003 XML Spreadsheet, which callrun does not read: in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"},
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(c.text), 0o600)
		_, err := Open(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", name, err, c.want)
		}
	}
	// A sheet whose first column's values hold markup is still a sheet.
	path := filepath.Join(dir, "notes.csv")
	os.WriteFile(path, []byte("Note,Phone\n<b>hi</b>,+14155550132\n"), 0o600)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}
