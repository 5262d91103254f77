package campaign

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestTabSaysDoNotCall: a tab is read as a list of people not to call by
// the words of signalwords.yaml, in its languages; a tab of another
// channel alone, or of anything else, is not.
func TestTabSaysDoNotCall(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Do Not Call": true, "DNC": true, "Opted Out": true, "Unsubscribed": true, "Suppression": true, "Suppression List": true,
		"Do not contact": true, "DNC list 2024": true, "Blacklist": true, "Nicht anrufen": true, "Sperrliste": true,
		"Ne pas appeler": true, "Liste d'opposition": true, "No llamar": true, "Lista Robinson": true, "Opt-Outs (calls)": true, "To Remove": true, "Removed Duplicates": false,
		"Contacts": false, "Notes": false, "Sheet2": false, "Email Unsubscribes": false, "Newsletter opt out": false, "Leads Q3": false, "": false,
	} {
		if got := tabSaysDoNotCall(name); got != want {
			t.Errorf("tabSaysDoNotCall(%q) = %v, want %v", name, got, want)
		}
	}
}

// workbookCampaign writes leads.xlsx (a Contacts tab whose row 3 is
// hidden, a Notes tab, a hidden Do Not Call tab of one number), a.csv,
// and a campaign over leads.xlsx with sheet under its sheet and top at
// its end, and loads it and checks its sheets.
func workbookCampaign(t *testing.T, sheet, top string) error {
	t.Helper()
	dir := t.TempDir()
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", "Contacts"); err != nil {
		t.Fatal(err)
	}
	for r, row := range [][]any{{"Phone"}, {"+14155550101"}, {"+14155550102"}, {"+14155550103"}} {
		if err := f.SetSheetRow("Contacts", "A"+string(rune('1'+r)), &row); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetRowVisible("Contacts", 3, false); err != nil {
		t.Fatal(err)
	}
	for _, tab := range []string{"Notes", "Do Not Call"} {
		if _, err := f.NewSheet(tab); err != nil {
			t.Fatal(err)
		}
	}
	for r, row := range [][]any{{"Phone"}, {"+14155550103"}} {
		if err := f.SetSheetRow("Do Not Call", "A"+string(rune('1'+r)), &row); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetSheetVisible("Do Not Call", false); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(filepath.Join(dir, "leads.xlsx")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("Phone\n+14155550109\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := "name: tabs\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n  - file: leads.xlsx\n    agent: A\n    fields: {phone_number: Phone}\n"
	if sheet != "" {
		y += "    " + sheet + "\n"
	}
	y += "region: US\nunsafe_ignore_called_person_hours: true\n" + top
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		return err
	}
	if err := c.CheckSheets(); err != nil {
		return err
	}
	return c.WorkbookProblems()
}

// TestWorkbookTabsAndHiddenRowsConfig: a workbook's hidden rows and its
// tab named Do Not Call stop the campaign at the sheet's file until
// hidden_rows: and a suppress: entry of the tab (or a do_not_call:
// ignore: of it, with a reason) say what they are; each mistake in those
// keys is a problem of the campaign file at its key.
func TestWorkbookTabsAndHiddenRowsConfig(t *testing.T) {
	t.Parallel()
	const (
		suppressTab = "suppress: [{file: leads.xlsx, worksheet: Do Not Call}]\n"
		ignoreTab   = "do_not_call: {ignore: [{worksheet: do not call, reason: \"last year's list\"}]}\n"
	)
	for _, tc := range []struct {
		sheet, top string
		want       []string // "" for none
	}{
		{"", "", []string{`campaign.yaml line 5, sheets[0].file: sheet leads.xlsx, worksheet "Contacts": 1 row(s) are hidden in the workbook (row 3)`,
			`hidden_rows: skip under sheets[0]`,
			`sheets[0].file: sheet leads.xlsx: the workbook has a hidden tab "Do Not Call" of 1 row(s), named like a list of people not to call`,
			`suppress: [{file: leads.xlsx, worksheet: "Do Not Call"}]`}},
		{"hidden_rows: skip", suppressTab, nil},
		{"hidden_rows: call", ignoreTab, nil},
		{"hidden_rows: call", "", []string{`hidden tab "Do Not Call"`}},
		{"", suppressTab, []string{"1 row(s) are hidden in the workbook (row 3)"}},
		{"hidden_rows: maybe", suppressTab, []string{`sheets[0].hidden_rows: hidden_rows is "maybe"; allowed: skip`}},
		{"hidden_rows: skip", "do_not_call: {ignore: [{worksheet: Do Not Call}]}\n", []string{`do_not_call.ignore[0]: do_not_call: ignore: the worksheet "Do Not Call" needs the reason`}},
		{"hidden_rows: skip", "do_not_call: {ignore: [{worksheet: Do Not Call, column: Phone, reason: r}]}\n", []string{`do_not_call.ignore[0]: do_not_call: ignore: an entry names a column or a worksheet, not both`}},
		{"hidden_rows: skip", "do_not_call: {ignore: [{worksheet: \"\", reason: r}]}\n", []string{`do_not_call.ignore[0]: do_not_call: ignore: names an empty worksheet`}},
		{"hidden_rows: skip", suppressTab + "do_not_call: {ignore: [{worksheet: Opt Outs, reason: r}]}\n", []string{`do_not_call.ignore[0]: sheet leads.xlsx: do_not_call: ignore: names the worksheet "Opt Outs", which the workbook does not have; its worksheets: "Contacts", "Notes", "Do Not Call"`}},
		{"hidden_rows: skip", "suppress: [{file: leads.xlsx, worksheet: \"\"}]\n", []string{`suppress[0].worksheet: worksheet is empty`}},
		{"hidden_rows: skip", suppressTab[:len(suppressTab)-2] + ", {file: a.csv, worksheet: X}]\n", []string{`suppress[1]: suppression file a.csv names the worksheet "X", but it is a text file`}},
		{"hidden_rows: skip", "suppress: [{file: leads.xlsx, worksheet: Opt Outs}]\n", []string{`suppress[0]: `, `the workbook has no worksheet "Opt Outs"`}},
	} {
		err := workbookCampaign(t, tc.sheet, tc.top)
		if tc.want == nil {
			if err != nil {
				t.Errorf("sheet %q, top %q: %v", tc.sheet, tc.top, err)
			}
			continue
		}
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("sheet %q, top %q: error %v; want a *FileError", tc.sheet, tc.top, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("sheet %q, top %q: error %v\nwant it to hold %q", tc.sheet, tc.top, err, w)
			}
		}
	}
}
