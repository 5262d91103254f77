package campaign

import (
	"fmt"
	"strings"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// Wait is why a contact to call is not called now, and from when it may
// be: what report.csv's reason, report.html and `callrun status` say of
// a contact left pending, and a plan of one waiting or held.
type Wait struct {
	Rule  string    // one of the Wait rules below
	Until time.Time // when it may be called; zero: no time is known
	Why   string    // the rule and the time, for a person
	// What is Why without the time, for report.html, which shows the
	// time apart.
	What string
}

// Rules that keep a contact to call pending, for [Wait.Rule].
const (
	WaitHours         = "hours"          // the called person's calling hours are closed
	WaitCampaignHours = "campaign_hours" // the campaign's hours: are closed
	WaitPressure      = "pressure"       // contact pressure holds its number back
	WaitService       = "service"        // the service asked to be called again later
	WaitTurn          = "turn"           // a run going on calls it in its turn (the pace, the call slots of pace.max_active_calls)
	WaitRun           = "run"            // the run stopped before calling it (--limit, a signal, an error)
	WaitAttempts      = "attempts"       // its attempts ended without a call start; the journal's reason says why
	WaitNotCalled     = "not_called"     // no run has called it yet
)

// WaitRules lists the rules in the order status shows them.
var WaitRules = []string{WaitHours, WaitCampaignHours, WaitPressure, WaitService, WaitTurn, WaitRun, WaitAttempts, WaitNotCalled}

// RunEnd is what the report of a run knows of how it ended, for the
// reasons of the contacts it left pending.
type RunEnd struct {
	Ending string // report.EndComplete, EndLimit, ...; "" when no run ended (status)
	// ResumeAt is when the service said it may be called again, for a
	// run it stopped (campaign.ErrCallLater); zero otherwise.
	ResumeAt time.Time
	// Running: a run holds the lock now (status), and calls the
	// contacts not called yet in their turn.
	Running bool
}

// waits decides why contacts to call wait, for the report, a plan and
// status. Contacts whose country (state) and zones are alike share when their
// hours open: NextOpen looks days ahead.
type waits struct {
	f     *File
	hours *CallingHours
	opens map[string]time.Time
	// rehearsal: the contacts are a rehearsal's, which waits for no
	// hours; its pending contacts wait for something else.
	rehearsal bool
	// windowOnly, made when first needed, decides a rehearsal's waits
	// for the campaign's hours: alone.
	windowOnly *waits
}

func newWaits(f *File, hours *CallingHours) *waits {
	return &waits{f: f, hours: hours, opens: map[string]time.Time{}}
}

// hoursWait says why c may not be called at now for its calling hours,
// and from when it may be; nil when they are open.
func (w *waits) hoursWait(c *Contact, now time.Time) *Wait {
	if c.Phone == "" || w.hours.Open(c, now) {
		return nil
	}
	zones := ContactZones(c)
	var key strings.Builder
	key.WriteString(c.Country + "/" + ContactState(c))
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.String()
		key.WriteString(" " + names[i])
	}
	at, ok := w.opens[key.String()]
	if !ok {
		at = w.hours.NextOpen(c, now)
		w.opens[key.String()] = at
	}
	wt := &Wait{Rule: WaitCampaignHours, Until: at, What: "outside the campaign's calling hours (hours:)"}
	if !w.hours.PersonOpen(c, now) {
		wt.Rule = WaitHours
		wt.What = fmt.Sprintf("outside the called person's calling hours (their time: %s)", strings.Join(names, ", "))
	}
	what := wt.What
	switch {
	case at.IsZero():
		wt.Why = what + "; not in the next three weeks (the zones and the hours never overlap)"
	case len(zones) > 0:
		wt.Why = fmt.Sprintf("%s; may be called from %s (%s)", what, at.UTC().Format(time.RFC3339), at.In(zones[0]).Format("Mon 2 Jan 15:04 MST"))
	default:
		wt.Why = fmt.Sprintf("%s; may be called from %s", what, at.UTC().Format(time.RFC3339))
	}
	return wt
}

