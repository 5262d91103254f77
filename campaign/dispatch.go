package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/phone"
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
	Norm      *phone.Normalizer
	Suppress  *Suppression
	// DoNotCall, if set, is the store's do-not-call list in a file, read
	// again right before each call start, after its intent is on disk
	// (one stat when nothing was added). The journal checks the list too,
	// as it writes each intent (JournalOptions.DoNotCall); with
	// PostgreSQL that check, in the intent's own INSERT, is the one, and
	// DoNotCall is nil.
	DoNotCall store.DoNotCallList

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
	// so when none comes for DeliveryWait after a call start (its first,
	// or the first after the last delivery). nil:
	// the run follows none. DeliveryPoll is how often it is read at most
	// (default DefaultDeliveryPoll); DeliveryWait defaults to
	// DefaultDeliveryWait.
	Deliveries   DeliveryFeed
	DeliveryPoll time.Duration
	DeliveryWait time.Duration

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
)

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
	}
	return "not sent: the calling window closed first"
}

// Run calls every contact of the campaign that is to be called: a producer
// streams contacts into a channel that Pace.Concurrency workers in an
// errgroup range over, and one shared rate limiter paces call starts
// across all workers and agents.
//
// Each worker, for each contact: waits its turn (the pool-wide pause after
// a 429, then the limiter), checks the calling hours, writes the intent to
// the journal and waits until it is durable (the journal's group commit
// puts the intents of workers that write at once into one fsync), sends
// the call start, and queues the outcome. Only attempts that provably did
// not reach the service (never written, 429, 503) are tried again;
// anything else that is not a clear answer is uncertain, and uncertain
// contacts are sent again only with RetryUncertain.
//
// So at most Pace.Concurrency contacts have an intent on disk and no
// outcome: a crash or kill -9 leaves at most that many uncertain, the
// calls in flight. A signal stops the producer; workers finish the calls
// they have started and start no others (a contact whose intent is on
// disk but whose call has not started is closed with a skipped outcome
// and stays pending).
//
// Everything that reads the time or waits runs on RunOptions.Now and
// Sleep: the calling hours, the records' times, the wait outside calling
// hours, and pacing (the limiter, asked at RunOptions.Now; the pause after
// a 429; the backoff between attempts).
func Run(ctx context.Context, f *File, limiter *rate.Limiter, opts RunOptions) (*RunResult, error) {
	r := &runner{f: f, opts: opts, limiter: limiter}
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

	// Workers keep going on a context that a signal does not cancel, so a
	// call already under way gets its answer recorded; they stop taking new
	// work when ctx ends.
	g, gctx := errgroup.WithContext(context.WithoutCancel(ctx))
	r.callCtx = context.WithoutCancel(gctx)
	// Waits between call starts end on a signal or when the run fails.
	waitCtx, stopWaits := eitherDone(ctx, gctx)
	defer stopWaits()
	r.waitCtx = waitCtx
	workers := f.Pace.Concurrency
	if k := f.MaxActiveCalls(); k > 0 {
		r.active = newActiveCalls(k, f.Pace.CallLength)
		workers = min(workers, k) // more would only wait for a slot
	}
	if opts.Deliveries != nil {
		r.follow = &follower{r: r, feed: opts.Deliveries, every: r.opts.DeliveryPoll, wait: r.opts.DeliveryWait}
	}
	jobs := make(chan job)
	var producerErr error
	g.Go(func() error {
		defer close(jobs)
		producerErr = r.produce(ctx, gctx, jobs)
		if errors.Is(producerErr, ErrOutsideHours) || errors.Is(producerErr, errLimit) || (producerErr != nil && ctx.Err() != nil) {
			return nil // a clean stop: workers finish what they hold
		}
		return producerErr
	})
	for range workers {
		g.Go(func() error {
			var w worker
			for j := range jobs {
				if err := r.work(ctx, gctx, &w, j); err != nil {
					return err
				}
			}
			if err := w.flush(); err != nil {
				w.lost(r.opts.Logf)
				return err
			}
			return nil
		})
	}
	err = g.Wait()
	res.FinishedAt = r.opts.Now()
	res.Notes = r.notes.lines()
	if w := r.follow.end(res.FinishedAt); w != "" {
		res.Notes = append(res.Notes, w)
	}
	switch {
	case err != nil:
		return res, err
	case errors.Is(producerErr, ErrOutsideHours):
		return res, ErrOutsideHours
	case ctx.Err() != nil || r.interrupted.Load():
		return res, ErrInterrupted
	}
	return res, nil
}

