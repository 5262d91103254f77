package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestCalledPersonHoursAfterTheRateLimit: a run that starts inside the
// called person's hours and waits its turn under pace.per_second sends
// nothing once their hours close. Three New York numbers at one call a
// minute from 19:58:30 there: the first at 19:58:30, the second at
// 19:59:30; the third's turn comes at 20:00:30, and it stays pending.
// The sandbox's ledger counts two calls, none at 20:00 or later.
func TestCalledPersonHoursAfterTheRateLimit(t *testing.T) {
	yaml := strings.Replace(dtCampaign(1.0/60, 1, ""), "unsafe_ignore_called_person_hours: true\n", "", 1)
	// Wednesday 6 January 2027, 00:58:30 UTC: 19:58:30 in New York.
	clock := &dtClock{now: time.Date(2027, 1, 7, 0, 58, 30, 0, time.UTC)}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": dtSheet(3)})
	res := e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	ny := mustZone(t, "America/New_York")
	for _, c := range e.srv.Calls() {
		if lt := c.ReceivedAt.In(ny); lt.Hour() >= 20 {
			t.Errorf("%s called at %s in New York", c.Form.Get("phone_number"), lt.Format(time.TimeOnly))
		}
	}
	if n := len(e.srv.Calls()); n != 2 || res.Sent != 2 || res.Pending != 1 {
		t.Errorf("%d call(s) in the ledger, %+v; want 2, the third pending", n, res)
	}
}
