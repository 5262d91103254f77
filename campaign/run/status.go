package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// InFlight is status's count of the contacts whose call a run going on
// has started and not yet heard back about: uncertain once that run ends
// without their outcome, not before.
const InFlight = "in_flight"

// RunHolder is a run holding the lock, in status's JSON.
type RunHolder struct {
	Host  string    `json:"host,omitempty"`
	PID   int       `json:"pid,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Shard string    `json:"shard,omitempty"`
}

// inFlight reports whether contact c, uncertain in the journal, is one of
// the calls a run holding the lock has in flight: its last record is an
// intent, written since that run took the lock, and the contact is in
// that run's shard. Intents older than every such run were left by a run
// that ended without their outcome: uncertain.
func (s *Saved) inFlight(c *campaign.Contact, holders []store.Holder) bool {
	key, _ := campaign.SettledKey(s.F, s.State, c)
	e, ok := s.State.Lookup(key)
	if !ok || !e.Unanswered() {
		return false
	}
	for _, h := range holders {
		if h.Count > 0 && !s.F.InShard(campaign.Shard{Index: h.Index, Count: h.Count}, c) {
			continue
		}
		if !e.LastAt.Before(h.Since) {
			return true
		}
	}
	return false
}

// WaitingLine is the pending contacts one rule holds, in status's JSON.
type WaitingLine struct {
	Rule     string     `json:"rule"` // campaign.WaitHours, WaitPressure, ...
	Contacts int        `json:"contacts"`
	From     *time.Time `json:"from,omitempty"` // the first may be called then
}

// WaitingRuleText says each rule of campaign.WaitRules for status.
var WaitingRuleText = map[string]string{
	campaign.WaitHours:         "outside the called person's calling hours",
	campaign.WaitCampaignHours: "outside the campaign's calling hours (hours:)",
	campaign.WaitPressure:      "held back by contact pressure",
	campaign.WaitService:       "waiting for the service, which asked to be called again later",
	campaign.WaitTurn:          "waiting for their turn in the run going on (pace, pace.max_active_calls)",
	campaign.WaitRun:           "not called: the last run stopped before them",
	campaign.WaitAttempts:      "not sent after their attempts (report.csv says why)",
	campaign.WaitNotCalled:     "not called yet",
}

// waitingLines counts the pending contacts by the rule that holds them,
// with the first moment one of each may be called.
type waitingLines map[string]*WaitingLine

func (w *waitingLines) add(wt *campaign.Wait) {
	if wt == nil {
		return
	}
	if *w == nil {
		*w = waitingLines{}
	}
	l := (*w)[wt.Rule]
	if l == nil {
		l = &WaitingLine{Rule: wt.Rule}
		(*w)[wt.Rule] = l
	}
	l.Contacts++
	if !wt.Until.IsZero() && (l.From == nil || wt.Until.Before(*l.From)) {
		at := wt.Until.UTC()
		l.From = &at
	}
}

// lines returns the rules that hold contacts, in campaign.WaitRules' order.
func (w waitingLines) lines() []WaitingLine {
	var out []WaitingLine
	for _, r := range campaign.WaitRules {
		if l := w[r]; l != nil {
			out = append(out, *l)
		}
	}
	return out
}

// RebuildReport writes the report files again from the saved state, for
// `callrun report`, and prints the summary.
func RebuildReport(ctx context.Context, log zerolog.Logger, o SavedOptions, out io.Writer) error {
	// The rate and elapsed time are the journal's last run's, killed or
	// not: there is no run now to measure.
	o.Runs = true
	s, err := LoadSaved(ctx, o)
	if err != nil {
		return err
	}
	defer s.Close()
	// The lock (which creates the directory when no run made it yet: every
	// contact is then pending) lets this rebuild remove the temporary files
	// a killed report write left holding contact data, and keeps a run that
	// starts meanwhile from removing this rebuild's own. A run going on
	// holds it: its temporary files are then left alone, and the rebuild
	// goes on without the lock, as it always could.
	unlock, err := store.Lock(s.Dir)
	switch {
	case err == nil:
		defer unlock()
		if err := report.RemoveStale(s.Dir); err != nil {
			log.Warn().Err(err).Msg("could not remove the temporary files of an earlier, killed report")
		}
	case errors.Is(err, store.ErrLocked):
		log.Debug().Err(err).Msg("a run holds the state directory: its temporary files are left alone")
	default:
		return err
	}
	runs := s.Runs
	now := time.Now()
	sum := &report.Summary{Campaign: s.F.Name, StartedAt: now, Ending: report.EndRebuilt, Rehearsal: s.Rehearsal}
	sum.Finish(now)
	sum.Runs = runs
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		sum.StartedAt, sum.CallsThisRun = last.StartedAt, last.Calls
		sum.Finish(last.LastAt)
		sum.Notes = append(sum.Notes, fmt.Sprintf("the last run started %s and sent %d call start(s) in %s (%.1f calls/s); its figures are kept in summary.json",
			last.StartedAt.Local().Format("Mon 2 Jan 15:04"), last.Calls, time.Duration(sum.ElapsedSeconds*float64(time.Second)).Round(time.Second), sum.RatePerSecond))
	}
	erased, err := campaign.LoadErased(ctx, s.Store)
	if err != nil {
		return err
	}
	if err := campaign.WriteReport(ctx, s.F, s.State, s.Sup, erased, s.Dir, sum); err != nil {
		return err
	}
	fmt.Fprint(out, sum.Text())
	fmt.Fprintf(out, "Report: %s\nReport page: %s\n", filepath.Join(s.Dir, campaign.ReportCSV), filepath.Join(s.Dir, campaign.ReportHTML))
	return nil
}

// StatusReport is what `callrun status` says of a campaign: its
// contacts by status, the runs going on, the outcomes and the pending
// contacts by what holds them. Its JSON is status --format json's.
type StatusReport struct {
	Campaign string         `json:"campaign"`
	Counts   map[string]int `json:"counts"`
	Running  []RunHolder    `json:"running,omitempty"` // the runs that hold the lock now
	// Outcomes counts the contacts called by their latest event
	// delivered ("none" for those not heard of); only with outcomes:.
	Outcomes  map[string]int `json:"outcomes,omitempty"`
	Unmatched *int           `json:"unmatched_deliveries,omitempty"`
	// Waiting groups the pending contacts by what holds them.
	Waiting   []WaitingLine `json:"waiting,omitempty"`
	Rehearsal bool          `json:"rehearsal,omitempty"`
	// OptOutsHeld are the opt-outs held on the store, whose number
	// listen could not read: no run there calls until they are
	// resolved.
	OptOutsHeld []store.OptOutHold `json:"opt_outs_held,omitempty"`
	Warnings    []string           `json:"warnings,omitempty"`

	Rows    int            `json:"-"` // the sheets' rows
	Shard   campaign.Shard `json:"-"`
	Journal string         `json:"-"` // where the journal is
	Holders []store.Holder `json:"-"`
}

// Status reads the campaign's saved state, without the lock and without
// asking the service anything, into what `callrun status` says of it.
func Status(ctx context.Context, o SavedOptions) (*StatusReport, error) {
	s, err := LoadSaved(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	f := s.F
	// After the journal was read: a run that holds the lock now wrote the
	// intents it has in flight before, or they are not in this reading.
	holders, err := s.Store.Holders(ctx)
	if err != nil {
		return nil, err
	}
	sum := &report.Summary{Campaign: f.Name}
	outcomes, err := campaign.OpenOutcomes(ctx, f, s.State)
	if err != nil {
		return nil, err
	}
	// The deliveries and the call starts to the second, as the report
	// writes them: a call start in the second of the last delivery was
	// answered.
	var quiet campaign.DeliveryQuiet
	if outcomes != nil {
		sum.Outcomes = map[string]int{}
		for _, d := range outcomes.Deliveries() {
			quiet.Delivered(d.At.Truncate(time.Second))
		}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	waits, err := campaign.NewPendingWaits(f, now(), campaign.RunEnd{Running: len(holders) > 0}, s.Rehearsal)
	if err != nil {
		return nil, err
	}
	var pending waitingLines
	shown := 0 // rows that show a call start the journal holds
	err = f.NewContactReader(s.Sup).Each(ctx, func(c *campaign.Contact) error {
		if campaign.ShowsACall(f, s.State, c) {
			shown++
		}
		row := campaign.ReportRow(f, s.State, c)
		if row.Status == string(store.Uncertain) && len(holders) > 0 && s.inFlight(c, holders) {
			row.Status = InFlight
		}
		pending.add(waits.Explain(c, &row))
		outcomes.Add(c, &row)
		if outcomes != nil {
			if at, err := time.Parse(time.RFC3339, row.LastAttemptAt); err == nil { // "": never called
				quiet.Started(at)
			}
		}
		sum.Add(row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Campaign: f.Name, Counts: map[string]int{InFlight: 0}, Waiting: pending.lines(), Rehearsal: s.Rehearsal,
		Rows: sum.Rows, Shard: f.Shard, Journal: s.Store.String(), Holders: holders}
	if w := quiet.Warning(now(), campaign.DefaultDeliveryWait); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if n := campaign.CallsNotShown(f, s.State, shown); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d contact(s) the journal holds a call start for (sent, failed or uncertain) are shown by no row of the sheets now (re-exported without them, or their rows changed or are suppressed now), so the counts above leave them out; callrun history CAMPAIGN.yaml NUMBER shows a number's calls", n))
	}
	if outcomes != nil {
		r.Outcomes = map[string]int{}
		for _, name := range report.OutcomeNames {
			r.Outcomes[name] = sum.Outcomes[name]
		}
		if !f.Shard.Sharded() { // a shard meets only its own contacts
			n := outcomes.Unmatched()
			r.Unmatched = &n
		}
	}
	// The opt-outs held on the store keep every run there from calling.
	dnc, err := s.Store.DoNotCall()
	if err != nil {
		return nil, err
	}
	if r.OptOutsHeld, err = dnc.Held(ctx); err != nil {
		return nil, err
	}
	if len(r.OptOutsHeld) > 0 {
		r.Warnings = append(r.Warnings, (&store.OptOutHeldError{Holds: r.OptOutsHeld, Where: dnc.String()}).Error())
	}
	for _, st := range report.Statuses { // every key, even when 0
		r.Counts[string(st)] = 0
	}
	maps.Copy(r.Counts, sum.Counts)
	for _, h := range holders {
		rh := RunHolder{Host: h.Host, PID: h.PID, Since: h.Since}
		if h.Count > 1 {
			rh.Shard = fmt.Sprintf("%d/%d", h.Index, h.Count)
		}
		r.Running = append(r.Running, rh)
	}
	return r, nil
}