// pending gives the reason of row, the report row of contact c left
// pending, the rule that holds it and from when it may be called, as of
// now, after a run that ended as end says; and returns that wait.
func (w *waits) pending(c *Contact, row *report.Row, now time.Time, end RunEnd) *Wait {
	if c.Held != nil { // ReportRow said why
		why := c.Held.Error()
		what, _, _ := strings.Cut(why, "; may be called again from ")
		return &Wait{Rule: WaitPressure, Until: c.Held.Until, Why: why, What: what}
	}
	var wt *Wait
	switch {
	case !w.rehearsal:
		wt = w.hoursWait(c, now)
	case end.Ending == report.EndWaiting && row.FirstAttemptAt == "" && w.hours.Window != nil && w.hours.Window.Contact:
		// A rehearsal with --until keeps the campaign's hours: and, with
		// timezone: contact, leaves pending whoever is outside them; it
		// holds no one for the called person's hours.
		if w.windowOnly == nil {
			h := *w.hours
			h.IgnoreCalledPerson = true
			w.windowOnly = newWaits(w.f, &h)
		}
		wt = w.windowOnly.hoursWait(c, now)
	}
	switch {
	case wt != nil:
	case row.FirstAttemptAt != "":
		// Attempted, and provably not sent: the journal's reason says why.
		wt = &Wait{Rule: WaitAttempts, Why: "not sent yet: " + row.Reason}
		row.Reason = ""
	case end.Running:
		wt = &Wait{Rule: WaitTurn, Why: "not called yet: the run going on calls it in its turn (pace.per_second" + w.slots() + ")"}
	case end.Ending == report.EndLimit:
		wt = &Wait{Rule: WaitRun, Why: "not called yet: the run stopped at its --limit"}
	case end.Ending == report.EndInterrupted:
		wt = &Wait{Rule: WaitRun, Why: "not called yet: the run was interrupted"}
	case end.Ending == report.EndStopped && !end.ResumeAt.IsZero():
		wt = &Wait{Rule: WaitService, Until: end.ResumeAt, What: "not called yet: the service asked to be called again later"}
		wt.Why = wt.What + "; may be called from " + end.ResumeAt.UTC().Format(time.RFC3339)
	case end.Ending == report.EndStopped:
		wt = &Wait{Rule: WaitRun, Why: "not called yet: the run stopped on an error (its output says which)"}
	case end.Ending == report.EndOutsideHours:
		wt = &Wait{Rule: WaitCampaignHours, Why: "not called yet: the run stopped outside the campaign's calling hours (--until)"}
	default:
		wt = &Wait{Rule: WaitNotCalled, Why: "not called yet"}
	}
	row.Reason = joinReasons(wt.Why, row.Reason)
	if wt.What == "" {
		wt.What = wt.Why
	}
	return wt
}

// slots names the call slots that also hold a run's turns, if any.
func (w *waits) slots() string {
	if k := w.f.MaxActiveCalls(); k > 0 {
		return fmt.Sprintf(", and at most %d calls in progress: pace.max_active_calls", k)
	}
	return ""
}

// rehearsed notes, on the row of a contact a rehearsal called, when a
// real run would have called it instead: a rehearsal calls at once, and
// a real run waits for the calling hours.
func (w *waits) rehearsed(c *Contact, row *report.Row) {
	at, err := time.Parse(time.RFC3339, row.FirstAttemptAt)
	if err != nil {
		return
	}
	wt := w.hoursWait(c, at)
	if wt == nil {
		return
	}
	row.Reason = joinReasons("a rehearsal calls at once; a real run would have waited: "+wt.Why, row.Reason)
}

// joinReasons joins the parts of a reason that are not empty with "; ".
func joinReasons(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// PendingWaits gives, for `callrun status`, the reason of each contact
// its report row says is pending, as [WriteReport] would at now.
type PendingWaits struct {
	w   *waits
	now time.Time
	end RunEnd
}

// NewPendingWaits returns the waits of the campaign's pending contacts
// as of now, after a run that ended as end says; those of a rehearsal
// (which waits for no hours) with rehearsal.
func NewPendingWaits(f *File, now time.Time, end RunEnd, rehearsal bool) (*PendingWaits, error) {
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	w := newWaits(f, hours)
	w.rehearsal = rehearsal
	return &PendingWaits{w: w, now: now, end: end}, nil
}

// Explain sets row's reason, the report row of c, and returns its wait;
// nil when the row is not pending.
func (p *PendingWaits) Explain(c *Contact, row *report.Row) *Wait {
	if row.Status != string(store.Pending) {
		return nil
	}
	return p.w.pending(c, row, p.now, p.end)
}
