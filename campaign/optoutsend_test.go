package campaign

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// optOutWhileToken is a CallStarter whose first call start has the
// contact's number put on the do-not-call list before it reaches the
// client, as listen storing the person's opt-out would while the call
// start waits for its access token (a refresh, another process's
// refresh): after the run's read of the list, before the request leaves.
type optOutWhileToken struct {
	CallStarter
	t    *testing.T
	list store.DoNotCallList
	n    atomic.Int32
}

func (o *optOutWhileToken) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if o.n.Add(1) == 1 {
		number := ""
		for _, kv := range strings.Split(form, "&") {
			if v, ok := strings.CutPrefix(kv, "phone_number="); ok {
				number = strings.ReplaceAll(v, "%2B", "+")
			}
		}
		if _, err := o.list.Add(ctx, []store.DoNotCallEntry{{Number: number, Source: "delivery k1 of campaign dispatch-test"}}); err != nil {
			o.t.Error(err)
		}
	}
	return o.CallStarter.StartCallForm(ctx, ep, form)
}

// TestRunHonoursAnOptOutStoredWhileTheTokenIsHad: the person opts out
// (listen puts the number on the store's list) after the run read the
// list right before the call start but while the call start waits for
// its access token. Before, the call start left all the same: the send
// check right before the request leaves read the hours and the intent's
// age, not the list, and the sandbox's ledger had the call. Now the send
// check reads the list too: no call reaches the sandbox, and the contact
// is not called for the list (skipped, not uncertain).
func TestRunHonoursAnOptOutStoredWhileTheTokenIsHad(t *testing.T) {
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(500, 1, ""), map[string]string{"leads.csv": dtSheet(1)})
	list := store.OpenDoNotCallFile(t.TempDir())
	e.dnc = list
	calls := &optOutWhileToken{CallStarter: e.client, t: t, list: list}
	res := e.mustRun(func(o *RunOptions) { o.DoNotCall, o.Calls = list, calls })
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
}
