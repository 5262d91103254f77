//go:build unix

package private

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheck: a directory open to other users is closed when it is the
// running user's and callrun's, and refused otherwise, with its mode left
// as it was; one shared through its group keeps the group, and its files
// get the group's mode. Under umask 000, so that nothing is closed by
// chance.
func TestCheck(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	root := os.Getuid() == 0
	for _, tc := range []struct {
		name     string
		mode     fs.FileMode // with fs.ModeSetgid, fs.ModeSticky
		files    []string
		chown    [2]int // uid, gid; -1 keeps; root only
		want     fs.FileMode
		modes    Modes
		refused  string // in the error; "" when accepted
		needRoot bool
	}{
		{name: "closed already", mode: 0o700, want: 0o700, modes: Own},
		{name: "an empty directory open to all", mode: 0o777, want: 0o700, modes: Own},
		{name: "a state directory made with mkdir", mode: 0o755, files: []string{"journal.jsonl"}, want: 0o700, modes: Own},
		{name: "a directory of other files", mode: 0o755, files: []string{"notes.txt"}, want: 0o755, refused: "not callrun's"},
		{name: "a directory every user shares", mode: 0o777 | fs.ModeSticky, want: 0o777 | fs.ModeSticky, refused: "such as /tmp"},
		{name: "a team's, set-group-ID", mode: 0o777 | fs.ModeSetgid, want: 0o770 | fs.ModeSetgid, modes: Team},
		{name: "a team's, set-group-ID, closed already", mode: 0o770 | fs.ModeSetgid, want: 0o770 | fs.ModeSetgid, modes: Team},
		{name: "group access without write is no team's", mode: 0o750 | fs.ModeSetgid, want: 0o750 | fs.ModeSetgid, modes: Own},
		{name: "a team's group", mode: 0o777, chown: [2]int{-1, 4242}, want: 0o770, modes: Team, needRoot: true},
		{name: "the owner's private group", mode: 0o770, want: 0o770, modes: Own, needRoot: true},
		{name: "another user's", mode: 0o777, chown: [2]int{65534, -1}, want: 0o777, refused: "belongs to", needRoot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needRoot && !root {
				t.Skip("needs root to give the directory another owner or group")
			}
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.chown != [2]int{} {
				if err := os.Chown(dir, tc.chown[0], tc.chown[1]); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			m, err := Check(dir, "the test's state", "journal.jsonl")
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tc.refused != "" && (!errors.Is(err, ErrOpen) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), dir)):
				t.Fatalf("Check: %v; want it refused, naming %s and saying %q", err, dir, tc.refused)
			case tc.refused == "" && m != tc.modes:
				t.Errorf("Check = %+v; want %+v", m, tc.modes)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() &^ fs.ModeDir; got != tc.want {
				t.Errorf("the directory's mode after Check: %v; want %v", got, tc.want)
			}
			if tc.refused == "" {
				if got := FileMode(dir); got != tc.modes.File {
					t.Errorf("FileMode = %v; want %v", got, tc.modes.File)
				}
			}
		})
	}
}

// TestCheckMissing: a directory not made yet is its maker's to make: it
// is not made, and gets the owner's modes.
func TestCheckMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	if m, err := Check(dir, "the test's state"); err != nil || m != Own {
		t.Fatalf("Check = %+v, %v; want Own, nil", m, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check made %s: %v", dir, err)
	}
}
