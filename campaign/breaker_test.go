package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunStopsWhenCallsKeepFailing: a service that places every call and
// answers 500, or drops the connection, would make every contact
// uncertain. After BreakAfter uncertain contacts in a row (and the calls
// still in flight then), Run stops starting calls: the rest are pending,
// never sent, and the next run, once the service is mended, calls them
// and not the uncertain ones.
func TestRunStopsWhenCallsKeepFailing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults sandbox.Faults
	}{
		{"500", sandbox.Faults{Share500: 1}},
		{"dropped", sandbox.Faults{ShareDrop: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n, concurrency = 40, 3
			e := newDtEnv(t, sandbox.Options{Faults: tc.faults}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
			res, err := e.run(context.Background(), nil)
			if !errors.Is(err, ErrBreaker) {
				t.Fatalf("Run = %v, want ErrBreaker", err)
			}
			placed := len(e.srv.Calls())
			if res.Uncertain < BreakAfter || res.Uncertain > BreakAfter+concurrency-1 || res.Uncertain != placed {
				t.Errorf("%d uncertain, %d call starts received; want the same, %d to %d", res.Uncertain, placed, BreakAfter, BreakAfter+concurrency-1)
			}
			c := e.state().Counts()
			if c[store.Uncertain] != placed || c[store.Sent]+c[store.Failed] != 0 {
				t.Errorf("journal counts %v: want %d uncertain, the rest pending", c, placed)
			}
			e.checkIntentBeforeSend(1)

			e.srv.SetFaults(sandbox.Faults{})
			res = e.mustRun(nil)
			if res.Sent != n-placed || res.Skipped != placed {
				t.Errorf("second run: %+v; want %d sent, the %d uncertain skipped", res, n-placed, placed)
			}
			if got := len(e.srv.Calls()); got != n {
				t.Errorf("%d call starts received in all, want one per contact (%d)", got, n)
			}
			e.checkIntentBeforeSend(1)
		})
	}
}

// TestRunStopsWhen503sPersist: contacts left pending after every try was
// answered 503 count too: after BreakAfter of them in a row the run stops
// instead of trying each remaining contact MaxAttempts times. Nobody is
// uncertain.
func TestRunStopsWhen503sPersist(t *testing.T) {
	const n = 12
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share503: 1}}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Now()}
	res, err := e.run(context.Background(), func(o *RunOptions) { o.MaxAttempts, o.Now, o.Sleep = 2, clock.Now, clock.Sleep })
	if !errors.Is(err, ErrBreaker) {
		t.Fatalf("Run = %v, want ErrBreaker", err)
	}
	if got := len(e.srv.Calls()); got != 2*BreakAfter || len(e.srv.Placed()) != 0 {
		t.Errorf("%d call starts received, %d placed; want %d, none", got, len(e.srv.Placed()), 2*BreakAfter)
	}
	if c := e.state().Counts(); c[store.Uncertain]+c[store.Sent]+c[store.Failed] != 0 || res.Uncertain != 0 {
		t.Errorf("journal counts %v, result %+v: want everyone pending", c, res)
	}
}

// TestBreakerCountsInARow: a sent or refused contact starts the count
// again; never-sent and 429 outcomes leave it as it is.
func TestBreakerCountsInARow(t *testing.T) {
	var b breaker
	uncertain := store.Record{Status: store.OutcomeUncertain, HTTP: 500}
	feed := func(recs ...store.Record) error {
		for i := range recs {
			b.settled(&recs[i], "")
		}
		return b.open()
	}
	for range BreakAfter - 1 {
		if err := feed(uncertain); err != nil {
			t.Fatal(err)
		}
	}
	if err := feed(store.Record{Status: store.OutcomeSent, HTTP: 200}); err != nil {
		t.Fatal(err)
	}
	for range BreakAfter - 1 {
		feed(uncertain, store.Record{Status: store.OutcomeRetry, HTTP: 429}, store.Record{Status: store.OutcomeSkipped})
	}
	if err := feed(store.Record{Status: store.OutcomeFailed, HTTP: 422}); err != nil {
		t.Fatal(err)
	}
	for range BreakAfter - 1 {
		feed(uncertain)
	}
	err := feed(store.Record{Status: store.OutcomeRetry, HTTP: 503})
	if !errors.Is(err, ErrBreaker) || !strings.Contains(fmt.Sprint(err), "the last: answered 503 Service Unavailable") {
		t.Errorf("after %d bad in a row: %v", BreakAfter, err)
	}
}
