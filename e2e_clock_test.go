package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestRunStopsOnAClockOffFromTheService: the service dates its answers
// two hours before this machine's clock (this machine's clock is two
// hours ahead, say). A run reads the called person's hours and contact
// pressure by this machine's clock, so it starts no call: before the
// first when the agents' answers say so, and, when the clocks part only
// at the answer to the third call start, no fourth. Nobody is called twice, and a
// run once the clocks agree again calls the rest.
func TestRunStopsOnAClockOffFromTheService(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rightFor int32 // the call start whose answer is the first dated two hours back; 0: every answer
	}{
		{"from the start", 0},
		{"after three calls", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 8
			srv := sandbox.NewUnstartedServer(sandbox.Options{})
			var callStarts atomic.Int32
			var apart atomic.Bool
			apart.Store(tc.rightFor == 0)
			inner := srv.Handler()
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if parts := strings.Split(r.URL.Path, "/"); len(parts) == 4 && parts[1] == "call" {
					if callStarts.Add(1) == tc.rightFor {
						apart.Store(true) // this one's answer is the first dated wrong
					}
				}
				if apart.Load() {
					w.Header().Set("Date", time.Now().Add(-2*time.Hour).UTC().Format(http.TimeFormat))
				}
				inner.ServeHTTP(w, r)
			})
			srv.Start()
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 1})

			res := e.run(60*time.Second, "run", e.path)
			if res.code == 0 {
				t.Fatalf("run with this machine's clock two hours ahead of the service's: exit 0\n%s", res)
			}
			if want := "this machine's clock is 2h0m0s ahead of the voice service's"; !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "time sync") {
				t.Errorf("stderr does not say %q and what to do:\n%s", want, res.stderr)
			}
			if got := len(srv.Placed()); got != int(tc.rightFor) {
				t.Errorf("%d calls placed; want %d (none after the clocks parted)", got, tc.rightFor)
			}
			e.ledger().checkNobodyTwice(t)

			apart.Store(false)
			callStarts.Store(-n) // no call start parts the clocks again
			if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
				t.Fatalf("run once the clocks agree: %s", res)
			}
			if got := len(srv.Placed()); got != n {
				t.Errorf("%d calls placed in all; want %d", got, n)
			}
			e.ledger().checkNobodyTwice(t)
		})
	}
}
