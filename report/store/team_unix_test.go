//go:build unix

package store

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTeamHomeFiles: in a CALLRUN_HOME a team shares through its group
// (set-group-ID, 2770), the erasure key and the erased set, the
// do-not-call list, the conversations and their locks are made 0660 under the service's usual umask 022, so that the
// person at the shell in the group can take the locks and write, and so
// are a state directory's journal, locks (the run's, the deliveries' and
// the agents') and deliveries; in a directory of
// one user's, 0600.
func TestTeamHomeFiles(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		mode fs.FileMode
		want fs.FileMode
	}{
		{"a team's", 0o770 | fs.ModeSetgid, 0o660},
		{"one user's", 0o700, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(home, tc.mode); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenDoNotCallFile(home).Add(ctx, []DoNotCallEntry{{Number: "+14155550100", At: at, Source: "test"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenCallStartsFile(home).Converse(ctx, Conversation{Number: "+14155550100", At: at, Campaign: "a", Key: "k"}); err != nil {
				t.Fatal(err)
			}
			unlock, err := Lock(home)
			if err != nil {
				t.Fatal(err)
			}
			j, _, err := OpenJournal(filepath.Join(home, JournalFile), JournalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			j.Close()
			unlock()
			d, err := Files{Dir: home}.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			unlockAgents, err := Files{Dir: home}.LockAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			unlockAgents()
			if err := (Files{Dir: home}).RememberAgent(ctx, CreatedAgent{Name: "a", ID: "agent_1", At: at}); err != nil {
				t.Fatal(err)
			}
			keys, err := OpenErasureFile(home).MakeKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := OpenErasureFile(home).AddErased(ctx, []ErasedEntry{{Hash: keys.Hashes("+14155550100")[0], Why: "erase"}}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{ErasureKeyFileName, ErasedFileName, DoNotCallFileName, DoNotCallLockName, ConversationsFileName, CallStartsLockName, "lock", JournalFile, DeliveriesFile, DeliveriesLock, AgentsLock, AgentsCreatedFile, agentsCreatedLock} {
				fi, err := os.Stat(filepath.Join(home, name))
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != tc.want {
					t.Errorf("%s: mode %v; want %v", name, fi.Mode().Perm(), tc.want)
				}
			}
		})
	}
}
