package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func statusCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "count the campaign's contacts by status, from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Reads the sheets and the journal; changes nothing and asks the service nothing.
It may run while a run is going on: it then says which run holds the lock, and
counts the calls that run has started and not yet heard back about as in flight,
not uncertain.

Example: callrun status --format json campaign.yaml`,
		Flags: []cli.Flag{formatFlag(), sandboxStateFlag(), shardFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return campaignStatus(c.Context, savedOptions{path: path, sandbox: c.Bool("sandbox"), shard: shard}, format, s.stdout)
		},
	}
}

func reportCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "rebuild report.csv, report.xlsx, report.html and summary.json from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Writes the report files into the state directory again, from the sheets and the
journal. Useful after a kill -9, or after fixing a sheet. Asks the service nothing.
Removes the temporary files a killed report write left, unless a run holds the
state directory, and holds its lock while it writes.

Example: callrun report campaign.yaml`,
		Flags: []cli.Flag{sandboxStateFlag(), shardFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return rebuildReport(c.Context, s.log, savedOptions{path: path, sandbox: c.Bool("sandbox"), shard: shard}, s.stdout)
		},
	}
}

func sandboxStateFlag() cli.Flag {
	return &cli.BoolFlag{Name: "sandbox", Usage: "use the state of run --sandbox runs"}
}

// savedOptions choose the saved state that status and report read.
type savedOptions struct {
	path    string
	sandbox bool             // the state of run --sandbox runs
	shard   campaign.Shard   // one shard's, or the whole campaign's
	now     func() time.Time // status's clock, for its warnings; nil: time.Now
}

// saved is a campaign and what its journal says, read without the lock
// and without asking the service anything.
type saved struct {
	f     *campaign.File
	store store.Store
	state *store.State
	dir   string // the state directory: where the report files go
	norm  *phone.Normalizer
	sup   *campaign.Suppression
	// rehearsal: the state is a rehearsal's (--sandbox, or a campaign
	// whose service is callrun's sandbox).
	rehearsal bool
}

