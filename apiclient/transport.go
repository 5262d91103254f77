package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// TokenSource supplies access tokens to a [Transport].
type TokenSource interface {
	// Token returns a token that is valid now, refreshing it if needed.
	Token(ctx context.Context) (*Token, error)
	// Invalidate tells the source that the service rejected tok with a
	// 401, so the next Token call refreshes unless another caller already
	// did. It is called at most once per rejected request.
	Invalidate(tok *Token)
}

// Transport is an http.RoundTripper that adds a bearer token to requests for
// the service's own origin, and refreshes the token and sends the request
// once more when the service answers 401. Requests to any other origin go
// out with no Authorization header at all: the access token goes only where
// it was issued for.
type Transport struct {
	Source TokenSource
	Origin *url.URL
	Base   http.RoundTripper
	// Clock, if set, notes the Date of every answer from Origin (of
	// every answer, when Origin is nil).
	Clock *ServiceClock
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	// Only the service's own answers date its clock: a call endpoint
	// on another host (its clock, or a cache before it) is not the
	// service, and the check names the service's clock.
	if t.Origin == nil || sameOrigin(req.URL, t.Origin) {
		t.Clock.observe(resp)
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	if t.Source == nil || !sameOrigin(req.URL, t.Origin) {
		if req.Header.Get("Authorization") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
		return t.Base.RoundTrip(req)
	}
	tok, err := sourceToken(req.Context(), t.Source)
	if err == nil {
		err = sendCheck(req.Context())
	}
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.Base.RoundTrip(withBearer(req, tok, req.Body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	// A 401 means the service did not act on the request. Refresh once and
	// try again, if the body can be sent again.
	var body io.ReadCloser
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return resp, nil
		}
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
	resp.Body.Close()
	t.Source.Invalidate(tok)
	tok, err = sourceToken(req.Context(), t.Source)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, &refusedError{err}
	}
	if err := sendCheck(req.Context()); err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err // the first answered 401: not acted on
	}
	resending(req.Context())
	return t.Base.RoundTrip(withBearer(req, tok, body))
}

// CloseIdleConnections closes the idle connections of Base, if it keeps
// any.
func (t *Transport) CloseIdleConnections() {
	if ci, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// WithSendCheck returns ctx with check, which [Transport] calls right
// before it sends a request to the service's own origin, once its token
// is had (again before the one re-send after a 401): an error from it
// sends nothing more, and the request fails with a *[SendHeldError] that
// wraps it. A run checks the called person's hours so, last: having the
// token may take a refresh, or a wait on another process's refresh, and
// the hours may close meanwhile.
func WithSendCheck(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, sendCheckKey{}, check)
}

type sendCheckKey struct{}

// sendCheck runs the check of ctx ([WithSendCheck]), if any.
func sendCheck(ctx context.Context) error {
	check, _ := ctx.Value(sendCheckKey{}).(func() error)
	if check == nil {
		return nil
	}
	if err := check(); err != nil {
		return &SendHeldError{Err: err}
	}
	return nil
}

// SendHeldError is the error of a request that its send check
// ([WithSendCheck]) held: nothing of it was sent, or what was sent was
// answered 401, which the service did not act on. [Classify] calls such a
// call start Retryable.
type SendHeldError struct{ Err error }

func (e *SendHeldError) Error() string { return "not sent: " + e.Err.Error() }
func (e *SendHeldError) Unwrap() error { return e.Err }

// sourceToken asks src for a token under a context that keeps ctx's
// deadline and cancellation but none of its values: a refresh must not fire
// the request's httptrace hooks, which tell whether a call start was written.
// Its error is a *NoTokenError, also for a token that a header cannot carry
// (a control character would end the header line early): such a token is
// never sent.
func sourceToken(ctx context.Context, src TokenSource) (*Token, error) {
	tok, err := src.Token(valueless{ctx})
	if err != nil {
		return nil, &NoTokenError{Err: err}
	}
	if !headerValue(tok.AccessToken) {
		return nil, &NoTokenError{Err: errors.New("the access token holds characters an HTTP header cannot carry")}
	}
	return tok, nil
}

// headerValue reports whether s can be a header field's value as it is:
// no control characters but tab.
func headerValue(s string) bool {
	for i := range len(s) {
		if ch := s[i]; (ch < ' ' && ch != '\t') || ch == 0x7f {
			return false
		}
	}
	return true
}

// NoTokenError is the error of a request to the service's own origin that
// was not sent because no access token could be had: the token endpoint
// failed or refused the refresh token, or there is no token at all. The
// service cannot have acted on the request. Err is the token source's
// error: an *AuthError when only logging in again mends it; any HTTP
// status it carries is the token endpoint's, not the request's.
//
// [Classify] calls such a call start Retryable, and a run tells it from
// other retryable outcomes with [NoToken]: it is the run's problem, not the
// contact's.
type NoTokenError struct{ Err error }

func (e *NoTokenError) Error() string { return "getting an access token: " + e.Err.Error() }
func (e *NoTokenError) Unwrap() error { return e.Err }

// NoToken reports whether err is (or wraps) a *NoTokenError or an
// *AuthError: a request that no access token could be had for.
func NoToken(err error) bool {
	var nt *NoTokenError
	var ae *AuthError
	return errors.As(err, &nt) || errors.As(err, &ae)
}

type valueless struct{ context.Context }

func (valueless) Value(any) any { return nil }

func withBearer(req *http.Request, tok *Token, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// sameOrigin reports whether u has the scheme, host and port of origin.
func sameOrigin(u, origin *url.URL) bool {
	return origin != nil && strings.EqualFold(u.Scheme, origin.Scheme) &&
		strings.EqualFold(u.Hostname(), origin.Hostname()) && port(u) == port(origin)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
