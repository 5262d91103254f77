package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/private"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// PlanOptions are what `callrun plan` was asked to build.
type PlanOptions struct {
	Path    string
	Offline bool
	Shard   campaign.Shard
	Now     time.Time // the plan's time; zero: now
	Report  string    // --report: the directory of the plan's report.csv and report.html; "": none
}

// Plan loads the campaign, reads its sheets and state, asks the
// service (online) and counts what run would do.
func Plan(ctx context.Context, log zerolog.Logger, o PlanOptions) (*campaign.Plan, *campaign.File, error) {
	f, err := campaign.Load(o.Path, campaign.LoadOptions{Offline: o.Offline})
	if err != nil {
		return nil, nil, err
	}
	log.Debug().Str("campaign", o.Path).Int("sheets", len(f.Sheets)).Int("agents", len(f.Agents)).Bool("offline", o.Offline).Msg("campaign loaded")
	if err := f.CheckSheets(); err != nil {
		return nil, f, err
	}
	// A workbook's tab of people not to call, or its hidden rows, that
	// the campaign does not say what to do with: nothing would be called.
	if err := f.WorkbookProblems(); err != nil {
		return nil, f, err
	}
	suppress, err := f.LoadSuppression(ctx)
	if err != nil {
		return nil, f, err
	}
	f.SetShard(o.Shard)
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	// Online, a campaign whose service is callrun's own sandbox is planned
	// as its runs are: a rehearsal's, on the rehearsal's state.
	rehearsal := false
	if !o.Offline {
		if rehearsal, err = SandboxService(ctx, f); err != nil {
			return nil, f, err
		}
	}
	read, err := planState(ctx, f, o.Offline, rehearsal, suppress, now)
	if err != nil {
		return nil, f, err
	}
	saved, state, where, warning, pressure := read.saved, read.state, read.where, read.warning, read.pressure
	defer state.Close()
	if saved != nil {
		defer saved.Close()
	}
	var elsewhere *store.ContactStarts // the contacts the store's call starts name, as a run's first intent is checked
	if saved != nil && !rehearsal {
		if elsewhere, err = saved.CalledBefore(ctx, f.Name); err != nil {
			return nil, f, err
		}
	}
	if rehearsal {
		where += " (a rehearsal's: " + RehearsalNote(f.Service.BaseURL, f.Path(f.StateDir)+"-sandbox") + ")"
	}
	opts := campaign.PlanOptions{Offline: o.Offline, Suppress: suppress, Now: now, Pressure: pressure,
		Held: read.held, HeldWhere: read.heldWhere, Path: o.Path, Rehearsal: rehearsal, ErasureKeyMissing: read.erasureKeyMissing,
		Done: func(c *campaign.Contact) bool {
			key, _ := campaign.SettledKey(f, state, c)
			st, ok := state.Status(key)
			return ok && st != store.Pending
		}}
	if elsewhere != nil {
		opts.Journal, opts.Starts = elsewhere.Journal(), elsewhere.String()
		opts.CalledElsewhere = func(c *campaign.Contact) (time.Time, bool) {
			// A contact with an attempt on record is sent as a later
			// attempt, which the run does not check: only a first attempt
			// is. One the journal knows by an intent its skipped outcome
			// withdrew (a run stopped before sending it) has no attempt
			// on record, and is sent as a first attempt: checked.
			key, _ := campaign.SettledKey(f, state, c)
			if _, ok := state.Status(key); ok && state.Attempts(key) > 0 {
				return time.Time{}, false
			}
			return elsewhere.Started(f.Name, f.Agents[c.Agent].Name, c.Phone, c.N)
		}
	}
	var fields [][]campaign.PlanField // each agent's call endpoint's, online
	if o.Offline {
		opts.Agents = campaign.OfflineAgents(f.Agents)
		opts.Warnings = f.AccountFieldWarnings(nil)
	} else {
		svc, err := NewService(ctx, log, f, nil)
		if err != nil {
			return nil, f, err
		}
		defer svc.Close()
		var listed []apiclient.Agent
		if opts.Agents, listed, err = campaign.PlanAgents(ctx, svc.Client, f.Agents); err != nil {
			return nil, f, err
		}
		remembered, err := rememberedAgents(ctx, svc, saved, opts.Agents, listed)
		if err != nil {
			return nil, f, err
		}
		if fields, opts.Warnings, err = checkEndpoints(ctx, svc, f, opts.Agents); err != nil {
			return nil, f, err
		}
		opts.Warnings = append(opts.Warnings, remembered...)
		// run checks this machine's clock against the service's answers
		// before its first call, and stops when they are over a minute
		// apart ("check the clock"): the service's answers to the plan
		// date them as well.
		if err := svc.Client.Clock().Check(apiclient.MaxClockOffset); err != nil {
			opts.ClockOff = err.Error()
		}
	}
	if warning != "" {
		opts.Warnings = append(opts.Warnings, warning)
	}
	if o.Report != "" {
		if opts.Report, err = startPlanReport(f, state, o.Report, now); err != nil {
			return nil, f, err
		}
		defer opts.Report.Abort()
	}
	plan, err := campaign.BuildPlan(ctx, f, opts)
	if err != nil {
		return nil, f, err
	}
	if o.Report != "" {
		if err := opts.Report.Finish(); err != nil {
			return nil, f, fmt.Errorf("--report %s: %w", o.Report, err)
		}
		log.Info().Str("report", filepath.Join(o.Report, campaign.ReportHTML)).Msg("wrote the plan's report.csv and report.html")
	}
	for i := range fields {
		plan.Agents[i].Fields = fields[i]
	}
	plan.Store = where
	return plan, f, nil
}

