package campaign

// Tests of pace.max_active_calls with outcomes collected: a call is in
// progress from its start until its end is delivered, or for
// pace.call_length, whichever comes first. The service is the sandbox,
// which refuses a call start over its own limit of calls in progress;
// the deliveries are stored as `callrun listen` stores them, by a fake
// service that ends each call the sandbox placed a fixed time after it
// placed it, on the run's simulated clock.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// endingService delivers the end of every call the sandbox placed,
// length after the sandbox placed it (on clock), into the campaign's
// deliveries file, as the service's call.ended webhook through listen
// would.
type endingService struct {
	t      *testing.T
	clock  *simClock
	srv    *sandbox.Server
	w      *store.Deliveries
	dir    string // where w is
	length time.Duration
	// shape is what each call's end is delivered as: "" a call.ended, as
	// the account webhooks send it; "agent" an agent webhook's delivery,
	// with no event; "contact" the account webhooks' contact-only form,
	// with no event either, which says nothing of the call's end.
	shape string

	mu        sync.Mutex
	scheduled map[int]bool // by ledger seq
	ends      sync.WaitGroup
}

func newEndingService(t *testing.T, e *dtEnv, clock *simClock, length time.Duration) *endingService {
	t.Helper()
	dir := e.f.DeliveriesDir(e.f.Path(e.f.StateDir))
	w, err := store.OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &endingService{t: t, clock: clock, srv: e.srv, w: w, dir: dir, length: length, scheduled: map[int]bool{}}
	t.Cleanup(func() { s.ends.Wait(); w.Close() })
	return s
}

// calls wraps a CallStarter: after each call start it schedules the end
// of every call the sandbox has placed and not yet been scheduled.
func (s *endingService) calls(next CallStarter) CallStarter {
	return callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
		resp, err := next.StartCallForm(ctx, ep, form)
		s.schedule()
		return resp, err
	})
}

func (s *endingService) schedule() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.srv.Placed() {
		if s.scheduled[c.Seq] {
			continue
		}
		s.scheduled[c.Seq] = true
		s.ends.Add(1)
		go func() {
			defer s.ends.Done()
			// The clock waits for the end to be stored: on a busy machine
			// it would otherwise move on while the write is under way, and
			// the run hold the call's place for call_length.
			done := s.clock.sleepThenBusy(c.ReceivedAt.Add(s.length).Sub(s.clock.Now()))
			defer done()
			phone := c.Form.Get("phone_number")
			d := store.Delivery{Key: fmt.Sprintf("end-%d", c.Seq), At: s.clock.Now(), Event: apiclient.EventEnded,
				Fields: map[string]string{"event": apiclient.EventEnded, "phone_number": phone}}
			switch s.shape {
			case "agent":
				d.Event, d.Via, d.Fields = "", ViaAgent, map[string]string{"phone_number": phone, "status": "completed"}
			case "contact":
				d.Event, d.Fields = "", map[string]string{"phone_number": phone, "first_name": "Ada"}
			}
			if _, _, err := s.w.Append(d); err != nil {
				s.t.Error(err)
			}
		}()
	}
}

