package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestWriteHTML: the page escapes what the sheets hold, groups invalid
// rows by reason (largest first, with their examples), lists the
// countries and waiting times, says outcomes are not collected, and tells
// a run that ended from one that left no end record. A golden file pins
// the page (testdata/TestWriteHTML.golden, -update to rewrite it).
func TestWriteHTML(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	sum := &Summary{Campaign: `spring <b>"promo"</b>`, StartedAt: t0, CallsThisRun: 3, Ending: EndComplete}
	for _, r := range []Row{{Sheet: "a.csv", Status: "sent"}, {Sheet: "a.csv", Status: "invalid"}, {Sheet: "a.csv", Status: "invalid"}, {Sheet: "<i>b</i>.csv", Status: "invalid"}} {
		sum.Add(r)
	}
	sum.Finish(t0.Add(time.Minute))
	sum.Runs = []store.Run{
		{StartedAt: t0.Add(-time.Hour), LastAt: t0.Add(-time.Hour + 3*time.Second), Calls: 2, PerSecond: []int{1, 1}, PerMinute: []int{2}},
		{StartedAt: t0, LastAt: t0.Add(90 * time.Minute), EndedAt: t0.Add(90 * time.Minute), Ending: EndOutsideHours, Calls: 3, PerMinute: []int{1, 0, 2}},
	}
	p := NewPage(t.TempDir())
	for _, cell := range []string{"abc", "<script>alert(1)</script>"} {
		p.AddInvalid(ReasonGroup(`"`+cell+`" is not a phone number`), "fix the number", Example{Sheet: "a.csv", Row: 2, Column: "Phone", Cell: cell})
	}
	p.AddInvalid(ReasonGroup(`+33142685300, a number in France (FR), which this campaign does not call`), "allow FR", Example{Sheet: "<i>b</i>.csv", Row: 9, Column: "Phone", Cell: "+33 1 42 68 53 00"})
	p.AddCalled("United States (US)")
	p.AddPerson("sent", Person{Name: "Ann <b>Lee</b>", Number: "+14155550100", Sheet: "a.csv", Row: 2, Why: "number from column \"Mobile\""})
	p.AddPerson("invalid", Person{Sheet: "a.csv", Row: 3, Number: "<script>alert(1)</script>", Why: `column "Phone": "<script>alert(1)</script>" is not a phone number`})
	p.AddPerson("pending", Person{Name: "Guy Mann", Number: "+441481256789", Sheet: "a.csv", Row: 4, Why: "outside the called person's hours", From: t0.Add(2 * time.Hour)})
	p.AddWaiting(t0.Add(2*time.Hour), "GB")
	p.AddWaiting(time.Time{}, "FR")
	p.AddWaiting(t0.Add(2*time.Hour), "GB")
	path := filepath.Join(t.TempDir(), "report.html")
	if err := WriteHTML(path, sum, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, b) // the whole page, style sheet included
	page := string(b)
	for _, bad := range []string{"<script>alert", "<b>", "<i>b</i>", "http://", "https://", "<link", "<img", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;", "spring &lt;b&gt;&#34;promo&#34;&lt;/b&gt;",
		`<span class="n">2</span> &#34;…&#34; is not a phone number`,
		"&#43;…, a number in France (FR)",
		"Outcomes are not collected",
		"It ended without an end record",
		"It ended stopped outside calling hours.",
		"Calls started per second", "Calls started per minute",
		"Wed 25 Nov 2026 11:00 UTC", "not in the next three weeks",
		`data-figure="country" data-country="United States (US)">1<`,
		// Everyone by name, under their status, escaped; a waiting
		// contact says from when.
		`<td>Ann &lt;b&gt;Lee&lt;/b&gt;</td><td>+14155550100</td>`,
		`<strong class="from">from Wed 25 Nov 2026 11:00 UTC</strong>: outside the called person&#39;s hours`,
		`data-figure="people" data-status="pending">1<`,
		// The page says what is true of outcomes and opt-outs: neither is
		// collected, and what turns them on.
		"add an <code>outcomes:</code> block",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"callrun does not receive", "callrun:people", "Rehearsal"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the page's directory holds %v; want report.html alone (the people's temporary files removed)", entries)
	}
	if strings.Index(page, "is not a phone number") > strings.Index(page, "a number in France") {
		t.Error("the larger invalid reason is not first")
	}
	if strings.Index(page, "11:00 UTC") > strings.Index(page, "not in the next three weeks") {
		t.Error("contacts that may never be called come before those waiting for a time")
	}
}

func TestReasonGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"x@" is not an e-mail address`:              `"…" is not an e-mail address`,
		`"a \"b\"" holds more than one phone number`: `"…" holds more than one phone number`,
		`phone number is empty`:                      `phone number is empty`,
		`+442071838750, a number in United Kingdom`:  `+…, a number in United Kingdom`,
		`add +1 to it`:                               `add +1 to it`,
	} {
		if got := ReasonGroup(in); got != want {
			t.Errorf("ReasonGroup(%q) = %q, want %q", in, got, want)
		}
	}
}

// renderPage writes the page of sum and p (a page of its own when nil)
// and returns it.
func renderPage(t *testing.T, sum *Summary, p *Page) string {
	t.Helper()
	if p == nil {
		p = NewPage(t.TempDir())
	}
	path := filepath.Join(p.dir, "report.html")
	if err := WriteHTML(path, sum, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteHTMLOutcomes(t *testing.T) {
	t.Parallel()
	render := func(rows []Row, unmatched int) string {
		t.Helper()
		sum := &Summary{Campaign: "spring", Outcomes: map[string]int{}, Unmatched: &unmatched}
		for _, r := range rows {
			sum.Add(r)
		}
		return renderPage(t, sum, nil)
	}
	called := func(o Outcome) Row { return Row{Status: "sent", Attempts: 1, Outcome: o} }
	page := render([]Row{
		called(Outcome{Event: "ended", Answered: true}), called(Outcome{Event: "ended"}),
		called(Outcome{Event: "started"}), called(Outcome{}), {Status: "invalid"},
	}, 3)
	for _, want := range []string{
		`data-figure="answered">1<`, `data-figure="outcome-ended">2<`, `data-figure="outcome-started">1<`,
		`data-figure="outcome-none">1<`, `data-figure="unmatched">3<`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "Outcomes are not collected") {
		t.Error("the page says outcomes are not collected")
	}
	// Collected, but nothing delivered yet: the page says so as before.
	if page := render([]Row{called(Outcome{})}, 0); !strings.Contains(page, "No webhook delivery has been stored") {
		t.Error("a campaign with no delivery yet shows outcomes")
	}
}

// TestWriteHTMLPlanAndRehearsal: a plan's page lists its decisions, with
// no funnel, runs or outcomes; a rehearsal's page says it is one, and a
// campaign that collects opt-outs has them counted. A list longer than
// peopleOpen is folded, never cut.
func TestWriteHTMLPlanAndRehearsal(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2027, 1, 4, 7, 0, 0, 0, time.UTC)
	p := NewPage(t.TempDir())
	p.Plan = true
	sum := &Summary{Campaign: "crm", FinishedAt: t0}
	for i := range peopleOpen + 5 {
		sum.Add(Row{Sheet: "a.csv", Status: PlanToCall})
		p.AddPerson(PlanToCall, Person{Name: fmt.Sprintf("Person %d", i), Number: "+14155550100", Sheet: "a.csv", Row: i + 2})
	}
	sum.Add(Row{Sheet: "a.csv", Status: PlanHeld})
	p.AddPerson(PlanHeld, Person{Name: "Held Back", Sheet: "a.csv", Row: 40, Why: "held back", From: t0.Add(20 * time.Hour)})
	page := renderPage(t, sum, p)
	for _, want := range []string{
		"Plan: what callrun run would do, before any call", "<title>crm — callrun plan</title>",
		`data-figure="people" data-status="to_call">30<`, `data-figure="people" data-status="held">1<`,
		"<details>\n<summary>Show all 30</summary>", "<details open>\n<summary>1 person</summary>",
		"Person 0<", "Person 29<", "from Tue 5 Jan 2027 03:00 UTC",
		`data-figure="status" data-status="to_call">30<`, "Countries to call",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the plan's page lacks %q", want)
		}
	}
	for _, bad := range []string{`id="funnel"`, `id="runs"`, `id="outcomes"`, `data-status="sent"`} {
		if strings.Contains(page, bad) {
			t.Errorf("the plan's page holds %q", bad)
		}
	}
	if strings.Index(page, "To call:") > strings.Index(page, "Held back by contact pressure:") {
		t.Error("the plan's sections are not in PlanStatuses' order")
	}

	optedOut := 2
	sum = &Summary{Campaign: "crm", Rehearsal: true, Ending: EndWaiting, NextCallAt: t0.Add(time.Hour), Outcomes: map[string]int{}, OptedOut: &optedOut}
	sum.Add(Row{Status: "sent", Attempts: 1})
	sum.Add(Row{Status: "pending"})
	page = renderPage(t, sum, nil)
	for _, want := range []string{
		"<title>crm — callrun rehearsal report</title>", "Rehearsal: nobody was phoned.", "Rehearsal report: not complete: 1 contact waiting",
		"Mon 4 Jan 2027 08:00 UTC", `data-figure="opted-out">2<`, "Opt-outs are collected",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the rehearsal's page lacks %q", want)
		}
	}
}
