package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/callrun/callrun/report/durable"
)

// ErrLocked means that another run holds the campaign's lock: its state
// directory's, or, in PostgreSQL, the lock of the campaign or its shard.
var ErrLocked = errors.New("another callrun run holds the campaign's lock")

// Lock takes an exclusive, non-blocking lock on dir/lock, creating dir
// (mode 0700) if needed, and writes this process's pid into the lock file
// for the next one to name. It fails at once, with an error wrapping
// [ErrLocked] that names the directory and the holder's pid when it can be
// read, if another process holds the lock. The lock is the system's file
// lock (see tryLockFile): it is released when the process dies, however
// it dies.
//
// unlock releases the lock; the lock file stays.
func Lock(dir string) (unlock func() error, err error) {
	if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	path := filepath.Join(dir, "lock")
	if f, err := openOrCreate(dir, path); err == nil { // with the directory's mode
		f.Close()
	}
	unlock, ok, err := tryLockFile(path, os.O_CREATE|os.O_RDWR, false)
	if err != nil {
		return nil, fmt.Errorf("locking state directory %s: %w", dir, err)
	}
	if !ok {
		if pid := lockHolder(path); pid != "" {
			return nil, fmt.Errorf("%w: %s (held by pid %s)", ErrLocked, dir, pid)
		}
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	// The pid is for people and error messages only; the flock is the lock.
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		unlock()
		return nil, fmt.Errorf("locking state directory %s: %w", dir, err)
	}
	return unlock, nil
}

// makeDir creates dir (mode 0700) and, when it is new, syncs its
// parent's entry: a new directory must survive a power cut with the
// files about to be written into it.
func makeDir(dir string) error {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if os.IsNotExist(statErr) {
		return durable.SyncDir(filepath.Dir(dir))
	}
	return nil
}

// lockHolder returns the pid written in a lock file, or "" if there is
// none that looks like one.
func lockHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	return pid
}
