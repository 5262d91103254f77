package campaign

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// firstLimited is a CallStarter that answers the first call start 429
// with Retry-After 2h (an answer that pauses every call start of the
// run), once entered waiting for release before answering; every other
// call start goes to the sandbox.
type firstLimited struct {
	CallStarter
	mu      sync.Mutex
	first   string        // the number of the first call start
	entered chan struct{} // closed when the first call start is entered
	release chan struct{} // the first call start answers once it is closed
}

func (f *firstLimited) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	v, _ := url.ParseQuery(form)
	f.mu.Lock()
	isFirst := f.first == ""
	if isFirst {
		f.first = v.Get("phone_number")
	}
	f.mu.Unlock()
	if !isFirst {
		return f.CallStarter.StartCallForm(ctx, ep, form)
	}
	close(f.entered)
	<-f.release
	return nil, &apiclient.Error{Op: "start call", Method: "POST", StatusCode: 429, RetryAfter: 2 * time.Hour, Message: "rate limit exceeded"}
}

// TestRunPressureCountsTheStartWhenItLeaves: a call start whose intent
// (and its count in the store's call starts) was written just as another
// worker's answer paused every call start for two hours waits that pause
// out before it leaves. Its start then counts from when it left, not
// from when its intent was written: another campaign on the store, 23
// hours after the call, holds the number back. Before, the start counted
// from two hours before the call, and the other campaign called the
// number again 23 hours after it. The sandbox's ledger: no number placed
// twice within 24 hours.
func TestRunPressureCountsTheStartWhenItLeaves(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	clock := &dtClock{now: t0}
	base := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(1)})
	home := t.TempDir()
	env := func(name string, yaml string) *dtEnv {
		yaml = strings.Replace(yaml, "name: dispatch-test", "name: "+name, 1)
		e := dtPrepare(t, base.srv, base.client, t.TempDir(), yaml, map[string]string{"leads.csv": ptSheet(0, 2)})
		e.pressure = &store.Pressure{Limits: store.DefaultPressure, Starts: store.OpenCallStartsFile(home), Campaign: name, Now: clock.Now}
		return e
	}
	// One call a second, two workers: the second worker waits a second
	// for its turn while the first calls.
	a := env("a", strings.Replace(dtCampaign(1, 2, ""), "concurrency: 2}", "concurrency: 2, max_retry_after: 6h}", 1))
	b := env("b", dtCampaign(1000, 2, ""))

	calls := &firstLimited{CallStarter: a.client, entered: make(chan struct{}), release: make(chan struct{})}
	inHook, paused := make(chan struct{}), make(chan struct{})
	var hookOnce, pauseOnce sync.Once
	// The second intent's batch is written while the first call start
	// waits for its answer, and is synced once that answer (a 429) has
	// paused the run.
	a.beforeSync = func() error {
		select {
		case <-calls.entered:
		default:
			return nil // the first intent
		}
		journal, err := os.ReadFile(a.journal)
		if err != nil {
			return err
		}
		calls.mu.Lock()
		first := calls.first
		calls.mu.Unlock()
		second := dtPhone(0)
		if first == second {
			second = dtPhone(1)
		}
		if bytes.Contains(journal, []byte(`"t":"intent","agent":"Alpha","phone":"`+second+`"`)) {
			hookOnce.Do(func() {
				close(inHook)
				<-paused
			})
		}
		return nil
	}
	secondWaits := make(chan struct{})
	var long sync.Mutex
	longs := 0
	clock.hold = func(d time.Duration) {
		switch {
		case d < time.Minute: // the second worker's turn: after the first call start has left
			<-calls.entered
		case d >= time.Hour:
			long.Lock()
			longs++
			n := longs
			long.Unlock()
			switch n {
			case 1: // the first worker waits out the 429 it was answered, which paused the run
				pauseOnce.Do(func() { close(paused) })
				<-secondWaits // the clock moves once the second worker saw the pause
			case 2: // the second worker waits the pause out
				close(secondWaits)
			}
		}
	}
	go func() { <-inHook; close(calls.release) }()
	res := a.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Calls = calls
	})
	clock.hold = nil
	if res.Sent != 2 {
		t.Fatalf("campaign A: %+v; want both sent", res)
	}
	placed := map[string][]time.Time{}
	for _, c := range base.srv.Placed() {
		placed[c.Form.Get("phone_number")] = append(placed[c.Form.Get("phone_number")], c.ReceivedAt)
	}
	var last time.Time
	for _, at := range placed {
		for _, t := range at {
			if t.After(last) {
				last = t
			}
		}
	}
	if last.Sub(t0) < 2*time.Hour {
		t.Fatalf("the calls were placed at %v; want them after the two hours' pause", placed)
	}

	clock.mu.Lock()
	clock.now = last.Add(23 * time.Hour)
	clock.mu.Unlock()
	before := len(base.srv.Calls())
	res = b.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	if res.Held != 2 || res.Sent != 0 || len(base.srv.Calls()) != before {
		t.Errorf("campaign B 23 hours after A's calls: %+v, %d new call(s) in the ledger; want both held, none", res, len(base.srv.Calls())-before)
	}
	placed = map[string][]time.Time{}
	for _, c := range base.srv.Placed() {
		placed[c.Form.Get("phone_number")] = append(placed[c.Form.Get("phone_number")], c.ReceivedAt)
	}
	for p, at := range placed {
		for i := 1; i < len(at); i++ {
			if at[i].Sub(at[i-1]) < 24*time.Hour {
				t.Errorf("%s placed at %v: twice within 24 hours", p, at)
			}
		}
	}
}
