package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/nyaruka/phonenumbers"
)

// TestPendingWaits: a contact left pending names the rule that holds it
// and, where there is one, the time it may be called: the called
// person's hours (their zone named), contact pressure, the service's
// pause; else the run's end, its turn in a run going on, its attempts.
// A rehearsal's pending contacts wait for no hours.
func TestPendingWaits(t *testing.T) {
	f := &File{Pace: Pace{MaxActiveCalls: 3}}
	hours, err := f.CallingHours()
	if err != nil {
		t.Fatal(err)
	}
	london := &Contact{Phone: "+442079460123", Country: "GB", Kind: phonenumbers.FIXED_LINE}
	night := time.Date(2027, 1, 4, 22, 30, 0, 0, time.UTC) // 22:30 in London, a Monday
	morning := time.Date(2027, 1, 5, 8, 0, 0, 0, time.UTC)
	noon := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	resume := noon.Add(2 * time.Hour)
	held := &store.HeldError{Number: london.Phone, Limit: store.DefaultPressure[0], Starts: 1, Until: noon.Add(20 * time.Hour)}
	for _, tc := range []struct {
		name      string
		c         Contact
		row       report.Row
		now       time.Time
		end       RunEnd
		rehearsal bool
		rule      string
		until     time.Time
		why       string
	}{
		{"hours", *london, report.Row{Reason: `number from column "Mobile"`}, night, RunEnd{Ending: report.EndComplete}, false, WaitHours, morning,
			`outside the called person's calling hours (their time: Europe/London); may be called from 2027-01-05T08:00:00Z (Tue 5 Jan 08:00 GMT); number from column "Mobile"`},
		{"pressure", Contact{Phone: london.Phone, Country: "GB", Held: held}, report.Row{Reason: held.Error()}, noon, RunEnd{}, false, WaitPressure, held.Until, held.Error()},
		{"service", *london, report.Row{}, noon, RunEnd{Ending: report.EndStopped, ResumeAt: resume}, false, WaitService, resume,
			"not called yet: the service asked to be called again later; may be called from 2027-01-05T14:00:00Z"},
		{"limit", *london, report.Row{}, noon, RunEnd{Ending: report.EndLimit}, false, WaitRun, time.Time{}, "not called yet: the run stopped at its --limit"},
		{"turn", *london, report.Row{}, noon, RunEnd{Running: true}, false, WaitTurn, time.Time{},
			"not called yet: the run going on calls it in its turn (pace.per_second, and at most 3 calls in progress: pace.max_active_calls)"},
		{"attempts", *london, report.Row{FirstAttemptAt: "2027-01-05T11:00:00Z", Reason: "the service answered 503"}, noon, RunEnd{Ending: report.EndComplete}, false, WaitAttempts, time.Time{},
			"not sent yet: the service answered 503"},
		{"nothing", *london, report.Row{}, noon, RunEnd{Ending: report.EndComplete}, false, WaitNotCalled, time.Time{}, "not called yet"},
		{"rehearsal", *london, report.Row{}, night, RunEnd{Ending: report.EndInterrupted}, true, WaitRun, time.Time{}, "not called yet: the run was interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWaits(f, hours)
			w.rehearsal = tc.rehearsal
			row := tc.row
			row.Status = string(store.Pending)
			got := w.pending(&tc.c, &row, tc.now, tc.end)
			if got.Rule != tc.rule || !got.Until.Equal(tc.until) || row.Reason != tc.why {
				t.Errorf("got %s until %s, reason %q\nwant %s until %s, reason %q", got.Rule, got.Until, row.Reason, tc.rule, tc.until, tc.why)
			}
		})
	}

	// A rehearsal calls at once; its row says when a real run would have.
	w := newWaits(f, hours)
	row := report.Row{Status: string(store.Sent), FirstAttemptAt: night.Format(time.RFC3339)}
	w.rehearsed(london, &row)
	if !strings.Contains(row.Reason, "a real run would have waited: outside the called person's calling hours (their time: Europe/London); may be called from 2027-01-05T08:00:00Z") {
		t.Errorf("a rehearsal's row called outside hours: %q", row.Reason)
	}
	row = report.Row{Status: string(store.Sent), FirstAttemptAt: noon.Format(time.RFC3339)}
	if w.rehearsed(london, &row); row.Reason != "" {
		t.Errorf("a rehearsal's row called inside hours: %q", row.Reason)
	}
}

// TestRehearsalUntilPendingWaitsForTheCampaignsHours: a rehearsal with
// --until keeps the campaign's hours:, and with timezone: contact leaves
// pending, never tried, whoever is outside them: the run ends waiting.
// Their rows said only "not called yet", and summary.json gave no
// next_call_at; they name the campaign's hours and from when, as a real
// run's do.
func TestRehearsalUntilPendingWaitsForTheCampaignsHours(t *testing.T) {
	path := writeCampaign(t, strings.Replace(goodCampaign,
		`hours: {timezone: America/New_York, days: [mon, Tue], start: "09:00", end: "20:00"}`,
		`hours: {timezone: contact, days: [mon, tue, wed, thu, fri, sat, sun], start: "09:00", end: "10:00"}`, 1))
	f, err := Load(path, LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	hours, err := f.CallingHours()
	if err != nil {
		t.Fatal(err)
	}
	london := &Contact{Phone: "+442079460123", Country: "GB", Kind: phonenumbers.FIXED_LINE}
	noon := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	w := newWaits(f, hours)
	w.rehearsal = true
	row := report.Row{Status: string(store.Pending)}
	got := w.pending(london, &row, noon, RunEnd{Ending: report.EndWaiting})
	if want := time.Date(2027, 1, 6, 9, 0, 0, 0, time.UTC); got.Rule != WaitCampaignHours || !got.Until.Equal(want) ||
		!strings.HasPrefix(row.Reason, "outside the campaign's calling hours (hours:); may be called from 2027-01-06T09:00:00Z") {
		t.Errorf("got %s until %s, reason %q; want %s until %s", got.Rule, got.Until, row.Reason, WaitCampaignHours, want)
	}
	// Ended otherwise, a rehearsal's pending contact waits for its run.
	row = report.Row{Status: string(store.Pending)}
	if got := w.pending(london, &row, noon, RunEnd{Ending: report.EndLimit}); got.Rule != WaitRun {
		t.Errorf("after --limit: got %s, reason %q", got.Rule, row.Reason)
	}
}
