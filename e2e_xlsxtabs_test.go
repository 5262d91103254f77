package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/xuri/excelize/v2"
)

// xlsxCampaign is a campaign over leads.xlsx, the contacts' worksheet
// first, edited by edit before it is saved.
func xlsxCampaign(t *testing.T, srv *sandbox.Server, n int, edit func(f *excelize.File)) *e2eCampaign {
	t.Helper()
	contacts := e2ePhones(n)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 200, concurrency: 4})
	if err := os.Remove(filepath.Join(e.dir, "contacts.csv")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "leads.xlsx")
	writeContactsWorkbook(t, path, []string{"Contact Id", "First Name", "Phone", "Email"}, contacts, func(c e2eContact) []string {
		return []string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"}
	})
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e.editYAML("  - file: contacts.csv\n", "  - file: leads.xlsx\n")
	return e
}

// editYAML replaces old, once, in the campaign file.
func (e *e2eCampaign) editYAML(old, new string) {
	e.t.Helper()
	b, err := os.ReadFile(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		e.t.Fatalf("test bug: the campaign file has no %q", old)
	}
	writeFile(e.t.(*testing.T), e.path, []byte(strings.Replace(string(b), old, new, 1)))
}

// checkStops runs plan and run and checks that each stops, saying each
// of want, and that the sandbox received no call.
func (e *e2eCampaign) checkStops(srv *sandbox.Server, want ...string) {
	e.t.Helper()
	for _, args := range [][]string{{"plan", "--offline", e.path}, {"run", e.path}} {
		res := e.run(60*time.Second, args...)
		if res.code != run.ExitUsage {
			e.t.Errorf("%s: want it to stop with exit %d, got %s", args[0], run.ExitUsage, res)
		}
		for _, w := range want {
			if !strings.Contains(res.stdout+res.stderr, w) {
				e.t.Errorf("%s does not say %s:\n%s", args[0], w, res)
			}
		}
	}
	if n := len(srv.Calls()); n != 0 {
		e.t.Fatalf("the sandbox received %d call starts while callrun was to stop", n)
	}
}

// TestWorkbookDoNotCallTabEndToEnd: a workbook whose other tab, hidden,
// is named Do Not Call stops plan and run before any call, naming the
// tab and its rows and the two ways on; read as a suppression file
// (suppress: [{file, worksheet}]), its numbers are not called and every
// other contact is, once; set aside with a reason, plan calls everyone.
func TestWorkbookDoNotCallTabEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	var held []string
	e := xlsxCampaign(t, srv, 8, func(f *excelize.File) {
		if _, err := f.NewSheet("Notes"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.NewSheet("Do Not Call"); err != nil {
			t.Fatal(err)
		}
		rows := [][]any{{"Name", "Phone"}}
		for _, i := range []int{2, 5} {
			c := e2ePhones(8)[i]
			rows = append(rows, []any{c.First, c.Raw})
			held = append(held, c.E164)
		}
		for r, row := range rows {
			cell, _ := excelize.CoordinatesToCellName(1, r+1)
			if err := f.SetSheetRow("Do Not Call", cell, &row); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SetSheetVisible("Do Not Call", false); err != nil {
			t.Fatal(err)
		}
	})
	e.checkStops(srv, `the workbook has a hidden tab \"Do Not Call\" of 2 row(s), named like a list of people not to call`,
		`suppress: [{file: leads.xlsx, worksheet: \"Do Not Call\"}]`, `do_not_call: {ignore: [{worksheet: \"Do Not Call\"`)

	// Set aside on purpose: plan calls everyone.
	e.appendYAML("do_not_call: {ignore: [{worksheet: Do Not Call, reason: \"last year's list, replaced by the store's\"}]}\n")
	if res := e.run(60*time.Second, "plan", "--offline", e.path); res.code != 0 || !strings.Contains(res.stdout, "8 to call") {
		t.Errorf("plan with the tab ignored: want exit 0 and 8 to call, got %s", res)
	}

	// Read as a suppression file: its numbers are held.
	b, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	top, _, _ := strings.Cut(string(b), "do_not_call:")
	writeFile(t, e.path, []byte(top+"suppress: [{file: leads.xlsx, worksheet: \"Do Not Call\"}]\n"))
	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run with the tab suppressed: %s", res)
	}
	got := callsByNumber(srv.Calls())
	for i, c := range e2ePhones(8) {
		want := 1
		if i == 2 || i == 5 {
			want = 0
		}
		if got[c.E164] != want {
			t.Errorf("%s (row %d): called %d time(s), want %d", c.E164, i+2, got[c.E164], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("the ledger %v; want the 6 numbers not on the tab %v", got, held)
	}
}

// TestWorkbookHiddenRowsEndToEnd: rows the workbook hides stop plan and
// run before any call, named; with hidden_rows: skip they are not
// called and the report says why; with hidden_rows: call they are.
func TestWorkbookHiddenRowsEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	hidden := []int{3, 6} // rows: contacts 1 and 4
	e := xlsxCampaign(t, srv, 8, func(f *excelize.File) {
		for _, r := range hidden {
			if err := f.SetRowVisible("Contacts", r, false); err != nil {
				t.Fatal(err)
			}
		}
	})
	e.checkStops(srv, `worksheet \"Contacts\": 2 row(s) are hidden in the workbook (rows 3, 6)`, "hidden_rows: skip", "hidden_rows: call")

	e.editYAML("  - file: leads.xlsx\n", "  - file: leads.xlsx\n    hidden_rows: skip\n")
	if res := e.run(60*time.Second, "plan", "--offline", e.path); res.code != 0 || !strings.Contains(res.stdout, "2 row(s) hidden in the workbook were not called (hidden_rows: skip; row 3, row 6)") || !strings.Contains(res.stdout, "6 to call") {
		t.Errorf("plan with hidden_rows: skip: want exit 0, 6 to call and the hidden rows told, got %s", res)
	}
	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run with hidden_rows: skip: %s", res)
	}
	got := callsByNumber(srv.Calls())
	for i, c := range e.contacts {
		want := 1
		if i == 1 || i == 4 {
			want = 0
		}
		if got[c.E164] != want {
			t.Errorf("hidden_rows: skip: %s (row %d) called %d time(s), want %d", c.E164, i+2, got[c.E164], want)
		}
	}
	for i, row := range e.report() {
		if (i == 1 || i == 4) != strings.Contains(row["reason"], "hidden in the workbook") {
			t.Errorf("report row %s: %s, %q", row["row"], row["status"], row["reason"])
		}
		if (i == 1 || i == 4) && row["status"] != "suppressed" {
			t.Errorf("report row %s: %s, want suppressed", row["row"], row["status"])
		}
	}

	e.editYAML("    hidden_rows: skip\n", "    hidden_rows: call\n")
	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run with hidden_rows: call: %s", res)
	}
	got = callsByNumber(srv.Calls())
	for _, c := range e.contacts {
		if got[c.E164] != 1 {
			t.Errorf("hidden_rows: call: %s called %d time(s), want 1", c.E164, got[c.E164])
		}
	}
}

