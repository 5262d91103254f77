package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
)

// CallStarter starts calls, given the contact's form encoded as
// url.Values.Encode encodes it. *apiclient.Client implements it.
type CallStarter interface {
	StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error)
}

// Endings of a run, besides an error.
var (
	// ErrOutsideHours: the calling window is closed and --until has passed.
	ErrOutsideHours = errors.New("outside calling hours")
	// ErrInterrupted: a signal stopped the run; in-flight calls finished
	// and their outcomes are in the journal.
	ErrInterrupted = errors.New("interrupted")
	// ErrCallLater is wrapped by the error of a run that stopped because
	// the service asked to be called again later than
	// RunOptions.MaxRetryAfter from now.
	ErrCallLater = errors.New("the service asked to be called again later")
)

// pauseLogOver is the longest pause of a run that is not logged: any
// longer wait the service asked for is logged at once, with its cause.
const pauseLogOver = 3 * time.Second

// RunOptions are the inputs of [Run].
type RunOptions struct {
	Calls     CallStarter
	Agents    []AgentPlan               // ensured and ready, by index of File.Agents
	Endpoints []*apiclient.CallEndpoint // call endpoint of each agent, by index
	Journal   *store.Journal
	State     *store.State
	Suppress  *Suppression
	// DoNotCall, if set, is the store's do-not-call list in a file, read
	// again right before each call start, after its intent is on disk
	// (one stat when nothing was added). The journal checks the list too,
	// as it writes each intent (JournalOptions.DoNotCall); with
	// PostgreSQL that check, in the intent's own INSERT, is the one, and
	// DoNotCall is nil.
	DoNotCall store.DoNotCallList
	// DoNotCallLate, if set, is the store's do-not-call list where
	// DoNotCall is not (PostgreSQL), read again in the send check of a
	// call start that leaves more than listAgainAfter after its intent
	// was written (its access token was slow to come): a number listen
	// put on the list meanwhile is not called.
	DoNotCallLate store.DoNotCallList
	// Clock, if set, checks this machine's clock against the service's
	// ([apiclient.ServiceClock.Check]) right before each call start,
	// before the called person's hours, which are read by it: an error
	// stops the run, the contact left pending.
	Clock func() error

	Limit          int       // at most this many contacts started this run; 0 means no limit
	RetryFailed    bool      // send failed contacts again
	RetryUncertain bool      // send uncertain contacts again (a person decided so)
	Until          time.Time // with calling hours: stop (ErrOutsideHours) when the window is closed past this
	// Rehearsal is a run against the sandbox, which phones nobody: it
	// holds no call for any hours, neither the called person's nor the
	// campaign's hours:, and never waits for them; it counts the calls a
	// real run would have held (RunResult.WouldHaveWaited). Hours protect
	// the people called, and a rehearsal calls nobody: what it is for is
	// to see the whole campaign go through, at whatever hour it is tried.
	// With Until set it rehearses a cron run, whose point is the window:
	// the campaign's hours: then hold (outside them it stops at once with
	// ErrOutsideHours, or waits, saying so, until they open before Until).
	Rehearsal bool

	// Tuning; zero values are sane.
	MaxAttempts int           // attempts per contact on retryable outcomes; default 6
	RetryPause  time.Duration // first backoff after a retryable outcome; default 1s
	// MaxRetryAfter is the longest Retry-After a run waits out in full;
	// a longer one ends the run with ErrCallLater. Default: the campaign's
	// pace.max_retry_after. It also caps the backoff between attempts.
	MaxRetryAfter  time.Duration
	RequestTimeout time.Duration // per call start; default 60s
	// Now and Sleep are the run's clock: the calling hours, the records'
	// times, and every wait of the run (outside calling hours, for the
	// rate limiter, the pause after a 429, the backoff between attempts)
	// run on them. Sleep waits for d or until ctx ends, returning
	// ctx.Err() then. Defaults: time.Now and a real sleep.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	// Settled, if set, is called after each contact's attempt is settled
	// (sent, failed, uncertain, left pending, or suppressed: its number
	// went on the do-not-call list during the run), for progress display.
	Settled func(status store.Status)
	// Paused, if set, is told each time the run holds every call start
	// for a while: cause is PauseHours (the campaign's calling hours are
	// closed) or PauseService (the service answered naming a limit), and
	// until is when the hold ends. For the metrics file; nothing waits on
	// it.
	Paused func(cause string, until time.Time)
	Logf   func(format string, args ...any)
	// Warnf, if set, logs what a person should act on while the run goes
	// on (no webhook delivery comes); default Logf.
	Warnf func(format string, args ...any)

	// Deliveries, for a campaign with outcomes:, is the feed of the
	// webhook deliveries stored while the run goes on: a call's delivered
	// end frees its place under pace.max_active_calls, and the run says
	// so when none comes for DefaultDeliveryWait after a call start (its
	// first, or the first after the last delivery). It is read every
	// DefaultDeliveryPoll at most. nil: the run follows none.
	Deliveries DeliveryFeed

	// seen, if set, is the dedupe table the run's reading of the sheets
	// shares with its report's: [StartReport] sets it.
	seen *numbersSeen
}

// Causes of a pause, for RunOptions.Paused.
const (
	PauseHours   = "hours"   // the campaign's calling hours are closed
	PauseService = "service" // the service answered naming a limit (a 429, or a limit in the body)
)

