package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"golang.org/x/term"
	"golang.org/x/time/rate"
)

// Options are what `callrun run` was asked to do.
type Options struct {
	Path                        string
	Shard                       campaign.Shard
	Limit                       int
	RetryFailed, RetryUncertain bool
	Until                       string // --until as given; see ParseUntil
	Sandbox                     bool
	MetricsFile                 string     // --metrics-file; "": none
	Progress                    *os.File   // the terminal to draw the progress line on; nil: none
	Logs                        *LineGuard // the logs' writer on that terminal, if they go there
	// tuning, for tests and benchmarks
	TuneSandbox    func(*sandbox.Options) // run --sandbox's emulator
	SandboxStarted func(*sandbox.Server)  // given it once started
	OutcomesWait   time.Duration          // run --sandbox's wait for its deliveries; 0: sandboxOutcomesWait
	Journal        store.JournalOptions
	// Now is the run's clock: contact pressure, the dispatch's
	// (campaign.RunOptions.Now), the journal's run and end records and
	// the summary's times; nil: time.Now.
	Now func() time.Time
}

// clock is the time now by o.Now.
func (o *Options) clock() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Busy is err with what to do, when it says that another run holds the
// state directory (its exit code is 75).
func Busy(err error) error {
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w; try again when it has finished", err)
	}
	return err
}

// step is one named step of a run. The steps run in order, each on what
// the ones before it left in the job; the first that fails ends the run,
// and the job's cleanups run last first.
type step struct {
	name string
	run  func(*job, context.Context) error
}

// steps are a run, in order.
var steps = []step{
	{"load the campaign", (*job).load},
	{"apply retention", (*job).applyRetention},
	{"open the store", (*job).openStore},
	{"read the do-not-call list", (*job).readDoNotCall},
	{"count contact pressure", (*job).countPressure},
	{"open the journal", (*job).openJournal},
	{"watch the run", (*job).watch},
	{"start the sandbox", (*job).startSandbox},
	{"log in", (*job).logIn},
	{"reconcile agents", (*job).reconcileAgents},
	{"check the clock", (*job).checkClock},
	{"archive old call starts", (*job).archiveStarts},
	{"read contacts and dispatch", (*job).dispatch},
	{"settle", (*job).settle},
	{"report", (*job).report},
	{"exit code", (*job).exitCode},
}

// job is one run of a campaign, as its steps build it.
type job struct {
	o        Options
	log      zerolog.Logger
	out      io.Writer
	cleanups []func()

	f         *campaign.File
	suppress  *campaign.Suppression
	until     time.Time
	rehearsal bool
	store     store.Store
	dnc       store.DoNotCallList
	jopts     store.JournalOptions
	journal   *store.Journal
	state     *store.State
	pass      sheetPass
	metrics   *metricsFile
	sb        *sandbox.Server  // the rehearsal's
	rcv       *sandboxOutcomes // its webhooks' receiver, for a campaign with outcomes:
	svc       *Service
	agents    []campaign.AgentPlan
	endpoints []*apiclient.CallEndpoint
	res       *campaign.RunResult
	runErr    error // how the dispatch ended
	sum       *report.Summary
	rep       *campaign.Report
	ropts     campaign.RunOptions
}

// Campaign runs the campaign at o.Path, step by step, and prints its
// summary to out.
func Campaign(ctx context.Context, log zerolog.Logger, o Options, out io.Writer) error {
	j := &job{o: o, log: log, out: out}
	defer j.cleanUp()
	for _, s := range steps {
		if err := s.run(j, ctx); err != nil {
			log.Debug().Str("step", s.name).Err(err).Msg("the run stopped")
			return err
		}
	}
	return nil
}

// atEnd has fn run when the run ends, before the functions given to
// atEnd earlier.
func (j *job) atEnd(fn func()) { j.cleanups = append(j.cleanups, fn) }

