package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// TestPlanSaysRunWouldStopOnAClockOffFromTheService: the service dates
// its answers two hours before this machine's clock. run stops before its
// first call ("check the clock"); plan, online, read the same dates in
// the service's answers to it and used to say all was fine (exit 0).
// Now it says RUN WOULD STOP and why (clock_off in the JSON) and exits 1
// as run would (4 with --strict); --offline, which asks the service
// nothing, cannot know. A run in between places no call (the sandbox's
// ledger); once the clocks agree, plan is clean.
func TestPlanSaysRunWouldStopOnAClockOffFromTheService(t *testing.T) {
	const n = 3
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	var apart atomic.Bool
	apart.Store(true)
	inner := srv.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if apart.Load() {
			w.Header().Set("Date", time.Now().Add(-2*time.Hour).UTC().Format(http.TimeFormat))
		}
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 1})

	plan := func(args ...string) (string, e2eResult) {
		t.Helper()
		res := e.run(30*time.Second, append(append([]string{"plan", "--format", "json"}, args...), e.path)...)
		var p struct {
			ClockOff string `json:"clock_off"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
			t.Fatalf("plan --format json: %v: %s", err, res)
		}
		return p.ClockOff, res
	}
	const says = "this machine's clock is 2h0m0s ahead of the voice service's"
	if off, res := plan(); res.code != exitRuntime || !strings.Contains(off, says) || !strings.Contains(res.stderr, "run would stop") || !strings.Contains(res.stderr, "time sync") {
		t.Errorf("plan with this machine's clock two hours ahead of the service's: clock_off %q: %s", off, res)
	}
	if text := e.run(30*time.Second, "plan", e.path); text.code != exitRuntime || !strings.Contains(text.stdout, "RUN WOULD STOP") || !strings.Contains(text.stdout, says) {
		t.Errorf("plan, text: %s", text)
	}
	if strict := e.run(30*time.Second, "plan", "--strict", e.path); strict.code != run.ExitInvalidRows {
		t.Errorf("plan --strict: exit %d, want %d: %s", strict.code, run.ExitInvalidRows, strict)
	}
	if off, res := plan("--offline"); res.code != 0 || off != "" {
		t.Errorf("plan --offline, which asks the service nothing: %s", res)
	}

	// The plan was right: run stops, and calls nobody.
	if res := e.run(60*time.Second, "run", e.path); res.code != exitRuntime || !strings.Contains(res.stderr, says) {
		t.Errorf("run: %s", res)
	}
	if got := len(srv.Calls()); got != 0 {
		t.Fatalf("a run with the clocks apart placed %d calls, want 0", got)
	}

	apart.Store(false)
	if off, res := plan(); res.code != 0 || off != "" {
		t.Errorf("plan once the clocks agree: %s", res)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run once the clocks agree: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != n {
		t.Errorf("%d of %d contacts placed once the clocks agree", l.totalPlaced(), n)
	}
}
