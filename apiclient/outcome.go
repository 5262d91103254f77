package apiclient

import (
	"errors"
	"net/http"
	"strings"
)

// Outcome is what a call-start attempt did, as far as the client can know.
// The at-most-once promise rests on it: only an attempt that provably never
// reached the service may be sent again without a person deciding so.
type Outcome int

// The outcomes of a call-start attempt.
const (
	// Sent: the service answered 2xx, with an empty body or JSON that
	// does not say error, or with a body that was cut off.
	Sent Outcome = iota + 1
	// Retryable: the service provably did not act on the request: it never
	// left this machine (a dial error, a refused connection, no access
	// token to be had: see NoToken), or the service answered 429, or 503
	// as its own answer (with a Retry-After or a JSON body), or an answer
	// that names a limit (see Limited). Safe to send again after a pause.
	Retryable
	// Uncertain: the request may have reached the service and started a
	// call: a timeout or a dropped connection after the request was written,
	// a 5xx other than the service's own 503 (a proxy's 503 may follow the
	// request passed on), a 2xx whose body is not JSON (an HTML page) or
	// whose status is a word callrun does not know, or that says error
	// beside a status of success or a call id, or an answer the client
	// cannot read. Never sent again automatically.
	Uncertain
	// Failed: the service refused the request: a 4xx other than 429 (and
	// than a limit), or a 2xx whose JSON body says error (and neither
	// success nor a call id).
	Failed
)

var outcomeNames = [...]string{Sent: "sent", Retryable: "retryable", Uncertain: "uncertain", Failed: "failed"}

func (o Outcome) String() string {
	if o < Sent || o > Failed {
		return "unknown"
	}
	return outcomeNames[o]
}

// StartError is the error of a call-start attempt that did not succeed.
type StartError struct {
	// Written reports whether any of the request may have been written to a
	// connection. When false the service cannot have seen the request.
	Written bool
	Err     error
}

// Error is Err's message with any secret blanked out: an error of the
// HTTP client may quote what the service answered.
func (e *StartError) Error() string { return Redact(e.Err.Error()) }
func (e *StartError) Unwrap() error { return e.Err }

// Classify decides the [Outcome] of a call-start attempt from the error that
// [Client.StartCall] returned. It is the one place that makes this decision.
// An error it does not recognise is Uncertain: when in doubt, nobody is
// phoned twice.
func Classify(err error) Outcome {
	if err == nil {
		return Sent
	}
	if NoToken(err) {
		// Never sent, or answered 401 and not sent again: the service did
		// not act on it. Any status it carries is the token endpoint's.
		return Retryable
	}
	var refused *refusedError
	if errors.As(err, &refused) {
		return Retryable // answered 401: not acted on
	}
	var held *SendHeldError
	if errors.As(err, &held) {
		return Retryable // not sent, or answered 401
	}
	var apiErr *Error
	if errors.As(err, &apiErr) {
		switch s := apiErr.StatusCode; {
		case s >= 200 && s < 300 && (apiErr.NotJSON || apiErr.UnknownStatus != "" || apiErr.Mixed):
			return Uncertain
		case s >= 200 && s < 300:
			return Failed // its body says error
		case s == http.StatusTooManyRequests, Limited(apiErr), s == http.StatusServiceUnavailable && serviceBusy(apiErr):
			return Retryable
		case s >= 400 && s < 500:
			return Failed
		default: // other 5xx, and 1xx/3xx that a call start should never get
			return Uncertain
		}
	}
	var se *StartError
	if errors.As(err, &se) && !se.Written {
		return Retryable
	}
	return Uncertain
}

// serviceBusy reports whether a 503 is the service's own "not now": one
// with a Retry-After, or with a JSON body, as the service writes its
// answers. Any other 503 (an HTML page, plain text, nothing) may come of
// a proxy or platform in front of the service after it passed the request
// on: Envoy's (Istio's) "upstream connect error or disconnect/reset before
// headers", Heroku's request timeout (H12) and closed connection (H13);
// the call may have started.
func serviceBusy(e *Error) bool {
	return e.RetryAfter > 0 || strings.HasPrefix(strings.TrimSpace(e.Body), "{")
}

// refusedError is a request the service answered 401 for whose token could
// not be renewed: the service did not act on it. It wraps the token error,
// often an *AuthError that only a person can mend.
type refusedError struct{ err error }

func (e *refusedError) Error() string {
	return "the service refused the access token (401) and it could not be renewed: " + e.err.Error()
}
func (e *refusedError) Unwrap() error { return e.err }
