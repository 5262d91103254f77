package apiclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// h1Transport is the transport of call starts: HTTP/1.1, one request at a
// time on a connection, and nothing running in the background.
//
// net/http's Transport gives each connection a reading and a writing
// goroutine and hands every request and answer between them and the
// caller; at thousands of call starts a second that is about half of a
// call start's CPU time (measured: 22 µs of 49 per request on 2 cores).
// Here the caller's goroutine writes the request and reads the answer
// itself, with net/http's own Request.Write and ReadResponse doing the
// wire format.
//
// It never sends a request twice: an attempt whose bytes may have reached
// the server ends with an error, and its httptrace WroteHeaders hook has
// fired (the [writeTracker] of StartCallForm then classifies it
// uncertain); one of which no byte reached the connection ends with a
// *notWrittenError. Before a kept-alive connection is reused it is checked for
// an end the server sent while it was idle, so that a connection the
// server has already closed does not turn a call start into an uncertain
// one.
//
// Requests that the base transport would send through a proxy go to
// fallback, net/http's own transport, unchanged.
type h1Transport struct {
	base     *http.Transport // settings: dialing, TLS, timeouts, pool size, proxy
	fallback http.RoundTripper

	mu   sync.Mutex
	idle map[string][]*h1Conn // by scheme://host:port; the most recently used last
}

func newH1Transport(base *http.Transport, fallback http.RoundTripper) *h1Transport {
	return &h1Transport{base: base, fallback: fallback, idle: map[string][]*h1Conn{}}
}

// h1Conn is a connection of an h1Transport.
type h1Conn struct {
	key  string
	raw  net.Conn // the TCP connection, under TLS if any
	conn net.Conn // raw, or the TLS connection over it
	br   *bufio.Reader
	bw   *bufio.Writer
	cw   countingWriter
	used time.Time // when it was last put back idle
}

// countingWriter counts the bytes written to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// maxDrain is how much of an answer's unread body Close reads so that the
// connection can be used again; a longer body closes the connection.
const maxDrain = 64 << 10

// RoundTrip implements http.RoundTripper.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.base.Proxy != nil {
		if u, err := t.base.Proxy(req); err != nil || u != nil {
			return t.fallback.RoundTrip(req)
		}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeBody(req)
		return nil, fmt.Errorf("unsupported protocol scheme %q", req.URL.Scheme)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	addr := net.JoinHostPort(req.URL.Hostname(), port(req.URL))
	c, err := t.get(ctx, req.URL.Scheme, addr, req.URL.Hostname())
	if err != nil {
		closeBody(req)
		return nil, err
	}

	// Deadlines follow the context; cancelling it cuts the connection off,
	// until the body is closed.
	deadline, _ := ctx.Deadline()
	var stop func() bool
	var cancelled atomic.Bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			cancelled.Store(true)
			c.conn.SetDeadline(time.Unix(1, 0))
		})
	}
	fail := func(err error) (*http.Response, error) {
		if stop != nil {
			stop()
		}
		c.conn.Close()
		if cancelled.Load() && ctx.Err() != nil {
			if _, ok := err.(*notWrittenError); ok {
				err = &notWrittenError{ctx.Err()}
			} else {
				err = ctx.Err()
			}
		}
		return nil, err
	}

	// Request.Write fires the request's httptrace hooks (WroteHeaders,
	// which StartCallForm's writeTracker counts) once the headers are in
	// the buffer; whether any byte reached the connection is told by cw.
	// Each deadline set below would undo a cut-off that ran before it, so
	// the context is looked at again after each.
	c.conn.SetWriteDeadline(deadline)
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return fail(&notWrittenError{err})
	}
	c.cw.n = 0
	err = req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		err = fmt.Errorf("writing the request: %w", err)
		if c.cw.n == 0 {
			closeBody(req)
			err = &notWrittenError{err}
		}
		return fail(err)
	}

	headerDeadline := deadline
	if d := t.base.ResponseHeaderTimeout; d > 0 {
		if hd := time.Now().Add(d); deadline.IsZero() || hd.Before(deadline) {
			headerDeadline = hd
		}
	}
	c.conn.SetReadDeadline(headerDeadline)
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("waiting for the answer: %w", err))
	}
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() && !cancelled.Load() && !headerDeadline.Equal(deadline) {
				err = fmt.Errorf("no answer within %s: %w", t.base.ResponseHeaderTimeout, err)
			}
			return fail(fmt.Errorf("reading the answer: %w", err))
		}
		// Informational answers (100 Continue, 103 Early Hints) come
		// before the real one.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		resp.Body.Close()
	}
	c.conn.SetReadDeadline(deadline)
	if ctx.Err() != nil {
		// The answer is in; only its body is cut off now.
		c.conn.SetReadDeadline(time.Unix(1, 0))
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return fail(errors.New("reading the answer: the server switched protocols"))
	}
	resp.Body = &h1Body{t: t, c: c, body: resp.Body, stop: stop, reuse: !resp.Close && !req.Close}
	return resp, nil
}

