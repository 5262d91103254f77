//go:build unix

package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
	"syscall"
)

func check(dir string, ours []string) (Modes, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Own, nil
	}
	if err != nil {
		return Own, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Own, nil
	}
	m := modesOf(fi, st)
	perm := fi.Mode().Perm()
	if perm&0o007 == 0 {
		return m, nil
	}
	switch {
	case int(st.Uid) != os.Getuid():
		return Own, fmt.Errorf("%w (mode %04o), and it belongs to %s, not to the user callrun runs as, so callrun cannot close it: run chmod o-rwx on it, or choose another directory", ErrOpen, perm, ownerName(st.Uid))
	case fi.Mode()&fs.ModeSticky != 0:
		return Own, fmt.Errorf("%w (mode %04o): a directory every user shares, such as /tmp, is no place for it: choose a directory of its own", ErrOpen, perm)
	}
	if mine, err := callruns(dir, ours); err != nil || !mine {
		return Own, fmt.Errorf("%w (mode %04o), and it holds files that are not callrun's, so callrun does not change its mode: run chmod o-rwx on it, or choose a directory of its own", ErrOpen, perm)
	}
	if err := os.Chmod(dir, fi.Mode()&^fs.ModePerm|m.Dir); err != nil {
		return Own, fmt.Errorf("%w (mode %04o), and closing it failed: %w", ErrOpen, perm, err)
	}
	return m, nil
}

// callruns reports whether dir is empty or holds one of the files ours.
func callruns(dir string, ours []string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return err == nil, err
	}
	for _, e := range entries {
		if slices.Contains(ours, e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

func modes(dir string) Modes {
	fi, err := os.Stat(dir)
	if err != nil {
		return Own
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Own
	}
	return modesOf(fi, st)
}

// modesOf is Team for a directory whose group may read, write and enter
// it and that is set-group-ID or whose group is not its owner's private
// group (the group of the owner's own name), else Own. An owner or group
// that cannot be looked up is not private.
func modesOf(fi fs.FileInfo, st *syscall.Stat_t) Modes {
	if fi.Mode().Perm()&0o070 != 0o070 {
		return Own
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		return Team
	}
	owner, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
	if err != nil {
		return Team
	}
	group, err := user.LookupGroupId(strconv.FormatUint(uint64(st.Gid), 10))
	if err == nil && group.Name == owner.Username {
		return Own
	}
	return Team
}

func ownerName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
