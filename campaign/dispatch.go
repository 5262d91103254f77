package campaign

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report"
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
)

// RunOptions are the inputs of [Run].
type RunOptions struct {
	Calls     CallStarter
	Agents    []AgentPlan               // ensured and ready, by index of File.Agents
	Endpoints []*apiclient.CallEndpoint // call endpoint of each agent, by index
	Journal   *report.Journal
	State     *report.State
	Norm      *PhoneNormalizer
	Suppress  *Suppression

	Limit          int       // at most this many contacts started this run; 0 means no limit
	RetryFailed    bool      // send failed contacts again
	RetryUncertain bool      // send uncertain contacts again (a person decided so)
	Until          time.Time // with calling hours: stop (ErrOutsideHours) when the window is closed past this
	// Rehearsal is a run against the sandbox, which phones nobody: it does
	// not hold calls for the called person's hours, only counts them
	// (RunResult.WouldHaveWaited). The campaign's hours: still apply.
	Rehearsal bool

	// Tuning; zero values are sane.
	MaxAttempts    int           // attempts per contact on retryable outcomes; default 6
	RetryPause     time.Duration // first backoff after a retryable outcome; default 1s
	MaxRetryAfter  time.Duration // cap on a server's Retry-After; default 2m
	RequestTimeout time.Duration // per call start; default 60s
	// WriteAhead is the most contacts that may have their intent on disk
	// while they wait for a free worker, beyond the Concurrency in flight.
	// Default (0): defaultWriteAhead; negative: none. See Run.
	WriteAhead int
	Now        func() time.Time
	Sleep      func(ctx context.Context, d time.Duration) error // waiting outside calling hours; default real sleep

	// Settled, if set, is called after each contact's attempt is settled
	// (sent, failed, uncertain or left pending), for progress display.
	Settled func(status report.Status)
	Logf    func(format string, args ...any)
}

// RunResult counts what a run did.
type RunResult struct {
	Started   int // contacts whose call start was sent this run (any outcome)
	Sent      int
	Failed    int
	Uncertain int
	Pending   int // left for a later run: retries exhausted, or outside a contact's hours
	Deferred  int // of Pending: outside the contact's own calling hours
	// WouldHaveWaited counts the contacts a rehearsal called outside the
	// called person's hours, which a real run would have left pending.
	WouldHaveWaited int
	Skipped         int // settled in an earlier run
	StartedAt       time.Time
	FinishedAt      time.Time
}

// job is one contact to call, copied out of the reader.
type job struct {
	c        Contact
	agent    string
	prior    int  // attempts recorded in earlier runs
	intended bool // the intent of attempt prior+1 is on disk
}

