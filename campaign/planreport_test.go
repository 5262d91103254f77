package campaign

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// TestPlanReport plans the messy fixture sheets with --report on a
// Friday afternoon in New York, with one number sent by an earlier run,
// one on the do-not-call list and one called today on the store: every
// row of report.csv has one of the plan's decisions, in the numbers the
// plan counts, with a reason; those outside their hours say from when
// (the Monday window), the held one until when; report.html lists every
// row by name under its decision.
func TestPlanReport(t *testing.T) {
	f, sup := loadMessy(t)
	ctx := context.Background()
	friday := time.Date(2026, 11, 20, 19, 59, 0, 0, time.UTC) // 14:59 in New York
	const (
		sent = "+14155550142" // highlevel_export.csv row 4, as Excel damaged it
		dnc  = "+4915112345678"
		held = "+442079460123"
		// highlevel_export.csv row 3, tried by an earlier run and not sent
		tried = "+14155550123"
	)
	sup.SetDoNotCall([]string{dnc})
	dir := t.TempDir()
	jpath := filepath.Join(dir, "journal.jsonl")
	at := friday.Add(-time.Hour)
	lines := []store.Record{
		{Type: store.TypeIntent, Agent: "US Reminder", Phone: sent, AgentID: "agent_1", Sheet: f.Sheets[0].File, Row: 4, Attempt: 1, At: at},
		{Type: store.TypeOutcome, Agent: "US Reminder", Phone: sent, AgentID: "agent_1", Sheet: f.Sheets[0].File, Row: 4, Attempt: 1, At: at, Status: store.OutcomeSent, HTTP: 200},
		{Type: store.TypeIntent, Agent: "US Reminder", Phone: tried, AgentID: "agent_1", Sheet: f.Sheets[0].File, Row: 3, Attempt: 1, At: at},
		{Type: store.TypeOutcome, Agent: "US Reminder", Phone: tried, AgentID: "agent_1", Sheet: f.Sheets[0].File, Row: 3, Attempt: 1, At: at,
			Status: store.OutcomeRetry, HTTP: 503, Reason: "the service answered 503 Service Unavailable before acting"},
	}
	var b strings.Builder
	for _, r := range lines {
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(jpath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	j, st, err := store.OpenJournal(jpath, store.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(); st.Close() })

	out := filepath.Join(dir, "plan")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := StartPlanReport(f, st, out, friday)
	if err != nil {
		t.Fatal(err)
	}
	pressure := &PlanPressure{Limits: f.PressureLimits(), Starts: map[string][]time.Time{held: {friday.Add(-2 * time.Hour)}}}
	plan, err := BuildPlan(ctx, f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: friday,
		Pressure: pressure, Report: rep, Done: func(c *Contact) bool {
			key, _ := SettledKey(f, st, c)
			s, ok := st.Status(key)
			return ok && s != store.Pending
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Finish(); err != nil {
		t.Fatal(err)
	}

	rows := dtReadCSV(t, filepath.Join(out, ReportCSV))[1:]
	count := map[string]int{}
	monday := "may be called from 2026-11-23T14:00:00Z (Mon 23 Nov " // 09:00 in New York
	for _, r := range rows {
		count[r["status"]]++
		if !slices.Contains(report.PlanStatuses, r["status"]) {
			t.Errorf("row %s %s: status %q is none of the plan's", r["sheet"], r["row"], r["status"])
		}
		if r["status"] != report.PlanToCall && r["reason"] == "" {
			t.Errorf("row %s %s (%s) has no reason", r["sheet"], r["row"], r["status"])
		}
		switch r["phone_number"] {
		case sent:
			if r["sheet"] != f.Sheets[0].File || r["row"] != "4" {
				break // its duplicates
			}
			if r["status"] != report.PlanDone || !strings.HasPrefix(r["reason"], "sent in an earlier run (") {
				t.Errorf("the number sent before: %v", r)
			}
		case tried:
			if r["status"] != report.PlanToCall || r["reason"] != "tried by an earlier run and not sent: the service answered 503 Service Unavailable before acting" {
				t.Errorf("the number tried before: %v", r)
			}
		case dnc:
			if r["status"] != Suppressed || r["reason"] != ReasonDoNotCall {
				t.Errorf("the number on the do-not-call list: %v", r)
			}
		case held:
			if r["status"] != report.PlanHeld || !strings.Contains(r["reason"], "may be called again from 2026-11-21T17:59:00Z") {
				t.Errorf("the number called today: %v", r)
			}
		}
		if r["status"] == report.PlanWaiting && !strings.Contains(r["reason"], monday) {
			t.Errorf("row %s %s waits, but its reason says not from when the campaign's window opens: %q", r["sheet"], r["row"], r["reason"])
		}
	}
	tt := plan.Totals
	if count[report.PlanToCall]+count[report.PlanWaiting] != tt.ToCall || count[report.PlanHeld] != tt.Held || count[report.PlanDone] != tt.Done ||
		count[Invalid] != tt.Invalid || count[Duplicate] != tt.Duplicate || count[Suppressed] != tt.Suppressed || len(rows) != tt.Rows {
		t.Errorf("report.csv counts %v; the plan %+v", count, tt)
	}
	if count[report.PlanWaiting] != plan.Hours.OutsideNow || count[report.PlanWaiting] == 0 || count[report.PlanHeld] != 1 || count[report.PlanDone] != 1 {
		t.Errorf("report.csv counts %v; want %d waiting (the plan's outside their hours now), 1 held, 1 done", count, plan.Hours.OutsideNow)
	}

	page, err := os.ReadFile(filepath.Join(out, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	unescape := func(s string) string { // report.csv's escape of a cell a spreadsheet would run
		if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@", rune(s[1])) {
			return s[1:]
		}
		return s
	}
	for _, r := range rows {
		name := strings.TrimSpace(unescape(r["first_name"]) + " " + unescape(r["last_name"]))
		if name == "" {
			name = `<span class="small">(no name)</span>`
		} else {
			name = htmlText(name)
		}
		// The row's line on the page, in its decision's section.
		line := "<tr><td>" + name + "</td><td>" + htmlText(unescape(r["phone_number"])) + `</td><td class="where">` + htmlText(r["sheet"]) + " row " + r["row"] + "</td>"
		i := strings.Index(string(page), line)
		section := strings.LastIndex(string(page[:max(i, 0)]), `<div class="people-group" id="people-`)
		if i < 0 || section < 0 || !strings.HasPrefix(string(page[section:]), `<div class="people-group" id="people-`+r["status"]+`"`) {
			t.Errorf("%s (%s) is not listed under its decision on the page", line, r["status"])
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 2 {
		t.Errorf("the plan's report directory holds %v; want report.csv and report.html", entries)
	}
}

// htmlText is s as html/template escapes text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
