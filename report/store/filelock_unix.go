//go:build !windows

package store

import "github.com/gofrs/flock"

// tryLockFileOS is tryLockFile on Linux and macOS: an flock(2), which
// locks the file as a whole and never stops a read or a write.
func tryLockFileOS(path string, flag int, shared bool) (func() error, bool, error) {
	fl := flock.New(path, flock.SetFlag(flag))
	try := fl.TryLock
	if shared {
		try = fl.TryRLock
	}
	ok, err := try()
	if err != nil || !ok {
		return nil, false, err
	}
	return fl.Unlock, true, nil
}
