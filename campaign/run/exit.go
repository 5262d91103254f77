package run

import (
	"errors"
	"fmt"
	"net"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// Exit codes a command's error may carry, as `callrun --help` prints them.
const (
	ExitUsage       = 2
	ExitIncomplete  = 3
	ExitInvalidRows = 4
	ExitTryLater    = 75
)

// ExitError is an error with the exit code chosen where it was made.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WithExitCode gives err the exit code code; nil stays nil.
func WithExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{code, err}
}

// UsageError marks a mistake in how callrun was called.
func UsageError(err error) error { return WithExitCode(ExitUsage, err) }

// Message is what callrun prints for err: the error itself, or, for a
// failure that only logging in mends, that sentence alone without the
// steps that led to it; either with every secret blanked out.
func Message(err error) string {
	var ae *apiclient.AuthError
	if errors.As(err, &ae) {
		return apiclient.Redact(ae.Error() + hint(err))
	}
	return apiclient.Redact(err.Error() + hint(err))
}

// hint is what message adds to err's own words: what to do when err is
// that no one is logged in or the service refused the saved login (the
// apiclient's errors say only what happened), or what to check when the
// service could not be reached at all (the message of a refused or
// unresolved connection names an address, not the setting that chose it).
func hint(err error) string {
	switch {
	case errors.Is(err, apiclient.ErrNotLoggedIn):
		return "; run `callrun auth login CAMPAIGN.yaml` first"
	case errors.Is(err, apiclient.ErrReauthorize):
		return "; run `callrun auth login` again"
	}
	var db *store.DatabaseError
	if errors.As(err, &db) {
		return " (check that the PostgreSQL server is up and reachable, and state.postgres in the campaign file, or the CALLRUN_DATABASE_URL it reads; a run stopped so sent no call without its note in the database: run again once it is back)"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf(" (the service's host name %s does not resolve: check service.base_url in the campaign file, or the CALLRUN_BASE_URL it reads, and this machine's DNS)", dns.Name)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		addr := ""
		if op.Addr != nil {
			addr = " at " + op.Addr.String()
		}
		return fmt.Sprintf(" (the service%s could not be reached: is it up? check service.base_url in the campaign file, or the CALLRUN_BASE_URL it reads, and the network; for the sandbox, start `callrun sandbox` first)", addr)
	}
	return ""
}
