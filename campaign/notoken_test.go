package campaign

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunStopsWhenNoTokenCanBeHad: every access token expires and the
// token endpoint answers every refresh 500. The call starts that got no
// token were not sent: Run tries again with a growing backoff (on the
// injected clock, which the token source's own pause runs on too), then
// stops with an error that says why, and every contact it did not send
// stays pending. A later run, with the endpoint mended, calls them once.
func TestRunStopsWhenNoTokenCanBeHad(t *testing.T) {
	const n, canary = 10, 3
	clock := &dtClock{now: time.Now()}
	srv, client := dtStartSandboxAt(t, sandbox.NewUnstartedServer(sandbox.Options{}), clock.Now)
	e := dtPrepare(t, srv, client, t.TempDir(), dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.mustRun(func(o *RunOptions) { o.Limit = canary })

	srv.ExpireAccessTokens()
	srv.SetFaults(sandbox.Faults{ShareRefresh500: 1})
	res, err := e.run(context.Background(), func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.RetryPause, o.MaxRetryAfter = time.Second, time.Minute
	})
	var authErr *apiclient.AuthError
	if err == nil || errors.As(err, &authErr) || !strings.Contains(err.Error(), "no access token could be had in 6 tries") ||
		!strings.Contains(err.Error(), "500 Internal Server Error") || !strings.Contains(err.Error(), "stay pending") {
		t.Fatalf("Run = %v; want the run stopped for want of a token", err)
	}
	if res.Started != 0 || res.Sent+res.Failed+res.Uncertain != 0 {
		t.Errorf("result %+v: nothing was sent", res)
	}
	// Nothing reached the service but call starts answered 401 (the
	// expired token), which it did not act on.
	if placed := len(srv.Placed()); placed != canary {
		t.Errorf("%d calls placed, want the canary's %d", placed, canary)
	}
	for _, c := range srv.Calls()[canary:] {
		if c.Status != http.StatusUnauthorized {
			t.Errorf("ledger #%d: %d %s after the tokens expired", c.Seq, c.Status, c.Outcome)
		}
	}
	if c := e.state().Counts(); c[store.Sent] != canary || c[store.Failed]+c[store.Uncertain] != 0 {
		t.Errorf("journal counts %v: want the canary's %d sent and the rest pending", c, canary)
	}
	for _, r := range e.records() {
		if r.Type == store.TypeOutcome && r.Status == store.OutcomeSkipped && (r.HTTP != 0 || r.Body != "") {
			t.Errorf("skipped outcome %+v carries the token endpoint's answer", r)
		}
	}
	// The backoff grew, as a retryable outcome's does, and the token
	// endpoint was asked more than once: its own pause ran out on the
	// injected clock.
	sleeps := clock.SleepsOver(t, 1000, 2) // the limiter's waits left out
	grew := false
	for _, d := range sleeps {
		if d < 800*time.Millisecond || d > 16*time.Second*6/5 {
			t.Errorf("backoff sleep %v out of 1s to 16s (±20%%)", d)
		}
		grew = grew || d >= 16*time.Second*4/5
	}
	if len(sleeps) < 5 || len(sleeps) > 10 || !grew {
		t.Errorf("backoff sleeps %v: want 5 to 10 (each worker's tries but the last), of 1s doubling to 16s", sleeps)
	}
	if got := srv.Stats().Faults.Refresh500; got < 2 || got > 10 {
		t.Errorf("%d refreshes answered 500; want a few, one per pause", got)
	}

	// Mended, a while later: the next run calls the rest, once each.
	srv.SetFaults(sandbox.Faults{})
	clock.Sleep(context.Background(), time.Minute)
	e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	e.checkPlacedOnce(n)
	e.checkIntentBeforeSend(1)
	e.checkCounts(map[store.Status]int{store.Sent: n})
}