var errLimit = errors.New("limit reached")

// defaultRequestTimeout is RunOptions.RequestTimeout's default: the
// longest one call start's request lasts.
const defaultRequestTimeout = 60 * time.Second

type runner struct {
	f        *File
	opts     RunOptions
	limiter  *rate.Limiter
	callCtx  context.Context // the context of call starts: the group's values, no cancellation
	waitCtx  context.Context // the context of waits: ends on a signal or when the run fails
	active   *activeCalls    // pace.max_active_calls; nil: no limit
	follow   *follower       // the deliveries stored while the run goes on; nil: none
	notes    answerNotes
	slotWait sync.Once // logs the first wait for a call in progress to end
	hours    *CallingHours
	// realHours, in a rehearsal, are the hours a real run would keep: the
	// rehearsal counts the calls they would have held.
	realHours *CallingHours
	res       *RunResult
	mu        sync.Mutex // guards res counters

	pauseMu     sync.Mutex
	pauseUntil  time.Time // a 429 holds the whole pool back until then
	interrupted atomic.Bool
	brk         breaker
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
	if o.DeliveryPoll <= 0 {
		o.DeliveryPoll = DefaultDeliveryPoll
	}
	if o.DeliveryWait <= 0 {
		o.DeliveryWait = DefaultDeliveryWait
	}
}

func (r *runner) count(fn func(*RunResult)) {
	r.mu.Lock()
	fn(r.res)
	r.mu.Unlock()
}

// produce streams the contacts to call into jobs, each taken by a worker
// before the next is read. It returns errLimit or ErrOutsideHours for a
// clean early stop.
func (r *runner) produce(ctx, gctx context.Context, jobs chan<- job) error {
	cr := r.f.NewContactReader(r.opts.Norm, r.opts.Suppress)
	if r.opts.seen != nil {
		cr.seen = r.opts.seen
	}
	cr.SheetNote = func(_ int, note string) { r.opts.Logf("%s", note) }
	cr.Now = r.opts.Now
	// Waiting for the calling window ends on a signal, or when the run
	// failed: a failed run must not wait for the window to open.
	waitCtx, stop := eitherDone(ctx, gctx)
	defer stop()
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
	return cr.Each(ctx, func(c *Contact) error {
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
		ok, err := r.gate(waitCtx, c)
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
		case <-ctx.Done():
			return ctx.Err()
		case <-gctx.Done():
			return gctx.Err()
		}
	})
}