// checkNeverOverActive checks, from the sandbox's ledger and the
// deliveries stored, that no call was placed while k calls placed before
// it were in progress: started, their end not yet delivered, and
// call_length not yet passed since.
func (s *endingService) checkNeverOverActive(k int, callLength time.Duration) {
	s.t.Helper()
	ds, err := store.ReadDeliveries(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	end := map[string]time.Time{}
	for _, d := range ds {
		if endsCall(d) {
			end[d.Fields["phone_number"]] = d.At
		}
	}
	placed := s.srv.Placed()
	for _, c := range placed {
		active := 0
		for _, o := range placed {
			e, ended := end[o.Form.Get("phone_number")]
			if !ended || o.ReceivedAt.Add(callLength).Before(e) {
				e = o.ReceivedAt.Add(callLength)
			}
			if !o.ReceivedAt.After(c.ReceivedAt) && c.ReceivedAt.Before(e) {
				active++
			}
		}
		if active > k {
			s.t.Errorf("%s was placed at %s with %d calls in progress, over the limit of %d", c.Form.Get("phone_number"), c.ReceivedAt.Format(time.RFC3339Nano), active, k)
		}
	}
	if over := s.srv.Stats().Faults.OverActive; over != 0 {
		s.t.Errorf("the sandbox refused %d call starts over its limit of calls in progress", over)
	}
}

// TestRunMaxActiveCallsEndsDelivered: calls last 2s, and the campaign
// says call_length: 20s. Without deliveries a run with
// max_active_calls: 5 starts 5 calls every 20s; with their ends
// delivered (a call.ended, or an agent webhook's delivery, which names no
// event), a call's place is free as soon as its end is read, so the same
// run starts calls several times sooner, and the ledger shows no call
// placed over the limit. The account webhooks' contact-only deliveries,
// which name no event either, end no call: the run takes as long as
// without deliveries.
func TestRunMaxActiveCallsEndsDelivered(t *testing.T) {
	const n, k = 40, 5
	const length, guess = 2 * time.Second, 20 * time.Second
	run := func(t *testing.T, delivered bool, shape string) time.Duration {
		clock := newSimClock(t, time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC))
		e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: sandbox.Faults{MaxActive: k, CallLength: length}},
			dtCampaign(4, 8, ""), map[string]string{"leads.csv": dtSheet(n)})
		e.f.Pace.MaxActiveCalls, e.f.Pace.CallLength = k, guess
		svc := newEndingService(t, e, clock, length)
		svc.shape = shape
		feed, err := store.Files{Dir: e.f.Path(e.f.StateDir)}.FollowDeliveries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		res := e.mustRun(func(o *RunOptions) {
			o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, clock.calls(svc.calls(e.client))
			if delivered {
				o.Deliveries = feed
			}
		})
		e.checkPlacedOnce(n)
		e.checkCounts(map[store.Status]int{store.Sent: n})
		svc.ends.Wait()
		svc.checkNeverOverActive(k, guess)
		return res.FinishedAt.Sub(res.StartedAt)
	}
	var without, with, agent, contact time.Duration
	t.Run("call_length only", func(t *testing.T) { without = run(t, false, "") })
	t.Run("ends delivered", func(t *testing.T) { with = run(t, true, "") })
	t.Run("agent webhooks' completions", func(t *testing.T) { agent = run(t, true, "agent") })
	t.Run("contact-only deliveries", func(t *testing.T) { contact = run(t, true, "contact") })
	t.Logf("%d calls, at most %d in progress, calls of %s: %s on the run's clock counting call_length (%s), %s with the ends delivered, %s with the agents' completions, %s with contact-only deliveries",
		n, k, length, without, guess, with, agent, contact)
	min := time.Duration(n/k-1) * guess
	if without < min {
		t.Errorf("without deliveries the run took %s, less than %s: calls were not held for call_length", without, min)
	}
	if with > without/3 || agent > without/3 {
		t.Errorf("with the ends delivered the run took %s (%s with the agents' completions), not much less than %s without", with, agent, without)
	}
	if contact < min {
		t.Errorf("with contact-only deliveries the run took %s, less than %s: a delivery that names no event freed a call's place before call_length", contact, min)
	}
}

