package apiclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countConns counts the connections srv accepts. Call it before Start.
func countConns(srv *httptest.Server) *atomic.Int32 {
	var n atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

func startCall(t *testing.T, c *Client, endpoint string) (*CallResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.StartCall(ctx, &CallEndpoint{URL: endpoint, Method: "POST"}, url.Values{"phone_number": {"+14155550132"}})
}

func TestCallStartsUseTheirOwnTransport(t *testing.T) {
	c, err := New("http://127.0.0.1:1", staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.h1 == nil {
		t.Fatal("no h1Transport for call starts")
	}
	for _, tc := range []struct {
		method, url string
		usable      bool
	}{
		{"POST", "http://127.0.0.1:1/call/1?x=1", true},
		{"PUT", "https://calls.example/call", true},
		{"GET", "http://127.0.0.1:1/call/1", false},     // replayable: net/http, a fresh connection each
		{"POST", "http://u:p@127.0.0.1:1/call", false},  // userinfo: net/http's basic auth
		{"POST", "http://[fe80::1%25lo]:1/call", false}, // a zone: net/http's Host header
		{"POST", "ftp://127.0.0.1/call", false},
	} {
		if p := c.prepared(&CallEndpoint{URL: tc.url, Method: tc.method}, tc.method); p.usable != tc.usable {
			t.Errorf("%s %s: prepared usable %v, want %v", tc.method, tc.url, p.usable, tc.usable)
		}
	}
}

func TestH1ReusesOneConnection(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"status":"success"}`))
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		resp, err := startCall(t, c, srv.URL+"/call")
		if err != nil || resp.Body != `{"status":"success"}` {
			t.Fatalf("call %d: %+v, %v", i, resp, err)
		}
	}
	if requests.Load() != 20 || conns.Load() != 1 {
		t.Errorf("%d requests over %d connections, want 20 over 1", requests.Load(), conns.Load())
	}
}

// TestH1NoticesAServerThatClosedAnIdleConnection: a server that closes a
// kept-alive connection after answering, without saying so, must not make
// the next call start uncertain: the closed connection is found out
// before anything is written to it.
func TestH1NoticesAServerThatClosedAnIdleConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests, conns atomic.Int32
	closed := make(chan struct{}, 10)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer func() {
					conn.Close()
					closed <- struct{}{}
				}()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				requests.Add(1)
				// Keep-alive as far as the headers say; closed right after.
				io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"status\":\"success\"}")
			})
		}
	})
	endpoint := "http://" + ln.Addr().String() + "/call"
	c, err := New(endpoint, staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := startCall(t, c, endpoint); err != nil {
			t.Fatalf("call %d: %v (%v)", i, err, Classify(err))
		}
		<-closed
		// Give the server's end time to arrive (on loopback it has, as a
		// rule, by now); a connAlive that never sees it fails below.
		for deadline := time.Now().Add(2 * time.Second); idleConnOpen(c) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	if requests.Load() != 10 || conns.Load() != 10 {
		t.Errorf("%d requests over %d connections, want 10 over 10", requests.Load(), conns.Load())
	}
}

// idleConnOpen reports whether c's call transport holds an idle
// connection that connAlive still takes for open.
func idleConnOpen(c *Client) bool {
	h := c.h1
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, conns := range h.idle {
		for _, ic := range conns {
			if connAlive(ic.raw) {
				return true
			}
		}
	}
	return false
}

func TestH1HonoursConnectionClose(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte(`{}`))
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	for range 3 {
		if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
			t.Fatal(err)
		}
	}
	if conns.Load() != 3 {
		t.Errorf("%d connections for 3 answers that said Connection: close, want 3", conns.Load())
	}
}

func TestH1DrainsShortBodiesAndDropsLongOnes(t *testing.T) {
	size := atomic.Int64{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", int(size.Load()))))
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	// The client reads an excerpt; the rest of a body within maxDrain is
	// drained and the connection kept.
	size.Store(maxDrain / 2)
	for range 3 {
		if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
			t.Fatal(err)
		}
	}
	if conns.Load() != 1 {
		t.Errorf("%d connections for 3 answers of %d bytes, want 1", conns.Load(), maxDrain/2)
	}
	// A longer one is not drained: its connection is closed, and the next
	// call start needs a new one.
	size.Store(4 * maxDrain)
	if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
		t.Fatal(err)
	}
	size.Store(10)
	if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
		t.Fatal(err)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2: a new one after the answer of %d bytes", conns.Load(), 4*maxDrain)
	}
}

func TestH1SkipsInformationalAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"status":"success"}`))
	}))
	defer srv.Close()
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	resp, err := startCall(t, c, srv.URL+"/call")
	if err != nil || resp.StatusCode != http.StatusCreated || resp.Body != `{"status":"success"}` {
		t.Errorf("got %+v, %v; want 201 and the body", resp, err)
	}
}

