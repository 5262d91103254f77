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
	{"Checked", true}, {" 1 ", true}, {"  yes", true}, {"✓", true},
	{"", false}, {" ", false}, {"0", false}, {"false", false}, {"FALSE", false}, {"False", false},
	{"no", false}, {"No", false}, {"n", false}, {"N", false}, {"unchecked", false}, {"0 ", false},
}

// writeSheetWithFlag rewrites contacts.csv with a "Do Not Call" column
// after the others, cells[i] in contact i's row.
func (e *e2eCampaign) writeSheetWithFlag(cells []string) {
	e.t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email", "Do Not Call"})
	for i, c := range e.contacts {
		w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com", cells[i]})
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
// the column is mapped, plan warns of it and --strict fails; a mapped
// column the sheet lacks stops plan and run before any call.
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

	// Not mapped: plan names the column, --strict fails, nothing is sent.
	res := e.run(30*time.Second, "plan", "--offline", e.path)
	if res.code != 0 || !strings.Contains(res.stdout, `column "Do Not Call" that reads as a do-not-call flag`) || !strings.Contains(res.stdout, "its 16 row(s) that say yes") {
		t.Errorf("plan of a sheet with an unmapped Do Not Call column: %s", res)
	}
	res = e.run(30*time.Second, "plan", "--offline", "--strict", e.path)
	if res.code != exitInvalidRows || !strings.Contains(res.stderr, "16 row(s) say yes in a column that reads as a do-not-call flag") {
		t.Errorf("plan --strict of a sheet with an unmapped Do Not Call column: want exit %d, got %s", exitInvalidRows, res)
	}

	// A column the sheet lacks: a load error naming the file and the key.
	e.appendYAML("do_not_call: {column: \"Do Not Cal\"}\n")
	for _, cmd := range []string{"plan", "run"} {
		res := e.run(30*time.Second, cmd, e.path)
		if res.code != exitUsage || !strings.Contains(res.stderr, "campaign.yaml") || !strings.Contains(res.stderr, `do_not_call: sheet `) || !strings.Contains(res.stderr, `contacts.csv has no column \"Do Not Cal\"`) {
			t.Errorf("%s with do_not_call naming a column the sheet lacks: want exit %d naming the file and do_not_call, got %s", cmd, exitUsage, res)
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

	res = e.run(30*time.Second, "plan", "--offline", "--strict", "--format", "json", e.path)
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