// loadSaved loads the campaign (offline but for its store), checks its
// sheets, and reads its journal and suppression files. The caller closes
// s.
func loadSaved(ctx context.Context, o savedOptions) (*saved, error) {
	f, err := campaign.Load(o.path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return nil, err
	}
	if err := f.CheckSheets(); err != nil {
		return nil, err
	}
	f.SetShard(o.shard)
	if !o.sandbox {
		// A campaign whose service is callrun's sandbox, served on its own
		// and answering now, keeps a rehearsal's state, as its runs did.
		o.sandbox, _ = run.SandboxService(ctx, f)
	}
	s := &saved{f: f, norm: phone.NewNormalizer(), rehearsal: o.sandbox}
	if s.sup, err = f.LoadSuppression(ctx, s.norm); err != nil {
		return nil, err
	}
	st, err := f.OpenStore(ctx, o.sandbox)
	if err != nil {
		return nil, err
	}
	s.store, s.dir = st, st.ReportDir()
	dnc, err := s.store.DoNotCall()
	if err == nil {
		err = s.sup.LoadDoNotCall(ctx, dnc)
	}
	if err == nil && !o.sandbox {
		// For the report: when each contact held back may be called.
		now := time.Now()
		var p *campaign.PlanPressure
		if p, err = f.ReadPressure(ctx, s.store, now); err == nil {
			s.sup.SetPressure(p, now)
		}
	}
	if err != nil {
		s.store.Close()
		return nil, err
	}
	if s.state, err = s.store.ReadState(ctx); err != nil {
		s.store.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the state and the store.
func (s *saved) Close() {
	s.state.Close()
	s.store.Close()
}

// inFlight is status's count of the contacts whose call a run going on
// has started and not yet heard back about: uncertain once that run ends
// without their outcome, not before.
const inFlight = "in_flight"

// runHolder is a run holding the lock, in status's JSON.
type runHolder struct {
	Host  string    `json:"host,omitempty"`
	PID   int       `json:"pid,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Shard string    `json:"shard,omitempty"`
}

func campaignStatus(ctx context.Context, o savedOptions, format string, out io.Writer) error {
	s, err := loadSaved(ctx, o)
	if err != nil {
		return err
	}
	defer s.Close()
	f := s.f
	// After the journal was read: a run that holds the lock now wrote the
	// intents it has in flight before, or they are not in this reading.
	holders, err := s.store.Holders(ctx)
	if err != nil {
		return err
	}
	sum := &report.Summary{Campaign: f.Name}
	outcomes, err := campaign.OpenOutcomes(ctx, f, s.state, s.norm)
	if err != nil {
		return err
	}
	var quiet deliveryQuiet
	if outcomes != nil {
		sum.Outcomes = map[string]int{}
		quiet.since(outcomes.Deliveries())
	}
	now := o.now
	if now == nil {
		now = time.Now
	}
	waits, err := campaign.NewPendingWaits(f, now(), campaign.RunEnd{Running: len(holders) > 0}, s.rehearsal)
	if err != nil {
		return err
	}
	var pending waitingLines
	err = f.NewContactReader(s.norm, s.sup).Each(ctx, func(c *campaign.Contact) error {
		row := campaign.ReportRow(f, s.state, c)
		if row.Status == string(store.Uncertain) && len(holders) > 0 && s.inFlight(c, holders) {
			row.Status = inFlight
		}
		pending.add(waits.Explain(c, &row))
		outcomes.Add(c, &row)
		if outcomes != nil {
			quiet.called(row.LastAttemptAt)
		}
		sum.Add(row)
		return nil
	})
	if err != nil {
		return err
	}
	var warnings []string
	if w := quiet.warning(now()); w != "" {
		warnings = append(warnings, w)
	}
	var outcomeCounts map[string]int
	var unmatched *int
	if outcomes != nil {
		outcomeCounts = map[string]int{}
		for _, name := range report.OutcomeNames {
			outcomeCounts[name] = sum.Outcomes[name]
		}
		if !f.Shard.Sharded() { // a shard meets only its own contacts
			n := outcomes.Unmatched()
			unmatched = &n
		}
	}
	// The opt-outs held on the store keep every run there from calling.
	dnc, err := s.store.DoNotCall()
	if err != nil {
		return err
	}
	held, err := dnc.Held(ctx)
	if err != nil {
		return err
	}
	if len(held) > 0 {
		warnings = append(warnings, (&store.OptOutHeldError{Holds: held, Where: dnc.String()}).Error())
	}
	counts := map[string]int{inFlight: 0} // every key, even when 0
	for _, st := range report.Statuses {
		counts[string(st)] = 0
	}
	maps.Copy(counts, sum.Counts)
	var running []runHolder
	for _, h := range holders {
		r := runHolder{Host: h.Host, PID: h.PID, Since: h.Since}
		if h.Count > 1 {
			r.Shard = fmt.Sprintf("%d/%d", h.Index, h.Count)
		}
		running = append(running, r)
	}
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Campaign string         `json:"campaign"`
			Counts   map[string]int `json:"counts"`
			Running  []runHolder    `json:"running,omitempty"` // the runs that hold the lock now
			// Outcomes counts the contacts called by their latest event
			// delivered ("none" for those not heard of); only with outcomes:.
			Outcomes  map[string]int `json:"outcomes,omitempty"`
			Unmatched *int           `json:"unmatched_deliveries,omitempty"`
			// Waiting groups the pending contacts by what holds them.
			Waiting   []waitingLine `json:"waiting,omitempty"`
			Rehearsal bool          `json:"rehearsal,omitempty"`
			// OptOutsHeld are the opt-outs held on the store, whose number
			// listen could not read: no run there calls until they are
			// resolved.
			OptOutsHeld []store.OptOutHold `json:"opt_outs_held,omitempty"`
			Warnings    []string           `json:"warnings,omitempty"`
		}{f.Name, counts, running, outcomeCounts, unmatched, pending.lines(), s.rehearsal, held, warnings})
	}
	fmt.Fprintf(out, "Campaign %s: %d rows\n", f.Name, sum.Rows)
	if s.rehearsal {
		fmt.Fprintf(out, "  a rehearsal's state (against callrun's sandbox: nobody was phoned)\n")
	}
	if f.Shard.Sharded() {
		fmt.Fprintf(out, "  shard %s: the contacts whose number hashes to %d of %d\n", f.Shard, f.Shard.Index, f.Shard.Count)
	}
	fmt.Fprintf(out, "  journal: %s\n", s.store)
	for _, h := range holders {
		fmt.Fprintf(out, "  running: %s holds the lock\n", h)
	}
	for _, s := range []store.Status{store.Sent, store.Failed, store.Uncertain, store.Pending, store.Invalid, store.Duplicate, store.Suppressed} {
		fmt.Fprintf(out, "  %-10s %d\n", s, counts[string(s)])
	}
	if len(holders) > 0 {
		fmt.Fprintf(out, "  %-10s %d (started by the run going on; their answers are not in yet)\n", "in flight", counts[inFlight])
	}
	if lines := pending.lines(); len(lines) > 0 {
		fmt.Fprintf(out, "Pending, by what holds them:\n")
		for _, l := range lines {
			fmt.Fprintf(out, "  %d %s", l.Contacts, waitingRuleText[l.Rule])
			if l.From != nil {
				fmt.Fprintf(out, ", the first may be called from %s", l.From.Local().Format("Mon 2 Jan 15:04 MST"))
			}
			fmt.Fprintln(out)
		}
	}
	if outcomes != nil {
		fmt.Fprintf(out, "Outcomes of the contacts called, by the latest webhook delivery:\n")
		for _, name := range report.OutcomeNames {
			label := name
			if name == "none" {
				label = "none yet"
			}
			fmt.Fprintf(out, "  %-10s %d\n", label, outcomeCounts[name])
		}
		if unmatched != nil {
			fmt.Fprintf(out, "  %d delivery(ies) matched no contact (callrun outcomes lists them)\n", *unmatched)
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(out, "Warning: %s\n", w)
	}
	return nil
}

// deliveryQuiet finds, for status, the first call start after the last
// webhook delivery: a call whose delivery has not come.
type deliveryQuiet struct {
	last  string // the last delivery's time, as report.Timestamp writes it; "" when none came
	first string // the first call start after it, the same way
}

// since notes the deliveries stored.
func (q *deliveryQuiet) since(ds []store.Delivery) {
	for _, d := range ds {
		if at := report.Timestamp(d.At); at > q.last {
			q.last = at
		}
	}
}

// called notes a contact whose last call start was answered at (a report
// timestamp; "" when it was never called). Timestamps of one format
// compare as strings.
func (q *deliveryQuiet) called(at string) {
	if at != "" && at > q.last && (q.first == "" || at < q.first) {
		q.first = at
	}
}

// warning is the no-delivery warning at now, if it is due.
func (q *deliveryQuiet) warning(now time.Time) string {
	first, err := time.Parse(time.RFC3339, q.first)
	if err != nil {
		return ""
	}
	return campaign.NoDeliveryWarning(first, now, campaign.DefaultDeliveryWait)
}

// inFlight reports whether contact c, uncertain in the journal, is one of
// the calls a run holding the lock has in flight: its last record is an
// intent, written since that run took the lock, and the contact is in
// that run's shard. Intents older than every such run were left by a run
// that ended without their outcome: uncertain.
func (s *saved) inFlight(c *campaign.Contact, holders []store.Holder) bool {
	key, _ := campaign.SettledKey(s.f, s.state, c)
	e, ok := s.state.Lookup(key)
	if !ok || !e.Unanswered() {
		return false
	}
	for _, h := range holders {
		if h.Count > 0 && !s.f.InShard(campaign.Shard{Index: h.Index, Count: h.Count}, c) {
			continue
		}
		if !e.LastAt.Before(h.Since) {
			return true
		}
	}
	return false
}

func rebuildReport(ctx context.Context, log zerolog.Logger, o savedOptions, out io.Writer) error {
	s, err := loadSaved(ctx, o)
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
	unlock, err := store.Lock(s.dir)
	switch {
	case err == nil:
		defer unlock()
		if err := report.RemoveStale(s.dir); err != nil {
			log.Warn().Err(err).Msg("could not remove the temporary files of an earlier, killed report")
		}
	case errors.Is(err, store.ErrLocked):
		log.Debug().Err(err).Msg("a run holds the state directory: its temporary files are left alone")
	default:
		return err
	}
	// The rate and elapsed time are the journal's last run's, killed or
	// not: there is no run now to measure.
	runs, err := s.store.ReadRuns(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	sum := &report.Summary{Campaign: s.f.Name, StartedAt: now, Ending: report.EndRebuilt, Rehearsal: s.rehearsal}
	sum.Finish(now)
	sum.Runs = runs
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		sum.StartedAt, sum.CallsThisRun = last.StartedAt, last.Calls
		sum.Finish(last.LastAt)
		sum.Notes = append(sum.Notes, fmt.Sprintf("the last run started %s and sent %d call start(s) in %s (%.1f calls/s); its figures are kept in summary.json",
			last.StartedAt.Local().Format("Mon 2 Jan 15:04"), last.Calls, time.Duration(sum.ElapsedSeconds*float64(time.Second)).Round(time.Second), sum.RatePerSecond))
	}
	if err := campaign.WriteReport(ctx, s.f, s.state, s.norm, s.sup, s.dir, sum); err != nil {
		return err
	}
	fmt.Fprint(out, sum.Text())
	fmt.Fprintf(out, "Report: %s\nReport page: %s\n", filepath.Join(s.dir, campaign.ReportCSV), filepath.Join(s.dir, campaign.ReportHTML))
	return nil
}

// waitingLine is the pending contacts one rule holds, in status's JSON.
type waitingLine struct {
	Rule     string     `json:"rule"` // campaign.WaitHours, WaitPressure, ...
	Contacts int        `json:"contacts"`
	From     *time.Time `json:"from,omitempty"` // the first may be called then
}

// waitingRuleText says each rule of campaign.WaitRules for status.
var waitingRuleText = map[string]string{
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
type waitingLines map[string]*waitingLine

func (w *waitingLines) add(wt *campaign.Wait) {
	if wt == nil {
		return
	}
	if *w == nil {
		*w = waitingLines{}
	}
	l := (*w)[wt.Rule]
	if l == nil {
		l = &waitingLine{Rule: wt.Rule}
		(*w)[wt.Rule] = l
	}
	l.Contacts++
	if !wt.Until.IsZero() && (l.From == nil || wt.Until.Before(*l.From)) {
		at := wt.Until.UTC()
		l.From = &at
	}
}

// lines returns the rules that hold contacts, in campaign.WaitRules' order.
func (w waitingLines) lines() []waitingLine {
	var out []waitingLine
	for _, r := range campaign.WaitRules {
		if l := w[r]; l != nil {
			out = append(out, *l)
		}
	}
	return out
}