// planRead is what plan reads of the campaign's store ([planState]).
type planRead struct {
	saved    store.Store // nil: not opened (--offline, the state in PostgreSQL)
	state    *store.State
	where    string // which journal it read, for the plan's Journal line
	warning  string // what it could not read, and why
	pressure *campaign.PlanPressure
	// held are the opt-outs held on the store's do-not-call list, which
	// stop every run on it before its first call; heldWhere names the list.
	held      []store.OptOutHold
	heldWhere string
	// erasureKeyMissing is why the store's erased set cannot be read
	// (its key is missing), on which run stops before its first call.
	erasureKeyMissing string
}

// planState opens the campaign's store, which the caller closes, and
// reads what the journal says, for plan's done counts, and the store's
// do-not-call list into sup, and the opt-outs held on it: no lock, as plan
// may run beside a run; and the store's call starts, for the contacts
// contact pressure holds back at now (nil with pressure off). Offline, a
// journal, list and call starts in PostgreSQL are not read (--offline
// makes no network request): no store is opened, and warning says so.
func planState(ctx context.Context, f *campaign.File, offline, rehearsal bool, sup *campaign.Suppression, now time.Time) (_ planRead, err error) {
	if f.State != nil && offline {
		// Offline asks no database, but the state directory is local.
		if err := store.CheckPushed(f.Path(f.StateDir)); err != nil {
			return planRead{}, err
		}
		return planRead{state: store.EmptyState(), where: "PostgreSQL (not read: --offline)",
			warning: "the journal and the do-not-call list are in PostgreSQL, which --offline does not ask: no contact counts as done, and none as on the do-not-call list; nor does it see the call starts contact pressure counts there, so none counts as held (run holds back the numbers called too often), nor the opt-outs held on the list whose number listen could not read, nor whether the erased set's erasure key is there, either of which stops run before its first call: plan without --offline reads them"}, nil
	}
	saved, err := f.OpenStore(ctx, rehearsal)
	if err != nil {
		return planRead{}, err
	}
	defer func() {
		if err != nil {
			saved.Close()
		}
	}()
	dnc, err := saved.DoNotCall()
	if err != nil {
		return planRead{}, err
	}
	if err := sup.LoadDoNotCall(ctx, dnc, f); err != nil {
		return planRead{}, err
	}
	// An opt-out listen could not read the number of stops every run on
	// the store before its first call (run's "read the do-not-call list").
	held, err := dnc.Held(ctx)
	if err != nil {
		return planRead{}, err
	}
	var pressure *campaign.PlanPressure
	if !rehearsal { // a rehearsal holds nobody back
		if pressure, err = f.ReadPressure(ctx, saved, now); err != nil {
			return planRead{}, err
		}
	}
	st, err := saved.ReadState(ctx)
	if err != nil {
		return planRead{}, err
	}
	read := planRead{saved: saved, state: st, where: saved.String(), pressure: pressure, held: held, heldWhere: dnc.String()}
	// run reads the erased set before its first call, for its report, and
	// stops when a hash in it was made with a key the store lacks.
	if _, err := campaign.LoadErased(ctx, saved); errors.Is(err, store.ErrErasureKeyMissing) {
		read.erasureKeyMissing = err.Error()
	} else if err != nil {
		st.Close()
		return planRead{}, err
	}
	return read, nil
}

