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
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// h1Transport sends call starts (a [preparedCall]): HTTP/1.1, one
// request at a time on a connection, and nothing running in the
// background.
//
// net/http's Transport gives each connection a reading and a writing
// goroutine and hands every request and answer between them and the
// caller; at thousands of call starts a second that is about half of a
// call start's CPU time (measured: 22 µs of 49 per request on 2 cores).
// Here the caller's goroutine writes the request and reads the answer
// itself, with net/http's ReadResponse reading the answer.
//
// It never sends a request twice: an attempt of which no byte reached the
// connection ends with a *notWrittenError, anything else that goes wrong
// after the write with an error that leaves the attempt uncertain. Before
// a kept-alive connection is reused it is checked for an end the server
// sent while it was idle, so that a connection the server has already
// closed does not turn a call start into an uncertain one.
type h1Transport struct {
	base *http.Transport // settings: dialing, TLS, timeouts, pool size, proxy

	mu   sync.Mutex
	idle map[string][]*h1Conn // by scheme://host:port; the most recently used last
}

// newH1Transport returns an h1Transport with base's settings, or nil if
// base dials TLS itself or keeps no connections alive: then call starts
// go through net/http.
func newH1Transport(base http.RoundTripper) *h1Transport {
	t, ok := base.(*http.Transport)
	if !ok || t.DialTLSContext != nil || t.DisableKeepAlives {
		return nil
	}
	return &h1Transport{base: t, idle: map[string][]*h1Conn{}}
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

// h1Dest is where an h1Transport sends a request.
type h1Dest struct {
	key    string // scheme://addr: the idle pool's key
	scheme string // http or https
	addr   string // host:port to dial
	host   string // the name a TLS certificate must carry
}

func h1DestOf(u *url.URL) h1Dest {
	addr := net.JoinHostPort(u.Hostname(), port(u))
	return h1Dest{key: u.Scheme + "://" + addr, scheme: u.Scheme, addr: addr, host: u.Hostname()}
}

// exchange sends one request to dest on a connection of its own (an idle
// one or a new one) and reads the answer's header. write puts the request
// into the connection's buffer; req, which may be nil, is what the
// answer is to (its method tells whether the answer has a body).
//
// An error of which no byte reached the connection, including a failed
// dial, is a *notWrittenError: the server cannot have seen the request.
// Any other error comes after bytes did reach it. The connection goes
// back to the idle pool when the answer's body is closed, if it was read
// to its end (or can be, within maxDrain).
func (t *h1Transport) exchange(ctx context.Context, dest h1Dest, write func(io.Writer) error, req *http.Request) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &notWrittenError{err}
	}
	c, err := t.get(ctx, dest)
	if err != nil {
		return nil, &notWrittenError{err}
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

	// Each deadline set below would undo a cut-off that ran before it, so
	// the context is looked at again after each.
	c.conn.SetWriteDeadline(deadline)
	if err := ctx.Err(); err != nil {
		return fail(&notWrittenError{err})
	}
	c.cw.n = 0
	err = write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		err = fmt.Errorf("writing the request: %w", err)
		if c.cw.n == 0 {
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
	resp.Body = &h1Body{t: t, c: c, body: resp.Body, stop: stop, reuse: !resp.Close}
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

// get returns an idle connection to dest that the server has not closed,
// or a new one.
func (t *h1Transport) get(ctx context.Context, dest h1Dest) (*h1Conn, error) {
	key := dest.key
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
	return t.dial(ctx, dest)
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
}

// dial opens a connection to dest, with TLS for https.
func (t *h1Transport) dial(ctx context.Context, dest h1Dest) (*h1Conn, error) {
	addr := dest.addr
	dial := t.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := raw
	if dest.scheme == "https" {
		cfg := &tls.Config{}
		if t.base.TLSClientConfig != nil {
			cfg = t.base.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = dest.host
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
	c := &h1Conn{key: dest.key, raw: raw, conn: conn}
	c.cw.w = conn
	c.br = bufio.NewReaderSize(conn, 4<<10)
	c.bw = bufio.NewWriterSize(&c.cw, 4<<10)
	return c, nil
}
