// Package durable writes files that a crash or a power cut leaves whole,
// on Linux, macOS and Windows: a file replaced through it is either the
// previous version or the new one, never a mix, and once Commit returns
// the new one is on disk. The token file, report.csv, report.xlsx and
// summary.json are written with it; the journal and the state directory's
// lock use [SyncDir] after creating a file.
package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written in place of another. Its bytes go to a
// temporary file beside the target, named ".<name>.<random>.tmp" (a name
// report.RemoveStale knows, for the ones a killed process leaves); Commit
// makes it the target. A File is not safe for concurrent use.
type File struct {
	path string
	f    *os.File
	done bool // committed or aborted
}

// Create starts a file that Commit will put at path with mode perm (on
// Windows, whose permissions are not modes, perm only decides whether the
// file is read-only). The directory of path must exist.
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file 0600; set perm exactly, whatever the umask
	// and whatever the mode of the file it replaces.
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{path: path, f: f}, nil
}

// Write writes p to the temporary file.
func (w *File) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("write after commit or abort")
	}
	return w.f.Write(p)
}

// Commit syncs the temporary file, renames it over the target and makes
// the rename durable. After a failed Commit the target is as it was and
// the temporary file is gone.
func (w *File) Commit() error {
	if w.done {
		return errors.New("commit after commit or abort")
	}
	w.done = true
	tmp := w.f.Name()
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(tmp, w.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(w.path))
}

// Abort drops the temporary file and leaves the target as it was. It does
// nothing after Commit, so it is safe to defer.
func (w *File) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

// WriteFile replaces the file at path with data, mode perm, as a [File]
// does.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	w, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Commit()
}