// TestRunMaxActiveCallsFaulted: the service places some calls and then
// answers 500 or drops the connection (the calls are uncertain, and in
// progress until their end is delivered), and drops others before
// placing them (uncertain too, never ended: held for call_length). The
// run is interrupted partway, the ends of its calls come in, and a second
// run finishes the campaign. The ledger shows nobody placed twice, every
// contact recorded sent placed, and never more than the limit in
// progress.
func TestRunMaxActiveCallsFaulted(t *testing.T) {
	const n, k = 40, 4
	const length, guess = 2 * time.Second, 30 * time.Second
	clock := newSimClock(t, time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC))
	e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: sandbox.Faults{MaxActive: k, CallLength: length,
		Share500: 0.15, ShareDrop: 0.1, ShareDropBefore: 0.1, Seed: 5}},
		dtCampaign(4, 8, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.f.Pace.MaxActiveCalls, e.f.Pace.CallLength = k, guess
	svc := newEndingService(t, e, clock, length)
	stateDir := e.f.Path(e.f.StateDir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var starts atomic.Int32
	feed, err := store.Files{Dir: stateDir}.FollowDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.run(ctx, func(o *RunOptions) {
		o.Now, o.Sleep, o.Deliveries = clock.Now, clock.Sleep, feed
		inner := clock.calls(svc.calls(e.client))
		o.Calls = callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
			if starts.Add(1) == n/2 {
				cancel() // a signal: the calls in flight finish, no new ones start
			}
			return inner.StartCallForm(ctx, ep, form)
		})
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v, want interrupted", err)
	}
	first := len(e.srv.Calls())
	svc.ends.Wait() // the first run's calls end before the second starts
	if feed, err = (store.Files{Dir: stateDir}).FollowDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	res2 := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep, o.Deliveries = clock.Now, clock.Sleep, feed
		o.Calls = clock.calls(svc.calls(e.client))
	})
	svc.ends.Wait()

	placed := dtPlaced(e.srv)
	st := e.state()
	uncertain := 0
	for i := range n {
		p := dtPhone(i)
		en, _ := st.Lookup(store.Key{Agent: "Alpha", Phone: p})
		switch {
		case placed[p] > 1:
			t.Errorf("%s placed %d times", p, placed[p])
		case en.Status == store.Sent && placed[p] != 1:
			t.Errorf("%s recorded sent, placed %d times", p, placed[p])
		case en.Status == store.Uncertain:
			uncertain++
		case en.Status != store.Sent:
			t.Errorf("%s is %s after both runs", p, en.Status)
		}
	}
	e.checkIntentBeforeSend(1)
	svc.checkNeverOverActive(k, guess)
	if uncertain == 0 || first == 0 || res.Started == 0 || res2.Started == 0 {
		t.Errorf("the faults did not bite: %d uncertain, first run %+v, second %+v", uncertain, res, res2)
	}
	t.Logf("%d call starts in the first run, %d in all; %d placed; %d uncertain", first, len(e.srv.Calls()), len(e.srv.Placed()), uncertain)
}

