package campaign

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// twoAgentCampaign is a campaign of two agents, each with a sheet of its
// own: a.csv for Alpha, then b.csv for Beta; dedupe is the default,
// campaign: a number is called once, whichever sheet holds it.
const twoAgentCampaign = `name: twice-dedupe
agents:
  - name: Alpha
    prompt: Say hello.
  - name: Beta
    prompt: Say hi.
sheets:
  - file: a.csv
    agent: Alpha
    fields: {phone_number: Phone}
  - file: b.csv
    agent: Beta
    fields: {phone_number: Phone}
region: US
pace: {per_second: 1000, burst: 1, concurrency: 1}
unsafe_ignore_called_person_hours: true
`

// TestRunDedupeAcrossAgentsCallsOnce: with dedupe: campaign, a number
// that the journal holds under two agents, pending under one (its call
// start answered 503, provably not placed) and sent under the other, is
// settled, whichever sheet holds it first in a later run: the person was
// called. Before, a run whose first row of the number fell under the
// agent of the pending record read that record alone and called again.
func TestRunDedupeAcrossAgentsCallsOnce(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunDedupeAcrossAgentsCallsOnce(t, kind) })
	}
}

func testRunDedupeAcrossAgentsCallsOnce(t *testing.T, kind string) {
	x := dtPhone(7)
	only := "Phone\n" + x + "\n"
	none := "Phone\n"
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share503: 1}}, twoAgentCampaign,
		map[string]string{"a.csv": none, "b.csv": only})
	e.use(kind)
	clock := &dtClock{now: time.Now()}
	tune := func(o *RunOptions) { o.MaxAttempts, o.Now, o.Sleep = 1, clock.Now, clock.Sleep }

	// Run 1: the number is in Beta's sheet alone; the service answers 503:
	// pending under Beta, nobody called.
	if res := e.mustRun(tune); res.Pending != 1 || len(e.srv.Placed()) != 0 {
		t.Fatalf("run 1: %+v, %d placed", res, len(e.srv.Placed()))
	}

	// Run 2: Alpha's sheet, read first, now holds it too: called under
	// Alpha, once.
	e.srv.SetFaults(sandbox.Faults{})
	dtWrite(t, filepath.Join(e.dir, "a.csv"), only)
	e.reload()
	if res := e.mustRun(tune); res.Sent != 1 {
		t.Fatalf("run 2: %+v", res)
	}
	if n := dtPlaced(e.srv)[x]; n != 1 {
		t.Fatalf("after run 2 %s placed %d times, want 1", x, n)
	}

	// Run 3: Alpha's sheet, re-exported, lacks it again: the row of Beta's
	// sheet is the number's first. The person was called in run 2.
	dtWrite(t, filepath.Join(e.dir, "a.csv"), none)
	e.reload()
	res := e.mustRun(tune)
	if n := dtPlaced(e.srv)[x]; n != 1 {
		t.Errorf("after run 3 %s placed %d times, want 1 (run 3: %+v)", x, n, res)
	}
	if res.Skipped != 1 || res.Started != 0 {
		t.Errorf("run 3: %+v, want the contact skipped as settled", res)
	}
	if st, ok := e.state().Status(store.Key{Agent: "Beta", Phone: x}); !ok || st != store.Pending {
		t.Errorf("Beta's record: %v %v", st, ok)
	}
}
