package run

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