// TestInitReadsTheDoNotCallTab: callrun init on a workbook with a tab
// named Do Not Call writes it as a suppression file, and tells of the
// rows the workbook hides, leaving hidden_rows: to choose; once chosen,
// plan of the file init wrote calls nobody on the tab.
func TestInitReadsTheDoNotCallTab(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "leads.xlsx")
	contacts := e2ePhones(4)
	writeContactsWorkbook(t, path, []string{"Contact Id", "First Name", "Phone"}, contacts, func(c e2eContact) []string { return []string{c.ID, c.First, c.Raw} })
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Do Not Call"); err != nil {
		t.Fatal(err)
	}
	for r, row := range [][]any{{"Phone"}, {contacts[1].Raw}} {
		cell, _ := excelize.CoordinatesToCellName(1, r+1)
		if err := f.SetSheetRow("Do Not Call", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetRowVisible("Contacts", 4, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out strings.Builder
	if err := initCampaign(t.Context(), nolog, initOptions{sheet: path, agent: "Caller", region: "US"}, &out, io.Discard); err != nil {
		t.Fatalf("init: %v", err)
	}
	if !strings.Contains(out.String(), `The worksheet "Contacts" hides 1 row(s) (first: 4)`) {
		t.Errorf("init did not tell of the hidden row:\n%s", out.String())
	}
	yamlPath := filepath.Join(dir, "campaign.yaml")
	written, err := os.ReadFile(yamlPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(written), `  - {file: "leads.xlsx", worksheet: "Do Not Call"}`) || !strings.Contains(string(written), "# hidden_rows: skip") {
		t.Fatalf("campaign.yaml does not read the tab, or leaves out hidden_rows:\n%s", written)
	}
	y := strings.Replace(string(written), `prompt: "TODO: write the agent's prompt"`, `prompt: "You call to say hello. A test; nobody is phoned."`, 1)
	writeFile(t, yamlPath, []byte(y))
	if code := runApp(t, "plan", "--offline", yamlPath); code == 0 {
		t.Errorf("plan of init's file with hidden_rows: still to choose: exit 0\n%s", y)
	}
	writeFile(t, yamlPath, []byte(strings.Replace(y, "    # hidden_rows: skip", "    hidden_rows: skip #", 1)))
	if code := runApp(t, "plan", "--offline", "--strict", yamlPath); code != 0 {
		t.Errorf("plan --offline --strict of init's file: exit %d\n%s", code, y)
	}
}
