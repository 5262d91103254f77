package sheet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestContactsOnAnotherTab: a workbook whose first tab is a cover (HubSpot
// and Excel users put a title or notes first) or left empty, with the
// contacts on its second. The first worksheet is read, as documented; its
// missing column, or its emptiness, named only that worksheet's header,
// which said nothing of the tab that holds the contacts nor of
// worksheet:. Both now name the tab read, the workbook's tabs and the key.
func TestContactsOnAnotherTab(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, cover string) string {
		f := excelize.NewFile()
		if cover != "" {
			f.SetCellValue("Sheet1", "A1", cover)
		}
		f.NewSheet("Contacts")
		f.SetSheetRow("Contacts", "A1", &[]any{"First Name", "Phone"})
		f.SetSheetRow("Contacts", "A2", &[]any{"Ada", "+14155550132"})
		path := filepath.Join(dir, name)
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	r, err := Open(mk("cover.xlsx", "Exported by HubSpot on 2026-11-29"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Column("Phone")
	r.Close()
	if err == nil || !strings.Contains(err.Error(), `has no column "Phone" (columns: "Exported by HubSpot on 2026-11-29"); worksheet "Sheet1" was read; the workbook's tabs are "Sheet1", "Contacts": if the contacts are on another, name it in the campaign file, worksheet: "Contacts"`) {
		t.Errorf("cover: %v", err)
	}
	if _, err := Open(mk("empty.xlsx", "")); err == nil || !strings.Contains(err.Error(), `empty.xlsx: the worksheet is empty: it has no header row; worksheet "Sheet1" was read; the workbook's tabs are "Sheet1", "Contacts"`) {
		t.Errorf("empty first tab: %v", err)
	}
	// Named, the tab is read; a workbook of one tab says nothing of tabs.
	r, err = OpenWith(filepath.Join(dir, "cover.xlsx"), Options{Worksheet: "Contacts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Column("Phone"); err != nil {
		t.Errorf("named tab: %v", err)
	}
	r.Close()
	f := excelize.NewFile()
	f.SetSheetRow("Sheet1", "A1", &[]any{"First Name", "Mobile"})
	one := filepath.Join(dir, "one.xlsx")
	f.SaveAs(one)
	r, err = Open(one)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Column("Phone"); err == nil || strings.Contains(err.Error(), "tabs") {
		t.Errorf("one tab: %v", err)
	}
}

// TestHeaderBelowARowOfGroups: a sheet whose header sits under a row of
// two or more cells (group names over the columns, "Person" merged over
// three and "Contact" over two; a title with a date beside it) is no
// title callrun skips: its first row is the header. The missing column's
// message named that row's cells alone. It now names the row below that
// holds the column, and what to do; the rows it looked at are still read,
// in order, by whatever reads the sheet after the miss.
func TestHeaderBelowARowOfGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grouped.csv")
	text := "Person,,,Contact,\r\nContact Id,First Name,Last Name,Phone,Email\r\nc-1,Ada,Lovelace,+1 415 555 0132,a@x.com\r\nc-2,Grace,Hopper,(212) 555-0199,g@x.com\r\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Column("phone")
	if err == nil || !strings.Contains(err.Error(), `grouped.csv has no column "phone" (columns: "Person", "Contact"); row 2 holds "phone": if that row is the header, delete the rows above it`) {
		t.Errorf("missing column: %v", err)
	}
	if _, err := r.Column("Zip"); err == nil || strings.Contains(err.Error(), "holds") {
		t.Errorf("a column no row holds: %v", err)
	}
	rows, fatal := readSheet(t, r)
	if fatal != nil || len(rows) != 3 || rows[0].Row != 2 || rows[0].Fields[3] != "Phone" || rows[2].Row != 4 || rows[2].Fields[1] != "Grace" {
		t.Errorf("rows after the miss: %+v, %v", rows, fatal)
	}
}

// TestSemicolonSheetWithACommaInAColumnName: German Excel saves "CSV
// (Trennzeichen-getrennt)" with ';', and a column named "Nachname,
// Vorname" keeps its comma unquoted. One comma and one semicolon tied,
// the sheet was read as comma-separated, and a campaign mapping Telefon
// was told 'no column "Telefon" ... did you mean "Vorname;Telefon"?'. A
// comma followed by a space is a name's, never a delimiter a program
// writes; a comma-separated sheet whose commas all have spaces after them
// and no semicolon is still read by its commas.
func TestSemicolonSheetWithACommaInAColumnName(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text  string
		delim rune
		cols  []string
	}{
		{"Nachname, Vorname;Telefon\r\nM\u00fcller, J\u00fcrgen;+49 30 1234567\r\n", ';', []string{"Nachname, Vorname", "Telefon"}},
		{"Name, Vorname;Telefon;Notiz\r\nA, B;+49 30 1;x\r\n", ';', []string{"Name, Vorname", "Telefon", "Notiz"}},
		{"First Name, Phone\nAda, +14155550132\n", ',', []string{"First Name", "Phone"}},
		{"Name,Phone;Mobile\nAda,+14155550132\n", ',', []string{"Name", "Phone;Mobile"}},
		{"Name;Phone,Mobile;Email\nAda;1;2\n", ';', []string{"Name", "Phone,Mobile", "Email"}},
	} {
		path := filepath.Join(dir, "s.csv")
		os.WriteFile(path, []byte(c.text), 0o600)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Delimiter() != c.delim || !slices.Equal(r.Header(), c.cols) {
			t.Errorf("%q: delimiter %q, header %q; want %q, %q", c.text, r.Delimiter(), r.Header(), c.delim, c.cols)
		}
		r.Close()
	}
}
