package campaign

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunStartsFailureLeavesNobodyUncertain: with contact pressure in
// files, a commit writes and syncs the journal's intents, then counts
// their starts in CALLRUN_HOME's call-starts file. When that write fails
// (the disk gone full), every caller is told so and no call of those
// intents starts; but the intents stayed in the journal, and the next run
// read those contacts as uncertain, held back for --retry-uncertain though
// the service never saw them.
func TestRunStartsFailureLeavesNobodyUncertain(t *testing.T) {
	const n = 6
	clock := &dtClock{now: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	starts := store.OpenCallStartsFile(t.TempDir())
	e.pressure = &store.Pressure{Limits: store.DefaultPressure, Starts: starts, Campaign: e.f.Name, Now: clock.Now}
	var syncs atomic.Int32
	starts.BeforeSync = func() error {
		if syncs.Add(1) >= 3 {
			return errors.New("no space left on device")
		}
		return nil
	}
	e.journalClosed.Store(true)
	_, err := e.run(context.Background(), func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	if err == nil || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("err = %v, want the failure to count the starts", err)
	}
	starts.BeforeSync = nil
	received := dtReceived(e.srv)
	if len(received) == 0 || len(received) == n {
		t.Fatalf("%d numbers received: the starts failed at the wrong time", len(received))
	}
	st := e.state()
	for i := range n {
		p := dtPhone(i)
		s, _ := st.Status(store.Key{Agent: "Alpha", Phone: p})
		if s == store.Uncertain && received[p] == 0 {
			t.Errorf("%s reads uncertain, but the sandbox never received its call start", p)
		}
		if received[p] != 0 && s != store.Sent {
			t.Errorf("%s reads %s, but the sandbox answered its call start", p, s)
		}
	}
	// The next run calls everyone the service never saw, once.
	e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	placed := dtPlaced(e.srv)
	for i := range n {
		if p := dtPhone(i); placed[p] != 1 {
			t.Errorf("%s placed %d times, want 1", p, placed[p])
		}
	}
	e.checkIntentBeforeSend(1)
}