// RunResult counts what a run did.
type RunResult struct {
	Started   int // contacts whose call start was sent this run (any outcome)
	Sent      int
	Failed    int
	Uncertain int
	Pending   int // left for a later run: retries exhausted, or outside a contact's hours
	Deferred  int // of Pending: outside the contact's own calling hours
	// WouldHaveWaited counts the contacts a rehearsal called outside
	// calling hours (the campaign's or the called person's), which a real
	// run would have waited for or left pending.
	WouldHaveWaited int
	Skipped         int // settled in an earlier run
	// DoNotCall counts the contacts not called because their number is
	// on the store's do-not-call list: when the run began, or added to it
	// during the run (by listen, by callrun suppress, on another machine).
	DoNotCall int
	// Held counts, of Pending, the contacts contact pressure held back:
	// their number was called on the store (by any campaign) as often as
	// the limits allow, or talked to within 7 days under Reg F's rule;
	// HeldUntil is the earliest that one of them may be called again.
	Held      int
	HeldUntil time.Time
	// ResumeAt is when the service said it may be called again, for a
	// run it stopped with ErrCallLater; zero otherwise.
	ResumeAt   time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	// Notes say what the service answered that a person should read: a
	// 2xx whose body said error or was not the service's JSON, answers
	// cut off. One line per kind, with its count.
	Notes []string
}

// job is one contact to call, copied out of the reader.
type job struct {
	c     Contact
	agent string
	prior int // attempts recorded in earlier runs
}

// stopKind is why a contact was not sent after all.
type stopKind int

const (
	stopSignal    stopKind = iota + 1 // a signal: no new calls
	stopFailed                        // another worker or the producer failed
	stopHours                         // the calling window closed
	stopDoNotCall                     // the number went on the do-not-call list
	stopPaused                        // a pause began while the intent was written: it is written again after
	stopLate                          // the call start would leave more than sendLate after its intent: it is written again
)

// sendLate is the longest a call start may leave after its intent began
// to be written. Its start counts in contact pressure from when the
// intent was written (at or after the intent's time, by the run's clock), and the day
// another campaign waits out is counted from there: a call start that
// would leave later (a slow token refresh, a wait on another process's
// refresh, a 401 and a resend, a slow read of the do-not-call list) is
// not sent on its old count. Its start is given back and its intent
// written again, counted from then (stopLate). Both times are read on one
// clock, the run's, so another machine's clock does not enter it.
const sendLate = 10 * time.Second

// maxLate is how many times in a row one contact's intent is written
// again because its call start would have left late: past it the contact
// is left pending, for a later run.
const maxLate = 3

// why is the reason of the skipped outcome of a contact whose intent is on
// disk but that was not sent for this kind of stop.
func (k stopKind) why() string {
	switch k {
	case stopSignal:
		return "not sent: the run was interrupted first"
	case stopFailed:
		return "not sent: the run stopped on an error first"
	case stopDoNotCall:
		return "not sent: " + ReasonDoNotCall
	case stopPaused:
		return "not sent yet: every call start was paused as its intent was written; written again after the pause"
	case stopLate:
		return "not sent yet: its call start would have left more than " + sendLate.String() + " after its intent was written, which contact pressure counts it from; written again"
	}
	return "not sent: the calling window closed first"
}

// Run calls every contact of the campaign that is to be called: a producer
// streams contacts into a channel that Pace.Concurrency workers in an
// errgroup range over. When a call may start is decided in one place,
// pace (pacer.go), which they all ask.
//
// Each worker, for each contact: waits for what pace says (the pool-wide
// pause after a 429, a turn at the one rate limiter of every worker and
// agent, a slot among the calls in progress), checks the calling hours, writes the intent to the journal and waits until it is
// durable (the journal's group commit puts the intents of workers that
// write at once into one fsync), sends the call start, and queues the
// outcome. Only attempts that provably did not reach the service (never
// written, 429, 503) are tried again; anything else that is not a clear
// answer is uncertain, and uncertain contacts are sent again only with
// RetryUncertain.
//
// So at most Pace.Concurrency contacts have an intent on disk and no
// outcome: a crash or kill -9 leaves at most that many uncertain, the
// calls in flight. A signal stops the producer; workers finish the calls
// they have started and start no others (a contact whose intent is on
// disk but whose call has not started is closed with a skipped outcome
// and stays pending).
//
// The run stops on one context, whose cause says why: a signal
// (ErrInterrupted) or an error (the breaker's among them) ends every wait
// at once; the producer's clean end (every contact read, --limit, --until:
// ErrOutsideHours) is the cause once the workers finished what they hold.
//
// Everything that reads the time or waits runs on RunOptions.Now and
// Sleep: the calling hours, the records' times, the wait outside calling
// hours, and pacing (the limiter, asked at RunOptions.Now; the pause after
// a 429; the backoff between attempts).
func Run(ctx context.Context, f *File, limiter *rate.Limiter, opts RunOptions) (*RunResult, error) {
	r := &runner{f: f, opts: opts}
	r.defaults()
	res := &RunResult{StartedAt: r.opts.Now()}
	r.res = res
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	r.hours = hours
	if opts.Rehearsal {
		r.realHours = hours
		if opts.Until.IsZero() {
			r.hours = &CallingHours{IgnoreCalledPerson: true}
		} else {
			// A rehearsal of a cron run: the campaign's window holds.
			rehearsed := *hours
			rehearsed.IgnoreCalledPerson = true
			r.hours = &rehearsed
		}
	}

	// r.run ends every wait; call starts run on a context that nothing
	// cancels, so that a call under way gets its answer recorded.
	run, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	defer context.AfterFunc(ctx, func() { stop(ErrInterrupted) })()
	r.run, r.callCtx = run, context.WithoutCancel(ctx)
	fail := func(err error) error {
		if err != nil {
			stop(err) // the run's cause, unless it has one already
		}
		return err
	}
	r.pace = &pacer{limiter: limiter, active: newActiveCalls(f.MaxActiveCalls(), f.Pace.CallLength)}
	workers := f.Pace.Concurrency
	if r.pace.active != nil {
		workers = min(workers, r.pace.active.max) // more would only wait for a slot
	}
	if opts.Deliveries != nil {
		r.follow = &follower{r: r, feed: opts.Deliveries}
		r.pace.poll = DefaultDeliveryPoll
	}
	jobs := make(chan job)
	var g errgroup.Group
	var end error // how the producer ended
	g.Go(func() error {
		defer close(jobs)
		switch end = r.produce(jobs); {
		case r.run.Err() != nil, end == nil, errors.Is(end, errLimit), errors.Is(end, ErrOutsideHours):
			return nil // stopped, or a clean end: the workers finish what they hold
		}
		return fail(end)
	})
	for range workers {
		g.Go(func() error {
			var w worker
			for j := range jobs {
				if err := r.work(&w, j); err != nil {
					return fail(err)
				}
			}
			return fail(w.stopRun(nil, r.opts.Logf))
		})
	}
	err = g.Wait()
	if ctx.Err() != nil {
		stop(ErrInterrupted) // a signal as the run ended
	}
	stop(end)
	res.FinishedAt = r.opts.Now()
	res.Notes = r.notes.lines()
	if w := r.follow.end(res.FinishedAt); w != "" {
		res.Notes = append(res.Notes, w)
	}
	// An error wins over the signal that may have come before it.
	if why := context.Cause(run); err == nil && (why == ErrInterrupted || why == ErrOutsideHours) {
		return res, why
	}
	return res, err
}

