package campaign

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestRunSecondStateDirectoryOfTheSameCampaign: one campaign, run from
// two state directories on one CALLRUN_HOME (a second checkout of the
// campaign's folder, the campaign file copied elsewhere, a laptop's
// state directory restored from a backup older than its last run). Each
// journal knew only its own calls, so the second called everyone the
// first had called as soon as contact pressure let it (a day later by
// default, at once with `pressure: {off: true}`). The store's call
// starts say which campaign called whom; a first attempt of a contact
// whose number and agent the same campaign started a call to already
// is not made, and the run stops and says why.
func TestRunSecondStateDirectoryOfTheSameCampaign(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limits  []store.PressureLimit
		restore bool // the same state directory, its journal restored from before the run
	}{
		{name: "second directory, next day", limits: store.DefaultPressure},
		{name: "second directory, pressure off", limits: nil},
		{name: "journal restored from a backup, next day", limits: store.DefaultPressure, restore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 4
			clock, base, home, _ := ptStore(t, "files")
			a := ptEnv(t, base.srv, base, "twin", 0, 1, ptSheet(0, n), home, "", clock.Now)
			a.pressure.Limits = tc.limits
			a.mustRun(func(o *RunOptions) { o.Now = clock.Now })
			if got := len(base.srv.Placed()); got != n {
				t.Fatalf("first run placed %d calls, want %d", got, n)
			}
			clock.mu.Lock()
			clock.now = clock.now.Add(25 * time.Hour)
			clock.mu.Unlock()

			b := a
			if tc.restore {
				if err := os.Remove(a.journal); err != nil { // the backup was made before the first run
					t.Fatal(err)
				}
			} else {
				b = ptEnv(t, base.srv, base, "twin", 0, 1, ptSheet(0, n), home, "", clock.Now)
				b.pressure.Limits = tc.limits
			}
			_, err := b.run(context.Background(), func(o *RunOptions) { o.Now = clock.Now })
			var fe *store.ForeignStartError
			if !errors.As(err, &fe) {
				t.Errorf("second run: err = %v, want a *store.ForeignStartError", err)
			} else {
				// What to decide, for a user who restored a backup too: the
				// directory the calls were made from may be the lost one, a
				// new name calls everyone again, and waiting does not help:
				// the check reads the campaign's starts after 15 days too.
				for _, says := range []string{
					b.journal, "state directory the campaign ran from still exists",
					"restored from an older backup and the later one is lost", "callrun plan --report", "called_elsewhere", "suppress:",
					"under a new name it calls again everyone it called", "after 15 days too",
				} {
					if !strings.Contains(err.Error(), says) {
						t.Errorf("the stop's message does not say %q: %v", says, err)
					}
				}
			}
			placed := dtPlaced(base.srv)
			for i := range n {
				if p := dtPhone(i); placed[p] != 1 {
					t.Errorf("%s placed %d times, want 1", p, placed[p])
				}
			}
		})
	}
}
