package campaign

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// optOutWhileToken is a CallStarter whose first call start waits by on
// the run's clock (a slow token: a refresh, another process's refresh)
// and has the contact's number put on the do-not-call list meanwhile, as
// listen storing the person's opt-out would: after the run's reads of
// the list, before the request leaves.
type optOutWhileToken struct {
	CallStarter
	t     *testing.T
	list  store.DoNotCallList
	clock *dtClock
	by    time.Duration
	n     atomic.Int32
}

func (o *optOutWhileToken) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if o.n.Add(1) == 1 {
		o.clock.mu.Lock()
		o.clock.now = o.clock.now.Add(o.by)
		o.clock.mu.Unlock()
		vals, err := url.ParseQuery(form)
		if err != nil {
			o.t.Error(err)
		}
		if _, err := o.list.Add(ctx, []store.DoNotCallEntry{{Number: vals.Get("phone_number"), Source: "delivery k1 of campaign dispatch-test"}}); err != nil {
			o.t.Error(err)
		}
	}
	return o.CallStarter.StartCallForm(ctx, ep, form)
}

// TestRunHonoursAnOptOutStoredWhileTheTokenIsHad: the person opts out
// (listen puts the number on the store's list) after the run's reads of
// the list (with PostgreSQL, the intent's INSERT; with files, that and
// the read right before the call start) while the call start waits five
// seconds for its access token. Before, the call start left all the
// same: the send check right before the request leaves read the hours
// and the intent's age, not the list, and the sandbox's ledger had the
// call. Now the send check reads the list too (with PostgreSQL, once the
// start waited over a second since its intent): no call reaches the
// sandbox, and the contact is not called for the list (skipped, not
// uncertain).
func TestRunHonoursAnOptOutStoredWhileTheTokenIsHad(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) {
			clock := &dtClock{now: time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(500, 1, ""), map[string]string{"leads.csv": dtSheet(1)})
			e.use(kind)
			var list store.DoNotCallList = store.OpenDoNotCallFile(t.TempDir())
			if e.pg != nil {
				list, _ = e.pg.DoNotCall()
			}
			e.dnc = list // the journal's read, as it writes the intent
			calls := &optOutWhileToken{CallStarter: e.client, t: t, list: list, clock: clock, by: 5 * time.Second}
			res := e.mustRun(func(o *RunOptions) {
				o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls
				if list.CheckedAtEachCall() {
					o.DoNotCall = list
				} else {
					o.DoNotCallLate = list
				}
			})
			if calls.n.Load() == 0 {
				t.Fatal("no call start was tried")
			}
			if n := len(e.srv.Calls()); n != 0 {
				t.Errorf("the sandbox received %d call start(s) for a number on the do-not-call list, want none", n)
			}
			if res.DoNotCall != 1 || res.Sent != 0 || res.Uncertain != 0 {
				t.Errorf("result %+v, want the contact not called for the list", res)
			}
			if en, ok := e.entry(dtPhone(0)); !ok || en.Status == store.Uncertain || en.Status == store.Sent {
				t.Errorf("journal entry %+v (found %v): want it skipped, not sent or uncertain", en, ok)
			}
		})
	}
}
