package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// Exit codes, as printed in `callrun --help`.
const (
	exitOK          = 0
	exitRuntime     = 1
	exitInterrupted = 130
)

const exitCodesHelp = `EXIT CODES:
   0    done
   1    runtime error (a run that stops on one leaves the contacts not called pending)
   2    usage error or invalid campaign file (or a state directory that holds another
        split into shards, or journal files pushed, or not pushed, to PostgreSQL, or
        a sheet column that says do not call and that the campaign neither maps nor
        ignores, or a row marked do not call whose phone cell cannot be read)
   3    finished, but some contacts failed or are uncertain
   4    run found every row invalid, so nobody was called; plan --strict found
        invalid or repaired rows, a sheet with no rows, a suppression entry that is
        no number, a do-not-call cell that says neither yes nor no, a phone column
        named for a fax, a pager or an assistant, or that run would refuse (an agent
        name two agents share); suppress import found entries that are no number
   75   try again later (another run holds the lock, here or, with PostgreSQL, on any
        machine; outside calling hours with --until reached; contacts left pending; the
        service asked to be called again past pace.max_retry_after, or refused call
        after call with the same answer)
   130  interrupted (state saved)`

// exitCode maps the error a command returned to the process's exit code. It
// is the one place that does so: an exit code chosen where the error was
// made (run.WithExitCode), else the sentinel or type the error chain holds.
// (A command name that matched none is no error: main exits 2 for it.)
func exitCode(ctx context.Context, err error) int {
	var ee *run.ExitError
	var fe *campaign.FileError
	var se *sheet.Error
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &fe), errors.As(err, &se), errors.Is(err, store.ErrShardMismatch), errors.Is(err, store.ErrPushed), errors.Is(err, store.ErrUnpushed), errors.Is(err, store.ErrCampaignExists):
		return run.ExitUsage // the campaign's fault: its file, a sheet, or --shard
	case errors.Is(err, campaign.ErrInterrupted):
		return exitInterrupted
	case errors.Is(err, campaign.ErrOutsideHours), errors.Is(err, store.ErrLocked), errors.Is(err, campaign.ErrCallLater), errors.Is(err, campaign.ErrRefusing):
		return run.ExitTryLater
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitRuntime
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM.
// A second signal ends the process at once with 130: whatever was written
// to the journal before it still holds. On Windows, Go delivers Ctrl-C and
// Ctrl-Break as os.Interrupt, and closing the console window, logging off
// or shutting down as SIGTERM (Windows then ends the process a few
// seconds later), so a run stops there as it does on Linux.
//
// The context's cause ([context.Cause]) wraps [campaign.ErrInterrupted] and
// names the signal, for [interruption].
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			name := "SIGTERM"
			if sig == os.Interrupt {
				name = "SIGINT (Ctrl-C)"
			}
			cancel(fmt.Errorf("%w by %s", campaign.ErrInterrupted, name))
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
		cancel(nil)
	}
}

// interruption returns err, or, when err is only the cancellation a
// signal caused (a command that stopped reading a sheet, say), the
// signal's cause, so that the last line says it was interrupted and by
// what rather than "context canceled".
func interruption(ctx context.Context, err error) error {
	if err == nil || !errors.Is(err, context.Canceled) || errors.Is(err, campaign.ErrInterrupted) {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, campaign.ErrInterrupted) {
		return cause
	}
	return err
}

// logFailure reports the error that ends the process as JSON log records
// (stderr is not a terminal: cron, CI). A campaign file's problems come one
// record each, with their file, line and key as fields, so that a CI log
// reads one problem a line rather than one record with "\n" inside; the
// last record carries the exit code.
func logFailure(l zerolog.Logger, err error, code int) {
	var fe *campaign.FileError
	if errors.As(err, &fe) && len(fe.Problems) > 0 {
		for _, p := range fe.Problems {
			ev := l.WithLevel(zerolog.ErrorLevel).Str("file", p.File)
			if p.Line > 0 {
				ev = ev.Int("line", p.Line)
			}
			if p.Key != "" {
				ev = ev.Str("key", p.Key)
			}
			if len(fe.Problems) == 1 {
				ev = ev.Int("exit_code", code)
			}
			ev.Msg(apiclient.Redact(p.String()))
		}
		if len(fe.Problems) > 1 {
			l.WithLevel(zerolog.ErrorLevel).Int("exit_code", code).Msgf("%d problems in the campaign file, one record each above", len(fe.Problems))
		}
		return
	}
	l.WithLevel(zerolog.ErrorLevel).Int("exit_code", code).Msg(run.Message(err))
}
