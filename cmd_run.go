package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
	"golang.org/x/time/rate"
)

func runCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run the campaign: ensure agents, call every contact once, write the report",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Creates the agents the service lacks, then starts one call per contact at the
campaign's pace, inside its calling hours, and writes report.csv and summary.json
to the state directory. Stopped, killed or cut off, it resumes where it left off
and never phones the same person twice: a call whose outcome is unknown is marked
uncertain and sent again only with --retry-uncertain.

Examples:
  callrun run --sandbox examples/quickstart/campaign.yaml   # try it: nobody is phoned
  callrun run --limit 10 campaign.yaml                      # a canary of 10 calls
  callrun run --until 19:30 campaign.yaml                   # from cron: exit 75 if hours are over
  callrun run --until "19:30 Europe/Berlin" campaign.yaml   # the time in another zone

--until 19:30 is read in the zone of the campaign's hours.timezone; with no
hours: or timezone: contact, in this machine's local time (TZ). Name a zone
after the time to choose another. The run logs which it used.

Exit codes: 0 done; 3 some contacts failed or are uncertain; 75 try later (locked,
outside calling hours, or contacts left pending); 130 interrupted (state saved).`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "call at most N contacts this run, then stop (resumable)"},
			&cli.BoolFlag{Name: "retry-failed", Usage: "send contacts the service refused (4xx) again"},
			&cli.BoolFlag{Name: "retry-uncertain", Usage: "send contacts whose outcome is unknown again (they may be phoned twice)"},
			&cli.StringFlag{Name: "until", Usage: "outside calling hours, stop (exit 75) rather than wait past TIME: 19:30 (in hours.timezone, else local time), \"19:30 Europe/Berlin\", 2006-01-02T15:04:05Z07:00, or a duration like 2h"},
			&cli.BoolFlag{Name: "sandbox", Usage: "run against an in-process sandbox (state kept apart), logged in automatically"},
			&cli.StringFlag{Name: "metrics-file", Usage: "keep a Prometheus text file at PATH up to date during the run (for node_exporter's textfile collector: name it *.prom in its directory)"},
			shardFlag(),
		},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			if c.Int("limit") < 0 {
				return usageError(fmt.Errorf("--limit %d: give a positive number", c.Int("limit")))
			}
			if _, _, err := parseUntil(c.String("until"), time.Now(), nil); err != nil {
				return usageError(err) // before reading the campaign: its zone comes later
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			o := runOptions{
				path: path, shard: shard, limit: c.Int("limit"), retryFailed: c.Bool("retry-failed"), retryUncertain: c.Bool("retry-uncertain"),
				until: c.String("until"), sandbox: c.Bool("sandbox"), metricsFile: c.String("metrics-file"),
			}
			if !c.Bool("no-progress") {
				o.progress, o.logs = terminal(s.stderr), s.logs
			}
			return runCampaign(c.Context, s.log, o, s.stdout)
		},
	}
}

type runOptions struct {
	path                        string
	shard                       campaign.Shard
	limit                       int
	retryFailed, retryUncertain bool
	until                       string // --until as given; see parseUntil
	sandbox                     bool
	metricsFile                 string     // --metrics-file; "": none
	progress                    *os.File   // the terminal to draw the progress line on; nil: none
	logs                        *lineGuard // the logs' writer on that terminal, if they go there
	// tuning, for tests and benchmarks
	tune            func(*campaign.RunOptions)
	tuneSandbox     func(*sandbox.Options) // run --sandbox's emulator
	sandboxStarted  func(*sandbox.Server)  // given it once started
	outcomesWait    time.Duration          // run --sandbox's wait for its deliveries; 0: sandboxOutcomesWait
	journal         store.JournalOptions
	metricsInterval time.Duration // between writes of the metrics file; 0: 5s
	// now is the run's clock: contact pressure, the dispatch's
	// (campaign.RunOptions.Now, unless tune sets another), the journal's
	// run and end records and the summary's times; nil: time.Now.
	now func() time.Time
}

// clock is the time now by o.now.
func (o *runOptions) clock() time.Time {
	if o.now != nil {
		return o.now()
	}
	return time.Now()
}

// busy is err with what to do, when it says that another run holds the
// state directory (exitCode gives it 75).
func busy(err error) error {
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w; try again when it has finished", err)
	}
	return err
}

// parseUntil reads --until: a time of day today (or tomorrow if it has
// passed), an RFC 3339 time, or a duration from now. A time of day is in
// the zone named after it ("19:30 Europe/Berlin"), else in zone (the
// campaign's hours.timezone), else in now's (local time). zone says in
// words which zone a time of day was read in, for the log.
func parseUntil(s string, now time.Time, zone *time.Location) (until time.Time, which string, err error) {
	if s == "" {
		return time.Time{}, "", nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), "from now", nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, "as given", nil
	}
	clock, name, named := strings.Cut(strings.TrimSpace(s), " ")
	loc, which := now.Location(), "this machine's local time"
	switch {
	case named:
		l, err := time.LoadLocation(strings.TrimSpace(name))
		if err != nil || strings.TrimSpace(name) == "" {
			return time.Time{}, "", fmt.Errorf("--until %q: %q is not a time zone; write an IANA name such as America/New_York or UTC", s, strings.TrimSpace(name))
		}
		loc, which = l, "the zone given"
	case zone != nil:
		loc, which = zone, "the campaign's hours.timezone"
	}
	t, err := time.ParseInLocation("15:04", clock, loc)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("--until %q: give a time of day (19:30, or \"19:30 Europe/Berlin\"), an RFC 3339 time, or a duration (2h)", s)
	}
	local := now.In(loc)
	at := time.Date(local.Year(), local.Month(), local.Day(), t.Hour(), t.Minute(), 0, 0, loc)
	if !at.After(now) {
		at = at.AddDate(0, 0, 1)
	}
	return at, which, nil
}

// untilZone is the zone a bare time of day in --until is read in: the
// campaign's hours.timezone when it names one zone, else nil (local time).
func untilZone(f *campaign.File) *time.Location {
	w, err := f.Window()
	if err != nil || w == nil || w.Contact {
		return nil
	}
	return w.Loc
}

func runCampaign(ctx context.Context, log zerolog.Logger, o runOptions, out io.Writer) error {
	f, err := campaign.Load(o.path, campaign.LoadOptions{Offline: o.sandbox})
	if err != nil {
		return err
	}
	if err := f.CheckSheets(); err != nil {
		return err
	}
	// The do-not-call lists first: one that cannot be used stops the run
	// before it asks anything of the service.
	norm := phone.NewNormalizer()
	suppress, err := f.LoadSuppression(ctx, norm)
	if err != nil {
		return err
	}
	if err := suppress.FlagsUnread(); err != nil {
		return fmt.Errorf("%w; the do-not-call flags of the rows after it cannot be read (a do_not_call: yes, a consent withdrawn), so any row may hold a number the CRM marks do not call: nothing is called until the sheet is fixed (callrun plan shows every problem)", err)
	}
	// A column that says do not call and that the campaign neither maps
	// nor ignores: nothing is called until the campaign says what it is.
	if err := suppress.SignalProblems(f); err != nil {
		return err
	}
	if o.shard.Sharded() {
		f.SetShard(o.shard)
		log.Info().Str("shard", o.shard.String()).Float64("per_second", f.Pace.PerSecond).Msgf("shard %s: the contacts whose number hashes to %d of %d, at %.4g calls/s (pace.per_second / %d)", o.shard, o.shard.Index, o.shard.Count, f.Pace.PerSecond, o.shard.Count)
	}
	until, which, err := parseUntil(o.until, time.Now(), untilZone(f))
	if err != nil {
		return usageError(err)
	}
	if !until.IsZero() {
		log.Info().Str("until", until.Format(time.RFC3339)).Msgf("--until %s: %s, read in %s", o.until, until.Format("Mon 15:04 MST"), which)
	}
	// A run against callrun's own sandbox served on its own (`callrun
	// sandbox`) is a rehearsal too: it says so before anything is kept.
	rehearsal := o.sandbox
	if !o.sandbox {
		if rehearsal, err = run.SandboxService(ctx, f); err != nil {
			return err
		}
	}
	saved, err := f.OpenStore(ctx, rehearsal)
	if err != nil {
		return err
	}
	defer saved.Close()
	stateDir := saved.ReportDir()
	if rehearsal && !o.sandbox {
		log.Info().Str("state_dir", stateDir).Msg(run.RehearsalNote(f.Service.BaseURL, stateDir))
	}
	unlock, err := saved.Lock(ctx)
	if err != nil {
		return busy(err)
	}
	defer unlock()
	if err := report.RemoveStale(stateDir); err != nil {
		log.Warn().Err(err).Msg("could not remove the temporary files of an earlier, killed run")
	}
	// The store's do-not-call list: read now for the contacts on it, and
	// checked again as each intent is written (and, in a file, right
	// before each call start) for the numbers added during the run.
	dnc, err := saved.DoNotCall()
	if err != nil {
		return err
	}
	if err := suppress.LoadDoNotCall(ctx, dnc); err != nil {
		return err
	}
	// An opt-out listen could not read the number of keeps every run on
	// the store from starting calls until a person resolves it; the list
	// says so again before each call start.
	if holds, err := dnc.Held(ctx); err != nil {
		return err
	} else if len(holds) > 0 {
		return &store.OptOutHeldError{Holds: holds, Where: dnc.String()}
	}
	// The CRM's own flag holds beyond this campaign: the numbers its
	// sheets mark do not call join the store's list before the first
	// call. A rehearsal phones nobody, so it tells the real list nothing.
	if !rehearsal {
		wrote, err := f.AddFlagged(ctx, dnc, suppress)
		if err != nil {
			return err
		}
		if len(wrote) > 0 {
			log.Info().Int("numbers", len(wrote)).Msgf("put %d number(s) the sheets mark do not call (do_not_call:) on the %s, which every campaign on the store honours", len(wrote), dnc)
		}
	}
	jopts := o.journal
	jopts.DoNotCall = dnc
	// Contact pressure: checked and counted as each intent is written,
	// across every campaign on the store. A rehearsal phones nobody, so
	// it holds nobody back, as it waits for no calling hours.
	// With pressure off, no limit holds this campaign back, but its call
	// starts still count for the other campaigns on the store, and
	// history shows them.
	limits := f.PressureLimits()
	if limits == nil {
		log.Warn().Msg("pressure: {off: true}: nothing limits how often a number is called across campaigns; this campaign may call a person called an hour ago by another")
	}
	if !rehearsal {
		if w := f.RegFWarning(); w != "" {
			log.Warn().Msg(w)
		}
		starts, err := saved.CallStarts()
		if err != nil {
			return err
		}
		// The machine's call starts and conversations too old to count
		// move to their archives, read by history alone, once they
		// outweigh the rest.
		{
			moved, talks, err := starts.Compact(time.Now())
			if err != nil {
				log.Warn().Err(err).Msg("could not move the old call starts or conversations into their archive; they stay where they were, and count as before")
			}
			if moved > 0 {
				log.Info().Msgf("moved %d call starts older than %d days into %s, where callrun history still finds them", moved, int(store.StartsHorizon/(24*time.Hour)), store.CallStartsArchiveName)
			}
			if talks > 0 {
				log.Info().Msgf("moved %d conversations older than %d days into %s, where callrun history still finds them", talks, int(store.StartsHorizon/(24*time.Hour)), store.ConversationsArchiveName)
			}
		}
		jopts.Pressure = &store.Pressure{Limits: limits, Starts: starts, Campaign: f.Name, AfterConversation: f.PressureAfterConversation(), Now: o.now}
	}
	journal, state, err := saved.OpenJournal(ctx, jopts)
	if err != nil {
		return busy(err) // the lock file was deleted under a running process
	}
	defer journal.Close()
	defer state.Close()
	if f.SharedState() && !rehearsal {
		log.Info().Msgf("journal and lock in the %s", saved)
	}
	// One pass over the sheets for the progress line's total and the
	// metrics file's counts, made only for them.
	var pass sheetPass
	if o.progress != nil || o.metricsFile != "" {
		if pass, err = passSheets(ctx, f, state, norm, suppress, o); err != nil {
			return err
		}
	}
	var metrics *metricsFile
	if o.metricsFile != "" {
		mc := metricsConfig{path: o.metricsFile, campaign: f.Name, perSecond: f.Pace.PerSecond, now: time.Now, counts: state.Counts, pass: pass}
		if f.Shard.Sharded() {
			mc.shard = f.Shard.String()
		}
		metrics = newMetricsFile(mc)
		// Written once before anything is asked of the service: a path
		// that cannot be written stops the run before its first call.
		if err := metrics.write(); err != nil {
			return fmt.Errorf("--metrics-file: %w", err)
		}
		metrics.writeFailed = func(err error) {
			log.Warn().Err(err).Msg("could not write the metrics file; the run goes on, and tries again at each update")
		}
		// However the run ends from here, the file says it is not running.
		defer func() {
			if err := metrics.finish(nil, report.EndStopped); err != nil {
				log.Warn().Err(err).Msg("could not write the metrics file")
			}
		}()
	}

	var sb *sandbox.Server   // the rehearsal's
	var rcv *sandboxOutcomes // its webhooks' receiver, for a campaign with outcomes:
	if o.sandbox {
		if rcv, err = receiveSandboxOutcomes(log, f, stateDir); err != nil {
			return err
		}
		defer rcv.close()
		// The rehearsal's account defines the fields the sheets send beyond
		// the seven, as the live account they are written for does.
		sopts := sandbox.Options{AccountFields: f.AccountFields(), AccountWebhook: rcv.accountWebhook()}
		if o.tuneSandbox != nil {
			o.tuneSandbox(&sopts)
		}
		sb = sandbox.NewServer(sopts)
		defer sb.Close()
		if o.sandboxStarted != nil {
			o.sandboxStarted(sb)
		}
		// Absolute: service.token_file is otherwise read relative to the
		// campaign file, and stateDir already is.
		tokenFile, err := filepath.Abs(filepath.Join(stateDir, "sandbox-token.json"))
		if err != nil {
			return err
		}
		f.Service = campaign.Service{BaseURL: sb.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
			RedirectURI: "http://127.0.0.1/callback", TokenFile: tokenFile}
		log.Info().Str("base_url", sb.URL).Msg("started the sandbox: nobody is phoned")
	}
	var svc *run.Service
	if o.sandbox {
		svc, err = run.SandboxedService(log, f, saved)
	} else {
		svc, err = run.NewService(ctx, log, f, saved)
	}
	if err != nil {
		return err
	}
	defer svc.Close()
	if o.sandbox {
		if _, err := svc.Tokens.Login(ctx, sandbox.DefaultCode); err != nil {
			return fmt.Errorf("logging in to the sandbox: %w", err)
		}
	}
	logf := func(format string, args ...any) { log.Info().Msgf(format, args...) }
	for _, w := range campaign.HoursWarnings(f) {
		log.Warn().Msg(w)
	}
	for _, w := range campaign.ConsentWarnings(f) {
		log.Warn().Msg(w)
	}
	// Runs of the campaign's shards, started at once, take turns here, so
	// that each agent is created once.
	unlockAgents, err := saved.LockAgents(ctx)
	if err != nil {
		return err
	}
	agents, err := campaign.EnsureAgents(ctx, svc.Client, f.Agents, campaign.EnsureOptions{Logf: logf})
	unlockAgents()
	if err != nil {
		return err
	}
	for _, a := range agents {
		if len(a.Drift) > 0 {
			log.Warn().Str("agent", a.Spec.Name).Msgf("the service's agent differs from the file: %s (%s)", strings.Join(a.Drift, "; "), campaign.DriftAdvice)
		}
		if w := a.Warning(); w != "" {
			log.Warn().Msg(w)
		}
	}
	if err := campaign.WaitReady(ctx, svc.Client, agents, 0, logf); err != nil {
		return err
	}
	endpoints, err := callEndpoints(ctx, svc, f, agents)
	if err != nil {
		return err
	}
	limiter := rate.NewLimiter(rate.Limit(f.Pace.PerSecond), f.Pace.Burst)
	host, _ := os.Hostname()
	note := fmt.Sprintf("run started, pid %d on %s", os.Getpid(), host)
	if f.Shard.Sharded() {
		note += ", shard " + f.Shard.String()
	}
	if err := journal.Append(store.Record{Type: store.TypeRun, Note: note, At: o.clock()}); err != nil {
		return err
	}
	pc := progressConfig{now: time.Now}
	if o.progress != nil {
		pc.w, pc.total = o.progress, pass.toCall
		pc.width, _, _ = term.GetSize(int(o.progress.Fd()))
		pc.window, _ = f.Window()
	}
	prog := newProgress(pc)
	var calls campaign.CallStarter = svc.Client
	if o.progress != nil || metrics != nil || log.GetLevel() <= zerolog.DebugLevel {
		w := watchedCalls{CallStarter: svc.Client, failed: prog.failedWith, log: log}
		if metrics != nil {
			w.started = metrics.started
		}
		calls = w
	}
	settled, paused := prog.settled, (func(string, time.Time))(nil)
	if metrics != nil {
		settled = func(s store.Status) { prog.settled(s); metrics.settledOne(s) }
		paused = metrics.pausedFor
	}
	ropts := campaign.RunOptions{
		Calls: calls, Agents: agents, Endpoints: endpoints, Journal: journal, State: state,
		Norm: norm, Suppress: suppress, Limit: o.limit, RetryFailed: o.retryFailed, RetryUncertain: o.retryUncertain,
		Until: until, Settled: settled, Paused: paused, Logf: logf, Rehearsal: rehearsal,
		Warnf: func(format string, args ...any) { log.Warn().Msgf(format, args...) },
		Now:   o.now,
	}
	if f.Outcomes != nil {
		// The deliveries listen stores while the run goes on (in the
		// state directory's file, or the database's table): calls ended,
		// and whether any come at all.
		if ropts.Deliveries, err = saved.FollowDeliveries(ctx); err != nil {
			return fmt.Errorf("reading the webhook deliveries: %w", err)
		}
	}
	if dnc.CheckedAtEachCall() {
		ropts.DoNotCall = dnc // cheap to read again right before each call start
	}
	if o.tune != nil {
		o.tune(&ropts)
	}
	log.Info().Str("campaign", f.Name).Float64("per_second", f.Pace.PerSecond).Int("concurrency", f.Pace.Concurrency).Msg("calling")
	if w, _ := f.Window(); w != nil {
		if at := w.NextOpening(time.Now()); at.After(time.Now()) {
			msg := "outside the campaign's calling hours: they open " + campaign.Opening(at, time.Now())
			if rehearsal && o.until == "" {
				msg += "; a real run would wait until then, and this rehearsal, which phones nobody, calls the sandbox now"
			}
			log.Info().Str("opens_at", at.Format(time.RFC3339)).Msg(msg)
		}
	}
	detach := o.logs.attach(prog)
	prog.run(ctx, time.Second)
	if metrics != nil {
		metrics.run(ctx, cmp.Or(o.metricsInterval, 5*time.Second))
	}
	// The report's rows are written as the calls settle, so that the run
	// ends soon after its last call; it is finished below.
	rep := campaign.StartReport(context.WithoutCancel(ctx), f, &ropts, stateDir)
	res, runErr := campaign.Run(ctx, f, limiter, ropts)
	prog.done()
	detach()
	rcv.wait(ctx, sb, cmp.Or(o.outcomesWait, sandboxOutcomesWait))

	// The report is written however the run ended, even when interrupted.
	sum := &report.Summary{Campaign: f.Name, StartedAt: res.StartedAt, CallsThisRun: res.Started, Ending: report.EndComplete, Notes: res.Notes,
		Rehearsal: rehearsal, NextCallAt: res.ResumeAt}
	switch {
	case errors.Is(runErr, campaign.ErrInterrupted):
		sum.Ending = report.EndInterrupted
	case errors.Is(runErr, campaign.ErrOutsideHours):
		sum.Ending = report.EndOutsideHours
	case runErr != nil:
		sum.Ending = report.EndStopped
	case o.limit > 0 && res.Started >= o.limit:
		sum.Ending = report.EndLimit
	case res.Pending > 0:
		// Every contact it could call was called; those left wait for a
		// later run (their hours, contact pressure, their attempts).
		sum.Ending = report.EndWaiting
	}
	// The run's end, for report.html; a run killed leaves none.
	if err := journal.Append(store.Record{Type: store.TypeEnd, Note: sum.Ending, At: o.clock()}); err != nil {
		log.Warn().Err(err).Msg("could not write the run's end to the journal")
	}
	sum.Finish(o.clock())
	if sum.Runs, err = saved.ReadRuns(context.WithoutCancel(ctx)); err != nil {
		log.Warn().Err(err).Msg("could not read the journal's runs: report.html shows none")
	}
	if res.DoNotCall > 0 {
		log.Info().Int("do_not_call", res.DoNotCall).Msgf("%d contact(s) not called: their number is on the %s", res.DoNotCall, dnc)
	}
	if res.Held > 0 {
		log.Info().Int("held", res.Held).Msgf("%d contact(s) left pending by contact pressure (on this store: %s); the first may be called from %s", res.Held, f.PressureSaid(), res.HeldUntil.Local().Format("Mon 2 Jan 15:04 MST"))
	}
	// The numbers put on the list during the run, for the report.
	if err := suppress.LoadDoNotCall(context.WithoutCancel(ctx), dnc); err != nil {
		log.Warn().Err(err).Msg("could not read the do-not-call list again: the report shows the contacts on it when the run began")
	}
	// The call starts as they are now, so that each held contact's row
	// says when it may be called.
	if jopts.Pressure != nil {
		now := o.clock()
		if p, err := f.ReadPressure(context.WithoutCancel(ctx), saved, now); err != nil {
			log.Warn().Err(err).Msg("could not read the call starts again: the report does not say when the held contacts may be called")
		} else {
			suppress.SetPressure(p, now)
		}
	}
	if err := rep.Finish(context.WithoutCancel(ctx), sum); err != nil {
		if runErr != nil {
			return fmt.Errorf("%w (and writing the report failed: %v)", runErr, err)
		}
		return err
	}
	if metrics != nil {
		if err := metrics.finish(sum, sum.Ending); err != nil {
			log.Warn().Err(err).Msg("could not write the metrics file")
		}
	}
	fmt.Fprint(out, sum.Text())
	if res.WouldHaveWaited > 0 {
		fmt.Fprintf(out, "Rehearsal: %d contact(s) were called outside calling hours (the campaign's hours: or the called person's); a real run would have waited for those hours or left them pending.\n", res.WouldHaveWaited)
	}
	fmt.Fprintf(out, "Report: %s\nReport page: %s\n", filepath.Join(stateDir, campaign.ReportCSV), filepath.Join(stateDir, campaign.ReportHTML))
	switch {
	case errors.Is(runErr, campaign.ErrInterrupted):
		return fmt.Errorf("%w: what was sent is in the journal; run again to continue", runErr)
	case errors.Is(runErr, campaign.ErrOutsideHours):
		when := ""
		if w, _ := f.Window(); w != nil {
			if at := w.NextOpening(time.Now()); !at.IsZero() {
				when = "; calling hours open " + campaign.Opening(at, time.Now()) + ": run again then"
			}
		}
		return fmt.Errorf("%w past --until%s", runErr, when)
	case runErr != nil:
		return runErr
	case sum.Counts[string(store.Failed)]+sum.Counts[string(store.Uncertain)] > 0:
		return withExitCode(exitIncomplete, fmt.Errorf("%d failed and %d uncertain contact(s); see the report", sum.Counts[string(store.Failed)], sum.Counts[string(store.Uncertain)]))
	case sum.Ending != report.EndLimit && sum.Counts[string(store.Pending)] > 0:
		when := "later"
		if !sum.NextCallAt.IsZero() {
			when = "from " + sum.NextCallAt.Local().Format("Mon 2 Jan 15:04 MST") + ", when the first may be called"
		}
		return withExitCode(exitTryLater, fmt.Errorf("%d contact(s) left pending (report.csv's reason says what holds each); run again %s", sum.Counts[string(store.Pending)], when))
	}
	return nil
}

// callEndpoints reads each agent's call endpoint once, and refuses to
// start when a sheet sends a field its agent's endpoint does not take.
func callEndpoints(ctx context.Context, svc *run.Service, f *campaign.File, agents []campaign.AgentPlan) ([]*apiclient.CallEndpoint, error) {
	eps := make([]*apiclient.CallEndpoint, len(agents))
	for i, a := range agents {
		ep, err := svc.Client.GetCallEndpoint(ctx, a.AgentID)
		if err != nil {
			return nil, fmt.Errorf("reading the call endpoint of agent %q: %w", a.Spec.Name, err)
		}
		if err := f.CheckEndpointFields(a.Spec.Name, ep); err != nil {
			return nil, err
		}
		eps[i] = ep
	}
	return eps, nil
}