// rememberedAgents gives each of agents still to create whose agent
// callrun created before, and the service still has, that agent, as run
// would use it (campaign.UseRemembered, over listed, the plan's listing),
// and returns a warning for each remembered agent used or passed over.
// The store is read only when an agent is to be created.
func rememberedAgents(ctx context.Context, svc *Service, st store.Store, agents []campaign.AgentPlan, listed []apiclient.Agent) ([]string, error) {
	if !campaign.AnyToCreate(agents) {
		return nil, nil
	}
	created, err := st.CreatedAgents(ctx)
	if err != nil {
		return nil, err
	}
	var warnings []string
	err = campaign.UseRemembered(ctx, svc.Client, agents, created, listed, func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf(format, args...))
	})
	return warnings, err
}

// checkEndpoints reads the call endpoint of every agent that exists,
// returns its form fields for the plan, and checks that each sheet sends
// only fields its agent's endpoint takes: a *campaign.FileError names
// every field that it does not. The fields beyond the seven that the
// sheets of agents still to be created send are warnings: they are
// checked when run has created them.
func checkEndpoints(ctx context.Context, svc *Service, f *campaign.File, agents []campaign.AgentPlan) ([][]campaign.PlanField, []string, error) {
	fields := make([][]campaign.PlanField, len(agents))
	var problems []campaign.Problem
	var toCreate []string
	for i, a := range agents {
		if a.Action == campaign.ActionCreate {
			toCreate = append(toCreate, a.Spec.Name)
		}
		if a.AgentID == "" {
			continue
		}
		ep, err := svc.Client.GetCallEndpoint(ctx, a.AgentID)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the call endpoint of agent %q: %w", a.Spec.Name, err)
		}
		fields[i] = campaign.PlanFields(ep)
		var fe *campaign.FileError
		if err := f.CheckEndpointFields(a.Spec.Name, ep); errors.As(err, &fe) {
			problems = append(problems, fe.Problems...)
		}
	}
	if len(problems) > 0 {
		return nil, nil, &campaign.FileError{Problems: problems}
	}
	var warnings []string
	if len(toCreate) > 0 {
		warnings = f.AccountFieldWarnings(toCreate)
	}
	return fields, warnings, nil
}

// startPlanReport starts the report of a plan in dir (plan --report),
// which it creates if need be; the state directory, where run's own
// report is, is refused.
func startPlanReport(f *campaign.File, state *store.State, dir string, now time.Time) (*campaign.PlanReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, UsageError(fmt.Errorf("--report %s: %w", dir, err))
	}
	for _, own := range []string{f.Path(f.StateDir), f.Path(f.StateDir) + "-sandbox"} {
		if a, err := filepath.Abs(own); err == nil && a == abs {
			return nil, UsageError(fmt.Errorf("--report %s: that is the campaign's state directory, where run writes its own report; give the plan's report another directory", dir))
		}
	}
	if err := os.MkdirAll(dir, private.Own.Dir); err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	if _, err := private.Check(dir, "--report: the plan's report of every row", campaign.ReportCSV, campaign.SummaryJSON); err != nil {
		return nil, err
	}
	return campaign.StartPlanReport(f, state, dir, now)
}