var errLimit = errors.New("limit reached")

// defaultRequestTimeout is RunOptions.RequestTimeout's default: the
// longest one call start's request lasts.
const defaultRequestTimeout = 60 * time.Second

type runner struct {
	f        *File
	opts     RunOptions
	run      context.Context // ends on a signal or at the first error; its cause says which
	callCtx  context.Context // the context of call starts: the run's values, no cancellation
	pace     *pacer          // what pace decides from
	follow   *follower       // the deliveries stored while the run goes on; nil: none
	notes    answerNotes
	slotWait sync.Once // logs the first wait for a call in progress to end
	hours    *CallingHours
	// realHours, in a rehearsal, are the hours a real run would keep: the
	// rehearsal counts the calls they would have held.
	realHours *CallingHours
	res       *RunResult
	mu        sync.Mutex // guards res counters
}

// stopped is the kind of stop the run is in, 0 while it goes on.
func (r *runner) stopped() stopKind {
	switch {
	case r.run.Err() == nil:
		return 0
	case context.Cause(r.run) == ErrInterrupted:
		return stopSignal
	}
	return stopFailed
}

func (r *runner) defaults() {
	o := &r.opts
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.RetryPause <= 0 {
		o.RetryPause = time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = cmp.Or(r.f.Pace.MaxRetryAfter, DefaultMaxRetryAfter)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Warnf == nil {
		o.Warnf = o.Logf
	}
	if o.Settled == nil {
		o.Settled = func(store.Status) {}
	}
	if o.Paused == nil {
		o.Paused = func(string, time.Time) {}
	}
}

func (r *runner) count(fn func(*RunResult)) {
	r.mu.Lock()
	fn(r.res)
	r.mu.Unlock()
}

// pending counts a contact left pending, provably not sent this run.
func (r *runner) pending() {
	r.count(func(res *RunResult) { res.Pending++ })
	r.opts.Settled(store.Pending)
}

// produce streams the contacts to call into jobs, each taken by a worker
// before the next is read. It returns errLimit or ErrOutsideHours for a
// clean early stop.
func (r *runner) produce(jobs chan<- job) error {
	cr := r.f.NewContactReader(r.opts.Suppress)
	if r.opts.seen != nil {
		cr.seen = r.opts.seen
	}
	cr.SheetNote = func(_ int, note string) { r.opts.Logf("%s", note) }
	cr.Now = r.opts.Now
	queued := 0
	// A column that says do not call only past the rows read before the
	// run: its rows were not called; say why, and what plan asks.
	defer func() {
		for i := range r.f.Sheets {
			for _, s := range cr.Signals(i) {
				if s.Use == "refused" {
					says, ways := r.f.refusedSignal(i, s)
					r.opts.Logf("%s: those rows were not called, and plan refuses the campaign until it does. %s", says, ways)
				}
			}
		}
	}()
	return cr.Each(r.run, func(c *Contact) error {
		if c.Status != ToCall {
			return nil
		}
		agent := r.f.Agents[c.Agent].Name
		key, _ := SettledKey(r.f, r.opts.State, c)
		prior := 0
		if st, ok := r.opts.State.Status(key); ok {
			prior = r.opts.State.Attempts(key)
			if settledFor(st, &r.opts) {
				r.count(func(res *RunResult) { res.Skipped++ })
				return nil
			}
		}
		if c.DoNotCall {
			// On the list when the run began: not a contact to call, as
			// one of a suppression file is not.
			r.count(func(res *RunResult) { res.DoNotCall++ })
			return nil
		}
		if r.opts.Limit > 0 && queued >= r.opts.Limit {
			return errLimit
		}
		ok, err := r.gate(c)
		if err != nil {
			return err
		}
		if !ok {
			r.count(func(res *RunResult) { res.Pending++; res.Deferred++ })
			r.opts.Settled(store.Pending)
			return nil
		}
		select {
		case jobs <- job{c: *c, agent: agent, prior: prior}:
			queued++
			return nil
		case <-r.run.Done():
			return r.run.Err()
		}
	})
}

// settledFor reports whether a contact whose journal status is st is
// settled for a run with opts: the run does not send it. The producer
// skips such a contact; a [Report] writes its row before the run ends.
func settledFor(st store.Status, opts *RunOptions) bool {
	switch {
	case st == store.Sent, st == store.Erased,
		st == store.Failed && !opts.RetryFailed,
		st == store.Uncertain && !opts.RetryUncertain:
		return true
	}
	return false
}

// gate decides whether a contact may be called now. With one campaign zone
// it waits for the campaign's window to open (or gives up past Until).
// It never waits for one contact's hours (the called person's, or its own
// zone's with timezone: contact): a contact outside them is left pending
// for a later run.
func (r *runner) gate(c *Contact) (bool, error) {
	if err := r.waitForWindow(); err != nil {
		return false, err
	}
	now := r.opts.Now()
	open := r.hours.Open(c, now)
	// Counted only when it is called: a rehearsal with --until keeps the
	// campaign's hours:, and leaves pending who is outside them.
	if open && r.realHours != nil && !r.realHours.Open(c, now) {
		r.count(func(res *RunResult) { res.WouldHaveWaited++ })
	}
	return open, nil
}

// waitForWindow waits until the campaign's own window (hours: in one
// zone) is open, as pace says, or returns ErrOutsideHours when that would
// be past Until.
func (r *runner) waitForWindow() error {
	for {
		now := r.opts.Now()
		_, wait, stop := pace(paceState{now: now, window: r.hours.Window, until: r.opts.Until})
		if wait == 0 || stop != nil {
			return stop
		}
		next := now.Add(wait)
		r.opts.Logf("outside the campaign's calling hours (hours: in %s): waiting until they open at %s", r.hours.Window.Loc, next.Format(time.RFC3339))
		r.opts.Paused(PauseHours, next)
		if err := r.opts.Sleep(r.run, wait); err != nil {
			return err
		}
	}
}

// inHours reports whether c may be called now: the called person's hours
// and the campaign's.
func (r *runner) inHours(c *Contact) bool {
	return r.hours.Open(c, r.opts.Now())
}

// worker is one worker's state between contacts.
type worker struct {
	pending store.Queued // the last outcome this worker queued
	last    store.Record // that outcome
}

// flush waits until the worker's last outcome is durable.
func (w *worker) flush() error {
	err := w.pending.Wait()
	w.pending = store.Queued{}
	return err
}

// lost tells the person about the worker's last queued outcome after a
// journal failure: it may not be on disk, and the contact would then read
// as uncertain although the service answered.
func (w *worker) lost(logf func(string, ...any)) {
	if w.last.Type == "" {
		return
	}
	r := w.last
	logf("the journal failed: the outcome of %s (sheet %s row %d) may not be on disk; it was %s (HTTP %d). If the report shows it uncertain, do not re-send it with --retry-uncertain without checking",
		r.Phone, r.Sheet, r.Row, r.Status, r.HTTP)
}

// work calls one contact, retrying only what provably did not reach the
// service.
func (r *runner) work(w *worker, j job) error {
	c := &j.c
	ep := r.opts.Endpoints[c.Agent]
	form := c.EncodeForm()
	base := r.firstIntent(&j)
	tokenTries := 0 // tries in a row that got no access token
	lateTries := 0  // intents in a row written again because their call start would have left late
	for attempt := j.prior + 1; ; attempt++ {
		rec := base
		rec.Type, rec.Attempt = store.TypeIntent, attempt
		var st start
		if ok, err := r.intend(w, &st, c, rec); !ok {
			return err
		}
		// The intent is on disk. Whatever stopped the contact from being
		// sent while it was written is written down as skipped: provably
		// not sent, so that it does not read as uncertain.
		st.written = true
		stop, err := r.mayStillSend(&st, c)
		var resp *apiclient.CallResponse
		if stop == 0 {
			resp, err = r.send(&st, c, ep, form)
			switch {
			case errors.Is(err, errHoursClosed):
				stop, err = stopHours, nil
			case errors.Is(err, errSendLate):
				stop, err = stopLate, nil
			case errors.Is(err, errOnDoNotCall):
				stop, err = stopDoNotCall, nil
			}
			if lre := (*listReadError)(nil); errors.As(err, &lre) {
				stop, err = stopFailed, lre.Err
			}
		}
		if stop != 0 {
			r.pace.release(st.slot)
			switch stop {
			case stopLate:
				again, err := r.again(w, c, rec, &lateTries)
				if !again {
					return err
				}
				attempt-- // a new intent, under the same attempt number
				continue
			case stopPaused:
				// Its call start counts from when the intent was written, and
				// a pause may last hours: give the start back, wait the pause
				// out, and write the intent again, counted from then.
				if err := r.skipRecord(w, rec, stop); err != nil {
					return err
				}
				attempt-- // a new intent, under the same attempt number
				continue
			}
			if err != nil {
				return errors.Join(err, r.skip(w, c, rec, stop))
			}
			return r.skip(w, c, rec, stop)
		}
		if apiclient.NoToken(err) {
			// Not sent: no access token could be had. The run's problem, not
			// the contact's: see noToken.
			r.pace.release(st.slot)
			again, err := r.noToken(w, c, rec, err, &tokenTries)
			if !again {
				return err
			}
			attempt-- // a new intent, under the same attempt number
			continue
		}
		if attempt == j.prior+1 {
			r.count(func(res *RunResult) { res.Started++ })
		}
		rec, wait, callLater := r.outcome(rec, st.slot, resp, err, attempt-j.prior)
		// The outcome is queued, not waited for: this worker's next intent
		// (or its flush) waits for it, since the journal commits in order.
		// Lost in a crash, it leaves the contact uncertain: never called
		// twice. Only the intent must be on disk before a call starts.
		durable, jerr := r.opts.Journal.Enqueue(rec)
		if jerr != nil {
			return fmt.Errorf("writing the journal after calling %s (sheet %s row %d; its outcome, %s, is recorded as uncertain): %w", c.Phone, rec.Sheet, c.Row, rec.Status, jerr)
		}
		w.pending, w.last = durable, rec
		if again, err := r.settle(w, c, &rec, err, attempt-j.prior, wait, callLater); !again {
			return err
		}
	}
}

// outcome is the outcome record of intent rec, the tries-th this run,
// whose call start was answered resp or err; the slot is given back
// unless the call may be placed. A retryable one says how long to wait
// before the next attempt, or callLater (a Retry-After past
// MaxRetryAfter), and an answer naming a limit pauses every call start.
func (r *runner) outcome(rec store.Record, slot int, resp *apiclient.CallResponse, err error, tries int) (_ store.Record, wait, callLater time.Duration) {
	rec.Type, rec.At = store.TypeOutcome, r.opts.Now()
	switch apiclient.Classify(err) {
	case apiclient.Sent:
		r.pace.started(slot, r.opts.Now(), resp.CallID)
		rec.Status, rec.HTTP, rec.Body, rec.Reason, rec.CallID = store.OutcomeSent, resp.StatusCode, resp.Body, resp.Cut, resp.CallID
		if resp.Cut != "" {
			r.notes.add("were answered 2xx and then their answer was cut off: the calls are placed, recorded sent, and their reason says so")
		}
	case apiclient.Failed:
		r.pace.release(slot)
		rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeFailed, apiclient.StatusCode(err), refusedReason(err), errorBody(err)
		if s := rec.HTTP; s >= 200 && s < 300 {
			r.notes.add(fmt.Sprintf("were answered %d %s with a body that says error (%s): the service refused them, recorded failed", s, http.StatusText(s), serviceSaid(err)))
		}
	case apiclient.Uncertain:
		r.pace.started(slot, r.opts.Now(), "")
		rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeUncertain, apiclient.StatusCode(err), uncertainReason(err), errorBody(err)
		var e *apiclient.Error
		if s := rec.HTTP; s >= 200 && s < 300 && errors.As(err, &e) && e.Mixed {
			r.notes.add(fmt.Sprintf("were answered %d %s with a body that says the call started and also error (%s): the calls may have started, so they are uncertain; check them before --retry-uncertain", s, http.StatusText(s), serviceSaid(err)))
		} else if s >= 200 && s < 300 {
			r.notes.add(fmt.Sprintf("were answered %d %s with a body that is not the service's JSON (%s): the calls may have started, so they are uncertain; check them before --retry-uncertain", s, http.StatusText(s), apiclient.Excerpt(rec.Body, 60)))
		}
	default: // Retryable: provably not sent
		r.pace.release(slot)
		rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeRetry, apiclient.StatusCode(err), retryReason(err), errorBody(err)
		wait = r.backoff(tries)
		if ra := apiclient.RetryAfter(err); ra > r.opts.MaxRetryAfter {
			callLater = ra
		} else if ra > 0 {
			wait = ra
		}
		if callLater == 0 && apiclient.Limited(err) {
			// The service is saying "all of you, slow down": hold the
			// pool back now, not after the journal write.
			r.pause(wait, answered(err))
		}
	}
	return rec, wait, callLater
}

// settle counts the attempt whose outcome rec is queued (see outcome):
// settled, or pending when the run ends (callLater), its tries ran out or
// a signal came, or to try again (again) once wait is over.
func (r *runner) settle(w *worker, c *Contact, rec *store.Record, err error, tries int, wait, callLater time.Duration) (again bool, _ error) {
	switch {
	case rec.Status != store.OutcomeRetry:
		r.count(func(res *RunResult) {
			switch rec.Status {
			case store.OutcomeSent:
				res.Sent++
			case store.OutcomeFailed:
				res.Failed++
			case store.OutcomeUncertain:
				res.Uncertain++
			}
		})
		r.opts.Settled(store.Status(rec.Status))
		r.pace.settled(rec, serviceSaid(err))
		return false, nil
	case callLater > 0:
		r.pending()
		err := r.callLater(err, callLater)
		r.opts.Logf("%v", err)
		return false, w.stopRun(err, r.opts.Logf)
	case tries >= r.opts.MaxAttempts || r.stopped() == stopSignal:
		r.pending()
		r.opts.Logf("%s (sheet %s row %d) left pending after %d attempts: %s", c.Phone, rec.Sheet, c.Row, tries, rec.Reason)
		if r.stopped() != stopSignal {
			r.pace.settled(rec, "")
		}
		return false, nil
	}
	if wait > pauseLogOver && !apiclient.Limited(err) {
		r.opts.Logf("%s (sheet %s row %d): %s; trying it again in %s", c.Phone, rec.Sheet, c.Row, answered(err), wait.Round(time.Millisecond))
	}
	if err := r.opts.Sleep(r.run, wait); err != nil {
		r.pending()
		return false, nil
	}
	return true, nil
}

// send posts c's call start, whose intent st is on disk, to endpoint ep.
// Once the intent is on disk the request runs to its answer, even if
// another worker or the producer fails meanwhile: cut off, it would only
// turn an answer into an uncertain outcome. Having the token may take a
// while (a refresh, another process's refresh, a 401 and a refresh): the
// hours are checked again right before the request leaves
// (errHoursClosed), and whether it would leave more than sendLate after
// the intent its start is counted from (errSendLate), and before them the
// do-not-call list (errOnDoNotCall), which listen may have added the
// number to meanwhile.
func (r *runner) send(st *start, c *Contact, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	ctx, cancel := context.WithTimeout(r.callCtx, r.opts.RequestTimeout)
	defer cancel()
	ctx = apiclient.WithSendCheck(ctx, func() error {
		// An opt-out listen stored while the token was had: the list is
		// read again (one stat when nothing was added), first, as the
		// read may take a while.
		on, err := r.onList(r.listBeforeSend(st), c)
		switch {
		case err != nil:
			return &listReadError{err}
		case on:
			return errOnDoNotCall
		}
		if !r.inHours(c) {
			return errHoursClosed
		}
		if r.late(st) {
			return errSendLate
		}
		return nil
	})
	return r.opts.Calls.StartCallForm(ctx, ep, form)
}

// errOnDoNotCall is what the send check of a call start says when its
// number went on the do-not-call list while its token was had.
var errOnDoNotCall = errors.New("the number went on the do-not-call list while the access token was had")

// listReadError is what the send check of a call start says when the
// do-not-call list could not be read (or an opt-out is held): the run
// stops with Err, the call not sent.
type listReadError struct{ Err error }

func (e *listReadError) Error() string { return e.Err.Error() }

// errHoursClosed is what the send check of a call start says when the
// called person's hours closed while its token was had.
var errHoursClosed = errors.New("the calling hours closed while the access token was had")

// mayStillSend decides, just before a call start whose intent is on
// disk, whether it may still be sent; if not, it returns which kind of
// stop keeps it, and the error that stops the run, if any. A pause that
// began while the intent was written is stopPaused: not waited out here,
// where the call start counts from the intent, but before a new intent.
func (r *runner) mayStillSend(st *start, c *Contact) (stopKind, error) {
	ok, err := r.await(st, c)
	switch {
	case err != nil:
		return stopFailed, err
	case st.paused && r.run.Err() == nil:
		return stopPaused, nil
	case !ok || r.run.Err() != nil:
		return cmp.Or(r.stopped(), stopFailed), nil
	}
	on, err := r.onDoNotCall(c)
	switch {
	case err != nil:
		return stopFailed, err
	case on:
		return stopDoNotCall, nil
	}
	if r.opts.Clock != nil {
		if err := r.opts.Clock(); err != nil {
			return stopFailed, err
		}
	}
	if !r.inHours(c) {
		// Last, after the reads above, which may take a while (a list
		// another process appended to, a database slow to answer).
		return stopHours, nil
	}
	if r.late(st) {
		return stopLate, nil
	}
	return 0, nil
}

// late reports whether call start st, leaving now, would leave more than
// sendLate after its intent began to be written: its start would then
// count in contact pressure from too long before the call.
func (r *runner) late(st *start) bool {
	return r.opts.Now().Sub(st.intended) > sendLate
}

// errSendLate is what the send check of a call start says when having its
// token took so long that it would leave late ([runner.late]).
var errSendLate = errors.New("the call start would leave too long after its intent, while the access token was had")

// again closes intent rec, whose call start would have left late
// (stopLate), with a skipped outcome, which gives its start back, and
// says whether its contact is to get a new intent, counted from then. After
// maxLate such intents in a row the contact is left pending.
func (r *runner) again(w *worker, c *Contact, rec store.Record, tries *int) (bool, error) {
	if err := r.skipRecord(w, rec, stopLate); err != nil {
		return false, err
	}
	if *tries++; *tries >= maxLate {
		r.pending()
		r.opts.Logf("%s (sheet %s row %d) left pending: its call start would have left more than %s after its intent %d times in a row (a slow token refresh, a slow read of the do-not-call list?)", c.Phone, rec.Sheet, c.Row, sendLate, *tries)
		return false, nil
	}
	return true, nil
}

// onDoNotCall reads RunOptions.DoNotCall, if set, for c's number, right
// before its call start.
func (r *runner) onDoNotCall(c *Contact) (bool, error) {
	return r.onList(r.opts.DoNotCall, c)
}

// listAgainAfter is how long after its intent was written a call start
// reads RunOptions.DoNotCallLate again in its send check.
const listAgainAfter = time.Second

// listBeforeSend is the do-not-call list the send check of call start st
// reads: RunOptions.DoNotCall, else DoNotCallLate once the start has
// waited listAgainAfter since its intent (whose write read the list);
// nil: none.
func (r *runner) listBeforeSend(st *start) store.DoNotCallList {
	if r.opts.DoNotCall != nil {
		return r.opts.DoNotCall
	}
	if r.opts.DoNotCallLate != nil && r.opts.Now().Sub(st.intended) > listAgainAfter {
		return r.opts.DoNotCallLate
	}
	return nil
}

// onList reads list, if set, for c's number.
func (r *runner) onList(list store.DoNotCallList, c *Contact) (bool, error) {
	if list == nil {
		return false, nil
	}
	on, err := list.Has(r.callCtx, c.Phone)
	if held := (*store.OptOutHeldError)(nil); errors.As(err, &held) {
		return false, held // the run stops starting calls, saying why
	}
	if err != nil {
		return false, fmt.Errorf("reading the do-not-call list before calling %s (sheet %s row %d; not called): %w", c.Phone, r.f.Sheets[c.Sheet].File, c.Row, err)
	}
	return on, nil
}

// skip closes an intent that will not be sent with a skipped outcome: the
// contact stays pending.
func (r *runner) skip(w *worker, c *Contact, rec store.Record, stop stopKind) error {
	if err := r.skipRecord(w, rec, stop); err != nil {
		return err
	}
	switch stop {
	case stopHours:
		r.leftPending(c)
	case stopDoNotCall:
		r.doNotCall(c)
	default:
		r.pending()
	}
	return nil
}

// skipRecord queues the skipped outcome of intent rec, not sent for stop,
// which gives its call start back.
func (r *runner) skipRecord(w *worker, rec store.Record, stop stopKind) error {
	rec.Type, rec.At, rec.Status, rec.Reason = store.TypeOutcome, r.opts.Now(), store.OutcomeSkipped, stop.why()
	durable, err := r.opts.Journal.Enqueue(rec)
	if err != nil {
		return fmt.Errorf("writing the journal after not calling %s (sheet %s row %d; it reads as uncertain but was not sent): %w", rec.Phone, rec.Sheet, rec.Row, err)
	}
	w.pending, w.last = durable, rec
	return nil
}

// intend waits for what pace says of the contact's call start st (await)
// and writes the intent rec of its next attempt, and waits until it is
// durable; st then holds its slot of pace.max_active_calls. ok is false if the contact is not to be sent now, with err nil when
// that is a clean stop (a signal, another worker's error, the calling
// window closing: the contact stays pending, nothing was written, and no
// slot is held).
func (r *runner) intend(w *worker, st *start, c *Contact, rec store.Record) (ok bool, err error) {
	st.read = r.follow == nil
	if ok, err := r.await(st, c); !ok || r.run.Err() != nil {
		r.pace.release(st.slot)
		if err != nil { // the breaker is open: the contact stays pending
			r.pending()
			return false, w.stopRun(err, r.opts.Logf)
		}
		return false, nil // a signal, or another worker failed: its error is the run's
	}
	if !r.inHours(c) {
		// The window closed while the contact waited for its turn or for a
		// retry: sending now would phone someone outside calling hours.
		// Nothing was sent; it stays pending for a later run.
		r.pace.release(st.slot)
		r.leftPending(c)
		return false, nil
	}
	rec.At = r.opts.Now()
	st.intended = rec.At
	if err := r.opts.Journal.Append(rec); err != nil {
		r.pace.release(st.slot)
		if errors.Is(err, store.ErrDoNotCall) {
			// The intent was not written: nothing to close.
			r.doNotCall(c)
			return false, nil
		}
		if held := (*store.HeldError)(nil); errors.As(err, &held) {
			r.held(c, held)
			return false, nil
		}
		if held := (*store.OptOutHeldError)(nil); errors.As(err, &held) {
			// No call starts while an opt-out is held: the run stops, the
			// contact pending (its intent was not written).
			r.pending()
			return false, held
		}
		if foreign := (*store.ForeignStartError)(nil); errors.As(err, &foreign) {
			// The store's call starts say this campaign called the person
			// from a journal that is not this one: this journal does not
			// know whom the campaign called. The run stops, the contact
			// pending (its intent was not written).
			r.pending()
			return false, foreign
		}
		w.lost(r.opts.Logf)
		return false, r.notSent(c, 0, err)
	}
	return true, nil
}

// await waits on the run's clock for what pace says of c's call start st
// (pacer.next) until it may go (ok), the run stops, or err stops it (the
// breaker is open). The first wait for a slot is logged, once.
func (r *runner) await(st *start, c *Contact) (ok bool, err error) {
	for r.run.Err() == nil {
		now := r.opts.Now()
		h, wait, stop := r.pace.next(now, st, c.Phone, r.opts.Agents[c.Agent].AgentID)
		switch {
		case stop != nil:
			return false, stop
		case h == holdNone:
			return true, nil
		case h == holdPause && st.written:
			st.paused = true
			return false, nil
		case h == needRead: // a call whose end was delivered is no longer in progress
			r.follow.callStarting(now)
			st.read = true
			continue
		case h == holdSlot:
			r.slotWait.Do(func() {
				ends := ""
				if r.follow != nil {
					ends = ", or its end to be delivered"
				}
				r.opts.Logf("%d calls in progress (pace.max_active_calls): each call start waits for one to end, %s after it started (pace.call_length)%s", r.pace.active.max, r.pace.active.length, ends)
			})
		}
		_ = r.opts.Sleep(r.run, wait) // cut short when the run stops, which the loop sees
		if h == holdTurn {
			st.turn = now // slept, the limiter's delay is the turn, as rate.Limiter.Wait has it
		}
	}
	return false, nil
}

// doNotCall counts a contact not called because its number went on the
// do-not-call list during the run.
func (r *runner) doNotCall(c *Contact) {
	r.count(func(res *RunResult) { res.DoNotCall++ })
	r.opts.Settled(store.Suppressed)
	r.opts.Logf("%s (sheet %s row %d) not called: %s (added during the run)", c.Phone, r.f.Sheets[c.Sheet].File, c.Row, ReasonDoNotCall)
}

// held counts a contact that contact pressure held back: it stays
// pending, to be called from h.Until.
func (r *runner) held(c *Contact, h *store.HeldError) {
	r.count(func(res *RunResult) {
		res.Pending++
		res.Held++
		if res.HeldUntil.IsZero() || h.Until.Before(res.HeldUntil) {
			res.HeldUntil = h.Until
		}
	})
	r.opts.Settled(store.Pending)
	r.opts.Logf("%s (sheet %s row %d) left pending: %v", c.Phone, r.f.Sheets[c.Sheet].File, c.Row, h)
}

// leftPending counts a contact that the calling window closed on before
// it could be sent.
func (r *runner) leftPending(c *Contact) {
	deferred := r.hours.Window == nil || r.hours.Window.Contact || !r.hours.PersonOpen(c, r.opts.Now())
	r.count(func(res *RunResult) {
		res.Pending++
		if deferred {
			res.Deferred++
		}
	})
	r.opts.Settled(store.Pending)
	r.opts.Logf("%s (sheet %s row %d) left pending: the calling window closed before it could be sent", c.Phone, r.f.Sheets[c.Sheet].File, c.Row)
}

// firstIntent is the intent record of j's first attempt this run, with
// no time; work builds each attempt's records on it.
func (r *runner) firstIntent(j *job) store.Record {
	c := &j.c
	return store.Record{
		Type: store.TypeIntent, Agent: j.agent, Phone: c.Phone, N: c.N, Attempt: j.prior + 1,
		AgentID: r.opts.Agents[c.Agent].AgentID, Sheet: r.f.Sheets[c.Sheet].File, Row: c.Row,
	}
}

// notSent is the error of a journal write that failed before c (and
// more other contacts) could be called: none of them was.
func (r *runner) notSent(c *Contact, more int, err error) error {
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" and %d more", more)
	}
	return fmt.Errorf("writing the journal before calling %s (sheet %s row %d)%s; nothing was sent: %w", c.Phone, r.f.Sheets[c.Sheet].File, c.Row, also, err)
}

