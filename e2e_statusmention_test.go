package main

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// statusMentionRows are lead statuses as CRMs' exports write them, in a
// "Lead Status" column the campaign does not map, and whether the row may
// be called. The statuses that mention do not call without being the
// phrase whole are real picklist values seen in public code: "Closed - Do
// not call" (a care-gap outreach status list, the HEDIS statuses of a
// health plan's worklist), "XX - DO NOT CALL - XX" (the status an
// insurance agency's lead system sets, matched by its importer's
// isDoNotCall) and "Closed Lost - DNC" (a Salesforce lead stage, named in
// a dashboard's note on its Salesforce export). The others are
// Salesforce's default lead statuses.
var statusMentionRows = []struct {
	status string
	call   bool
}{
	{"Open - Not Contacted", true},
	{"Closed - Do not call", false},
	{"XX - DO NOT CALL - XX", false},
	{"Working - Contacted", true},
	{"Closed Lost - DNC", false},
}

// TestStatusMentionEndToEnd runs the binary over a CRM export whose "Lead
// Status" column, which the campaign does not map, holds statuses that
// mention do not call without being the phrase whole. callrun cannot read
// such a status either way, so it must not call the row: plan and run
// stop before any call, naming the column, the first such status and the
// two ways on (the sandbox's ledger stays at 0 calls; before, every row
// was called). Mapped with the statuses that mean it under values:, the
// run calls the other rows, each once, and never those.
func TestStatusMentionEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(len(statusMentionRows)), perSecond: 100, concurrency: 4})
	rows := make([][]string, len(statusMentionRows))
	for i, r := range statusMentionRows {
		rows[i] = []string{r.status}
	}
	e.writeSheetWithColumns([]string{"Lead Status"}, rows)

	for _, args := range [][]string{{"plan", "--offline", e.path}, {"run", e.path}} {
		res := e.run(30*time.Second, args...)
		out := res.stdout + res.stderr
		if res.code != run.ExitUsage {
			t.Errorf("%s with statuses that mention do not call, not mapped: want exit %d, got %s", args[0], run.ExitUsage, res)
		}
		for _, want := range []string{
			`in column \"Lead Status\", 3 cell(s) mention do not call without saying it whole (row 3: \"Closed - Do not call\")`,
			`do_not_call: [{column: \"Lead Status\", values: [\"Closed - Do not call\", \"XX - DO NOT CALL - XX\", \"Closed Lost - DNC\"]}]`,
			`do_not_call: {ignore: [{column: \"Lead Status\", reason: \"why these rows may be called\"}]}`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %s:\n%s", args[0], want, out)
			}
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("the sandbox received %d call start(s) while statuses that mention do not call were not mapped", n)
	}

	e.appendYAML(`do_not_call: [{column: Lead Status, values: ["Closed - Do not call", "XX - DO NOT CALL - XX", "Closed Lost - DNC"]}]
`)
	if res := e.run(30*time.Second, "plan", "--offline", e.path); res.code != 0 {
		t.Fatalf("plan with the statuses mapped: %s", res)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run with the statuses mapped: %s", res)
	}
	got := callsByNumber(srv.Calls())
	for i, r := range statusMentionRows {
		if n := got[e.contacts[i].E164]; (r.call && n != 1) || (!r.call && n != 0) {
			t.Errorf("row %d (%q): the sandbox received %d call start(s)", i+2, r.status, n)
		}
	}
	for i, row := range e.report() {
		if !statusMentionRows[i].call && (row["status"] != "suppressed" || !strings.Contains(row["reason"], `column "Lead Status" says "`+statusMentionRows[i].status+`"`)) {
			t.Errorf("report row %s: %s, %q; want suppressed for its status", row["row"], row["status"], row["reason"])
		}
	}
}

// TestShouldForgetEndToEnd runs the binary over a Salesforce export of
// contacts with their Individual's privacy fields, as Workbench and Data
// Loader name a related object's field in a query's export: by its API
// name, "Individual.ShouldForget" (the field whose label is "Forget this
// Individual", in the Individual object's field reference:
// developer.salesforce.com/docs/platform/field-reference/references/field-reference/salesforce-field-reference-individual.html).
// Its label was read as a do-not-call flag; its API name was not, so a
// person who asked to be forgotten was called. Now plan and run stop on
// the column until it is mapped or ignored (the ledger stays at 0; before,
// every row was called), and mapped, the person is not called.
func TestShouldForgetEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	cells := []struct {
		forget, solicit string
		call            bool
	}{{"false", "false", true}, {"true", "false", false}, {"false", "false", true}}
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(len(cells)), perSecond: 100, concurrency: 4})
	rows := make([][]string, len(cells))
	for i, c := range cells {
		rows[i] = []string{c.forget, c.solicit}
	}
	e.writeSheetWithColumns([]string{"Individual.ShouldForget", "Individual.HasOptedOutSolicit"}, rows)

	for _, args := range [][]string{{"plan", "--offline", e.path}, {"run", e.path}} {
		res := e.run(30*time.Second, args...)
		if res.code != run.ExitUsage || !strings.Contains(res.stdout+res.stderr, `in column \"Individual.ShouldForget\", 1 row(s) say do not call (row 3: \"true\")`) {
			t.Errorf("%s with Individual.ShouldForget not mapped: want exit %d naming the column, got %s", args[0], run.ExitUsage, res)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("the sandbox received %d call start(s) while Individual.ShouldForget was not mapped", n)
	}

	e.appendYAML("do_not_call: {columns: [Individual.ShouldForget, Individual.HasOptedOutSolicit]}\n")
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run with the Individual's fields mapped: %s", res)
	}
	got := callsByNumber(srv.Calls())
	for i, c := range cells {
		if n := got[e.contacts[i].E164]; (c.call && n != 1) || (!c.call && n != 0) {
			t.Errorf("row %d (ShouldForget %s): the sandbox received %d call start(s)", i+2, c.forget, n)
		}
	}
}
