package campaign

// Tests of what the service's answers do to a run, against the sandbox
// answering each odd way real services do. Each checks the ledger against
// the journal: nobody placed twice, nobody recorded sent whom the sandbox
// did not place, and nobody recorded failed whom the service never
// refused.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// checkSentWerePlaced checks that every contact the journal holds sent
// was placed by the sandbox.
func (e *dtEnv) checkSentWerePlaced(n int) {
	e.t.Helper()
	placed := dtPlaced(e.srv)
	for i := range n {
		if en, ok := e.entry(dtPhone(i)); ok && en.Status == store.Sent && placed[dtPhone(i)] != 1 {
			e.t.Errorf("%s is recorded sent but the sandbox placed it %d times", dtPhone(i), placed[dtPhone(i)])
		}
	}
}

// TestRunTwoHundredThatSaysError: a 200 {"status":"error"} or a 202
// {"error":...} places nothing: each contact is failed with the service's
// message, nobody is sent, and after BreakAfter such refusals in a row the
// run stops (ErrRefusing) with the rest pending. The next run, with the
// service mended, places the pending ones once; --retry-failed the
// refused ones, once.
func TestRunTwoHundredThatSaysError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  sandbox.Faults
		status  int
		message string
	}{
		{"200 status error", sandbox.Faults{Share200Error: 1}, 200, "the call could not be started"},
		{"202 error", sandbox.Faults{Share202Error: 1}, 202, "the call could not be queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n, concurrency = 30, 3
			e := newDtEnv(t, sandbox.Options{Faults: tc.faults}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
			res, err := e.run(context.Background(), nil)
			if !errors.Is(err, ErrRefusing) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("Run = %v, want ErrRefusing naming %q", err, tc.message)
			}
			received := len(e.srv.Calls())
			if res.Sent != 0 || len(e.srv.Placed()) != 0 || res.Failed != received || received < BreakAfter || received > BreakAfter+concurrency-1 {
				t.Errorf("result %+v, %d call starts, %d placed; want %d to %d failed, none sent or placed", res, received, len(e.srv.Placed()), BreakAfter, BreakAfter+concurrency-1)
			}
			if c := e.state().Counts(); c[store.Failed] != received || c[store.Sent]+c[store.Uncertain] != 0 {
				t.Errorf("journal counts %v: want %d failed, the rest pending", c, received)
			}
			en, _ := e.entry(dtPhone(0))
			if en.Status != store.Failed || en.HTTP != tc.status || !strings.Contains(en.Reason, "body says error") || !strings.Contains(en.Body, tc.message) {
				t.Errorf("journal entry %+v", en)
			}
			if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "with a body that says error ("+tc.message+")") {
				t.Errorf("notes %q", res.Notes)
			}
			e.checkIntentBeforeSend(1)

			e.srv.SetFaults(sandbox.Faults{})
			res = e.mustRun(nil)
			if res.Sent != n-received || res.Skipped != received {
				t.Errorf("second run: %+v", res)
			}
			e.checkSentWerePlaced(n)
			res = e.mustRun(func(o *RunOptions) { o.RetryFailed = true })
			if res.Sent != received {
				t.Errorf("--retry-failed: %+v", res)
			}
			e.checkPlacedOnce(n)
		})
	}
}