func (r *runner) backoff(n int) time.Duration {
	return jitter(min(r.opts.RetryPause<<min(n-1, 10), r.opts.MaxRetryAfter))
}

// pause holds every call start back for d from now, because of cause
// (what the service answered). A pause longer than pauseLogOver that
// holds them longer than before is logged at once.
func (r *runner) pause(d time.Duration, cause string) {
	until, longer := r.pace.pause(r.opts.Now(), d)
	if longer {
		r.opts.Paused(PauseService, until)
	}
	if longer && d > pauseLogOver {
		r.opts.Logf("%s: holding every call start for %s, until %s", cause, d.Round(time.Millisecond), until.Format(time.RFC3339))
	}
}

// callLater is the error that ends a run whose service answered err and
// asked to be called again in ra, longer than MaxRetryAfter.
func (r *runner) callLater(err error, ra time.Duration) error {
	at := r.opts.Now().Add(ra)
	r.count(func(res *RunResult) {
		if res.ResumeAt.IsZero() || at.Before(res.ResumeAt) {
			res.ResumeAt = at
		}
	})
	return fmt.Errorf("%w: %s and asked to be called again in %s, at %s; that is longer than pace.max_retry_after (%s), so the run stopped at once. The contacts not called were not placed and stay pending: run again after %s",
		ErrCallLater, answered(err), ra.Round(time.Second), at.Format(time.RFC3339), r.opts.MaxRetryAfter, at.Format(time.RFC3339))
}