// notWrittenError is the error of a request of which no byte reached the
// connection: the server cannot have seen it.
type notWrittenError struct{ err error }

func (e *notWrittenError) Error() string { return e.err.Error() }
func (e *notWrittenError) Unwrap() error { return e.err }

// h1Body is an answer's body. Closing it puts the connection back for the
// next request if the body was read to its end (or can be, within
// maxDrain), and closes the connection otherwise.
type h1Body struct {
	t     *h1Transport
	c     *h1Conn
	body  io.ReadCloser
	stop  func() bool // stops the request context's cut-off; nil if none
	reuse bool
	eof   bool
	done  bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("read on a closed body")
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.reuse = false
	}
	return n, err
}

func (b *h1Body) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if b.stop != nil && !b.stop() {
		b.reuse = false // cut off, or being cut off: its deadline is spoilt
	}
	if b.reuse && !b.eof {
		n, err := io.Copy(io.Discard, io.LimitReader(b.body, maxDrain+1))
		b.eof = err == nil && n <= maxDrain
	}
	if b.reuse && b.eof {
		b.body.Close()
		b.c.conn.SetDeadline(time.Time{})
		b.t.put(b.c)
		return nil
	}
	// Closed first, so that net/http's body Close, which reads a
	// kept-alive body to its end, gives up at once.
	b.c.conn.Close()
	b.body.Close()
	return nil
}

// get returns an idle connection to scheme://addr that the server has not
// closed, or a new one.
func (t *h1Transport) get(ctx context.Context, scheme, addr, host string) (*h1Conn, error) {
	key := scheme + "://" + addr
	maxIdle := t.base.IdleConnTimeout
	for {
		t.mu.Lock()
		conns := t.idle[key]
		if len(conns) == 0 {
			t.mu.Unlock()
			break
		}
		c := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[key] = conns[:len(conns)-1]
		t.mu.Unlock()
		if (maxIdle > 0 && time.Since(c.used) > maxIdle) || !connAlive(c.raw) || c.br.Buffered() > 0 {
			c.conn.Close()
			continue
		}
		return c, nil
	}
	return t.dial(ctx, key, scheme, addr, host)
}

// put keeps c for the next request to its origin, or closes it if the
// pool for that origin is full.
func (t *h1Transport) put(c *h1Conn) {
	c.used = time.Now()
	limit := t.base.MaxIdleConnsPerHost
	if limit == 0 {
		limit = http.DefaultMaxIdleConnsPerHost
	}
	t.mu.Lock()
	if len(t.idle[c.key]) < limit {
		t.idle[c.key] = append(t.idle[c.key], c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.conn.Close()
	}
}

// CloseIdleConnections closes the connections kept for reuse.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*h1Conn{}
	t.mu.Unlock()
	for _, conns := range idle {
		for _, c := range conns {
			c.conn.Close()
		}
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// dial opens a connection to addr, with TLS for https (host is the name
// the server's certificate must carry).
func (t *h1Transport) dial(ctx context.Context, key, scheme, addr, host string) (*h1Conn, error) {
	dial := t.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := raw
	if scheme == "https" {
		cfg := &tls.Config{}
		if t.base.TLSClientConfig != nil {
			cfg = t.base.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(raw, cfg)
		hctx := ctx
		if d := t.base.TLSHandshakeTimeout; d > 0 {
			var cancel context.CancelFunc
			hctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	c := &h1Conn{key: key, raw: raw, conn: conn}
	c.cw.w = conn
	c.br = bufio.NewReaderSize(conn, 4<<10)
	c.bw = bufio.NewWriterSize(&c.cw, 4<<10)
	return c, nil
}
