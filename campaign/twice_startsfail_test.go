package campaign

import (
	"context"
	"errors"
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
	tune := func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep }
	_, err := e.run(context.Background(), tune)
	starts.BeforeSync = nil
	e.checkNothingUnsentUncertain(n, err, tune)
}
