package sheet

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckRegular returns nil if path is a regular file (after symlinks), and
// otherwise why it cannot be read as one: the stat error, or what it is.
// [Open] checks a sheet with it before opening it, and the campaign file's
// loader checks suppression files and prompt files with it, because
// opening a named pipe blocks until something writes to it, and a device
// such as /dev/zero never ends.
func CheckRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir() && strings.EqualFold(filepath.Ext(path), ".numbers"):
		// Numbers keeps some documents as a folder that Finder shows as one file.
		return errors.New("it is an Apple Numbers document, which callrun does not read: in Numbers use File > Export To > CSV (Text Encoding: Unicode (UTF-8)) or Excel")
	case m.IsDir():
		return errors.New("it is a directory, not a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("it is a named pipe (FIFO), not a regular file; give the path of a CSV file")
	case m&fs.ModeDevice != 0:
		return errors.New("it is a device, not a regular file; give the path of a CSV file")
	}
	return errors.New("it is not a regular file; give the path of a CSV file")
}
