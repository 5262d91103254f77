package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// doNotCallCorpus is what CRM exports write in a do-not-call flag column
// (Salesforce's "Do Not Call" checkbox, HighLevel's DND, a HubSpot
// opt-out property, a column kept by hand), and whether callrun must
// read it as the flag set.
var doNotCallCorpus = []struct {
	cell string
	yes  bool
}{
	{"1", true}, {"true", true}, {"TRUE", true}, {"True", true}, {"yes", true}, {"YES", true},
	{"Yes", true}, {"y", true}, {"Y", true}, {"x", true}, {"X", true}, {"checked", true},
	{"Checked", true}, {" 1 ", true}, {"  yes", true}, {"✓", true}, {"✔\ufe0f", true}, {"✅", true}, {"t", true},
	{"", false}, {" ", false}, {"0", false}, {"false", false}, {"FALSE", false}, {"False", false},
	{"no", false}, {"No", false}, {"n", false}, {"N", false}, {"unchecked", false}, {"0 ", false},
}

// writeSheetWithFlag rewrites contacts.csv with a "Do Not Call" column
// after the others, cells[i] in contact i's row.
func (e *e2eCampaign) writeSheetWithFlag(cells []string) {
	e.t.Helper()
	e.writeSheetWithColumn("Do Not Call", cells)
}

// writeSheetWithColumn rewrites contacts.csv with a column named header
// after the others, cells[i] in contact i's row.
func (e *e2eCampaign) writeSheetWithColumn(header string, cells []string) {
	e.t.Helper()
	rows := make([][]string, len(cells))
	for i, c := range cells {
		rows[i] = []string{c}
	}
	e.writeSheetWithColumns([]string{header}, rows)
}

