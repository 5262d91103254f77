package campaign

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// slowDoNotCall is a do-not-call list on which no number is, whose
// reading right before a call start takes a minute of the run's clock:
// a list another process appended a large import to, or a database slow
// to answer.
type slowDoNotCall struct {
	store.DoNotCallList
	clock *dtClock
}

func (s slowDoNotCall) Has(context.Context, string) (bool, error) {
	s.clock.mu.Lock()
	s.clock.now = s.clock.now.Add(time.Minute)
	s.clock.mu.Unlock()
	return false, nil
}

// TestCalledPersonHoursAfterTheLastRead: the called person's hours are
// the last thing checked before a call start leaves. A New York number,
// its intent written at 19:59:30 there, whose do-not-call read right
// before the call start takes a minute, is not called at 20:00:30; it
// stays pending. The sandbox's ledger counts no call.
func TestCalledPersonHoursAfterTheLastRead(t *testing.T) {
	yaml := strings.Replace(dtCampaign(1000, 1, ""), "unsafe_ignore_called_person_hours: true\n", "", 1)
	// Wednesday 6 January 2027, 00:59:30 UTC: 19:59:30 in New York.
	clock := &dtClock{now: time.Date(2027, 1, 7, 0, 59, 30, 0, time.UTC)}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": dtSheet(1)})
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.DoNotCall = slowDoNotCall{clock: clock}
	})
	if n := len(e.srv.Calls()); n != 0 || res.Sent != 0 || res.Pending != 1 {
		for _, c := range e.srv.Calls() {
			t.Logf("called %s at %s", c.Form.Get("phone_number"), c.ReceivedAt.In(mustZone(t, "America/New_York")).Format(time.DateTime))
		}
		t.Errorf("%d call(s) in the ledger, %+v; want none, the contact pending", n, res)
	}
}

// TestCalledPersonHoursAfterTheToken: the called person's hours are
// checked again once the call start's token is had. A New York number
// whose call start, sent at 19:59:30 there, is answered 401 (the service
// forgot its access tokens), and whose token refresh takes a minute of
// the run's clock, is not sent again at 20:00:30: it stays pending, and
// the sandbox's ledger counts no call.
func TestCalledPersonHoursAfterTheToken(t *testing.T) {
	yaml := strings.Replace(dtCampaign(1000, 1, ""), "unsafe_ignore_called_person_hours: true\n", "", 1)
	// Wednesday 6 January 2027, 00:59:30 UTC: 19:59:30 in New York.
	clock := &dtClock{now: time.Date(2027, 1, 7, 0, 59, 30, 0, time.UTC)}
	var armed atomic.Bool
	refreshes := 0
	logf := func(format string, args ...any) {
		if armed.Load() && strings.Contains(fmt.Sprintf(format, args...), "/oauth/token") {
			clock.mu.Lock()
			clock.now = clock.now.Add(time.Minute)
			refreshes++
			clock.mu.Unlock()
		}
	}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now, Logf: logf}, yaml, map[string]string{"leads.csv": dtSheet(1)})
	e.srv.ExpireAccessTokens()
	armed.Store(true)
	res := e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	clock.mu.Lock()
	n := refreshes
	clock.mu.Unlock()
	if n == 0 {
		t.Fatal("the token was never refreshed: the test did not reach its case")
	}
	placed := 0
	for _, c := range e.srv.Calls() {
		t.Logf("%s received at %s: %s", c.Form.Get("phone_number"), c.ReceivedAt.In(mustZone(t, "America/New_York")).Format(time.DateTime), c.Outcome)
		if c.Placed {
			placed++
		}
	}
	if placed != 0 || res.Sent != 0 || res.Pending != 1 {
		t.Errorf("%d call(s) placed in the ledger, %+v; want none, the contact pending", placed, res)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
