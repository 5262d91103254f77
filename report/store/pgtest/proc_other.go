//go:build !unix

package pgtest

import "syscall"

// asUser is never called off Unix: os.Geteuid is -1 there, never root.
func asUser(uid, gid uint32) *syscall.SysProcAttr { return nil }

// inOwnSession does nothing off Unix. The tests of the PostgreSQL store
// run on Linux (and macOS); on Windows pgtest only needs to build, so
// that `go vet ./...` covers the packages that import it.
func inOwnSession(attr *syscall.SysProcAttr) {}