func errorBody(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) {
		return e.Body
	}
	return ""
}

// serviceSaid is what the service said of err: the message of its JSON
// body, else the excerpt of its body.
func serviceSaid(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) {
		return cmp.Or(e.Message, e.Body)
	}
	return ""
}

// answered is "the service answered 403 Forbidden (its message)", for
// logs and errors.
func answered(err error) string {
	s := apiclient.StatusCode(err)
	if s == 0 {
		return fmt.Sprint(err)
	}
	msg := fmt.Sprintf("the service answered %d %s", s, http.StatusText(s))
	if said := serviceSaid(err); said != "" {
		msg += " (" + apiclient.Excerpt(said, 120) + ")"
	}
	return msg
}

// refusedReason is the reason of a failed contact: the service refused
// its call.
func refusedReason(err error) string {
	if s := apiclient.StatusCode(err); s >= 200 && s < 300 {
		return fmt.Sprintf("the service answered %d %s, but its body says error: it refused the call", s, http.StatusText(s))
	}
	return "the service refused the call"
}

func uncertainReason(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) && e.NotJSON {
		return fmt.Sprintf("the service answered %d %s with a body that is not its JSON (a page of a proxy?); the call may have started, so it is not sent again automatically", e.StatusCode, http.StatusText(e.StatusCode))
	}
	if errors.As(err, &e) && e.Mixed {
		return fmt.Sprintf("the service answered %d %s with a body that says the call started and also error (%s); the call may have started, so it is not sent again automatically", e.StatusCode, http.StatusText(e.StatusCode), apiclient.Excerpt(cmp.Or(e.Message, e.Body), 120))
	}
	if errors.As(err, &e) && e.UnknownStatus != "" {
		return fmt.Sprintf("the service answered %d %s with the status %q, which callrun knows neither as success nor as refusal; the call may have started, so it is not sent again automatically", e.StatusCode, http.StatusText(e.StatusCode), e.UnknownStatus)
	}
	if s := apiclient.StatusCode(err); s != 0 {
		return fmt.Sprintf("the service answered %d %s; the call may have started, so it is not sent again automatically", s, http.StatusText(s))
	}
	return fmt.Sprintf("no answer after the request was sent (%v); the call may have started, so it is not sent again automatically", err)
}

func retryReason(err error) string {
	if s := apiclient.StatusCode(err); s != 0 && s != http.StatusTooManyRequests && apiclient.Limited(err) {
		return fmt.Sprintf("the service answered %d %s naming a limit (%s) before acting", s, http.StatusText(s), apiclient.Excerpt(serviceSaid(err), 120))
	}
	if s := apiclient.StatusCode(err); s != 0 {
		return fmt.Sprintf("the service answered %d %s before acting", s, http.StatusText(s))
	}
	return fmt.Sprintf("the request never left this machine: %v", err)
}