func (j *job) cleanUp() {
	for _, fn := range slices.Backward(j.cleanups) {
		fn()
	}
}

// load loads the campaign file and its sheets' do-not-call signals:
// the do-not-call lists first, as one that cannot be used stops the run
// before it asks anything of the service.
func (j *job) load(ctx context.Context) error {
	f, err := campaign.Load(j.o.Path, campaign.LoadOptions{Offline: j.o.Sandbox})
	if err != nil {
		return err
	}
	if err := f.CheckSheets(); err != nil {
		return err
	}
	// A workbook's tab of people not to call, or its hidden rows, that
	// the campaign does not say what to do with: nothing is called.
	if err := f.WorkbookProblems(); err != nil {
		return err
	}
	j.f = f
	if j.suppress, err = f.LoadSuppression(ctx); err != nil {
		return err
	}
	for _, file := range j.suppress.Empty {
		j.log.Warn().Str("file", file).Msgf("suppression file %s holds no numbers (was it exported empty?): it keeps nobody from being called", file)
	}
	if err := j.suppress.FlagsUnread(); err != nil {
		return fmt.Errorf("%w; the do-not-call flags of the rows after it cannot be read (a do_not_call: yes, a consent withdrawn), so any row may hold a number the CRM marks do not call: nothing is called until the sheet is fixed (callrun plan shows every problem)", err)
	}
	// A column that says do not call and that the campaign neither maps
	// nor ignores: nothing is called until the campaign says what it is.
	if err := j.suppress.SignalProblems(f); err != nil {
		return err
	}
	// A sheet that cannot be read to its end (not UTF-8 from some row
	// on, a row past 4 MiB): nothing is called, as plan refuses it.
	if err := f.CheckSheetsReadable(ctx, j.suppress); err != nil {
		return err
	}
	if o := j.o; o.Shard.Sharded() {
		f.SetShard(o.Shard)
		j.log.Info().Str("shard", o.Shard.String()).Float64("per_second", f.Pace.PerSecond).Msgf("shard %s: the contacts whose number hashes to %d of %d, at %.4g calls/s (pace.per_second / %d)", o.Shard, o.Shard.Index, o.Shard.Count, f.Pace.PerSecond, o.Shard.Count)
	}
	until, which, err := ParseUntil(j.o.Until, time.Now(), untilZone(f))
	if err != nil {
		return UsageError(err)
	}
	if j.until = until; !until.IsZero() {
		j.log.Info().Str("until", until.Format(time.RFC3339)).Msgf("--until %s: %s, read in %s", j.o.Until, until.Format("Mon 15:04 MST"), which)
	}
	return nil
}

// applyRetention erases, before the run takes its lock, the data of the
// people on the store last called longer ago than the campaign's
// retention: ([Retain]), and logs how many. A run that holds a lock on
// the store puts it off to the next run.
func (j *job) applyRetention(ctx context.Context) error {
	if j.f.RetentionLimit() == 0 {
		return nil
	}
	got, err := Retain(ctx, j.log, RetainOptions{Path: j.o.Path, Now: j.o.Now}, io.Discard)
	var held *store.OptOutHeldError
	if errors.Is(err, store.ErrLocked) || errors.As(err, &held) {
		j.log.Warn().Err(err).Msg("retention: put off to the next run; the next run, or callrun erase --older-than, erases them")
		return nil
	}
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	logRetained(j.log, j.f, got)
	return nil
}

// logRetained logs what a retention erased.
func logRetained(log zerolog.Logger, f *campaign.File, got Retained) {
	if got.People == 0 {
		return
	}
	ev := log.Info().Str("campaign", f.Name).Int("people", got.People).Str("retention", f.Retention)
	for _, step := range slices.Sorted(maps.Keys(got.Records)) {
		ev = ev.Int(step, got.Records[step])
	}
	ev.Msgf("retention: erased the data of %d people last called more than %s ago (the do-not-call list is as it was)", got.People, f.Retention)
	for _, where := range got.Unreached {
		log.Warn().Str("campaign", f.Name).Msg("retention: not reached, and may still hold them: " + where)
	}
}

