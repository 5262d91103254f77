package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StartCall starts one call: it sends form with the method of ep to ep's URL,
// as form fields (a query string for GET and HEAD, a form-encoded body
// otherwise). It never retries by itself, but for the one re-send after a
// 401 that [Transport] makes. Its error, if any, is a *[StartError] that
// [Classify] turns into an [Outcome].
func (c *Client) StartCall(ctx context.Context, ep *CallEndpoint, form url.Values) (*CallResponse, error) {
	return c.StartCallForm(ctx, ep, form.Encode())
}

// StartCallForm is StartCall with the form already encoded
// (url.Values.Encode), as a run builds it for each contact.
func (c *Client) StartCallForm(ctx context.Context, ep *CallEndpoint, encoded string) (*CallResponse, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	// cutBody ends the request once the wait for a 2xx's body is over.
	ctx, cutBody := context.WithCancel(ctx)
	defer cutBody()
	method := ep.Method
	if method == "" {
		method = http.MethodPost
	}
	origin := originOf(ep.URL)
	var tr writeTracker
	ctx = tr.trace(ctx)
	var body io.Reader
	target := ep.URL
	if method == http.MethodGet || method == http.MethodHead {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + encoded
	} else {
		body = strings.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, &StartError{Err: fmt.Errorf("start call: %w", err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := c.calls.Do(req)
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			return nil, &StartError{Err: fmt.Errorf("start call: %w", refused)}
		}
		return nil, &StartError{Written: tr.written(), Err: fmt.Errorf("start call: %s %s: %w", method, origin, unwrapURLError(err))}
	}
	if n := tr.resent(); n > 0 {
		// net/http sent the request again by itself: the first may have
		// started a call too. Whatever the answer, it is not certain.
		resp.Body.Close()
		return nil, &StartError{Written: true, Err: fmt.Errorf("start call: %s %s: the HTTP client sent the request %d more time(s) by itself after a connection failed; the person may have been called more than once", method, origin, n)}
	}
	wait := c.BodyWait
	if wait <= 0 {
		wait = DefaultBodyWait
	}
	return callAnswer(resp, origin, wait, cutBody)
}

// callAnswer reads the answer to a call start to origin (scheme://host,
// for messages), and closes its body. cutBody ends the request; it is
// called when the body of a 2xx has not come whole within wait.
//
// A non-2xx status decides the outcome: a body that stalls or breaks off
// after it was read (cut off by the request's deadline) does not change
// it, and the excerpt keeps what arrived.
//
// A 2xx with its whole body is read by [answerSaysError]: a body that
// says error is a refusal, and one that is not JSON (an HTML page) an
// answer of uncertain meaning; both come back as a *StartError with an
// *Error. A 2xx whose body does not arrive whole within wait is sent,
// with CallResponse.Cut saying so: once the status line is in, the call
// is placed.
func callAnswer(resp *http.Response, origin string, wait time.Duration, cutBody func()) (*CallResponse, error) {
	if err := checkResponse("start call", resp); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.URL = origin
		}
		return nil, &StartError{Written: true, Err: err}
	}
	defer resp.Body.Close()
	timer := time.AfterFunc(wait, cutBody)
	b, err := io.ReadAll(io.LimitReader(resp.Body, answerRead))
	stalled := !timer.Stop()
	if err != nil {
		cut := fmt.Sprintf("the service answered %d %s and the call is placed, but its answer was cut off (%v)", resp.StatusCode, http.StatusText(resp.StatusCode), err)
		if stalled {
			cut = fmt.Sprintf("the service answered %d %s and the call is placed, but the rest of its answer did not come within %s", resp.StatusCode, http.StatusText(resp.StatusCode), wait)
		}
		return &CallResponse{StatusCode: resp.StatusCode, Body: excerptBody(b), Cut: cut}, nil
	}
	if e := answerSaysError(resp, b); e != nil {
		e.URL = origin
		return nil, &StartError{Written: true, Err: e}
	}
	return &CallResponse{StatusCode: resp.StatusCode, Body: excerptBody(b), CallID: answerCallID(b)}, nil
}

// answerCallID returns the call id a call start's answer gives (its
// call_id, at the top or in data), or "": the service's contract does not
// show one, but its answer carries one, and a delivery that names the
// call is then matched to its contact by it.
func answerCallID(b []byte) string {
	ds, _, refused, err := jsonDeliveries(bytes.TrimSpace(b), false)
	if err != nil || refused != nil || len(ds) != 1 {
		return ""
	}
	return ds[0].CallID
}

// answerRead bounds how much of a 2xx call-start answer is read to judge
// it: the service's answer is a small JSON object.
const answerRead = 64 << 10

