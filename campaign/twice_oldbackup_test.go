package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestRunStateDirectoryRestoredFromABackupOlderThan15Days: a campaign's
// first attempts are checked against the call starts its campaign made
// from other journals (ForeignStartError), but only against the last 15
// days of them, those a run keeps in memory: a state directory restored
// from a backup older than that (or deleted and run again under the same
// name) called again everyone called since the backup, with no stop and
// no plan warning. Now the check covers every start of the campaign,
// those older than 15 days still in call-starts.jsonl and those a
// compaction moved into the archive alike.
//
// Campaign twin calls contacts 0-1 (the backup is made then), and an
// hour later 2-3. 40 days later its directory calls 4-5 as usual; then
// the backup is restored over it: the run stops before any call (the
// sandbox's ledger: 6 calls, before 8) and plan's reading of the call
// starts names contacts 2-5. A campaign under a new name calls them all
// (by design: a new name is a new campaign).
func TestRunStateDirectoryRestoredFromABackupOlderThan15Days(t *testing.T) {
	for _, archived := range []bool{false, true} {
		t.Run(map[bool]string{false: "in the call starts file", true: "archived"}[archived], func(t *testing.T) {
			const n = 6
			clock, base, home, _ := ptStore(t, "files")
			t0 := clock.Now()
			if archived {
				// 30 days of another campaign's calls before twin's: more
				// than the 1 MiB a compaction waits for.
				var b []byte
				for i := range 20000 {
					s := store.CallStart{Number: fmt.Sprintf("+1415555%04d", i), At: t0.Add(-time.Duration(20000-i) * 2 * time.Minute), ID: fmt.Sprintf("older journal agent +1415555%04d 0 1", i), Campaign: "older", Agent: "agent"}
					line, err := json.Marshal(s)
					if err != nil {
						t.Fatal(err)
					}
					b = append(append(b, line...), '\n')
				}
				if err := os.WriteFile(filepath.Join(home, store.CallStartsFileName), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			set := func(at time.Time) {
				clock.mu.Lock()
				clock.now = at
				clock.mu.Unlock()
			}
			run := func(e *dtEnv, limit int) (*RunResult, error) {
				return e.run(context.Background(), func(o *RunOptions) { o.Now, o.Sleep, o.Limit = clock.Now, clock.Sleep, limit })
			}
			a := ptEnv(t, base.srv, base, "twin", 0, 1, ptSheet(0, n), home, "", clock.Now)
			if res, err := run(a, 2); err != nil || res.Sent != 2 {
				t.Fatalf("first run: %+v, %v", res, err)
			}
			backup, err := os.ReadFile(a.journal)
			if err != nil {
				t.Fatal(err)
			}
			set(t0.Add(time.Hour))
			if res, err := run(a, 2); err != nil || res.Sent != 2 {
				t.Fatalf("second run: %+v, %v", res, err)
			}

			// 40 days later the directory the calls were made from runs on.
			set(t0.Add(40 * 24 * time.Hour))
			if res, err := run(a, 0); err != nil || res.Sent != 2 {
				t.Fatalf("the original directory, 40 days later: %+v, %v; want its last 2 contacts called", res, err)
			}
			if archived {
				moved, _, err := store.OpenCallStartsFile(home).Compact(clock.Now())
				if err != nil || moved < 20004 {
					t.Fatalf("compaction moved %d call starts (%v), want the 20,000 older ones and twin's first 4", moved, err)
				}
			}
			if got := len(base.srv.Placed()); got != n {
				t.Fatalf("the ledger holds %d calls, want %d", got, n)
			}

			// Plan reads what the run checks.
			cs, err := store.OpenCallStartsFile(home).CampaignStarts(context.Background(), "twin")
			if err != nil {
				t.Fatal(err)
			}
			agent := a.f.Agents[0].Name
			for i := range n {
				if _, said := cs.Started("twin", agent, dtPhone(i), 0); !said {
					t.Errorf("plan's call starts do not name twin's call to %s", dtPhone(i))
				}
			}
			if _, said := cs.Started("twin-again", agent, dtPhone(2), 0); said {
				t.Errorf("plan's call starts name a call of campaign twin-again")
			}

			// The backup restored over the directory.
			if err := os.WriteFile(a.journal, backup, 0o600); err != nil {
				t.Fatal(err)
			}
			set(clock.Now().Add(time.Hour))
			a.pressure.Starts = store.OpenCallStartsFile(home) // a new process reads the call starts afresh
			_, err = run(a, 0)
			var fe *store.ForeignStartError
			if !errors.As(err, &fe) {
				t.Errorf("the restored directory's run: err = %v, want a *store.ForeignStartError", err)
			} else {
				if from := t0.Add(time.Hour); fe.At.Before(from) || fe.At.After(t0.Add(40*24*time.Hour+time.Minute)) {
					t.Errorf("the stop names a start at %s, want one of twin's from %s", fe.At, from)
				}
				for _, says := range []string{"after 15 days too", "new name"} {
					if !strings.Contains(err.Error(), says) {
						t.Errorf("the stop's message does not say %q: %v", says, err)
					}
				}
			}
			if got := len(base.srv.Placed()); got != n {
				t.Errorf("after the restored directory's run the ledger holds %d calls, want %d: it called people again", got, n)
			}

			// A new name is a new campaign: it calls them (by design).
			set(clock.Now().Add(25 * time.Hour))
			again := ptEnv(t, base.srv, base, "twin-again", 0, 1, ptSheet(0, n), home, "", clock.Now)
			if res, err := run(again, 0); err != nil || res.Sent != n {
				t.Errorf("campaign twin-again: %+v, %v; want all %d called", res, err, n)
			}
			if archived {
				if _, err := os.Stat(filepath.Join(home, store.ArchiveContactsName)); err != nil {
					t.Errorf("the archive's index: %v", err)
				}
			}
		})
	}
}