// settledFor reports whether a contact whose journal status is st is
// settled for a run with opts: the run does not send it. The producer
// skips such a contact; a [Report] writes its row before the run ends.
func settledFor(st store.Status, opts *RunOptions) bool {
	switch {
	case st == store.Sent,
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
func (r *runner) gate(ctx context.Context, c *Contact) (bool, error) {
	if err := r.waitForWindow(ctx); err != nil {
		return false, err
	}
	now := r.opts.Now()
	if r.realHours != nil && !r.realHours.Open(c, now) {
		r.count(func(res *RunResult) { res.WouldHaveWaited++ })
	}
	return r.hours.Open(c, now), nil
}

// waitForWindow waits until the campaign's own window (hours: in one
// zone) is open, or returns ErrOutsideHours when that would be past Until.
func (r *runner) waitForWindow(ctx context.Context) error {
	w := r.hours.Window
	if w == nil || w.Contact {
		return nil
	}
	for {
		now := r.opts.Now()
		if w.OpenIn(now, w.Loc) {
			return nil
		}
		next := w.NextChange(now, w.Loc)
		if next.IsZero() {
			return fmt.Errorf("the calling window never opens: check hours: in the campaign file")
		}
		if !r.opts.Until.IsZero() && next.After(r.opts.Until) {
			return ErrOutsideHours
		}
		r.opts.Logf("outside the campaign's calling hours (hours: in %s): waiting until they open at %s", w.Loc, next.Format(time.RFC3339))
		r.opts.Paused(PauseHours, next)
		if err := r.opts.Sleep(ctx, next.Sub(now)); err != nil {
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
func (r *runner) work(ctx, gctx context.Context, w *worker, j job) error {
	c := &j.c
	ep := r.opts.Endpoints[c.Agent]
	form := c.EncodeForm()
	base := r.firstIntent(&j)
	sheet := base.Sheet
	tokenTries := 0 // tries in a row that got no access token
	for attempt := j.prior + 1; ; attempt++ {
		rec := base
		rec.Type, rec.Attempt = store.TypeIntent, attempt
		if err := r.brk.open(); err != nil {
			return r.breakOff(w, err)
		}
		slot, ok, err := r.intend(ctx, gctx, w, c, rec)
		if !ok {
			return err
		}
		// The intent is on disk. Whatever stopped the contact from being
		// sent while it was written is written down as skipped: provably
		// not sent, so that it does not read as uncertain.
		if stop := r.mayStillSend(ctx, gctx, c); stop != 0 {
			r.active.release(slot)
			return r.skip(w, c, rec, stop)
		}
		if on, err := r.onDoNotCall(c); on || err != nil {
			r.active.release(slot)
			if err != nil {
				return errors.Join(err, r.skip(w, c, rec, stopFailed))
			}
			return r.skip(w, c, rec, stopDoNotCall)
		}
		// Once the intent is on disk the request runs to its answer, even if
		// another worker or the producer fails meanwhile: cut off, it would
		// only turn an answer into an uncertain outcome.
		rctx, cancel := context.WithTimeout(r.callCtx, r.opts.RequestTimeout)
		resp, err := r.opts.Calls.StartCallForm(rctx, ep, form)
		cancel()
		if apiclient.NoToken(err) {
			// Not sent: no access token could be had. The run's problem, not
			// the contact's: see noToken.
			r.active.release(slot)
			again, err := r.noToken(ctx, gctx, w, c, rec, err, &tokenTries)
			if !again {
				return err
			}
			attempt-- // a new intent, under the same attempt number
			continue
		}
		if attempt == j.prior+1 {
			r.count(func(res *RunResult) { res.Started++ })
		}
		outcome := apiclient.Classify(err)
		rec.Type, rec.At = store.TypeOutcome, r.opts.Now()
		var settled store.Status
		var wait time.Duration      // before the next attempt, when retryable
		var callLater time.Duration // a Retry-After past MaxRetryAfter: the run ends
		switch outcome {
		case apiclient.Sent:
			r.active.started(slot, r.opts.Now())
			rec.Status, rec.HTTP, rec.Body, rec.Reason = store.OutcomeSent, resp.StatusCode, resp.Body, resp.Cut
			settled = store.Sent
			if resp.Cut != "" {
				r.notes.add("were answered 2xx and then their answer was cut off: the calls are placed, recorded sent, and their reason says so")
			}
		case apiclient.Failed:
			r.active.release(slot)
			rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeFailed, apiclient.StatusCode(err), refusedReason(err), errorBody(err)
			settled = store.Failed
			if s := rec.HTTP; s >= 200 && s < 300 {
				r.notes.add(fmt.Sprintf("were answered %d %s with a body that says error (%s): the service refused them, recorded failed", s, http.StatusText(s), serviceSaid(err)))
			}
		case apiclient.Uncertain:
			r.active.started(slot, r.opts.Now())
			rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeUncertain, apiclient.StatusCode(err), uncertainReason(err), errorBody(err)
			settled = store.Uncertain
			if s := rec.HTTP; s >= 200 && s < 300 {
				r.notes.add(fmt.Sprintf("were answered %d %s with a body that is not the service's JSON (%s): the calls may have started, so they are uncertain; check them before --retry-uncertain", s, http.StatusText(s), apiclient.Excerpt(rec.Body, 60)))
			}
		default: // Retryable: provably not sent
			r.active.release(slot)
			rec.Status, rec.HTTP, rec.Reason, rec.Body = store.OutcomeRetry, apiclient.StatusCode(err), retryReason(err), errorBody(err)
			wait = r.backoff(attempt - j.prior)
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
		// The outcome is queued, not waited for: this worker's next intent
		// (or its flush) waits for it, since the journal commits in order.
		// Lost in a crash, it leaves the contact uncertain: never called
		// twice. Only the intent must be on disk before a call starts.
		durable, jerr := r.opts.Journal.Enqueue(rec)
		if jerr != nil {
			return fmt.Errorf("writing the journal after calling %s (sheet %s row %d; its outcome, %s, is recorded as uncertain): %w", c.Phone, sheet, c.Row, rec.Status, jerr)
		}
		w.pending, w.last = durable, rec
		if settled != "" {
			r.count(func(res *RunResult) {
				switch settled {
				case store.Sent:
					res.Sent++
				case store.Failed:
					res.Failed++
				case store.Uncertain:
					res.Uncertain++
				}
			})
			r.opts.Settled(settled)
			r.brk.settled(&rec, serviceSaid(err))
			return nil
		}
		if callLater > 0 {
			r.count(func(res *RunResult) { res.Pending++ })
			r.opts.Settled(store.Pending)
			err := r.callLater(err, callLater)
			r.opts.Logf("%v", err)
			return w.stopRun(err, r.opts.Logf)
		}
		if attempt-j.prior >= r.opts.MaxAttempts || ctx.Err() != nil {
			r.count(func(res *RunResult) { res.Pending++ })
			r.opts.Settled(store.Pending)
			r.opts.Logf("%s (sheet %s row %d) left pending after %d attempts: %s", c.Phone, sheet, c.Row, attempt-j.prior, rec.Reason)
			if ctx.Err() != nil {
				r.interrupted.Store(true)
			} else {
				r.brk.settled(&rec, "")
			}
			return nil
		}
		if wait > pauseLogOver && !apiclient.Limited(err) {
			r.opts.Logf("%s (sheet %s row %d): %s; trying it again in %s", c.Phone, sheet, c.Row, answered(err), wait.Round(time.Millisecond))
		}
		if err := r.opts.Sleep(r.waitCtx, wait); err != nil {
			r.count(func(res *RunResult) { res.Pending++ })
			r.opts.Settled(store.Pending)
			if ctx.Err() != nil {
				r.interrupted.Store(true)
			}
			return nil
		}
	}
}

// mayStillSend decides, just before a call start whose intent is on
// disk, whether it may still be sent; if not, it returns which kind of
// stop keeps it. A 429 pause that began while the intent was written is
// waited out, and the rate limiter asked again, as waitTurn does.
func (r *runner) mayStillSend(ctx, gctx context.Context, c *Contact) stopKind {
	if r.paused() {
		if err := r.waitTurn(r.waitCtx); err != nil {
			if ctx.Err() == nil {
				return stopFailed
			}
			return stopSignal
		}
	}
	switch {
	case ctx.Err() != nil:
		return stopSignal
	case gctx.Err() != nil:
		return stopFailed
	case !r.inHours(c):
		return stopHours
	}
	return 0
}

// onDoNotCall reads RunOptions.DoNotCall, if set, for c's number, right
// before its call start.
func (r *runner) onDoNotCall(c *Contact) (bool, error) {
	if r.opts.DoNotCall == nil {
		return false, nil
	}
	on, err := r.opts.DoNotCall.Has(r.callCtx, c.Phone)
	if err != nil {
		return false, fmt.Errorf("reading the do-not-call list before calling %s (sheet %s row %d; not called): %w", c.Phone, r.f.Sheets[c.Sheet].File, c.Row, err)
	}
	return on, nil
}

// skip closes an intent that will not be sent with a skipped outcome: the
// contact stays pending.
func (r *runner) skip(w *worker, c *Contact, rec store.Record, stop stopKind) error {
	rec.Type, rec.At, rec.Status, rec.Reason = store.TypeOutcome, r.opts.Now(), store.OutcomeSkipped, stop.why()
	durable, err := r.opts.Journal.Enqueue(rec)
	if err != nil {
		return fmt.Errorf("writing the journal after not calling %s (sheet %s row %d; it reads as uncertain but was not sent): %w", rec.Phone, rec.Sheet, rec.Row, err)
	}
	w.pending, w.last = durable, rec
	switch stop {
	case stopHours:
		r.leftPending(c)
		return nil
	case stopDoNotCall:
		r.doNotCall(c)
		return nil
	}
	r.count(func(res *RunResult) { res.Pending++ })
	r.opts.Settled(store.Pending)
	if stop == stopSignal {
		r.interrupted.Store(true)
	}
	return nil
}

// intend waits for the contact's turn and writes the intent rec of its
// next attempt, and waits until it is durable. slot is the call's slot
// of pace.max_active_calls, taken with the turn (0 without that limit).
// ok is false if the contact is not to be sent now, with err nil when
// that is a clean stop (a signal, another worker's error, the calling
// window closing: the contact stays pending, nothing was written, and no
// slot is held).
func (r *runner) intend(ctx, gctx context.Context, w *worker, c *Contact, rec store.Record) (slot int, ok bool, err error) {
	// Wait for our turn: the pool's pause after a 429, the rate, a call
	// in progress to end. A signal here means nothing was sent: the
	// contact stays pending.
	slot, err = r.waitSlot(r.waitCtx, c)
	if err != nil {
		if ctx.Err() != nil {
			r.interrupted.Store(true)
		}
		return 0, false, nil // or another worker failed; its error is the run's
	}
	if gctx.Err() != nil {
		r.active.release(slot)
		return 0, false, nil // another worker failed; its error is the run's
	}
	if !r.inHours(c) {
		// The window closed while the contact waited for its turn or for a
		// retry: sending now would phone someone outside calling hours.
		// Nothing was sent; it stays pending for a later run.
		r.active.release(slot)
		r.leftPending(c)
		return 0, false, nil
	}
	rec.At = r.opts.Now()
	if err := r.opts.Journal.Append(rec); err != nil {
		r.active.release(slot)
		if errors.Is(err, store.ErrDoNotCall) {
			// The intent was not written: nothing to close.
			r.doNotCall(c)
			return 0, false, nil
		}
		if held := (*store.HeldError)(nil); errors.As(err, &held) {
			r.held(c, held)
			return 0, false, nil
		}
		w.lost(r.opts.Logf)
		return 0, false, r.notSent(c, 0, err)
	}
	return slot, true, nil
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

// eitherDone returns a context that ends when ctx ends (a signal) or
// gctx does (the run failed), and a function that releases it.
func eitherDone(ctx, gctx context.Context) (context.Context, func()) {
	both, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(gctx, cancel)
	return both, func() {
		stop()
		cancel()
	}
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

// waitTurn waits until this worker may send a call start: no pool-wide
// pause is in force and the rate limiter grants one. A 429 that another
// worker gets while this one waits for the limiter holds this one back
// too: it waits out the pause and takes a new turn.
func (r *runner) waitTurn(ctx context.Context) error {
	for {
		if err := r.waitPause(ctx); err != nil {
			return err
		}
		if err := r.waitLimiter(ctx); err != nil {
			return err
		}
		if !r.paused() {
			return nil
		}
	}
}

// waitSlot is waitTurn, and then, with pace.max_active_calls, waits
// until fewer calls than that are in progress and takes a slot for the
// call about to start. Its waits are pace, not pauses the service asked
// for: the first is logged, once.
//
// With outcomes collected it first reads the deliveries stored since it
// last did (at most every RunOptions.DeliveryPoll): a call whose end was
// delivered is no longer in progress. While every slot is held it looks
// again every DeliveryPoll.
func (r *runner) waitSlot(ctx context.Context, c *Contact) (int, error) {
	for {
		if err := r.waitTurn(ctx); err != nil {
			return 0, err
		}
		r.follow.callStarting(r.opts.Now())
		slot, wait := r.active.take(r.opts.Now(), c.Phone, r.opts.Agents[c.Agent].AgentID)
		if wait <= 0 {
			return slot, nil
		}
		r.slotWait.Do(func() {
			ends := ""
			if r.follow != nil {
				ends = ", or its end to be delivered"
			}
			r.opts.Logf("%d calls in progress (pace.max_active_calls): each call start waits for one to end, %s after it started (pace.call_length)%s", r.active.max, r.active.length, ends)
		})
		if r.follow != nil {
			wait = min(wait, r.opts.DeliveryPoll)
		}
		if err := r.opts.Sleep(ctx, wait); err != nil {
			return 0, err
		}
	}
}

// waitLimiter takes one call start from the rate limiter, waiting on
// RunOptions.Sleep until the limiter's time for it, as rate.Limiter.Wait
// does on the wall clock. A wait cut short by ctx gives the turn back to
// the limiter. waitTurn calls it.
func (r *runner) waitLimiter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := r.opts.Now()
	res := r.limiter.ReserveN(now, 1)
	if !res.OK() {
		return fmt.Errorf("rate: Wait(n=1) exceeds limiter's burst %d", r.limiter.Burst())
	}
	d := res.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if err := r.opts.Sleep(ctx, d); err != nil {
		res.CancelAt(r.opts.Now())
		return err
	}
	return nil
}

// paused reports whether an answer that named a limit (a 429) is holding
// the pool back now.
func (r *runner) paused() bool {
	r.pauseMu.Lock()
	defer r.pauseMu.Unlock()
	return r.opts.Now().Before(r.pauseUntil)
}

// pause holds every worker back for d from now, because of cause (what
// the service answered). A pause longer than pauseLogOver that holds the
// pool longer than before is logged at once.
func (r *runner) pause(d time.Duration, cause string) {
	r.pauseMu.Lock()
	until := r.opts.Now().Add(d)
	longer := until.After(r.pauseUntil)
	if longer {
		r.pauseUntil = until
	}
	r.pauseMu.Unlock()
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

// waitPause waits until no pause after a 429 is in force.
func (r *runner) waitPause(ctx context.Context) error {
	r.pauseMu.Lock()
	d := r.pauseUntil.Sub(r.opts.Now())
	r.pauseMu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	return r.opts.Sleep(ctx, d)
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