// callTransport is the http.RoundTripper under [Transport] that every call
// start goes through. It keeps net/http from sending a call start more
// than once by itself:
//
//   - HTTP/1.1 only: net/http's HTTP/2 client sends a request again when
//     the server resets its stream with PROTOCOL_ERROR, even after the
//     server acted on it.
//   - A request of a method net/http deems replayable (GET, HEAD,
//     OPTIONS, TRACE) goes on a new connection each time: net/http sends
//     those again when a reused connection dies before the answer.
//   - The request it passes on has no GetBody: net/http sends a request
//     with a body again when a reused connection failed before a byte of
//     it was written, if it can rewind the body.
//
// Its connections count the bytes written to them, so that a
// [writeTracker] can tell a call start that never left this machine.
type callTransport struct {
	keep  http.RoundTripper // connections kept between call starts
	fresh http.RoundTripper // a new connection for each request
}

// newCallTransport derives the transport for call starts from base. A
// base that is not an *http.Transport is used as it is, for both.
func newCallTransport(base http.RoundTripper) *callTransport {
	t, ok := base.(*http.Transport)
	if !ok {
		return &callTransport{keep: base, fresh: base}
	}
	keep := t.Clone()
	var http1 http.Protocols
	http1.SetHTTP1(true) // and nothing else: no HTTP/2, unencrypted or not
	keep.Protocols = &http1
	keep.ForceAttemptHTTP2 = false
	keep.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	// A TLS config cloned from a transport that has been used may still
	// offer h2 in ALPN; offer HTTP/1.1 alone.
	if keep.TLSClientConfig == nil {
		keep.TLSClientConfig = &tls.Config{}
	} else {
		keep.TLSClientConfig = keep.TLSClientConfig.Clone()
	}
	keep.TLSClientConfig.NextProtos = []string{"http/1.1"}
	// The service sees the headers a call start has always had: no
	// Accept-Encoding. Its answer is read as it comes.
	keep.DisableCompression = true
	dial := keep.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	keep.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: conn}, nil
	}
	fresh := keep.Clone()
	fresh.DisableKeepAlives = true
	return &callTransport{keep: keep, fresh: fresh}
}

// RoundTrip implements http.RoundTripper.
func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody != nil {
		req = req.Clone(req.Context())
		req.GetBody = nil
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return t.fresh.RoundTrip(req)
	}
	return t.keep.RoundTrip(req)
}

// CloseIdleConnections closes the connections kept between call starts.
func (t *callTransport) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{t.keep, t.fresh} {
		if ci, ok := rt.(interface{ CloseIdleConnections() }); ok {
			ci.CloseIdleConnections()
		}
	}
}

// countedConn is a connection of a [callTransport]: it counts the bytes
// written to it.
type countedConn struct {
	net.Conn
	written atomic.Int64
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// writeTracker follows one call start through net/http (with httptrace)
// to tell whether any of it may have reached the service. A send whose
// headers were never written, or whose connection took none of its bytes
// (when the connection counts them: a [countedConn]), never left this
// machine. It also counts the writes of the headers, so that a re-send
// net/http makes on its own is seen.
//
// After a 401, [Transport] sends the request once more; it calls
// [resending] first, and from then on the tracker follows that send.
type writeTracker struct {
	mu      sync.Mutex
	headers int          // times the current send's headers were written
	conn    *countedConn // its connection, if its bytes are counted
	before  int64        // bytes written to conn before the send got it
}

type trackerKey struct{}

func (w *writeTracker) trace(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, trackerKey{}, w)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			conn := info.Conn
			if tc, ok := conn.(*tls.Conn); ok {
				conn = tc.NetConn()
			}
			cc, _ := conn.(*countedConn)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.conn, w.before = cc, 0
			if cc != nil {
				w.before = cc.written.Load()
			}
		},
		WroteHeaders: func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.headers++
		},
	})
}

// written reports whether any of the current send may have been written
// to a connection. When it is false the service cannot have seen it.
func (w *writeTracker) written() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.headers > 0 && (w.conn == nil || w.conn.written.Load() > w.before)
}

// resent returns how many times net/http wrote the current send's headers
// beyond the first.
func (w *writeTracker) resent() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.headers - 1
}

// resending tells the tracker of ctx, if any, that the request is about
// to be sent once more on purpose (after a 401, which the service did not
// act on): what counts from now on is that send.
func resending(ctx context.Context) {
	if w, ok := ctx.Value(trackerKey{}).(*writeTracker); ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.headers, w.conn, w.before = 0, nil, 0
	}
}