// TestRunStatusWordsOfSuccess: a placed call answered 200 with a status
// that says success in a service's own words ("in-progress", "Ringing") is
// sent; one whose status callrun knows neither as success nor as refusal
// is uncertain: its contact pressure is kept, the breaker stops the run,
// and neither --retry-failed nor a second run places it again (the
// sandbox's ledger: each number placed once).
func TestRunStatusWordsOfSuccess(t *testing.T) {
	const n, concurrency = 12, 3
	for _, status := range []string{"in-progress", "Ringing"} {
		e := newDtEnv(t, sandbox.Options{AnswerStatus: status}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
		if res := e.mustRun(nil); res.Sent != n || res.Failed+res.Uncertain != 0 {
			t.Errorf("status %q: %+v; want all %d sent", status, res, n)
		}
		e.checkPlacedOnce(n)
	}
	e := newDtEnv(t, sandbox.Options{AnswerStatus: "registered"}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
	res, err := e.run(context.Background(), nil)
	if !errors.Is(err, ErrBreaker) {
		t.Fatalf("Run = %v, want ErrBreaker", err)
	}
	placed := len(e.srv.Placed())
	if res.Failed != 0 || res.Uncertain != placed || placed < BreakAfter {
		t.Errorf("result %+v, %d placed; want every placed call uncertain, none failed", res, placed)
	}
	if en, _ := e.entry(dtPhone(0)); en.Status != store.Uncertain || !strings.Contains(en.Reason, `status "registered"`) {
		t.Errorf("journal entry %+v", en)
	}
	// Later runs, --retry-failed or not, place the pending ones and never
	// an uncertain one again, until every number is placed once.
	for k := range n {
		if _, err := e.run(context.Background(), func(o *RunOptions) { o.RetryFailed = k%2 == 0 }); err != nil && !errors.Is(err, ErrBreaker) {
			t.Fatalf("run %d after: %v", k+2, err)
		}
	}
	if c := e.state().Counts(); c[store.Uncertain] != n || c[store.Failed] != 0 {
		t.Errorf("journal counts %v; want all %d uncertain", c, n)
	}
	e.checkPlacedOnce(n)
}

// TestRunHTMLPageIsUncertain: a 200 with an HTML page (a proxy's
// maintenance page) is no answer of the service's: the contacts are
// uncertain, never sent again by themselves, the breaker stops the run,
// and the summary's note says what came back.
func TestRunHTMLPageIsUncertain(t *testing.T) {
	const n, concurrency = 30, 3
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share200HTML: 1}}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
	res, err := e.run(context.Background(), nil)
	if !errors.Is(err, ErrBreaker) {
		t.Fatalf("Run = %v, want ErrBreaker", err)
	}
	received := len(e.srv.Calls())
	if res.Sent != 0 || len(e.srv.Placed()) != 0 || res.Uncertain != received || received > BreakAfter+concurrency-1 {
		t.Errorf("result %+v, %d call starts, %d placed", res, received, len(e.srv.Placed()))
	}
	if c := e.state().Counts(); c[store.Uncertain] != received || c[store.Sent]+c[store.Failed] != 0 {
		t.Errorf("journal counts %v: want %d uncertain, the rest pending", c, received)
	}
	if en, _ := e.entry(dtPhone(0)); en.HTTP != 200 || !strings.Contains(en.Reason, "not its JSON") || !strings.Contains(en.Body, "Down for maintenance") {
		t.Errorf("journal entry %+v", en)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "200 OK with a body that is not the service's JSON (<!DOCTYPE html>") {
		t.Errorf("notes %q", res.Notes)
	}
	e.checkIntentBeforeSend(1)

	// Mended: the next run places the rest, and not the uncertain ones.
	e.srv.SetFaults(sandbox.Faults{})
	res = e.mustRun(nil)
	if res.Sent != n-received || res.Skipped != received {
		t.Errorf("second run: %+v", res)
	}
	e.checkSentWerePlaced(n)
	e.checkIntentBeforeSend(1)
}