// openStore opens the campaign's store and takes the run lock. A run
// against callrun's own sandbox served on its own (`callrun sandbox`) is
// a rehearsal too: it says so before anything is kept.
func (j *job) openStore(ctx context.Context) (err error) {
	j.rehearsal = j.o.Sandbox
	if !j.o.Sandbox {
		if j.rehearsal, err = SandboxService(ctx, j.f); err != nil {
			return err
		}
	}
	if j.store, err = j.f.OpenStore(ctx, j.rehearsal); err != nil {
		return err
	}
	j.atEnd(func() { j.store.Close() })
	if j.rehearsal && !j.o.Sandbox {
		j.log.Info().Str("state_dir", j.store.ReportDir()).Msg(RehearsalNote(j.f.Service.BaseURL, j.store.ReportDir()))
	}
	unlock, err := j.store.Lock(ctx)
	if err != nil {
		return Busy(err)
	}
	j.atEnd(func() { unlock() })
	if fs, ok := j.store.(store.Files); ok {
		if nfs := store.NetworkFileSystem(fs.Dir); nfs != "" {
			j.log.Warn().Str("state_dir", fs.Dir).Msgf("the state directory is on a network file system (%s): its lock may not keep out a run of the campaign on another machine that mounts it, and both would call the same people; run the campaign from one machine, or keep its state in PostgreSQL (docs/postgres-and-shards.md)", nfs)
		}
	}
	kind := store.PlaceRun
	if j.rehearsal {
		kind = store.PlaceRehearsal
	}
	if err := recordPlace(ctx, j.store, j.f, kind); err != nil {
		return err
	}
	if err := report.RemoveStale(j.store.ReportDir()); err != nil {
		j.log.Warn().Err(err).Msg("could not remove the temporary files of an earlier, killed run")
	}
	return nil
}

// readDoNotCall reads the store's do-not-call list for the contacts on
// it (checked again as each intent is written and, in a file, right
// before each call start, for the numbers added during the run), stops
// at an opt-out held on the store, and puts the numbers the sheets flag
// on the list.
func (j *job) readDoNotCall(ctx context.Context) (err error) {
	if j.dnc, err = j.store.DoNotCall(); err != nil {
		return err
	}
	if err := j.suppress.LoadDoNotCall(ctx, j.dnc, j.f); err != nil {
		return err
	}
	// An opt-out listen could not read the number of keeps every run on
	// the store from starting calls until a person resolves it; the list
	// says so again before each call start.
	if holds, err := j.dnc.Held(ctx); err != nil {
		return err
	} else if len(holds) > 0 {
		return &store.OptOutHeldError{Holds: holds, Where: j.dnc.String()}
	}
	// The CRM's own flag holds beyond this campaign: the numbers its
	// sheets mark do not call join the store's list before the first
	// call. A rehearsal phones nobody, so it tells the real list nothing.
	if !j.rehearsal {
		wrote, err := j.f.AddFlagged(ctx, j.dnc, j.suppress)
		if err != nil {
			return err
		}
		if len(wrote) > 0 {
			j.log.Info().Int("numbers", len(wrote)).Msgf("put %d number(s) the sheets mark do not call (do_not_call:) on the %s, which every campaign on the store honours", len(wrote), j.dnc)
		}
	}
	return nil
}