// TestActiveCallsEnded: a delivered end frees the slot of the call to its
// number that started first, of the agent it names, or of the call it
// names; one that came while the call's start was in flight frees it when
// the answer comes; one for a number no call is in progress to frees
// nothing.
func TestActiveCallsEnded(t *testing.T) {
	t0 := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	a := newActiveCalls(3, time.Hour)
	s1, _ := a.take(t0, "+12122010001", "agent_a")
	a.started(s1, t0, "")
	s2, _ := a.take(t0, "+12122010001", "agent_a")
	a.started(s2, t0.Add(time.Second), "")
	s3, _ := a.take(t0, "+12122010002", "agent_b")
	if slot, wait := a.take(t0, "+1", ""); slot != 0 || wait <= 0 {
		t.Fatalf("a fourth slot: %d, wait %s", slot, wait)
	}
	if a.ended("", "+12122010001", "agent_b") || a.ended("", "+12122010009", "") {
		t.Error("an end of another agent's call, or of a number not called, freed a slot")
	}
	if !a.ended("", "+12122010001", "") || a.calls[s1] != nil || a.calls[s2] == nil {
		t.Error("the end did not free the call that started first")
	}
	if !a.ended("", "+12122010002", "agent_b") || a.calls[s3] == nil {
		t.Error("an end delivered while the start was in flight freed its slot before the answer")
	}
	if slot, _ := a.take(t0, "+1", ""); slot == 0 {
		t.Error("no slot free after the first end")
	}
	if slot, _ := a.take(t0, "+1", ""); slot != 0 {
		t.Error("the call in flight whose end came is not held until its answer")
	}
	a.started(s3, t0, "")
	if a.calls[s3] != nil {
		t.Error("the call whose end came while in flight holds its slot after its answer")
	}

	// An end that names its call frees that call's slot, whichever call
	// to the number started first; one that names a call of no slot frees
	// none by its number when every call to it has an id of its own.
	b := newActiveCalls(3, time.Hour)
	c1, _ := b.take(t0, "+12122010001", "agent_a")
	b.started(c1, t0, "call_1")
	c2, _ := b.take(t0, "+12122010001", "agent_a")
	b.started(c2, t0.Add(time.Second), "call_2")
	if !b.ended("call_2", "+12122010001", "agent_a") || b.calls[c2] != nil || b.calls[c1] == nil {
		t.Error("the end of call_2 did not free call_2's slot alone")
	}
	if b.ended("call_9", "+12122010001", "agent_a") || b.calls[c1] == nil {
		t.Error("the end of another call freed call_1's slot by its number")
	}

	// A second delivery of call_1's end (it says more: a do_not_call after
	// completed, both stored) frees no slot of a redial to the number
	// whose start is in flight.
	if !b.ended("call_1", "+12122010001", "agent_a") || b.calls[c1] != nil {
		t.Error("the end of call_1 did not free its slot")
	}
	c3, _ := b.take(t0, "+12122010001", "agent_a")
	if b.ended("call_1", "+12122010001", "agent_a") || b.calls[c3] == nil || b.calls[c3].ended {
		t.Error("a second delivery of call_1's end ended the redial in flight")
	}
}

// TestRunSaysNoDeliveryCame: a run that starts a call a minute and hears
// of none for 15 minutes says, once, in its log and its notes, that the
// webhook URL is probably wrong; one that hears of its calls says
// nothing.
func TestRunSaysNoDeliveryCame(t *testing.T) {
	const n = 20
	for _, heard := range []bool{false, true} {
		t.Run(fmt.Sprint("heard=", heard), func(t *testing.T) {
			clock := newSimClock(t, time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC))
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(1.0/60, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
			var mu sync.Mutex
			var logs []string
			res := e.mustRun(func(o *RunOptions) {
				o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, clock.calls(e.client)
				o.Logf = func(format string, args ...any) {
					mu.Lock()
					defer mu.Unlock()
					logs = append(logs, fmt.Sprintf(format, args...))
				}
				o.Deliveries = func() ([]store.Delivery, error) {
					if !heard || len(e.srv.Placed()) == 0 {
						return nil, nil
					}
					return []store.Delivery{{Key: "x", Event: apiclient.EventStarted}}, nil
				}
			})
			if took := res.FinishedAt.Sub(res.StartedAt); took < 18*time.Minute {
				t.Fatalf("the run took %s on its clock, too short to test", took)
			}
			said := 0
			for _, l := range logs {
				if strings.Contains(l, "no webhook delivery has come in the 15m0s since a call started at 2025-03-03T15:00:00Z: the webhook URL is probably wrong or unreachable") {
					said++
				}
			}
			noted := len(res.Notes) == 1 && strings.Contains(res.Notes[0], "the webhook URL is probably wrong")
			switch {
			case !heard && (said != 1 || !noted):
				t.Errorf("said %d times in the log (want once), notes %q; logs:\n%s", said, res.Notes, strings.Join(logs, "\n"))
			case heard && (said != 0 || len(res.Notes) != 0):
				t.Errorf("a run that heard of its calls said %d times, notes %q", said, res.Notes)
			}
		})
	}
}
