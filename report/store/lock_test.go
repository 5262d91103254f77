package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "campaign")
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", fi.Mode().Perm())
	}

	// flock locks belong to open files, so a second Lock in this process
	// conflicts just as another process would.
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v; want ErrLocked", err)
	}
	pid := strconv.Itoa(os.Getpid())
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "pid "+pid) {
		t.Errorf("error %q does not name the directory and pid %s", msg, pid)
	}

	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	unlock, err = Lock(dir)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

func TestLockWithoutPid(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(dir, "lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "pid") {
		t.Errorf("Lock: %v; want ErrLocked without a pid", err)
	}
}

// TestLockedFilesStayReadable: the locks leave the locked files' bytes to
// everyone. A run appends to the journal it holds locked, from its first
// byte on, `callrun status` replays it meanwhile, and a second run reads
// the holder's pid from the lock file. (On Windows a lock is a locked
// range of bytes that no other handle may read or write; tryLockFile
// locks a byte past the end of the file there, so this holds on all
// three systems.)
func TestLockedFilesStayReadable(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if pid := lockHolder(filepath.Join(dir, "lock")); pid != strconv.Itoa(os.Getpid()) {
		t.Errorf("the locked lock file names pid %q, want %d", pid, os.Getpid())
	}

	path := filepath.Join(dir, JournalFile)
	j, st, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer j.Close()
	mustAppend(t, j, intent("east", "+14155550100"), outcome("east", "+14155550100", "sent"))
	s := readState(t, path) // another handle, while the journal is locked
	if got, ok := s.Status(Key{"east", "+14155550100", 0}); !ok || got != Sent {
		t.Errorf("replayed while locked: status %q, %v; want %q", got, ok, Sent)
	}
}