// Run calls every contact of the campaign that is to be called: a producer
// streams contacts into a pool of workers, and one shared rate limiter
// paces call starts across all workers and agents.
//
// The at-most-once promise: a call start's intent is durable in the
// journal before the request is sent, and its outcome after. Only attempts
// that provably did not reach the service (never written, 429, 503) are
// tried again; anything else that is not a clear answer is uncertain, and
// uncertain contacts are sent again only with RetryUncertain.
//
// Pace.Concurrency workers send call starts. So that they do not wait for
// the journal's fsync before each one, a stage between the producer and
// the workers writes the intents of the next contacts ahead, many in one
// group commit, while the workers are busy. It writes ahead only as far
// as keeps the workers from waiting (writeIntents), never more than
// WriteAhead: at most Concurrency+WriteAhead contacts have an intent on
// disk and no outcome yet, and against a service slower than the journal
// hardly more than Concurrency. An intent written ahead but never sent (a
// signal, the calling window closing, another worker failing) is closed
// with a skipped outcome, and the contact stays pending, at once, even
// while the workers are busy with slow calls or gone after an error. Only
// a crash, a kill -9, a second signal (which exits without waiting for
// the calls in flight) or a journal that can no longer be written can
// leave intents without outcomes, and then those contacts read uncertain.
func Run(ctx context.Context, f *File, limiter *rate.Limiter, opts RunOptions) (*RunResult, error) {
	r := &runner{f: f, opts: opts, limiter: limiter, t0: time.Now()}
	r.defaults()
	r.ahead = make(chan struct{}, r.opts.WriteAhead)
	r.took = make(chan struct{}, 1)
	res := &RunResult{StartedAt: r.opts.Now()}
	r.res = res
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	r.rehearsal = opts.Rehearsal && !hours.IgnoreCalledPerson
	if opts.Rehearsal {
		hours.IgnoreCalledPerson = true
	}
	r.hours = hours

	// Workers keep going on a context that a signal does not cancel, so a
	// call already under way gets its answer recorded; they stop taking new
	// work when ctx ends.
	g, gctx := errgroup.WithContext(context.WithoutCancel(ctx))
	// The producer reads ahead, so that writeIntents finds a batch's worth
	// of contacts waiting when tokens come free.
	jobs := make(chan job, max(cap(r.ahead), 1))
	ready := make(chan job, cap(r.ahead)) // never full: a place for each token
	r.callCtx = context.WithoutCancel(gctx)
	var producerErr error
	g.Go(func() error {
		defer close(jobs)
		producerErr = r.produce(ctx, gctx, jobs)
		if errors.Is(producerErr, ErrOutsideHours) || errors.Is(producerErr, errLimit) || (producerErr != nil && ctx.Err() != nil) {
			return nil // a clean stop: workers finish what they hold
		}
		return producerErr
	})
	if cap(r.ahead) == 0 {
		g.Go(func() error { return passOn(gctx, jobs, ready) })
	} else {
		queued := make(chan queuedBatch, cap(r.ahead)) // never full: each batch holds a token
		g.Go(func() error { return r.writeIntents(ctx, gctx, jobs, queued, ready) })
		g.Go(func() error { return r.handOver(ctx, gctx, queued, ready) })
	}
	for range f.Pace.Concurrency {
		g.Go(func() error {
			var w worker
			for {
				j, ok := r.take(ready)
				if !ok {
					break
				}
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

// defaultWriteAhead is RunOptions.WriteAhead unless set: twice the
// concurrency, at least 64.
//
// writeIntents refills in halves, so the workers find contacts ready only
// if the last half lasts them while the next one is committed. Against
// the sandbox on loopback with 2 cores busy, a commit took 0.85-1.6 ms
// (0.25 ms on an idle machine) while 32 workers took 12,000-14,000
// contacts a second: 15-20 contacts per commit. With 32 (16 a half) the
// workers waited for intents 41% of their time (BenchmarkDispatch, 32
// workers: 13,000 waits in 20,000 contacts); with 64, 5,500 waits and the
// rate up from 66-68% to 82% of the bare generator; 128 reached 88-96%.
// At 4 workers (the default concurrency) 32 left them waiting too: 64-79%
// of hey in four runs, against 86-90% with 64 in the same hour (fewer
// fsyncs, too: 61-77 µs of CPU a contact instead of 78-86).
// It is a bound on what a crash can leave uncertain (Concurrency +
// WriteAhead) against a service that answers within a commit; against a
// slower one, writeIntents writes ahead a contact or two whatever the
// bound. It grows with the concurrency, which bounds the rate.
func defaultWriteAhead(concurrency int) int {
	return max(2*concurrency, 64)
}

type runner struct {
	f         *File
	opts      RunOptions
	limiter   *rate.Limiter
	ahead     chan struct{}   // a token for each contact whose intent writeIntents is writing or has written, until a worker takes it
	took      chan struct{}   // a worker took a contact (a token came free)
	starved   atomic.Bool     // a worker found no contact ready since writeIntents last looked
	t0        time.Time       // when the run began, for the durations below
	handedAt  atomic.Int64    // when handOver last handed a batch to the workers, as a time.Duration since t0
	patience  atomic.Int64    // how long contacts written ahead may wait for a worker before depth halves (a time.Duration)
	callCtx   context.Context // the context of call starts: the group's values, no cancellation
	hours     *CallingHours
	rehearsal bool // count the calls the called person's hours would have held
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
		o.MaxRetryAfter = 2 * time.Minute
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 60 * time.Second
	}
	if o.WriteAhead == 0 {
		o.WriteAhead = defaultWriteAhead(r.f.Pace.Concurrency)
	}
	if o.WriteAhead < 0 {
		o.WriteAhead = 0
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
	if o.Settled == nil {
		o.Settled = func(report.Status) {}
	}
}

func (r *runner) count(fn func(*RunResult)) {
	r.mu.Lock()
	fn(r.res)
	r.mu.Unlock()
}

// produce streams the contacts to call into jobs. It returns errLimit or
// ErrOutsideHours for a clean early stop.
func (r *runner) produce(ctx, gctx context.Context, jobs chan<- job) error {
	cr := r.f.NewContactReader(r.opts.Norm, r.opts.Suppress)
	// Waiting for the calling window ends on a signal, or when the run
	// failed: a failed run must not wait for the window to open.
	waitCtx, stop := eitherDone(ctx, gctx)
	defer stop()
	queued := 0
	return cr.Each(ctx, func(c *Contact) error {
		if c.Status != ToCall {
			return nil
		}
		agent := r.f.Agents[c.Agent].Name
		key, _ := SettledKey(r.f, r.opts.State, c)
		prior := 0
		if st, ok := r.opts.State.Status(key); ok {
			prior = r.opts.State.Attempts(key)
			switch {
			case st == report.Sent,
				st == report.Failed && !r.opts.RetryFailed,
				st == report.Uncertain && !r.opts.RetryUncertain:
				r.count(func(res *RunResult) { res.Skipped++ })
				return nil
			}
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
			r.opts.Settled(report.Pending)
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
	if r.rehearsal && !CalledPersonOpen(now, c.Country, ContactZones(c)) {
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
		r.opts.Logf("outside calling hours; waiting until %s", next.Format(time.RFC3339))
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
	pending report.Queued // the last outcome this worker queued
	last    report.Record // that outcome
}

// flush waits until the worker's last outcome is durable.
func (w *worker) flush() error {
	err := w.pending.Wait()
	w.pending = report.Queued{}
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
		rec.Type, rec.Attempt = report.TypeIntent, attempt
		if err := r.brk.open(); err != nil {
			return r.breakOff(w, c, rec, j.intended && attempt == j.prior+1, err)
		}
		if j.intended && attempt == j.prior+1 {
			// writeIntents put the intent on disk. Whatever stops the contact
			// from being sent now is written down as skipped: provably not
			// sent, so that it does not read as uncertain.
			if why, stop := r.mayStillSend(ctx, gctx, c); why != "" {
				return r.skip(w, c, rec, why, stop)
			}
		} else if ok, err := r.intend(ctx, gctx, w, c, rec); !ok {
			return err
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
			again, err := r.noToken(ctx, gctx, w, c, rec, err, &tokenTries)
			if !again {
				return err
			}
			j.intended = false // a new intent, under the same attempt number
			attempt--
			continue
		}
		if attempt == j.prior+1 {
			r.count(func(res *RunResult) { res.Started++ })
		}
		outcome := apiclient.Classify(err)
		rec.Type, rec.At = report.TypeOutcome, r.opts.Now()
		var settled report.Status
		var wait time.Duration // before the next attempt, when retryable
		switch outcome {
		case apiclient.Sent:
			rec.Status, rec.HTTP, rec.Body = report.OutcomeSent, resp.StatusCode, resp.Body
			settled = report.Sent
		case apiclient.Failed:
			rec.Status, rec.HTTP, rec.Reason, rec.Body = report.OutcomeFailed, apiclient.StatusCode(err), "the service refused the call", errorBody(err)
			settled = report.Failed
		case apiclient.Uncertain:
			rec.Status, rec.HTTP, rec.Reason, rec.Body = report.OutcomeUncertain, apiclient.StatusCode(err), uncertainReason(err), errorBody(err)
			settled = report.Uncertain
		default: // Retryable: provably not sent
			rec.Status, rec.HTTP, rec.Reason, rec.Body = report.OutcomeRetry, apiclient.StatusCode(err), retryReason(err), errorBody(err)
			wait = r.backoff(attempt - j.prior)
			if ra := apiclient.RetryAfter(err); ra > 0 {
				wait = min(ra, r.opts.MaxRetryAfter)
			}
			if apiclient.StatusCode(err) == http.StatusTooManyRequests {
				// The service is saying "all of you, slow down": hold the
				// pool back now, not after the journal write.
				r.pause(wait)
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
				case report.Sent:
					res.Sent++
				case report.Failed:
					res.Failed++
				case report.Uncertain:
					res.Uncertain++
				}
			})
			r.opts.Settled(settled)
			r.brk.settled(&rec)
			return nil
		}
		if attempt-j.prior >= r.opts.MaxAttempts || ctx.Err() != nil {
			r.count(func(res *RunResult) { res.Pending++ })
			r.opts.Settled(report.Pending)
			r.opts.Logf("%s (sheet %s row %d) left pending after %d attempts: %s", c.Phone, sheet, c.Row, attempt-j.prior, rec.Reason)
			if ctx.Err() != nil {
				r.interrupted.Store(true)
			} else {
				r.brk.settled(&rec)
			}
			return nil
		}
		if err := sleep(ctx, wait); err != nil {
			r.count(func(res *RunResult) { res.Pending++ })
			r.opts.Settled(report.Pending)
			r.interrupted.Store(true)
			return nil
		}
	}
}

// Why a contact whose intent is on disk was not sent after all: the
// reasons of skipped outcomes, and the kinds of stop.
const (
	whySignal = "not sent: the run was interrupted first"
	whyFailed = "not sent: the run stopped on an error first"
	whyHours  = "not sent: the calling window closed first"
)

const (
	stopSignal = iota + 1 // a signal: no new calls
	stopFailed            // another worker or the producer failed
	stopHours             // the calling window closed
)

// mayStillSend decides, just before a call start whose intent
// writeIntents put on disk, whether it may still be sent. If not, it
// returns why (a skipped outcome's reason) and which kind of stop that is.
// A 429 pause that began while the contact waited is waited out, and the
// rate limiter asked again, as waitTurn does.
func (r *runner) mayStillSend(ctx, gctx context.Context, c *Contact) (why string, stop int) {
	if r.paused() {
		if err := r.waitTurn(ctx); err != nil {
			return whySignal, stopSignal
		}
	}
	switch {
	case ctx.Err() != nil:
		return whySignal, stopSignal
	case gctx.Err() != nil:
		return whyFailed, stopFailed
	case !r.inHours(c):
		return whyHours, stopHours
	}
	return "", 0
}

// skip closes an intent that will not be sent with a skipped outcome: the
// contact stays pending.
func (r *runner) skip(w *worker, c *Contact, rec report.Record, why string, stop int) error {
	rec.Type, rec.At, rec.Status, rec.Reason = report.TypeOutcome, r.opts.Now(), report.OutcomeSkipped, why
	durable, err := r.opts.Journal.Enqueue(rec)
	if err != nil {
		return fmt.Errorf("writing the journal after not calling %s (sheet %s row %d; it reads as uncertain but was not sent): %w", rec.Phone, rec.Sheet, rec.Row, err)
	}
	w.pending, w.last = durable, rec
	if stop == stopHours {
		r.leftPending(c)
		return nil
	}
	r.count(func(res *RunResult) { res.Pending++ })
	r.opts.Settled(report.Pending)
	if stop == stopSignal {
		r.interrupted.Store(true)
	}
	return nil
}

// intend waits for the contact's turn and writes the intent rec of its
// next attempt, for a worker (a retry, or no write-ahead). ok is false if
// the contact is not to be sent now, with err nil when that is a clean
// stop (a signal, another worker's error, the calling window closing: the
// contact stays pending, nothing was written).
func (r *runner) intend(ctx, gctx context.Context, w *worker, c *Contact, rec report.Record) (ok bool, err error) {
	// Wait for our turn: the pool's pause after a 429, then the rate.
	// A signal here means nothing was sent: the contact stays pending.
	if err := r.waitTurn(ctx); err != nil {
		r.interrupted.Store(true)
		return false, nil
	}
	if gctx.Err() != nil {
		return false, nil // another worker failed; its error is the run's
	}
	if !r.inHours(c) {
		// The window closed while the contact waited for its turn or for a
		// retry: sending now would phone someone outside calling hours.
		// Nothing was sent; it stays pending for a later run.
		r.leftPending(c)
		return false, nil
	}
	rec.At = r.opts.Now()
	if err := r.opts.Journal.Append(rec); err != nil {
		w.lost(r.opts.Logf)
		return false, r.notSent(c, 0, err)
	}
	return true, nil
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
	r.opts.Settled(report.Pending)
	r.opts.Logf("%s (sheet %s row %d) left pending: the calling window closed before it could be sent", c.Phone, r.f.Sheets[c.Sheet].File, c.Row)
}

// take gives a worker the next contact from ready, and returns its token
// to writeIntents. A worker that finds none ready tells writeIntents it
// waited (it should write further ahead). ok is false when ready is
// closed and empty.
func (r *runner) take(ready <-chan job) (j job, ok bool) {
	select {
	case j, ok = <-ready:
	default:
		r.starved.Store(true)
		j, ok = <-ready
	}
	if ok && j.intended {
		<-r.ahead
		select {
		case r.took <- struct{}{}:
		default:
		}
	}
	return j, ok
}

// writeIntents is the stage between the producer and the workers: it
// writes the intents of contacts before a worker is free to call them,
// many in one group commit, and passes each batch to handOver, which
// gives its contacts to the workers once the batch is durable. It closes
// queued when done.
//
// How far ahead it writes adapts: depth, the most contacts written ahead
// and not yet taken by a worker, doubles (up to cap(r.ahead)) when a
// worker had to wait for one, and halves when contacts written ahead wait
// for a worker longer than patience (four commits, at least 5ms): then
// they were written further ahead than the workers need. It writes in
// halves: once workers have taken half of depth, it writes the next half
// in one commit, so that against a fast service each fsync carries the
// intents of depth/2 contacts instead of the one or two that came free
// while the last fsync ran (an fsync took 100-140 µs of CPU on the 2-core
// test machine, more than a call start). Against a slow service (answers
// taking longer than patience) depth falls to 1, so that a crash leaves
// few intents that were never sent.
//
// Each contact waits for its turn (the 429 pause, the rate limiter)
// before its intent is queued, so a paced run writes each intent as its
// turn comes. It does not wait for that intent's fsync before it waits
// for the next contact's turn: handOver waits for the fsync meanwhile. A
// paced run thus keeps its pace on a disk whose fsync takes longer than
// the time between two call starts (a spinning disk at more than about
// 100 a second, or a stall); the calls whose turns came during a slow
// fsync start together once it ends.
func (r *runner) writeIntents(ctx, gctx context.Context, jobs <-chan job, queued chan<- queuedBatch, ready <-chan job) error {
	defer close(queued)
	// A turn is waited for until a signal, or until the run fails.
	turnCtx, stop := eitherDone(ctx, gctx)
	defer stop()
	var (
		carry    job // taken from jobs but not yet granted a turn
		carrying bool
		depth    = 1
		halvedAt time.Duration // when depth was last halved, since r.t0
	)
	// adapt sets depth from what the workers did since it last looked.
	adapt := func() {
		switch {
		case r.starved.Swap(false):
			depth = min(2*depth, cap(r.ahead))
		case len(ready) > 0:
			now := time.Since(r.t0)
			if now-max(time.Duration(r.handedAt.Load()), halvedAt) > time.Duration(r.patience.Load()) {
				depth = max(depth/2, 1)
				halvedAt = now // halve once per patience
			}
		}
	}
	for {
		var j job
		if carrying {
			j, carrying = carry, false
		} else {
			var open bool
			select {
			case j, open = <-jobs:
				if !open {
					return nil
				}
			case <-gctx.Done():
				return nil
			}
		}
		// Wait until no more than half of depth is written ahead (none, at
		// depth 1).
		for adapt(); len(r.ahead) > depth/2; adapt() {
			select {
			case <-r.took:
			case <-ctx.Done():
				r.interrupted.Store(true)
				return nil
			case <-gctx.Done():
				return nil
			}
		}
		r.ahead <- struct{}{} // never blocks: len(r.ahead) <= depth/2 < depth <= cap, and only this goroutine adds
		if err := r.waitTurn(turnCtx); err != nil || gctx.Err() != nil {
			<-r.ahead
			if ctx.Err() != nil {
				r.interrupted.Store(true)
			}
			return nil
		}
		var batch []job
		if r.inHours(&j.c) {
			batch = append(batch, j)
		} else {
			<-r.ahead
			r.leftPending(&j.c)
		}
		// More contacts whose turn has come already, up to depth.
		closed := false
	gather:
		for len(r.ahead) < depth {
			var next job
			select {
			case nj, open := <-jobs:
				if !open {
					closed = true
					break gather
				}
				next = nj
			default:
				break gather
			}
			if r.paused() || !r.limiter.Allow() {
				carry, carrying = next, true
				break gather
			}
			if !r.inHours(&next.c) {
				r.leftPending(&next.c)
				continue
			}
			r.ahead <- struct{}{}
			batch = append(batch, next)
		}
		if len(batch) > 0 {
			durable, err := r.queueBatch(batch)
			if err != nil {
				for range batch {
					<-r.ahead
				}
				return err
			}
			queued <- queuedBatch{jobs: batch, durable: durable, at: time.Since(r.t0)} // never blocks: a place for each token
		}
		if closed {
			return nil
		}
	}
}

// queuedBatch is a batch of contacts whose intents writeIntents queued
// in one group commit, on its way to the workers.
type queuedBatch struct {
	jobs    []job
	durable report.Queued // the last intent's: once it is durable, all are
	at      time.Duration // when it was queued, since r.t0
}

// handOver gives the contacts of each batch that writeIntents queued to
// the workers, through ready, once the batch's intents are durable. When
// writeIntents is done and every batch is handed over, it waits until
// the workers have taken every contact, and then closes ready.
//
// A signal, or a failure that stops the run, makes it close at once the
// intents of the contacts no worker took with skipped outcomes
// (skipReady), those of a batch whose fsync was under way included: the
// workers may be busy with slow calls for a while, or all gone after an
// error, and a second signal, which exits without waiting for them, would
// otherwise leave these contacts uncertain although they were never
// sent.
func (r *runner) handOver(ctx, gctx context.Context, queued <-chan queuedBatch, ready chan job) (err error) {
	defer close(ready)
	defer func() {
		if serr := r.skipReady(ctx, gctx, ready); err == nil {
			err = serr
		}
	}()
	for b := range queued {
		if err := b.durable.Wait(); err != nil {
			for range b.jobs {
				<-r.ahead
			}
			return r.notSent(&b.jobs[0].c, len(b.jobs)-1, err)
		}
		now := time.Since(r.t0)
		r.patience.Store(int64(max(4*(now-b.at), 5*time.Millisecond)))
		r.handedAt.Store(int64(now))
		for _, j := range b.jobs {
			j.intended = true
			ready <- j // never blocks: ready has a place for every token
		}
	}
	// writeIntents is done, so r.took is this goroutine's now. Every
	// contact in ready holds a token until a worker takes it.
	for len(r.ahead) > 0 {
		select {
		case <-r.took:
		case <-ctx.Done():
			return nil
		case <-gctx.Done():
			return nil
		}
	}
	return nil
}

// passOn gives the workers the contacts as they come, in a run without
// write-ahead: each worker writes its own intents.
func passOn(gctx context.Context, jobs <-chan job, ready chan<- job) error {
	defer close(ready)
	for j := range jobs {
		select {
		case ready <- j:
		case <-gctx.Done():
			return nil
		}
	}
	return nil
}

// skipReady, after a signal or once the run has failed, closes the
// intents of the contacts in ready that no worker has taken with skipped
// outcomes: they were never sent, and stay pending.
func (r *runner) skipReady(ctx, gctx context.Context, ready <-chan job) error {
	why, stop := whySignal, stopSignal
	switch {
	case ctx.Err() != nil:
	case gctx.Err() != nil:
		why, stop = whyFailed, stopFailed
	default:
		return nil
	}
	var w worker
	for {
		select {
		case j := <-ready:
			if !j.intended {
				continue // nothing on disk: nothing to close
			}
			<-r.ahead
			if err := r.skip(&w, &j.c, r.firstIntent(&j), why, stop); err != nil {
				return err
			}
		default:
			if err := w.flush(); err != nil {
				w.lost(r.opts.Logf)
				return err
			}
			return nil
		}
	}
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
func (r *runner) firstIntent(j *job) report.Record {
	c := &j.c
	return report.Record{
		Type: report.TypeIntent, Agent: j.agent, Phone: c.Phone, N: c.N, Attempt: j.prior + 1,
		AgentID: r.opts.Agents[c.Agent].AgentID, Sheet: r.f.Sheets[c.Sheet].File, Row: c.Row,
	}
}

// queueBatch queues the first attempt's intent of each contact in batch
// for one group commit, which starts at once, and returns the last one's
// Queued: once that is durable, all are.
func (r *runner) queueBatch(batch []job) (report.Queued, error) {
	var last report.Queued
	for i := range batch {
		j := &batch[i]
		rec := r.firstIntent(j)
		rec.At = r.opts.Now()
		var err error
		if i == len(batch)-1 {
			last, err = r.opts.Journal.Submit(rec) // commits every record queued before it too
		} else {
			_, err = r.opts.Journal.Enqueue(rec)
		}
		if err != nil {
			return report.Queued{}, r.notSent(&j.c, 0, err)
		}
	}
	return last, nil
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
		if err := r.limiter.Wait(ctx); err != nil {
			return err
		}
		if !r.paused() {
			return nil
		}
	}
}

// paused reports whether a 429 is holding the pool back now.
func (r *runner) paused() bool {
	r.pauseMu.Lock()
	defer r.pauseMu.Unlock()
	return time.Now().Before(r.pauseUntil)
}

// pause holds every worker back for d.
func (r *runner) pause(d time.Duration) {
	r.pauseMu.Lock()
	defer r.pauseMu.Unlock()
	if until := time.Now().Add(d); until.After(r.pauseUntil) {
		r.pauseUntil = until
	}
}

func (r *runner) waitPause(ctx context.Context) error {
	r.pauseMu.Lock()
	d := time.Until(r.pauseUntil)
	r.pauseMu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	return sleep(ctx, d)
}

func errorBody(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) {
		return e.Body
	}
	return ""
}

func uncertainReason(err error) string {
	if s := apiclient.StatusCode(err); s != 0 {
		return fmt.Sprintf("the service answered %d %s; the call may have started, so it is not sent again automatically", s, http.StatusText(s))
	}
	return fmt.Sprintf("no answer after the request was sent (%v); the call may have started, so it is not sent again automatically", err)
}

func retryReason(err error) string {
	if s := apiclient.StatusCode(err); s != 0 {
		return fmt.Sprintf("the service answered %d %s before acting", s, http.StatusText(s))
	}
	return fmt.Sprintf("the request never left this machine: %v", err)
}
