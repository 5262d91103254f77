//go:build unix

package pgtest

import "syscall"

// asUser returns the process attributes that run a command as uid and gid
// (initdb refuses root).
func asUser(uid, gid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}}
}

// inOwnSession makes a command start a session of its own, so that a
// signal to the test's process group does not reach it.
func inOwnSession(attr *syscall.SysProcAttr) { attr.Setsid = true }