// writeSheetWithColumns rewrites contacts.csv with the columns named
// headers after the others, rows[i] in contact i's row.
func (e *e2eCampaign) writeSheetWithColumns(headers []string, rows [][]string) {
	e.t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(append([]string{"Contact Id", "First Name", "Phone", "Email"}, headers...))
	for i, c := range e.contacts {
		w.Write(append([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"}, rows[i]...))
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// TestCRMDoNotCallFlagEndToEnd runs the binary on a sheet whose "Do Not
// Call" column holds every cell of the corpus, against the sandbox: no
// row whose cell says yes reaches the service, every other row is called
// once, and plan and the report say why each flagged row was not. Before
// the column is mapped, plan and run stop on it; a mapped column the
// sheet lacks stops plan and run before any call.
func TestCRMDoNotCallFlagEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(len(doNotCallCorpus)), perSecond: 100, concurrency: 4})
	cells := make([]string, len(doNotCallCorpus))
	var want []string // the numbers to call
	yes := 0
	for i, c := range doNotCallCorpus {
		cells[i] = c.cell
		if c.yes {
			yes++
		} else {
			want = append(want, e.contacts[i].E164)
		}
	}
	e.writeSheetWithFlag(cells)

	// Not mapped: plan and run name the column and stop, nothing is sent.
	for _, args := range [][]string{{"plan", "--offline", e.path}, {"plan", "--offline", "--strict", e.path}, {"run", e.path}} {
		res := e.run(30*time.Second, args...)
		if res.code != run.ExitUsage || !strings.Contains(res.stderr, `in column \"Do Not Call\", 19 row(s) say do not call (row 2: \"1\", row 3: \"true\")`) {
			t.Errorf("%s of a sheet with an unmapped Do Not Call column: want exit %d naming the column, got %s", args[0], run.ExitUsage, res)
		}
	}

	// A column the sheet lacks: a load error naming the file and the key.
	e.appendYAML("do_not_call: {column: \"Do Not Cal\"}\n")
	for _, cmd := range []string{"plan", "run"} {
		res := e.run(30*time.Second, cmd, e.path)
		if res.code != run.ExitUsage || !strings.Contains(res.stderr, "campaign.yaml") || !strings.Contains(res.stderr, `do_not_call: sheet `) || !strings.Contains(res.stderr, `contacts.csv has no column \"Do Not Cal\"`) {
			t.Errorf("%s with do_not_call naming a column the sheet lacks: want exit %d naming the file and do_not_call, got %s", cmd, run.ExitUsage, res)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("the sandbox received %d call starts before the column was mapped right", n)
	}
	b, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(e.path, []byte(strings.Replace(string(b), `"Do Not Cal"`, `"Do Not Call"`, 1)), 0o644)

	res := e.run(30*time.Second, "plan", "--offline", "--strict", "--format", "json", e.path)
	if res.code != 0 {
		t.Fatalf("plan --strict with the column mapped: %s", res)
	}
	var plan struct {
		Totals   map[string]int `json:"totals"`
		Unmapped int            `json:"unmapped_do_not_call"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, res.stdout)
	}
	if plan.Totals["suppressed"] != yes || plan.Totals["do_not_call_flag"] != yes || plan.Totals["to_call"] != len(want) || plan.Unmapped != 0 {
		t.Errorf("plan totals %v (unmapped %d); want %d suppressed, all flagged, %d to call", plan.Totals, plan.Unmapped, yes, len(want))
	}

	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	var got []string
	for _, c := range srv.Calls() {
		got = append(got, c.Form.Get("phone_number"))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the sandbox received call starts for %v,\nwant each row whose cell is no flag once: %v", got, want)
	}
	for i, r := range e.report() {
		c := doNotCallCorpus[i]
		switch {
		case c.yes && (r["status"] != "suppressed" || !strings.Contains(r["reason"], `column "Do Not Call" says`)):
			t.Errorf("report row %s (cell %q): %s, %q; want suppressed for the Do Not Call column", r["row"], c.cell, r["status"], r["reason"])
		case !c.yes && r["status"] != "sent":
			t.Errorf("report row %s (cell %q): %s, %q; want sent", r["row"], c.cell, r["status"], r["reason"])
		}
	}
}

// TestCRMDoNotCallFlagHoldsForTheNumber is the promise of the CRM's flag,
// checked against the sandbox's ledger, with files and with PostgreSQL:
// number X is in row 2 with no flag and in row 5, written otherwise, with
// "Do Not Call" = 1. The run never calls X, though row 2 comes first, and
// puts X on the store's do-not-call list before its first call; plan,
// which changes nothing, and run --sandbox, which phones nobody, did not. A second campaign on the same store,
// whose export has no flag column at all, does not call X either.
func TestCRMDoNotCallFlagHoldsForTheNumber(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testCRMDoNotCallFlagHolds(t, kind) })
	}
}

func testCRMDoNotCallFlagHolds(t *testing.T, kind string) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(8)
	x := phones[0]
	db := e2eDatabase(t, kind)
	home := filepath.Join(t.TempDir(), "callrun-home")

	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:4], perSecond: 50, concurrency: 2, postgres: db})
	a.rename("crm-flag")
	a.env = append(a.env, "CALLRUN_HOME="+home)
	xAgain := e2eContact{Raw: x.E164, E164: x.E164, First: x.First, ID: "X-AGAIN"}
	a.contacts = []e2eContact{x, phones[1], phones[2], xAgain, phones[3]}
	a.writeSheetWithFlag([]string{"", "0", "", "1", "no"})
	a.appendYAML("do_not_call: {column: Do Not Call}\n")

	// A rehearsal phones nobody and tells the real list nothing.
	if res := a.run(60*time.Second, "run", "--sandbox", a.path); res.code != 0 {
		t.Fatalf("run --sandbox: %s", res)
	}
	p := a.plan()
	if p.Totals.Suppressed != 2 || p.Totals.DoNotCallFlag != 2 || p.Totals.ToCall != 3 || p.Totals.Duplicate != 0 {
		t.Errorf("plan: %+v; want X's two rows suppressed for the flag, 3 to call", p.Totals)
	}
	if es := a.dncList(false); len(es) != 0 {
		t.Fatalf("plan or run --sandbox changed the do-not-call list: %+v", es)
	}
	if res := a.run(60*time.Second, "run", a.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[x.E164] != 0 || got[phones[1].E164] != 1 || got[phones[2].E164] != 1 || got[phones[3].E164] != 1 || len(got) != 3 {
		t.Errorf("the sandbox's ledger after the flagged campaign: %v; want %s never, the three others once", got, x.E164)
	}
	rows := a.report()
	for _, i := range []int{0, 3} {
		if r := rows[i]; r["status"] != "suppressed" || !strings.Contains(r["reason"], "marked do not call") || (i == 0 && !strings.Contains(r["reason"], `sheet contacts.csv, row 5 (column "Do Not Call" says "1")`)) {
			t.Errorf("report row %s: %s, %q; want suppressed for the flag in row 5", r["row"], r["status"], r["reason"])
		}
	}
	es := a.dncList(false)
	if len(es) != 1 || es[0].Number != x.E164 || !strings.Contains(es[0].Source, `campaign crm-flag`) || !strings.Contains(es[0].Source, "row 5") {
		t.Errorf("the store's do-not-call list after the run: %+v; want %s from the flag of row 5", es, x.E164)
	}

	// Another campaign on the store: its export carries no flag column.
	checkListHoldsElsewhere(t, srv, "no-flag", []e2eContact{phones[4], x, phones[5]}, db, home)
}

// TestConsentRevokedHoldsForTheNumber is the promise of a withdrawn
// consent, checked against the sandbox's ledger, with files and with
// PostgreSQL: with consent required, number X is in row 2 with a date of
// consent and in row 5, written otherwise, whose consent cell says
// "Revoked". The run never calls X, though row 2 comes first and has
// evidence, and puts X on the store's do-not-call list before its first
// call, naming the consent column; plan and run --sandbox did not. Row 5
// stays invalid for want of consent, and plan's counts are the report's.
// A second campaign on the same store, which maps no consent column,
// does not call X either.
func TestConsentRevokedHoldsForTheNumber(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testConsentRevokedHolds(t, kind) })
	}
}

func testConsentRevokedHolds(t *testing.T, kind string) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(8)
	x := phones[0]
	db := e2eDatabase(t, kind)
	home := filepath.Join(t.TempDir(), "callrun-home")

	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:4], perSecond: 50, concurrency: 2, postgres: db})
	a.rename("consent-revoked")
	a.env = append(a.env, "CALLRUN_HOME="+home)
	xAgain := e2eContact{Raw: x.E164, E164: x.E164, First: x.First, ID: "X-AGAIN"}
	a.contacts = []e2eContact{x, phones[1], phones[2], xAgain, phones[3]}
	a.writeSheetWithColumn("Consent Date", []string{"2024-01-02", "yes", "2024-03-04", "Revoked", "3/4/2024"})
	a.appendYAML("consent: {column: Consent Date, required: true}\n")

	// A rehearsal phones nobody and tells the real list nothing.
	if res := a.run(60*time.Second, "run", "--sandbox", a.path); res.code != 0 {
		t.Fatalf("run --sandbox: %s", res)
	}
	p := a.plan()
	if p.Totals.Suppressed != 1 || p.Totals.DoNotCallFlag != 1 || p.Totals.Invalid != 1 || p.Totals.ToCall != 3 || p.Totals.Duplicate != 0 {
		t.Errorf("plan: %+v; want X's row 2 suppressed for the withdrawal, row 5 invalid, 3 to call", p.Totals)
	}
	if es := a.dncList(false); len(es) != 0 {
		t.Fatalf("plan or run --sandbox changed the do-not-call list: %+v", es)
	}
	if res := a.run(60*time.Second, "run", a.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[x.E164] != 0 || got[phones[1].E164] != 1 || got[phones[2].E164] != 1 || got[phones[3].E164] != 1 || len(got) != 3 {
		t.Errorf("the sandbox's ledger after the campaign: %v; want %s never, the three others once", got, x.E164)
	}
	rows := a.report()
	if r := rows[0]; r["status"] != "suppressed" || !strings.Contains(r["reason"], `consent to be called was withdrawn in sheet contacts.csv, row 5 (consent column "Consent Date" says "Revoked")`) {
		t.Errorf("report row %s: %s, %q; want suppressed for the withdrawal in row 5", r["row"], r["status"], r["reason"])
	}
	if r := rows[3]; r["status"] != "invalid" || !strings.Contains(r["reason"], `"Revoked"`) {
		t.Errorf("report row %s: %s, %q; want invalid for want of consent", r["row"], r["status"], r["reason"])
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r["status"]]++
	}
	if counts["suppressed"] != p.Totals.Suppressed || counts["invalid"] != p.Totals.Invalid || counts["sent"] != p.Totals.ToCall || len(rows) != p.Totals.Rows {
		t.Errorf("the report's statuses %v are not plan's counts %+v", counts, p.Totals)
	}
	es := a.dncList(false)
	if len(es) != 1 || es[0].Number != x.E164 || !strings.Contains(es[0].Source, `consent column "Consent Date" of campaign consent-revoked`) || !strings.Contains(es[0].Source, "row 5") {
		t.Errorf("the store's do-not-call list after the run: %+v; want %s from the consent column of row 5", es, x.E164)
	}

	// Another campaign on the store: it maps no consent column.
	checkListHoldsElsewhere(t, srv, "no-consent", []e2eContact{phones[4], x, phones[5]}, db, home)
}

// TestCRMDoNotCallFlagSheetUnreadable: a sheet that maps do_not_call: and
// breaks part-way (a quote never closed) may flag, after the break, a
// number of the rows before it: run calls nobody and exits 2 naming the
// sheet and row, and the sandbox's ledger stays empty.
func TestCRMDoNotCallFlagSheetUnreadable(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(3)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 50, concurrency: 2})
	e.writeSheetWithFlag([]string{"", "", ""})
	f, err := os.OpenFile(filepath.Join(e.dir, "contacts.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Row 5 opens a quote it never closes: the row after it, which flags
	// the number of row 2, cannot be read.
	f.WriteString("X4,Ada,\"+1 555,x@example.com,\n" + "X5,Ada," + phones[0].E164 + ",y@example.com,1\n")
	f.Close()
	e.appendYAML("do_not_call: {column: Do Not Call}\n")
	res := e.run(30*time.Second, "run", e.path)
	if res.code != run.ExitUsage || !strings.Contains(res.stderr, "contacts.csv row 5") || !strings.Contains(res.stderr, "do-not-call flags of the rows after it cannot be read") {
		t.Errorf("run of a flagged sheet that breaks part-way: want exit %d naming the sheet and row, got %s", run.ExitUsage, res)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the sandbox received %d call starts from a sheet whose flags could not all be read", n)
	}
}

// TestCRMDoNotCallUnclearCellsStrict: a do_not_call: column whose cells
// say neither yes nor no ("Pending", "see notes") is a warning to plan,
// and plan --strict, the check a CI job runs, fails on it as it fails on
// an entry of a suppression file that is no number: no one can tell
// whether those rows' contacts asked not to be called (their rows are
// not called, TestSignalsEndToEnd).
func TestCRMDoNotCallUnclearCellsStrict(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(4), perSecond: 50, concurrency: 2})
	e.writeSheetWithFlag([]string{"", "Pending", "1", "see notes"})
	e.appendYAML("do_not_call: {column: Do Not Call}\n")
	if res := e.run(30*time.Second, "plan", "--offline", e.path); res.code != 0 || !strings.Contains(res.stdout, `2 cell(s) of the do-not-call column "Do Not Call" say neither yes nor no (row 3: "Pending")`) {
		t.Errorf("plan of unclear do-not-call cells: want exit 0 and a warning, got %s", res)
	}
	res := e.run(30*time.Second, "plan", "--offline", "--strict", "--format", "json", e.path)
	if res.code != run.ExitInvalidRows || !strings.Contains(res.stderr, "2 cell(s) of the do_not_call: columns (or titles of groups of rows) say neither yes nor no") || !strings.Contains(res.stdout, `"unclear_do_not_call": 2`) {
		t.Errorf("plan --strict of unclear do-not-call cells: want exit %d, got %s", run.ExitInvalidRows, res)
	}
	e.writeSheetWithFlag([]string{"", "no", "1", "0"})
	if res := e.run(30*time.Second, "plan", "--offline", "--strict", e.path); res.code != 0 {
		t.Errorf("plan --strict once every cell says yes or no: %s", res)
	}
}

// checkListHoldsElsewhere runs campaign name over contacts, whose second
// is a number a campaign before it put on the store's do-not-call list
// (the store of home, or the database db), with nothing in its sheet
// that marks it: the sandbox's ledger must show it never called, and the
// others once each, and its report row suppressed for the list.
func checkListHoldsElsewhere(t *testing.T, srv *sandbox.Server, name string, contacts []e2eContact, db, home string) {
	t.Helper()
	b := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2, postgres: db, noLogin: db != ""})
	b.rename(name)
	b.env = append(b.env, "CALLRUN_HOME="+home)
	if res := b.run(60*time.Second, "run", b.path); res.code != 0 {
		t.Fatalf("run of campaign %s: %s", name, res)
	}
	got := callsByNumber(srv.Calls())
	x := contacts[1].E164
	if got[x] != 0 || got[contacts[0].E164] != 1 || got[contacts[2].E164] != 1 {
		t.Errorf("the sandbox's ledger after campaign %s: %v; want %s never, %s and %s once", name, got, x, contacts[0].E164, contacts[2].E164)
	}
	if r := b.report()[1]; r["status"] != "suppressed" || !strings.Contains(r["reason"], "do-not-call list") {
		t.Errorf("campaign %s's report row of %s: %s, %q; want suppressed for the do-not-call list", name, x, r["status"], r["reason"])
	}
}

// flaggedFirstRow returns three contacts, the first written as cell and
// no number callrun may read, the second (212) 555-0100: with
// writeSheetWithFlag([]string{"true", "", ""}), the first row is marked
// do not call.
func flaggedFirstRow(cell string) []e2eContact {
	phones := e2ePhones(2)
	return []e2eContact{{Raw: cell, First: "A", ID: "c-flagged"}, phones[0], phones[1]}
}

// TestCRMDoNotCallFlagNumberUnread: a row marked do not call whose phone
// cell cannot be read as a number ("(212) 555-01O0", a letter O for a
// zero) may be the person of another row, (212) 555-0100: plan, plan
// --strict and run stop, naming the sheet, the row and the columns, and
// the sandbox's ledger stays empty.
func TestCRMDoNotCallFlagNumberUnread(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: flaggedFirstRow("(212) 555-01O0"), perSecond: 50, concurrency: 2})
	if e.contacts[1].Raw != "(212) 555-0100" {
		t.Fatalf("test bug: the second row is %q", e.contacts[1].Raw)
	}
	e.writeSheetWithFlag([]string{"true", "", ""})
	e.appendYAML("do_not_call: {column: Do Not Call}\n")
	for _, args := range [][]string{{"plan", "--offline", e.path}, {"plan", "--offline", "--strict", e.path}, {"run", e.path}} {
		res := e.run(30*time.Second, args...)
		out := strings.ReplaceAll(res.stdout+res.stderr, `\"`, `"`)
		for _, want := range []string{
			`sheet contacts.csv, row 2: it is marked do not call (column "Do Not Call" says "true"), but its phone column "Phone" says "(212) 555-01O0", which reads as no phone number`,
			"Correct the number in the sheet", "suppression file (suppress:)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %s:\n%s", strings.Join(args[:len(args)-1], " "), want, out)
			}
		}
		if res.code != run.ExitUsage {
			t.Errorf("%s of a flagged row whose number cannot be read: want exit %d, got %s", strings.Join(args[:len(args)-1], " "), run.ExitUsage, res)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the sandbox received %d call starts: %v", n, callsByNumber(srv.Calls()))
	}
}

// TestCRMDoNotCallFlagNoNumberRuns: a row marked do not call whose phone
// cell holds no number ("N/A") names nobody: plan --strict passes, and
// run calls the other rows once each.
func TestCRMDoNotCallFlagNoNumberRuns(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: flaggedFirstRow("N/A"), perSecond: 50, concurrency: 2})
	e.writeSheetWithFlag([]string{"true", "", ""})
	e.appendYAML("do_not_call: {column: Do Not Call}\n")
	if res := e.run(30*time.Second, "plan", "--offline", "--strict", e.path); res.code != 0 {
		t.Errorf("plan --strict of a flagged row whose phone cell says N/A: %s", res)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run of a flagged row whose phone cell says N/A: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if len(got) != 2 || got[e.contacts[1].E164] != 1 || got[e.contacts[2].E164] != 1 {
		t.Errorf("the sandbox's ledger %v; want %s and %s once each", got, e.contacts[1].E164, e.contacts[2].E164)
	}
}

// TestRunEveryRowInvalidFails: a run of a sheet whose every row is
// invalid (a sheet mapped wrong, a column of something else) calls
// nobody and says so with exit 4, not "complete" and 0, which a cron job
// would read as a campaign done.
func TestRunEveryRowInvalidFails(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: []e2eContact{{Raw: "555-1234", First: "A", E164: "none-1"}, {Raw: "N/A", First: "B", E164: "none-2"}, {Raw: "12345", First: "C", E164: "none-3"}}, perSecond: 50, concurrency: 2})
	res := e.run(60*time.Second, "run", e.path)
	if res.code != run.ExitInvalidRows || !strings.Contains(res.String(), "every one of the 3 row(s) is invalid, so nobody was called") {
		t.Errorf("run of a sheet of invalid rows: %s", res)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Errorf("the sandbox received %d call starts", len(calls))
	}
}