// countPressure sets up contact pressure: checked and counted as each
// intent is written, across every campaign on the store. A rehearsal
// phones nobody, so it holds nobody back, as it waits for no calling
// hours. With pressure off, no limit holds this campaign back, but its
// call starts still count for the other campaigns on the store, and
// history shows them.
func (j *job) countPressure(context.Context) error {
	j.jopts = j.o.Journal
	j.jopts.DoNotCall = j.dnc
	limits := j.f.PressureLimits()
	if limits == nil {
		j.log.Warn().Msg("pressure: {off: true}: nothing limits how often a number is called across campaigns, not even the three calls a day Florida's, Oklahoma's and Maryland's laws allow; this campaign may call a person called an hour ago by another")
	}
	if j.rehearsal {
		return nil
	}
	if w := j.f.RegFWarning(); w != "" {
		j.log.Warn().Msg(w)
	}
	starts, err := j.store.CallStarts()
	if err != nil {
		return err
	}
	j.jopts.Pressure = &store.Pressure{Limits: limits, Starts: starts, Campaign: j.f.Name, AfterConversation: j.f.PressureAfterConversation(), Now: j.o.Now,
		NumberLimits: campaign.StateAttemptLimits}
	return nil
}

// archiveStarts moves the machine's call starts and conversations too old
// to count to their archives, read by history alone, once they outweigh
// the rest. It runs once the clock is checked against the service's: a
// machine whose clock is a month ahead, or a listen's conversation
// recorded by one, would otherwise move what still counts where no run
// reads it.
func (j *job) archiveStarts(context.Context) error {
	if j.jopts.Pressure == nil {
		return nil // a rehearsal
	}
	moved, conversations, err := j.jopts.Pressure.Starts.Compact(time.Now())
	if err != nil {
		j.log.Warn().Err(err).Msg("could not move the old call starts or conversations into their archive; they stay where they were, and count as before")
	}
	days := int(store.StartsHorizon / (24 * time.Hour))
	if moved > 0 {
		j.log.Info().Msgf("moved %d call starts older than %d days into %s, where callrun history still finds them", moved, days, store.CallStartsArchiveName)
	}
	if conversations > 0 {
		j.log.Info().Msgf("moved %d conversations older than %d days into %s, where callrun history still finds them", conversations, days, store.ConversationsArchiveName)
	}
	return nil
}

// openJournal replays the journal and opens it for appending.
func (j *job) openJournal(ctx context.Context) (err error) {
	if j.journal, j.state, err = j.store.OpenJournal(ctx, j.jopts); err != nil {
		return Busy(err) // the lock file was deleted under a running process
	}
	j.atEnd(func() { j.journal.Close(); j.state.Close() })
	if j.f.SharedState() && !j.rehearsal {
		j.log.Info().Msgf("journal and lock in the %s", j.store)
	}
	return nil
}

// watch makes one pass over the sheets for the progress line's total and
// the metrics file's counts, made only for them, and writes the metrics
// file once before anything is asked of the service: a path that cannot
// be written stops the run before its first call.
func (j *job) watch(ctx context.Context) (err error) {
	o, f := j.o, j.f
	if o.Progress != nil || o.MetricsFile != "" {
		if j.pass, err = passSheets(ctx, f, j.state, j.suppress, o); err != nil {
			return err
		}
	}
	if o.MetricsFile == "" {
		return nil
	}
	mc := metricsConfig{path: o.MetricsFile, campaign: f.Name, perSecond: f.Pace.PerSecond, now: time.Now, counts: j.state.Counts, pass: j.pass}
	if f.Shard.Sharded() {
		mc.shard = f.Shard.String()
	}
	j.metrics = newMetricsFile(mc)
	if err := j.metrics.write(); err != nil {
		return fmt.Errorf("--metrics-file: %w", err)
	}
	j.metrics.writeFailed = func(err error) {
		j.log.Warn().Err(err).Msg("could not write the metrics file; the run goes on, and tries again at each update")
	}
	// However the run ends from here, the file says it is not running.
	j.atEnd(func() {
		if err := j.metrics.finish(nil, report.EndStopped); err != nil {
			j.log.Warn().Err(err).Msg("could not write the metrics file")
		}
	})
	return nil
}

