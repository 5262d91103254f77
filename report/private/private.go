// Package private keeps the directories that hold personal data (a
// campaign's state directory, with its journal and reports, and
// CALLRUN_HOME, with the do-not-call list and the call starts) closed to
// the machine's other users, and says which mode the files in them get.
// report/store checks each directory as it opens the store, and the
// report writers ask it the mode of the files they write.
//
// A directory is for its owner alone (files 0600, the directory 0700),
// or for a team through its group, when its group may read, write and
// enter it and that is marked as a team's: set-group-ID (chmod 2770), or
// owned by a group that is not the owner's private group (the group of
// the owner's own name). Then files are 0660 and the directory 0770: a
// service user and a person at the shell that share one CALLRUN_HOME on
// purpose. Other users never: a directory open to
// them is tightened when the running user owns it, and refused when it
// does not. On Windows, whose permissions are not modes, nothing is
// checked and files are made as the system's defaults make them.
package private

import (
	"errors"
	"fmt"
	"io/fs"
)

// Modes are the modes of a directory that holds personal data and of the
// files in it.
type Modes struct {
	Dir, File fs.FileMode
}

var (
	// Own is a directory for its owner alone.
	Own = Modes{Dir: 0o700, File: 0o600}
	// Team is a directory shared through its group.
	Team = Modes{Dir: 0o770, File: 0o660}
)

// ErrOpen is the error of a directory open to other users that the
// running user cannot tighten.
var ErrOpen = errors.New("open to every user of this machine")

// Check makes sure dir, which holds what of the data (its reports, the
// do-not-call list), is closed to other users. A directory that other
// users may read, write or enter is tightened to [Own] or [Team] when the
// running user owns it and it is callrun's: empty, or holding one of the
// files named ours, and not a shared directory such as /tmp (whose
// sticky bit says so). Any other such directory is refused: callrun
// never changes the mode of a directory it does not keep. Check returns
// the modes for dir and the files in it. A dir that does not exist is
// [Own]: its maker makes it so.
func Check(dir, what string, ours ...string) (Modes, error) {
	m, err := check(dir, ours)
	if err != nil {
		return Own, fmt.Errorf("%s (%s): %w", dir, what, err)
	}
	return m, nil
}

// FileMode is the mode of a file that holds personal data in dir, as
// [Check] finds it, without changing dir: [Team]'s when dir is shared
// through its group, else [Own]'s.
func FileMode(dir string) fs.FileMode {
	return modes(dir).File
}
