package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte tryLockFileOS locks on Windows: far past the end
// of any file callrun writes. LockFileEx locks a range of bytes, and a
// locked range cannot be read or written through any other handle, even
// the locking process's own; gofrs/flock locks byte 0, which would stop
// the pid's write into the lock file and every read of the journal. A
// lock past the end of the file stops nothing but another lock.
const lockOffset = 1 << 62

// tryLockFileOS is tryLockFile on Windows: LockFileEx on one byte at
// lockOffset, through a handle kept open until unlock.
func tryLockFileOS(path string, flag int, shared bool) (func() error, bool, error) {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, false, err
	}
	h := windows.Handle(f.Fd())
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	at := func() *windows.Overlapped {
		return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	}
	if err := windows.LockFileEx(h, flags, 0, 1, 0, at()); err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return nil, false, nil
		}
		return nil, false, &os.PathError{Op: "lock", Path: path, Err: err}
	}
	return func() error {
		err := windows.UnlockFileEx(h, 0, 1, 0, at())
		return errors.Join(err, f.Close())
	}, true, nil
}