// startSandbox serves run --sandbox's emulator in process, and the
// receiver of its webhooks, and points the campaign's service at it.
func (j *job) startSandbox(context.Context) (err error) {
	if !j.o.Sandbox {
		return nil
	}
	f := j.f
	if j.rcv, err = receiveSandboxOutcomes(j.log, f); err != nil {
		return err
	}
	j.atEnd(j.rcv.close)
	// The rehearsal's account defines the fields the sheets send beyond
	// the seven, as the live account they are written for does.
	sopts := sandbox.Options{AccountFields: f.AccountFields(), AccountWebhook: j.rcv.accountWebhook()}
	if len(sopts.AccountFields) > 0 {
		j.log.Warn().Strs("fields", sopts.AccountFields).Msgf("the rehearsal's account takes every field the campaign sends beyond the seven (%s), so it cannot tell a field your account lacks, a misspelt one say: the live service refuses a call with one; callrun plan, online, checks them against each agent's call endpoint", strings.Join(sopts.AccountFields, ", "))
	}
	if j.o.TuneSandbox != nil {
		j.o.TuneSandbox(&sopts)
	}
	j.sb = sandbox.NewServer(sopts)
	j.atEnd(j.sb.Close)
	if j.o.SandboxStarted != nil {
		j.o.SandboxStarted(j.sb)
	}
	// Absolute: service.token_file is otherwise read relative to the
	// campaign file, and the state directory already is.
	tokenFile, err := filepath.Abs(filepath.Join(j.store.ReportDir(), "sandbox-token.json"))
	if err != nil {
		return err
	}
	f.Service = campaign.Service{BaseURL: j.sb.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
		RedirectURI: "http://127.0.0.1/callback", TokenFile: tokenFile}
	j.log.Info().Str("base_url", j.sb.URL).Msg("started the sandbox: nobody is phoned")
	return nil
}

// logIn prepares the service with the token the store keeps; a
// rehearsal logs in to its sandbox.
func (j *job) logIn(ctx context.Context) (err error) {
	if j.o.Sandbox {
		j.svc, err = SandboxedService(j.log, j.f, j.store)
	} else {
		j.svc, err = NewService(ctx, j.log, j.f, j.store)
	}
	if err != nil {
		return err
	}
	j.atEnd(j.svc.Close)
	if j.o.Sandbox {
		if _, err := j.svc.Tokens.Login(ctx, sandbox.DefaultCode); err != nil {
			return fmt.Errorf("logging in to the sandbox: %w", err)
		}
	}
	return nil
}

// reconcileAgents makes sure of the campaign's agents, and reads each
// agent's call endpoint once.
func (j *job) reconcileAgents(ctx context.Context) (err error) {
	f, log := j.f, j.log
	for _, w := range campaign.HoursWarnings(f) {
		log.Warn().Msg(w)
	}
	for _, w := range campaign.ConsentWarnings(f) {
		log.Warn().Msg(w)
	}
	// Runs of the campaign's shards, started at once, take turns here, so
	// that each agent is created once.
	unlockAgents, err := j.store.LockAgents(ctx)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	who := fmt.Sprintf("pid %d on %s", os.Getpid(), host)
	if f.Shard.Sharded() {
		who += ", shard " + f.Shard.String()
	}
	j.agents, err = campaign.EnsureAgents(ctx, j.svc.Client, f.Agents, campaign.EnsureOptions{Logf: j.logf, Warnf: j.warnf, Memory: j.store, Run: who})
	unlockAgents()
	if err != nil {
		return err
	}
	for _, a := range j.agents {
		if len(a.Drift) > 0 {
			log.Warn().Str("agent", a.Spec.Name).Msgf("the service's agent differs from the file: %s (%s)", strings.Join(a.Drift, "; "), campaign.DriftAdvice)
		}
		if w := a.Warning(); w != "" {
			log.Warn().Msg(w)
		}
	}
	if err := campaign.WaitReady(ctx, j.svc.Client, j.agents, 0, j.logf); err != nil {
		return err
	}
	j.endpoints, err = CallEndpoints(ctx, j.svc, f, j.agents)
	return err
}