// TestRunStalledAnswerIsSentWithANote: when the body of a 200 stalls, the
// call is placed; the run waits BodyWait, not the request's timeout, and
// records the contact sent with a reason that says the answer was cut.
func TestRunStalledAnswerIsSentWithANote(t *testing.T) {
	const n = 30
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{ShareStall: 0.2, Seed: 5}}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.client.BodyWait = 100 * time.Millisecond
	start := time.Now()
	res := e.mustRun(func(o *RunOptions) { o.RequestTimeout = time.Minute })
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v: it waited for stalled bodies", took)
	}
	e.checkPlacedOnce(n)
	e.checkCounts(map[store.Status]int{store.Sent: n})
	stalled := e.srv.Stats().Faults.Stalled
	if stalled == 0 || res.Sent != n {
		t.Fatalf("%d stalled, result %+v", stalled, res)
	}
	cut := 0
	for i := range n {
		if en, _ := e.entry(dtPhone(i)); strings.Contains(en.Reason, "did not come within 100ms") {
			cut++
		}
	}
	if cut != stalled {
		t.Errorf("%d contacts say their answer was cut, the sandbox stalled %d", cut, stalled)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "answer was cut off") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestRunLimitAnswersLeaveContactsPending: a 403 {"error":"concurrency
// limit reached"} is the service naming a limit: the contact is not
// failed, not uncertain, but pending (tried again after a pause of the
// whole pool, and left pending when the tries run out); the next run
// places each once.
func TestRunLimitAnswersLeaveContactsPending(t *testing.T) {
	const n = 10
	clock := &dtClock{now: time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: sandbox.Faults{Share403Limit: 1}}, dtCampaign(100, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	res := e.mustRun(func(o *RunOptions) { o.Now, o.Sleep, o.MaxAttempts = clock.Now, clock.Sleep, 3 })
	if res.Pending != n || res.Failed+res.Uncertain+res.Sent != 0 || len(e.srv.Placed()) != 0 {
		t.Errorf("result %+v, %d placed; want everyone pending", res, len(e.srv.Placed()))
	}
	e.checkCounts(map[store.Status]int{store.Pending: n})
	if en, _ := e.entry(dtPhone(0)); en.HTTP != 403 || !strings.Contains(en.Reason, "naming a limit (concurrency limit reached)") {
		t.Errorf("journal entry %+v", en)
	}
	e.checkIntentBeforeSend(1)
	e.srv.SetFaults(sandbox.Faults{})
	e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	e.checkPlacedOnce(n)
	e.checkCounts(map[store.Status]int{store.Sent: n})
}

// TestRunAgainstAConcurrencyLimit: the sandbox allows 5 calls in progress
// (of 1s each) and refuses more with 403 concurrency limit reached; a run
// at 200 a second without pace.max_active_calls meets the limit over and
// over, and still fails nobody: every contact is placed once, in the end.
func TestRunAgainstAConcurrencyLimit(t *testing.T) {
	const n = 40
	clock := newSimClock(t, time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC))
	e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: sandbox.Faults{MaxActive: 5, CallLength: time.Second}},
		dtCampaign(200, 8, ""), map[string]string{"leads.csv": dtSheet(n)})
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, clock.calls(e.client)
		o.MaxAttempts, o.RetryPause = 100, 100*time.Millisecond
	})
	if res.Sent != n || e.srv.Stats().Faults.OverActive == 0 {
		t.Errorf("result %+v, %d refused over the limit", res, e.srv.Stats().Faults.OverActive)
	}
	e.checkPlacedOnce(n)
	e.checkCounts(map[store.Status]int{store.Sent: n})
	took := res.FinishedAt.Sub(res.StartedAt)
	t.Logf("%d calls in %v on the run's clock (%.1f a second against a limit of 5 calls of 1s), %d refused over the limit",
		n, took, float64(n)/took.Seconds(), e.srv.Stats().Faults.OverActive)
}

// TestRunMaxActiveCallsGoodput: against a service that allows K calls in
// progress of D each, pace.max_active_calls: K with pace.call_length: D
// starts calls at no less than 0.9 K/D, and meets the limit not once. It
// runs on a simClock, on which sleepers wake in the order of their
// wake-up times, as on a real clock, and no time passes while a call
// start is in flight.
func TestRunMaxActiveCallsGoodput(t *testing.T) {
	const n, k, d = 200, 20, time.Second
	clock := newSimClock(t, time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC))
	e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: sandbox.Faults{MaxActive: k, CallLength: d}},
		dtCampaign(200, 16, "")+"\n", map[string]string{"leads.csv": dtSheet(n)})
	e.f.Pace.MaxActiveCalls, e.f.Pace.CallLength = k, d
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Calls = clock.calls(e.client)
	})
	e.checkPlacedOnce(n)
	if over := e.srv.Stats().Faults.OverActive; over != 0 || res.Sent != n {
		t.Errorf("result %+v; %d call starts refused over the limit, want none", res, over)
	}
	took := res.FinishedAt.Sub(res.StartedAt)
	goodput := float64(n) / took.Seconds()
	if want := 0.9 * k / d.Seconds(); goodput < want {
		t.Errorf("%d calls in %v: %.1f a second, want at least %.1f (0.9 K/D)", n, took, goodput, want)
	}
	t.Logf("%d calls in %v on the run's clock: %.1f a second against a limit of %d calls of %v", n, took, goodput, k, d)
}

// simClock is a fake clock for RunOptions.Now and Sleep on which
// sleepers wake in order: a sleeper waits until the clock reaches its
// wake-up time. The clock moves, to the earliest wake-up time, only when
// the run is quiet: no call start in flight (calls wraps a CallStarter to
// count them) and no one asked the time or began a sleep for
// simQuietTicks milliseconds of real time in a row. A run that is not
// quiet but waiting for a CPU looks quiet for a moment: on a loaded
// machine one millisecond was too short (the clock moved under a runnable
// worker and a run read 17.9 calls a second where 18 are due).
type simClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers map[chan struct{}]time.Time
	busy     int
	// busyOnWake are the sleepers (of sleepThenBusy) that count as busy
	// from the moment they are woken until they say they are done.
	busyOnWake map[chan struct{}]bool
	stirred    bool // the time was asked, or a sleep began, since the last look
	quiet      int  // ticks in a row with nothing stirring
}

