package campaign

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestRunPressureCompactionWithAClockAhead: a run's start moves the call
// starts older than 30 days into the archive, which no run reads, by
// the clock of the machine it runs on, before the run checks that clock
// against the service's. A machine whose clock is 40 days ahead (a
// share of CALLRUN_HOME, a clock set wrong) must not move the starts
// that still count: campaign A calls X; then a run on that machine
// compacts the store (and would stop at its clock check); an hour later
// by the right clock, campaign B, on the same store, has X. X gets no
// second call start: the sandbox's ledger holds one.
func TestRunPressureCompactionWithAClockAhead(t *testing.T) {
	clock, base, home, _ := ptStore(t, "files")
	// A store with 30 days of calls before A's: more than the 1 MiB a
	// compaction waits for.
	var b []byte
	t0 := clock.Now()
	for i := range 20000 {
		s := store.CallStart{Number: fmt.Sprintf("+1415555%04d", i), At: t0.Add(-time.Duration(20000-i) * 2 * time.Minute), ID: fmt.Sprintf("older journal agent +1415555%04d 0 1", i), Campaign: "older"}
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(home, store.CallStartsFileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	if res := a.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep }); res.Sent != 1 {
		t.Fatalf("campaign A: %+v", res)
	}

	// A run's start on the machine 40 days ahead.
	moved, _, err := store.OpenCallStartsFile(home).Compact(clock.Now().Add(40 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %d call starts", moved)

	clock.mu.Lock()
	clock.now = clock.now.Add(time.Hour)
	clock.mu.Unlock()
	bb := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	res := bb.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	if n := dtPlaced(base.srv)[dtPhone(0)]; n != 1 || res.Held != 1 {
		t.Errorf("X placed %d times, campaign B %+v; want once, B's held: called an hour apart", n, res)
	}
}