func (j *job) logf(format string, args ...any) { j.log.Info().Msgf(format, args...) }

func (j *job) warnf(format string, args ...any) { j.log.Warn().Msgf(format, args...) }

// checkClock stops the run before its first call when this machine's
// clock is off from the service's by more than apiclient.MaxClockOffset,
// as the answers to the agents' requests dated them: the called person's
// hours and contact pressure are read by it. Dispatch checks again
// before each call start.
func (j *job) checkClock(context.Context) error {
	if off, ok := j.svc.Client.Clock().Offset(); ok {
		j.log.Debug().Dur("offset", off).Msg("this machine's clock less the service's")
	} else {
		j.log.Debug().Msg("the service's answers carry no Date: this machine's clock is not checked")
	}
	return j.clockCheck()
}

// clockCheck is the check of this machine's clock against the
// service's, before the run and before each call start.
func (j *job) clockCheck() error {
	return j.svc.Client.Clock().Check(apiclient.MaxClockOffset)
}

// CallEndpoints reads each agent's call endpoint once, and refuses to
// start when a sheet sends a field its agent's endpoint does not take.
func CallEndpoints(ctx context.Context, svc *Service, f *campaign.File, agents []campaign.AgentPlan) ([]*apiclient.CallEndpoint, error) {
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

// dispatch notes the run in the journal, starts the report's writer,
// and calls: the producer reads the contacts, the workers start the
// calls, at the campaign's pace, inside its hours. How the calls ended
// is the settle step's: a dispatch that stops still reports.
func (j *job) dispatch(ctx context.Context) (err error) {
	o, f, log := j.o, j.f, j.log
	limiter := rate.NewLimiter(rate.Limit(f.Pace.PerSecond), f.Pace.Burst)
	host, _ := os.Hostname()
	note := fmt.Sprintf("run started, pid %d on %s", os.Getpid(), host)
	if f.Shard.Sharded() {
		note += ", shard " + f.Shard.String()
	}
	if err := j.journal.Append(store.Record{Type: store.TypeRun, Note: note, At: o.clock()}); err != nil {
		return err
	}
	pc := progressConfig{now: time.Now}
	if o.Progress != nil {
		pc.w, pc.total = o.Progress, j.pass.toCall
		pc.width, _, _ = term.GetSize(int(o.Progress.Fd()))
		pc.window, _ = f.Window()
	}
	prog := newProgress(pc)
	var calls campaign.CallStarter = j.svc.Client
	if o.Progress != nil || j.metrics != nil || log.GetLevel() <= zerolog.DebugLevel {
		w := watchedCalls{CallStarter: j.svc.Client, failed: prog.failedWith, log: log}
		if j.metrics != nil {
			w.started = j.metrics.started
		}
		calls = w
	}
	settled, paused := prog.settled, (func(string, time.Time))(nil)
	if j.metrics != nil {
		settled = func(s store.Status) { prog.settled(s); j.metrics.settledOne(s) }
		paused = j.metrics.pausedFor
	}
	j.ropts = campaign.RunOptions{
		Calls: calls, Agents: j.agents, Endpoints: j.endpoints, Journal: j.journal, State: j.state,
		Suppress: j.suppress, Limit: o.Limit, RetryFailed: o.RetryFailed, RetryUncertain: o.RetryUncertain,
		Until: j.until, Settled: settled, Paused: paused, Logf: j.logf, Rehearsal: j.rehearsal,
		Warnf: func(format string, args ...any) { log.Warn().Msgf(format, args...) },
		Now:   o.Now,
	}
	if f.Outcomes != nil {
		// The deliveries listen stores while the run goes on (in the
		// state directory's file, or the database's table): calls ended,
		// and whether any come at all.
		if j.ropts.Deliveries, err = j.store.FollowDeliveries(ctx); err != nil {
			return fmt.Errorf("reading the webhook deliveries: %w", err)
		}
	}
	if j.dnc.CheckedAtEachCall() {
		j.ropts.DoNotCall = j.dnc
	} else {
		j.ropts.DoNotCallLate = j.dnc
	}
	j.ropts.Clock = j.clockCheck
	log.Info().Str("campaign", f.Name).Float64("per_second", f.Pace.PerSecond).Int("concurrency", f.Pace.Concurrency).Msg("calling")
	if w, _ := f.Window(); w != nil {
		if at := w.NextOpening(time.Now()); at.After(time.Now()) {
			msg := "outside the campaign's calling hours: they open " + campaign.Opening(at, time.Now())
			if j.rehearsal && o.Until == "" {
				msg += "; a real run would wait until then, and this rehearsal, which phones nobody, calls the sandbox now"
			}
			log.Info().Str("opens_at", at.Format(time.RFC3339)).Msg(msg)
		}
	}
	detach := o.Logs.attach(prog)
	prog.run(ctx, time.Second)
	if j.metrics != nil {
		j.metrics.run(ctx, 5*time.Second) // between writes of the file
	}
	// The report's rows are written as the calls settle, so that the run
	// ends soon after its last call; the report step finishes it.
	erased, err := campaign.LoadErased(ctx, j.store)
	if err != nil {
		return err
	}
	j.rep = campaign.StartReport(context.WithoutCancel(ctx), f, &j.ropts, erased, j.store.ReportDir())
	j.res, j.runErr = campaign.Run(ctx, f, limiter, j.ropts)
	prog.done()
	detach()
	j.rcv.wait(ctx, j.sb, cmp.Or(o.OutcomesWait, sandboxOutcomesWait))
	return nil
}

// settle says how the run ended, in the summary and the journal's end
// record (a run killed leaves none), and reads again what the report
// needs: the runs, the numbers put on the do-not-call list during the
// run, and the call starts, so that each held contact's row says when it
// may be called.
func (j *job) settle(ctx context.Context) (err error) {
	ctx = context.WithoutCancel(ctx) // the report is written however the run ended
	res, log := j.res, j.log
	j.sum = &report.Summary{Campaign: j.f.Name, StartedAt: res.StartedAt, CallsThisRun: res.Sent + res.Uncertain, Ending: Ending(j.runErr, j.o.Limit, res),
		Notes: res.Notes, Rehearsal: j.rehearsal, NextCallAt: res.ResumeAt}
	if err := j.journal.Append(store.Record{Type: store.TypeEnd, Note: j.sum.Ending, At: j.o.clock()}); err != nil {
		log.Warn().Err(err).Msg("could not write the run's end to the journal")
	}
	j.sum.Finish(j.o.clock())
	if j.sum.Runs, err = j.store.ReadRuns(ctx); err != nil {
		log.Warn().Err(err).Msg("could not read the journal's runs: report.html shows none")
	}
	if res.DoNotCall > 0 {
		log.Info().Int("do_not_call", res.DoNotCall).Msgf("%d contact(s) not called: their number is on the %s", res.DoNotCall, j.dnc)
	}
	if res.Held > 0 {
		log.Info().Int("held", res.Held).Msgf("%d contact(s) left pending by contact pressure (on this store: %s); the first may be called from %s", res.Held, j.f.PressureSaid(), res.HeldUntil.Local().Format("Mon 2 Jan 15:04 MST"))
	}
	if err := j.suppress.LoadDoNotCall(ctx, j.dnc, j.f); err != nil {
		log.Warn().Err(err).Msg("could not read the do-not-call list again: the report shows the contacts on it when the run began")
	}
	if j.jopts.Pressure != nil {
		now := j.o.clock()
		if p, err := j.f.ReadPressure(ctx, j.store, now); err != nil {
			log.Warn().Err(err).Msg("could not read the call starts again: the report does not say when the held contacts may be called")
		} else {
			j.suppress.SetPressure(p, now)
		}
	}
	return nil
}

// Ending is how a run ended, for its summary: interrupted, outside
// hours past --until, stopped by an error, at --limit, waiting (every
// contact it could call was called; those left wait for a later run:
// their hours, contact pressure, their attempts) or complete.
func Ending(runErr error, limit int, res *campaign.RunResult) string {
	switch {
	case errors.Is(runErr, campaign.ErrInterrupted):
		return report.EndInterrupted
	case errors.Is(runErr, campaign.ErrOutsideHours):
		return report.EndOutsideHours
	case runErr != nil:
		return report.EndStopped
	case limit > 0 && res.Started >= limit:
		return report.EndLimit
	case res.Pending > 0:
		return report.EndWaiting
	}
	return report.EndComplete
}

// report finishes the report files, the metrics file, and prints the
// summary.
func (j *job) report(ctx context.Context) error {
	sum, dir := j.sum, j.store.ReportDir()
	if err := j.rep.Finish(context.WithoutCancel(ctx), sum); err != nil {
		if j.runErr != nil {
			return fmt.Errorf("%w (and writing the report failed: %v)", j.runErr, err)
		}
		return err
	}
	if j.metrics != nil {
		if err := j.metrics.finish(sum, sum.Ending); err != nil {
			j.log.Warn().Err(err).Msg("could not write the metrics file")
		}
	}
	fmt.Fprint(j.out, sum.Text())
	if j.res.WouldHaveWaited > 0 {
		fmt.Fprintf(j.out, "Rehearsal: %d contact(s) were called outside calling hours (the campaign's hours: or the called person's); a real run would have waited for those hours or left them pending.\n", j.res.WouldHaveWaited)
	}
	fmt.Fprintf(j.out, "Report: %s\nReport page: %s\n", filepath.Join(dir, campaign.ReportCSV), filepath.Join(dir, campaign.ReportHTML))
	return nil
}

// exitCode is the run's error, which gives the process its exit code.
func (j *job) exitCode(context.Context) error {
	sum, runErr := j.sum, j.runErr
	switch {
	case errors.Is(runErr, campaign.ErrInterrupted):
		return fmt.Errorf("%w: what was sent is in the journal; run again to continue", runErr)
	case errors.Is(runErr, campaign.ErrOutsideHours):
		when := ""
		if w, _ := j.f.Window(); w != nil {
			if at := w.NextOpening(time.Now()); !at.IsZero() {
				when = "; calling hours open " + campaign.Opening(at, time.Now()) + ": run again then"
			}
		}
		return fmt.Errorf("%w past --until%s", runErr, when)
	case runErr != nil:
		return runErr
	case sum.Rows > 0 && sum.Counts[string(store.Invalid)] == sum.Rows:
		// Nothing could be called: a sheet mapped wrong, not a campaign done.
		return WithExitCode(ExitInvalidRows, fmt.Errorf("every one of the %d row(s) is invalid, so nobody was called; report.csv says why for each row (callrun plan shows the same before a run)", sum.Rows))
	case sum.Counts[string(store.Failed)]+sum.Counts[string(store.Uncertain)] > 0:
		return WithExitCode(ExitIncomplete, fmt.Errorf("%d failed and %d uncertain contact(s); see the report", sum.Counts[string(store.Failed)], sum.Counts[string(store.Uncertain)]))
	case sum.Ending != report.EndLimit && sum.Counts[string(store.Pending)] > 0:
		when := "later"
		if !sum.NextCallAt.IsZero() {
			when = "from " + sum.NextCallAt.Local().Format("Mon 2 Jan 15:04 MST") + ", when the first may be called"
		}
		return WithExitCode(ExitTryLater, fmt.Errorf("%d contact(s) left pending (report.csv's reason says what holds each); run again %s", sum.Counts[string(store.Pending)], when))
	}
	return nil
}
