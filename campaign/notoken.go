package campaign

import (
	"errors"
	"fmt"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// whyNoToken is the reason of the skipped outcome of a call start that no
// access token could be had for.
const whyNoToken = "not sent: no access token could be had"

// noToken settles an attempt of Run's worker whose call start was not sent
// because no access token could be had (apiclient.NoToken): the service
// cannot have seen it, so its intent rec is closed with a skipped outcome
// and the contact stays pending. That is the run's problem, not the
// contact's, so it decides for the run too:
//
//   - a token only a person can renew (an *apiclient.AuthError: the service
//     refused the refresh token, or there is none) stops the run at once
//     with that error, which the CLI prints with how to log in again;
//   - any other failure (the token endpoint answers 500, or cannot be
//     reached) is tried again, with the backoff of a retryable outcome,
//     waited on RunOptions.Sleep; after MaxAttempts tries in a row (tries
//     counts them) the run stops with an error that says so.
//
// again is true when the worker is to try the same contact again, with a
// new intent; otherwise err is the run's error, or nil for a clean stop
// (a signal, or another worker's error).
func (r *runner) noToken(w *worker, c *Contact, rec store.Record, err error, tries *int) (again bool, _ error) {
	rec.Type, rec.At, rec.Status, rec.Reason = store.TypeOutcome, r.opts.Now(), store.OutcomeSkipped, whyNoToken
	durable, jerr := r.opts.Journal.Enqueue(rec)
	if jerr != nil {
		return false, fmt.Errorf("writing the journal after not calling %s (sheet %s row %d; it reads as uncertain but was not sent): %w", rec.Phone, rec.Sheet, rec.Row, jerr)
	}
	w.pending, w.last = durable, rec
	var authErr *apiclient.AuthError
	if errors.As(err, &authErr) {
		r.pending()
		return false, w.stopRun(authErr, r.opts.Logf)
	}
	*tries++
	if *tries >= r.opts.MaxAttempts {
		var nt *apiclient.NoTokenError
		if errors.As(err, &nt) {
			err = nt.Err
		}
		r.pending()
		return false, w.stopRun(fmt.Errorf("no access token could be had in %d tries, the last: %w; the run stopped, and the contacts it did not call stay pending for the next run", *tries, err), r.opts.Logf)
	}
	wait := r.backoff(*tries)
	r.opts.Logf("%s (sheet %s row %d) not sent: %v; trying again in %s", c.Phone, rec.Sheet, c.Row, err, wait.Round(1e6))
	if err := r.opts.Sleep(r.run, wait); err != nil || r.run.Err() != nil {
		r.pending()
		return false, nil
	}
	return true, nil
}

// stopRun returns err, the run's error, once the worker's last outcome is
// on disk: a worker that returns an error flushes nothing after. If the
// journal fails instead, it says what may be lost and returns that error.
func (w *worker) stopRun(err error, logf func(string, ...any)) error {
	if ferr := w.flush(); ferr != nil {
		w.lost(logf)
		return ferr
	}
	return err
}
