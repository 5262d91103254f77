package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
)

// Exit codes, as printed in `callrun --help` (design.md §2).
const (
	exitOK          = 0
	exitRuntime     = 1
	exitUsage       = 2
	exitIncomplete  = 3
	exitInvalidRows = 4
	exitTryLater    = 75
	exitInterrupted = 130
)

const exitCodesHelp = `EXIT CODES:
   0    done
   1    runtime error (a run that stops on one leaves the contacts not called pending)
   2    usage error or invalid campaign file
   3    finished, but some contacts failed or are uncertain
   4    plan --strict found invalid rows
   75   try again later (another run holds the lock, outside calling hours with --until reached, or contacts left pending)
   130  interrupted (state saved)`

// exitError carries an exit code chosen where the error was made.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code, err}
}

// usageError marks a mistake in how callrun was called.
func usageError(err error) error { return withExitCode(exitUsage, err) }

// message is what callrun prints for err: the error itself, or, for a
// failure that only logging in mends, that sentence alone without the
// steps that led to it; either with every secret blanked out.
func message(err error) string {
	var ae *apiclient.AuthError
	if errors.As(err, &ae) {
		return apiclient.Redact(ae.Error())
	}
	return apiclient.Redact(err.Error())
}

// exitCode maps the error a command returned to the process's exit code. It
// is the one place that does so.
func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	var fe *campaign.FileError
	if err == nil && unknownCommand != "" {
		return exitUsage
	}
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &fe):
		return exitUsage
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitRuntime
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM.
// A second signal ends the process at once with 130: whatever was written
// to the journal before it still holds.
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
