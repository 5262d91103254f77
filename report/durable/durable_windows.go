package durable

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameTries bounds how long rename waits for a program that holds the
// target open for a moment (a virus scanner, the search indexer, another
// callrun reading the token file): about two seconds in all.
const renameTries = 20

// rename replaces newpath with oldpath. MoveFileEx replaces atomically on
// NTFS (the same call os.Rename makes), and MOVEFILE_WRITE_THROUGH makes
// it return only once the move is on disk, which is what SyncDir does on
// the other systems. A target that another program holds open cannot be
// replaced: rename tries again for a while, then fails, and says what to
// do when it is a report open in Excel.
func rename(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	for try := 1; ; try++ {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		held := errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
		if !held {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		if try == renameTries {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath,
				Err: fmt.Errorf("%w (is it open in another program, such as Excel? close it and try again)", err)}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SyncDir does nothing on Windows: a directory cannot be flushed there
// (FlushFileBuffers needs a handle open for writing, which a directory
// cannot have). NTFS keeps changes to directories in its own log, and a
// rename through this package is written through (see rename); that a new
// file's name survives a power cut rests on NTFS's log alone.
func SyncDir(dir string) error {
	return nil
}
