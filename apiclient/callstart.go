package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
)

// preparedCall is a call endpoint made ready for call starts that go
// straight to an [h1Transport]: the request line and the fixed header
// lines are rendered once, and each call start writes them, the access
// token, the length and the form, with none of net/http's client, its
// request cloning, header maps or httptrace in between. At thousands of
// call starts a second on 2 cores that was a sixth of a call start's CPU
// time (measured in BenchmarkDispatch's profiles).
//
// Only a body-carrying method to an http(s) URL that the base transport
// would not send through a proxy is prepared; the rest goes the general
// way (StartCallForm). The promise is the same on both: the request is
// sent once, an error of which no byte reached the connection is not
// written, and a 401 is sent once more with a renewed token, as
// [Transport] does.
type preparedCall struct {
	method, url string // what it was prepared from

	usable bool          // false: StartCallForm takes the general way
	dest   h1Dest        // where it goes
	head   []byte        // request line, Host, User-Agent, Content-Type, Accept
	bearer bool          // on the service's own origin: it carries the access token
	req    *http.Request // what the answers are to; never sent
	origin string        // scheme://host, for messages
}

// maxPrepared bounds the prepared call endpoints a Client keeps. A run
// has one per agent; beyond the bound each call start prepares its own.
const maxPrepared = 256

// preparedCalls keeps the preparedCall of each call endpoint a Client was
// given, by its address.
type preparedCalls struct {
	m sync.Map // *CallEndpoint → *preparedCall
	n atomic.Int32
}

// prepared returns the preparedCall of ep with method, preparing it on
// first use.
func (c *Client) prepared(ep *CallEndpoint, method string) *preparedCall {
	v, ok := c.prep.m.Load(ep)
	if ok {
		if p := v.(*preparedCall); p.method == method && p.url == ep.URL {
			return p
		}
	}
	p := c.prepare(method, ep.URL)
	switch {
	case ok:
		c.prep.m.Store(ep, p) // ep changed since
	case c.prep.n.Load() < maxPrepared:
		if _, loaded := c.prep.m.LoadOrStore(ep, p); !loaded {
			c.prep.n.Add(1)
		}
	}
	return p
}

// prepare renders a call start of method to rawURL, or returns one that
// is not usable when the request needs net/http's general way.
func (c *Client) prepare(method, rawURL string) *preparedCall {
	p := &preparedCall{method: method, url: rawURL}
	if c.h1 == nil || !httpToken(method) || method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions {
		return p
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || !plainHost(u.Host) || !headerValue(UserAgent) {
		return p
	}
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		return p
	}
	if proxy := c.h1.base.Proxy; proxy != nil {
		if pu, err := proxy(req); err != nil || pu != nil {
			return p
		}
	}
	p.usable = true
	p.dest = h1DestOf(u)
	p.req = req
	p.origin = originOf(rawURL)
	p.bearer = c.tokens != nil && sameOrigin(u, c.base)
	// As Request.Write has them: the Host without an empty port, no
	// User-Agent line when it is empty.
	p.head = fmt.Appendf(nil, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), req.Host)
	if UserAgent != "" {
		p.head = fmt.Appendf(p.head, "User-Agent: %s\r\n", UserAgent)
	}
	p.head = append(p.head, "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n"...)
	return p
}

// startPrepared is StartCallForm for a usable preparedCall.
func (c *Client) startPrepared(ctx context.Context, p *preparedCall, encoded string) (*CallResponse, error) {
	var tok *Token
	if p.bearer {
		var err error
		if tok, err = sourceToken(ctx, c.tokens); err != nil {
			return nil, &StartError{Err: fmt.Errorf("start call: %s %s: %w", p.method, p.origin, err)}
		}
	}
	resp, err := c.send(ctx, p, tok, encoded)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && tok != nil {
		// A 401 means the service did not act on the request. Renew the
		// token and send it once more, as Transport does. If that one is
		// not written either, the attempt stays retryable: the service
		// has acted on neither (net/http's way, whose write tracker
		// counted the first write, calls it uncertain).
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
		resp.Body.Close()
		c.tokens.Invalidate(tok)
		if tok, err = sourceToken(ctx, c.tokens); err != nil {
			return nil, &StartError{Err: fmt.Errorf("start call: %w", &refusedError{err})}
		}
		if resp, err = c.send(ctx, p, tok, encoded); err != nil {
			return nil, err
		}
	}
	return callAnswer(resp, p.origin)
}

// send writes one call start of p with tok (nil: none) and the form, and
// reads the answer's header.
func (c *Client) send(ctx context.Context, p *preparedCall, tok *Token, form string) (*http.Response, error) {
	var auth string
	if tok != nil {
		auth = tok.AccessToken
		if !headerValue(auth) {
			return nil, &StartError{Err: fmt.Errorf("start call: %s %s: the access token holds characters an HTTP header cannot carry", p.method, p.origin)}
		}
	}
	resp, err := c.h1.exchange(ctx, p.dest, func(w io.Writer) error {
		bw := w.(io.StringWriter)
		w.Write(p.head)
		if tok != nil {
			bw.WriteString("Authorization: Bearer ")
			bw.WriteString(auth)
			bw.WriteString("\r\n")
		}
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.Itoa(len(form)))
		bw.WriteString("\r\n\r\n")
		_, err := bw.WriteString(form)
		return err
	}, p.req)
	if err != nil {
		var notWritten *notWrittenError
		return nil, &StartError{Written: !errors.As(err, &notWritten), Err: fmt.Errorf("start call: %s %s: %w", p.method, p.origin, err)}
	}
	return resp, nil
}

// httpToken reports whether s is a non-empty HTTP token (RFC 9110 §5.6.2),
// as a method must be.
func httpToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if ch := s[i]; ch <= ' ' || ch >= 0x7f || isSeparator(ch) {
			return false
		}
	}
	return true
}

func isSeparator(ch byte) bool {
	switch ch {
	case '(', ')', '<', '>', '@', ',', ';', ':', '\\', '"', '/', '[', ']', '?', '=', '{', '}':
		return true
	}
	return false
}

// plainHost reports whether host (a URL's host[:port]) is a name, an IPv4
// address or a bracketed IPv6 address without a zone, which a Host header
// carries as it is.
func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for i := range len(host) {
		ch := host[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		case ch == '.', ch == '-', ch == ':', ch == '[', ch == ']', ch == '_':
		default:
			return false
		}
	}
	return true
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
