package store

// tryLockFile takes a lock on the file at path, opening it with flag
// (os.O_CREATE|os.O_RDWR, say), without waiting: ok is false when another
// handle holds it. The lock is exclusive, or shared when shared is true;
// the system releases it when the process dies. Unlike a plain
// gofrs/flock lock on Windows, it leaves every byte of the file readable
// and writable through other handles: the state directory's lock file,
// which holds the holder's pid, and the journal, which the run appends to
// and `callrun status` reads while the lock is held, are locked with it.
//
// The lock files that nobody reads or writes (agents.lock, the token
// file's) keep gofrs/flock.
func tryLockFile(path string, flag int, shared bool) (unlock func() error, ok bool, err error) {
	return tryLockFileOS(path, flag, shared)
}
