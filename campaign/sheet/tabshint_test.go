package sheet

import (
	"path/filepath"
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
