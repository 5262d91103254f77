//go:build !windows

package durable

import "os"

// rename replaces newpath with oldpath. On Linux and macOS rename(2) does
// it atomically; SyncDir then makes it durable.
func rename(oldpath, newpath string) error {
	return os.Rename(oldpath, newpath)
}

// SyncDir makes the entries of directory dir durable after a file in it
// was created or renamed: without it, a power cut can lose a new file's
// name, or bring back the old file under the new one's.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
