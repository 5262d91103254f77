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