func TestH1SpeaksTLS(t *testing.T) {
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		if r.Header.Get("Authorization") != "Bearer at-1" {
			t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
		}
		w.Write([]byte(`{"status":"success"}`))
	}))
	srv.EnableHTTP2 = true // the server offers h2; call starts must not take it
	conns := countConns(srv)
	srv.StartTLS()
	defer srv.Close()
	base := DefaultTransport()
	base.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at-1"}}, base)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := proto.Load().(string); p != "HTTP/1.1" || conns.Load() != 1 {
		t.Errorf("%s over %d connections, want HTTP/1.1 over 1", p, conns.Load())
	}
}

func TestH1LeavesProxiedRequestsToNetHTTP(t *testing.T) {
	var proxied atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(r.RequestURI) // absolute-form: a request for a proxy
		w.Write([]byte(`{"status":"success"}`))
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	base := DefaultTransport()
	base.Proxy = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
	c, err := New("https://service.invalid", staticTokens{&Token{AccessToken: "x"}}, base)
	if err != nil {
		t.Fatal(err)
	}
	// The call endpoint is another origin, so it gets no token.
	if _, err := startCall(t, c, "http://calls.invalid/call/1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := proxied.Load().(string); got != "http://calls.invalid/call/1" {
		t.Errorf("the proxy saw %q, want the absolute URL", got)
	}
}

func TestH1CutOffWhileWaitingIsUncertainAndNotReused(t *testing.T) {
	release := make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 2 {
			<-release
		}
		w.Write([]byte(`{}`))
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	defer close(release)
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if got := Classify(err); got != Uncertain || !errors.Is(err, context.Canceled) {
		t.Errorf("cut off while waiting: %v (%v), want uncertain and context.Canceled", err, got)
	}
	if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
		t.Fatal(err)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2: the cut-off one must not be reused", conns.Load())
	}
}

func TestH1ResponseHeaderTimeoutIsUncertain(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	base := DefaultTransport()
	base.ResponseHeaderTimeout = 50 * time.Millisecond
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
	_, err := startCall(t, c, srv.URL+"/call")
	if got := Classify(err); got != Uncertain || !strings.Contains(fmt.Sprint(err), "no answer within 50ms") {
		t.Errorf("got %v (%v), want uncertain with no answer within 50ms", err, got)
	}
}

// failingConn is a connection on which every write fails before a byte
// is written.
type failingConn struct{ net.Conn }

func (failingConn) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestH1RequestNeverWrittenIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the server")
	}))
	defer srv.Close()
	base := DefaultTransport()
	dial := base.DialContext
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return failingConn{conn}, nil
	}
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
	_, err := startCall(t, c, srv.URL+"/call")
	if got := Classify(err); got != Retryable {
		t.Errorf("a request no byte of which was written: %v (%v), want retryable", err, got)
	}
}

func TestH1CutOffBeforeTheWriteIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the server")
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := DefaultTransport()
	dial := base.DialContext
	base.DialContext = func(dctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(dctx, network, addr)
		cancel() // the run is cut off while the connection is made
		return conn, err
	}
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if got := Classify(err); got != Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("cut off before the write: %v (%v), want retryable and context.Canceled", err, got)
	}
}

// TestH1EndlessBodyDoesNotHoldTheCaller: an answer whose body never ends
// is cut off after the excerpt and drain limit, not read to the request's
// deadline.
func TestH1EndlessBodyDoesNotHoldTheCaller(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("StartCall took %v over an endless body: it read on towards the 30s deadline", d)
	}
}
