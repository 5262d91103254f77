package campaign

import (
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestRunPressureRetries: --retry-uncertain and --retry-failed count
// like any call. Campaign A's calls to two numbers end uncertain (the
// service placed them and answered 500): an hour later A's
// --retry-uncertain is held back, sending nothing. Its calls to two
// other numbers are refused (a 200 that says error), which gives their
// day back: an hour later A's --retry-failed places them, and an hour
// after that campaign B, on the same store, holds back all four. The
// sandbox's ledger counts the requests: none from the held runs.
func TestRunPressureRetries(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) {
			clock, base, home, url := ptStore(t, kind)
			unsure := ptEnv(t, base.srv, base, "a-unsure", 0, 1, ptSheet(0, 2), home, url, clock.Now)
			refused := ptEnv(t, base.srv, base, "a-refused", 0, 1, ptSheet(2, 4), home, url, clock.Now)
			other := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 4), home, url, clock.Now)
			run := func(e *dtEnv, f func(o *RunOptions)) *RunResult {
				return e.mustRun(func(o *RunOptions) {
					o.Now, o.Sleep = clock.Now, clock.Sleep
					if f != nil {
						f(o)
					}
				})
			}
			later := func(d time.Duration) {
				clock.mu.Lock()
				clock.now = clock.now.Add(d)
				clock.mu.Unlock()
			}
			calls := func() int { return len(base.srv.Calls()) }

			base.srv.SetFaults(sandbox.Faults{Share500: 1})
			if res := run(unsure, nil); res.Uncertain != 2 {
				t.Fatalf("A with every answer 500: %+v; want 2 uncertain", res)
			}
			base.srv.SetFaults(sandbox.Faults{Share200Error: 1})
			if res := run(refused, nil); res.Failed != 2 {
				t.Fatalf("A with every answer a refusal: %+v; want 2 failed", res)
			}
			base.srv.SetFaults(sandbox.Faults{})
			if n := len(base.srv.Placed()); n != 2 || calls() != 4 {
				t.Fatalf("ledger after the first runs: %d placed of %d calls; want 2 of 4", n, calls())
			}

			later(time.Hour)
			before := calls()
			if res := run(unsure, func(o *RunOptions) { o.RetryUncertain = true }); res.Held != 2 || res.Sent != 0 || calls() != before {
				t.Errorf("--retry-uncertain an hour after the uncertain calls: %+v, %d new call(s) in the ledger; want 2 held, none", res, calls()-before)
			}
			if res := run(refused, func(o *RunOptions) { o.RetryFailed = true }); res.Sent != 2 || res.Held != 0 {
				t.Errorf("--retry-failed an hour after the refusals: %+v; want both placed, a refusal gives the day back", res)
			}

			later(time.Hour)
			before = calls()
			if res := run(other, nil); res.Held != 4 || res.Sent != 0 || calls() != before {
				t.Errorf("campaign B two hours after A: %+v, %d new call(s) in the ledger; want all 4 held, none", res, calls()-before)
			}
			placed := dtPlaced(base.srv)
			for i := range 4 {
				if placed[dtPhone(i)] != 1 {
					t.Errorf("%s placed %d times; want once", dtPhone(i), placed[dtPhone(i)])
				}
			}
		})
	}
}