// simQuietTicks is how many milliseconds in a row a run must be quiet
// before simClock moves.
const simQuietTicks = 5

func newSimClock(t *testing.T, start time.Time) *simClock {
	c := &simClock{now: start, sleepers: map[chan struct{}]time.Time{}}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				c.advance()
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return c
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stirred = true
	return c.now
}

func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	ch := make(chan struct{})
	c.mu.Lock()
	c.sleepers[ch] = c.now.Add(d)
	c.stirred = true
	c.mu.Unlock()
	select {
	case <-ch:
		return ctx.Err()
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.sleepers, ch)
		c.mu.Unlock()
		return ctx.Err()
	}
}

// advance moves the clock to the earliest wake-up time and wakes those
// sleepers, if the run is quiet.
func (c *simClock) advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stirred || c.busy > 0 || len(c.sleepers) == 0 {
		c.stirred, c.quiet = false, 0
		return
	}
	if c.quiet++; c.quiet < simQuietTicks {
		return
	}
	c.quiet = 0
	var first time.Time
	for _, wake := range c.sleepers {
		if first.IsZero() || wake.Before(first) {
			first = wake
		}
	}
	if first.After(c.now) {
		c.now = first
	}
	for ch, wake := range c.sleepers {
		if !wake.After(c.now) {
			delete(c.sleepers, ch)
			if c.busyOnWake[ch] {
				delete(c.busyOnWake, ch)
				c.busy++
			}
			close(ch)
		}
	}
}

// sleepThenBusy sleeps d on the clock, like Sleep, and then holds the
// clock as a call start in flight does, from the moment it is woken until
// done is called: for a test's stand-in of the service that does real
// work (writing a delivery) at a time on the clock, which the clock must
// not move past before the work is done, however slow the machine.
func (c *simClock) sleepThenBusy(d time.Duration) (done func()) {
	done = func() {
		c.mu.Lock()
		c.busy--
		c.stirred = true
		c.mu.Unlock()
	}
	ch := make(chan struct{})
	c.mu.Lock()
	if d <= 0 {
		c.busy++
		c.mu.Unlock()
		return done
	}
	if c.busyOnWake == nil {
		c.busyOnWake = map[chan struct{}]bool{}
	}
	c.sleepers[ch] = c.now.Add(d)
	c.busyOnWake[ch] = true
	c.stirred = true
	c.mu.Unlock()
	<-ch
	return done
}

func (c *simClock) calls(s CallStarter) CallStarter {
	return callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
		c.mu.Lock()
		c.busy++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.busy--
			c.stirred = true
			c.mu.Unlock()
		}()
		return s.StartCallForm(ctx, ep, form)
	})
}

// TestRunRepeatedRefusalsStopTheRun: a 4xx that repeats with the same
// message (an agent the service holds pending: 409) is the service's
// condition: after BreakAfter of them in a row the run stops with
// ErrRefusing naming the answer, and the contacts not tried stay pending.
// Refusals that differ (one bad number after another) do not stop it.
func TestRunRepeatedRefusalsStopTheRun(t *testing.T) {
	const n = 30
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.srv.SetAgentStatus(e.agents[0].AgentID, "pending")
	res, err := e.run(context.Background(), nil)
	if !errors.Is(err, ErrRefusing) || !strings.Contains(err.Error(), "409 Conflict: agent_not_active: agent "+e.agents[0].AgentID+" is pending") {
		t.Fatalf("Run = %v, want ErrRefusing naming the 409", err)
	}
	if res.Failed != BreakAfter || len(e.srv.Calls()) != BreakAfter || len(e.srv.Placed()) != 0 {
		t.Errorf("result %+v, %d call starts; want %d failed", res, len(e.srv.Calls()), BreakAfter)
	}
	e.checkCounts(map[store.Status]int{store.Failed: BreakAfter})

	// The same refusals, each naming its number, are the contacts' own.
	res = e.mustRun(func(o *RunOptions) { o.Calls = distinctRefusals{e.client} })
	if res.Failed != n-BreakAfter {
		t.Errorf("distinct refusals: %+v, want the %d others failed", res, n-BreakAfter)
	}
	e.checkIntentBeforeSend(1)
}
