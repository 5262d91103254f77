package report

import (
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
	p := NewPage()
	for _, cell := range []string{"abc", "<script>alert(1)</script>"} {
		p.AddInvalid(ReasonGroup(`"`+cell+`" is not a phone number`), "fix the number", Example{Sheet: "a.csv", Row: 2, Column: "Phone", Cell: cell})
	}
	p.AddInvalid(ReasonGroup(`+33142685300, a number in France (FR), which this campaign does not call`), "allow FR", Example{Sheet: "<i>b</i>.csv", Row: 9, Column: "Phone", Cell: "+33 1 42 68 53 00"})
	p.AddCalled("US")
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
		"Wed 25 Nov 2026 11:00 UTC", "not in the next eight days",
		`data-figure="country" data-country="US">1<`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Index(page, "is not a phone number") > strings.Index(page, "a number in France") {
		t.Error("the larger invalid reason is not first")
	}
	if strings.Index(page, "11:00 UTC") > strings.Index(page, "not in the next eight days") {
		t.Error("contacts that may never be called come before those waiting for a time")
	}
}

func TestReasonGroup(t *testing.T) {
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

func TestWriteHTMLOutcomes(t *testing.T) {
	render := func(rows []Row, unmatched int) string {
		t.Helper()
		sum := &Summary{Campaign: "spring", Outcomes: map[string]int{}, Unmatched: &unmatched}
		for _, r := range rows {
			sum.Add(r)
		}
		path := filepath.Join(t.TempDir(), "report.html")
		if err := WriteHTML(path, sum, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
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
