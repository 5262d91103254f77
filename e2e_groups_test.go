package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestGroupsEndToEnd runs the binary over a sheet laid out as
// monday.com's board export: the board's name, then each group's title
// in a row of its own above the header repeated, then its rows. Number X
// is in the first group, and again, written otherwise, in the group
// titled "Do Not Call". The run calls no row of that group, nor X in the
// first group, and puts both of the group's numbers on the store's
// do-not-call list, naming the group; a group whose title only mentions
// do not call is held (not called, on no list), and plan says so; the repeated headers
// are neither contacts nor invalid rows. The sandbox's ledger holds the
// numbers of the other groups' rows, each once.
func TestGroupsEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(6)
	sub := phones[5] // a number in a subitem's cell under the Phone column
	phones = phones[:5]
	e := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 100, concurrency: 2})
	e.env = append(e.env, "CALLRUN_HOME="+filepath.Join(e.dir, "home"))
	x := phones[1]
	const header = "Contact Id,First Name,Phone,Email\n"
	row := func(c e2eContact, raw string) string {
		return fmt.Sprintf("%s,%s,%q,%s@example.com\n", c.ID, c.First, raw, c.ID)
	}
	sheet := "Spring board\nLeads\n" + header + // rows 1-3
		row(phones[0], phones[0].Raw) + row(x, x.Raw) + "\n" + // rows 4-6
		"Do Not Call\n" + header + // rows 7-8
		row(phones[2], phones[2].Raw) + row(e2eContact{ID: "x-again", First: "X again"}, x.E164) + "\n" + // rows 9-11, X in 10
		"Call back later - do not call before 10am\n" + header + // rows 12-13
		row(phones[3], phones[3].Raw) + "\n" + // rows 14-15
		"Won\n" + header + row(phones[4], phones[4].Raw) + // rows 16-18
		",Subitems,Owner\n" + fmt.Sprintf(",Follow-up call,%q,\n", sub.Raw) // rows 19-20: the item's subitems
	writeFile(t, filepath.Join(e.dir, "contacts.csv"), []byte(sheet))

	res := e.run(30*time.Second, "plan", "--offline", "--format", "json", e.path)
	var plan struct {
		Sheets []struct {
			Signals []struct {
				Group, Kind, Use string
				TitleRow         int `json:"title_row"`
				Rows, Mentions   int
			} `json:"signals"`
		} `json:"sheets"`
		Totals struct {
			Rows, Invalid, Suppressed int
			ToCall                    int `json:"to_call"`
			DoNotCallFlag             int `json:"do_not_call_flag"`
		} `json:"totals"`
		FlaggedNumbers int      `json:"flagged_numbers"`
		HeldNumbers    int      `json:"held_numbers"`
		Warnings       []string `json:"warnings"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &plan) != nil || len(plan.Sheets) != 1 {
		t.Fatalf("plan: %s", res)
	}
	if p := plan.Totals; p.Rows != 6 || p.Invalid != 0 || p.Suppressed != 4 || p.DoNotCallFlag != 4 || p.ToCall != 2 || plan.FlaggedNumbers != 2 || plan.HeldNumbers != 1 {
		t.Errorf("plan: %+v, %d numbers flagged, %d held; want 6 rows, none invalid, 3 suppressed for the group and 1 held for the mention, 2 to call, 2 numbers flagged (the group's) and 1 held (the mention's)", p, plan.FlaggedNumbers, plan.HeldNumbers)
	}
	groups := map[string]string{}
	for _, s := range plan.Sheets[0].Signals {
		if s.Kind == "group" {
			groups[s.Group] = fmt.Sprintf("%s row %d: %d rows, %d mentions", s.Use, s.TitleRow, s.Rows, s.Mentions)
		}
	}
	if want := map[string]string{
		"Do Not Call": "honoured row 7: 2 rows, 0 mentions",
		"Call back later - do not call before 10am": "held row 12: 0 rows, 1 mentions",
	}; fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("plan's groups %v; want %v", groups, want)
	}
	warnings := strings.Join(plan.Warnings, "\n")
	for _, want := range []string{
		`rows 8, 13, 17 repeat the header: not read as contacts; the rows are in 4 group(s)`,
		`rows 19, 20 are an item's subitems (under a "Subitems" header row, as monday.com exports them): not read as contacts`,
		`the title of a group of rows mentions a do-not-call phrase without being one (row 12: "Call back later - do not call before 10am"), and its 1 row(s) are not called until it says which`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("plan's warnings do not say %s:\n%s", want, warnings)
		}
	}

	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[phones[0].E164] != 1 || got[phones[4].E164] != 1 || len(got) != 2 {
		t.Errorf("the sandbox's ledger %v; want %s and %s once each, never %s, %s nor %s", got, phones[0].E164, phones[4].E164, x.E164, phones[2].E164, phones[3].E164)
	}

	f, err := os.Open(filepath.Join(e.stateDir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 7 {
		t.Fatalf("report.csv: %v, %d records; want a header and 6 rows", err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	reasons := map[string]string{
		"5":  `the number is in a group of rows whose title says do not call: sheet contacts.csv, row 10 (in the group "Do Not Call", its title in row 7)`,
		"9":  `the row is in the group "Do Not Call" (its title in row 7), whose title says do not call`,
		"10": `the row is in the group "Do Not Call" (its title in row 7), whose title says do not call`,
		"14": `the row is in the group "Call back later - do not call before 10am" (its title in row 12), whose title mentions do not call without saying it`,
	}
	for _, r := range recs[1:] {
		status, reason := r[col["status"]], r[col["reason"]]
		if want, ok := reasons[r[col["row"]]]; ok {
			if status != "suppressed" || !strings.Contains(reason, want) {
				t.Errorf("report row %s: %s, %q; want suppressed: %s", r[col["row"]], status, reason, want)
			}
		} else if status != "sent" {
			t.Errorf("report row %s: %s, %q; want sent", r[col["row"]], status, reason)
		}
	}

	es := e.dncList(false)
	listed := map[string]string{}
	for _, en := range es {
		listed[en.Number] = en.Source
	}
	for _, n := range []string{x.E164, phones[2].E164} {
		if !strings.Contains(listed[n], `group "Do Not Call" of campaign e2e, whose title says do not call`) {
			t.Errorf("the store's do-not-call list after the run: %+v; want %s from the group", es, n)
		}
	}
	if len(es) != 2 {
		t.Errorf("the store's do-not-call list after the run: %+v; want the group's two numbers", es)
	}
}
