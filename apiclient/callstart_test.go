package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
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

// TestCallStartAsTheServiceSeesIt pins what a call start looks like on
// arrival: method, target, Host, HTTP/1.1, every header and the body. On
// the service's own origin it carries the access token; on another, the
// form and nothing else.
func TestCallStartAsTheServiceSeesIt(t *testing.T) {
	t.Parallel()
	type seen struct {
		Method, RequestURI, Host, Proto string
		Header                          http.Header
		Body                            string
	}
	var mu sync.Mutex
	var got []seen
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Host, r.Proto, r.Header.Clone(), string(b)})
		mu.Unlock()
		w.Write([]byte(`{"status":"success"}`))
	})
	own := httptest.NewServer(handler)
	defer own.Close()
	other := httptest.NewServer(handler)
	defer other.Close()
	c, err := New(own.URL, staticTokens{&Token{AccessToken: "at-1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"phone_number": {"+14155550132"}, "first_name": {"Zoë & Ada"}, "notes": {"a=b\r\nc"}}
	body := form.Encode()
	for _, base := range []string{own.URL, other.URL} {
		ep := &CallEndpoint{URL: base + "/call/ag1?src=callrun&x=a%20b", Method: "PATCH"}
		if _, err := c.StartCall(context.Background(), ep, form); err != nil {
			t.Fatal(err)
		}
	}
	header := http.Header{
		"Accept":         {"application/json"},
		"Authorization":  {"Bearer at-1"},
		"Content-Length": {strconv.Itoa(len(body))},
		"Content-Type":   {"application/x-www-form-urlencoded"},
		"User-Agent":     {"callrun"},
	}
	want := []seen{{"PATCH", "/call/ag1?src=callrun&x=a%20b", strings.TrimPrefix(own.URL, "http://"), "HTTP/1.1", header, body}}
	header = header.Clone()
	header.Del("Authorization")
	want = append(want, seen{"PATCH", "/call/ag1?src=callrun&x=a%20b", strings.TrimPrefix(other.URL, "http://"), "HTTP/1.1", header, body})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the service saw\n%+v\nwant\n%+v", got, want)
	}
}

// succeed is a handler that reads each request, counts it in n and
// answers that the call started.
func succeed(n *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"status":"success"}`))
	}
}

// rotatingTokens hands out at-1, then after an Invalidate at-2, and so on.
type rotatingTokens struct {
	mu          sync.Mutex
	n           int
	invalidated int
	fail        error // returned by Token once set
}

func (r *rotatingTokens) Token(context.Context) (*Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	return &Token{AccessToken: "at-" + string(rune('1'+r.n))}, nil
}

func (r *rotatingTokens) Invalidate(*Token) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invalidated++
	r.n++
}

// TestCallStartSendCheck: a call start whose send check
// (WithSendCheck) says no once its token is had is not sent; after a 401
// it is not sent again. Either is Retryable, its error wraps the check's,
// and the server saw nothing, or only the request it answered 401.
func TestCallStartSendCheck(t *testing.T) {
	t.Parallel()
	closed := errors.New("hours closed")
	for _, c := range []struct {
		name     string
		checkNo  int // the check's call that says no
		requests int
	}{
		{"before the first send", 1, 0},
		{"before the send again after a 401", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				io.Copy(io.Discard, r.Body)
				if r.Header.Get("Authorization") != "Bearer at-2" {
					http.Error(w, "token expired", http.StatusUnauthorized)
					return
				}
				w.Write([]byte(`{"status":"success"}`))
			}))
			defer srv.Close()
			client, err := New(srv.URL, &rotatingTokens{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			checks := 0
			ctx := WithSendCheck(context.Background(), func() error {
				if checks++; checks == c.checkNo {
					return closed
				}
				return nil
			})
			_, err = client.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call"}, url.Values{"phone_number": {"+14155550132"}})
			var held *SendHeldError
			if !errors.As(err, &held) || !errors.Is(err, closed) || Classify(err) != Retryable || int(requests.Load()) != c.requests {
				t.Errorf("%v (%v), %d request(s); want a SendHeldError wrapping the check's, Retryable, %d request(s)", err, Classify(err), requests.Load(), c.requests)
			}
		})
	}
}

// TestCallStart401IsSentOnceMoreWithANewToken: a 401 means the service did
// not act; the call start goes once more with a renewed token, whatever
// its method. A second 401 is the service's answer.
func TestCallStart401IsSentOnceMoreWithANewToken(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"POST", "PUT", "GET"} {
		t.Run(method, func(t *testing.T) {
			var mu sync.Mutex
			var auths, phones []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				mu.Lock()
				auths = append(auths, r.Header.Get("Authorization"))
				phones = append(phones, r.Form.Get("phone_number"))
				mu.Unlock()
				if r.Header.Get("Authorization") != "Bearer at-2" {
					http.Error(w, "token expired", http.StatusUnauthorized)
					return
				}
				w.Write([]byte(`{"status":"success"}`))
			}))
			defer srv.Close()
			tokens := &rotatingTokens{}
			c, err := New(srv.URL, tokens, nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := &CallEndpoint{URL: srv.URL + "/call", Method: method}
			form := url.Values{"phone_number": {"+14155550132"}}
			resp, err := c.StartCall(context.Background(), ep, form)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%+v, %v", resp, err)
			}
			want := []string{"Bearer at-1", "Bearer at-2"}
			if !reflect.DeepEqual(auths, want) || !reflect.DeepEqual(phones, []string{"+14155550132", "+14155550132"}) || tokens.invalidated != 1 {
				t.Errorf("requests with %q and forms %q, %d invalidated; want %q, the form twice, and 1", auths, phones, tokens.invalidated, want)
			}

			auths = nil
			tokens.mu.Lock()
			tokens.n = 5
			tokens.mu.Unlock()
			_, err = c.StartCall(context.Background(), ep, form)
			if Classify(err) != Failed || StatusCode(err) != http.StatusUnauthorized || len(auths) != 2 {
				t.Errorf("after two 401s: %v (%v), %d requests; want failed 401 after 2", err, Classify(err), len(auths))
			}
		})
	}
}

// TestCallStartWithoutATokenSendsNothing: no token, no request, and the
// attempt is retryable with the token's error kept.
func TestCallStartWithoutATokenSendsNothing(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
	}))
	defer srv.Close()
	tokens := &rotatingTokens{fail: &AuthError{Err: errors.New("the refresh token was revoked")}}
	c, err := New(srv.URL, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = startCall(t, c, srv.URL+"/call")
	var ae *AuthError
	if Classify(err) != Retryable || !errors.As(err, &ae) || requests.Load() != 0 {
		t.Errorf("%v (%v), %d requests; want retryable with the AuthError, none sent", err, Classify(err), requests.Load())
	}
}

// TestCallStartRefusesATokenThatWouldSplitTheHeader: a token with a line
// break is not sent, so it cannot smuggle a header in; the run is told it
// has no token to send.
func TestCallStartRefusesATokenThatWouldSplitTheHeader(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
	}))
	defer srv.Close()
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at-1\r\nX-Evil: 1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"POST", "GET"} {
		_, err = c.StartCall(context.Background(), &CallEndpoint{URL: srv.URL + "/call", Method: method}, url.Values{"phone_number": {"+1"}})
		if Classify(err) != Retryable || !NoToken(err) || requests.Load() != 0 || strings.Contains(err.Error(), "at-1") {
			t.Errorf("%s: %v (%v, no token %v), %d requests; want retryable for want of a token, none sent, no token in the message", method, err, Classify(err), NoToken(err), requests.Load())
		}
	}
	if _, err := c.ListAgents(context.Background(), 1, 1); err == nil || requests.Load() != 0 || strings.Contains(err.Error(), "at-1") {
		t.Errorf("list agents: %v, %d requests; want an error without the token, none sent", err, requests.Load())
	}
}

// TestCallStart401ThenNotWrittenIsRetryable: the service answers 401 and
// closes; the second send never reaches it. It acted on neither, so the
// attempt may be tried again.
func TestCallStart401ThenNotWrittenIsRetryable(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		srv.Listener.Close() // no new connection: the next dial is refused
		w.Header().Set("Connection", "close")
		http.Error(w, "token expired", http.StatusUnauthorized)
	})
	srv.Start()
	defer srv.Close()
	tokens := &rotatingTokens{}
	c, err := New(srv.URL, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = startCall(t, c, srv.URL+"/call")
	if Classify(err) != Retryable || requests.Load() != 1 || tokens.invalidated != 1 {
		t.Errorf("%v (%v), %d requests, %d invalidated; want retryable after 1 request and 1 renewal", err, Classify(err), requests.Load(), tokens.invalidated)
	}
}

// TestCallStartsKeepConnectionsButGETsDoNot: call starts with a body
// share kept-alive connections; GETs and OPTIONS, which net/http would
// send again on a reused connection that died, get a new connection each.
func TestCallStartsKeepConnectionsButGETsDoNot(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(succeed(&requests))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		conns  int32
	}{{"POST", 1}, {"GET", 10}, {"OPTIONS", 10}} {
		requests.Store(0)
		conns.Store(0)
		for i := range 10 {
			resp, err := c.StartCall(context.Background(), &CallEndpoint{URL: srv.URL + "/call", Method: tc.method}, url.Values{"phone_number": {"+1"}})
			if err != nil || resp.Body != `{"status":"success"}` {
				t.Fatalf("%s %d: %+v, %v", tc.method, i, resp, err)
			}
		}
		if requests.Load() != 10 || conns.Load() != tc.conns {
			t.Errorf("%s: %d requests over %d connections, want 10 over %d", tc.method, requests.Load(), conns.Load(), tc.conns)
		}
	}
}

// closeNotingConn is a client connection that says when it is closed.
type closeNotingConn struct {
	net.Conn
	closed chan<- struct{}
	once   sync.Once
}

func (c *closeNotingConn) Close() error {
	c.once.Do(func() { c.closed <- struct{}{} })
	return c.Conn.Close()
}

// TestCallStartAfterTheServerClosedAnIdleConnection: a server that closes
// a kept-alive connection after answering, without saying so, must not
// make the next call start uncertain: the client finds the connection
// closed before writing to it and dials a new one.
func TestCallStartAfterTheServerClosedAnIdleConnection(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests, conns atomic.Int32
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
				defer conn.Close()
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
	clientClosed := make(chan struct{}, 10)
	base := DefaultTransport()
	wrapConns(base, func(conn net.Conn) net.Conn { return &closeNotingConn{Conn: conn, closed: clientClosed} })
	endpoint := "http://" + ln.Addr().String() + "/call"
	c, err := New(endpoint, staticTokens{&Token{AccessToken: "x"}}, base)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := startCall(t, c, endpoint); err != nil {
			t.Fatalf("call %d: %v (%v)", i, err, Classify(err))
		}
		// The client has seen the server's end once it closed its side;
		// a client that never sees it hangs here until the test times out.
		<-clientClosed
	}
	if requests.Load() != 10 || conns.Load() != 10 {
		t.Errorf("%d requests over %d connections, want 10 over 10", requests.Load(), conns.Load())
	}
}

// brokenConn is a client connection whose writes fail, before a byte is
// written, once broken is set.
type brokenConn struct {
	net.Conn
	broken *atomic.Bool
}

func (c brokenConn) Write(p []byte) (int, error) {
	if c.broken.Load() {
		return 0, errors.New("broken pipe")
	}
	return c.Conn.Write(p)
}

// wrapConns makes base's connections the ones wrap makes of them.
func wrapConns(base *http.Transport, wrap func(net.Conn) net.Conn) {
	dial := base.DialContext
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(conn), nil
	}
}

// breakableConns makes base's connections brokenConns and returns a
// function that breaks every one made so far.
func breakableConns(base *http.Transport) (breakAll func()) {
	var mu sync.Mutex
	var conns []*atomic.Bool
	wrapConns(base, func(conn net.Conn) net.Conn {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, new(atomic.Bool))
		return brokenConn{conn, conns[len(conns)-1]}
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range conns {
			b.Store(true)
		}
	}
}

// TestCallStartOnADeadReusedConnectionIsNotSentAgain: net/http sends a
// request again by itself, on a new connection, when a reused one fails
// before a byte of the request is written. A call start is not sent
// again; as no byte of it left, it is retryable, and the service received
// only the first contact.
func TestCallStartOnADeadReusedConnectionIsNotSentAgain(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tls), func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewUnstartedServer(succeed(&requests))
			base := DefaultTransport()
			if tls {
				srv.StartTLS()
				base.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
			} else {
				srv.Start()
			}
			defer srv.Close()
			breakAll := breakableConns(base)
			c, err := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := startCall(t, c, srv.URL+"/call"); err != nil {
				t.Fatal(err)
			}
			breakAll() // the kept-alive connection dies; a new one would work
			_, err = startCall(t, c, srv.URL+"/call")
			if got := Classify(err); got != Retryable || requests.Load() != 1 {
				t.Errorf("%v (%v), %d requests received; want retryable and 1", err, got, requests.Load())
			}
		})
	}
}

// roundTripperFunc is an http.RoundTripper made of a function.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCallStartSentTwiceByTheTransportIsUncertain: a transport that sends
// a call start again by itself (here, one New is given) may have started
// two calls; the write counter sees it, and the outcome is uncertain
// although the service answered 200.
func TestCallStartSentTwiceByTheTransportIsUncertain(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(succeed(&requests))
	defer srv.Close()
	inner := DefaultTransport()
	defer inner.CloseIdleConnections()
	twice := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var resp *http.Response
		for range 2 {
			if resp != nil {
				resp.Body.Close()
			}
			again := r.Clone(r.Context())
			again.Body = io.NopCloser(bytes.NewReader(body))
			if resp, err = inner.RoundTrip(again); err != nil {
				return nil, err
			}
		}
		return resp, nil
	})
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, twice)
	if err != nil {
		t.Fatal(err)
	}
	_, err = startCall(t, c, srv.URL+"/call")
	if got := Classify(err); got != Uncertain || requests.Load() != 2 || !strings.Contains(fmt.Sprint(err), "1 more time(s)") {
		t.Errorf("%v (%v), %d requests; want uncertain after 2, saying so", err, got, requests.Load())
	}
}

// TestCallStartNeverWrittenIsRetryable: a connection made, and the
// request's first write failing before a byte of it left: retryable.
func TestCallStartNeverWrittenIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the server")
	}))
	defer srv.Close()
	broken := new(atomic.Bool)
	broken.Store(true)
	base := DefaultTransport()
	wrapConns(base, func(conn net.Conn) net.Conn { return brokenConn{conn, broken} })
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
	_, err := startCall(t, c, srv.URL+"/call")
	if got := Classify(err); got != Retryable {
		t.Errorf("a request no byte of which was written: %v (%v), want retryable", err, got)
	}
}

// TestCallStartCutOffWhileConnectingIsRetryable: the run is cut off while
// the connection is made; the call start gives up before writing.
func TestCallStartCutOffWhileConnectingIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the server")
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gaveUp := make(chan struct{})
	base := DefaultTransport()
	dial := base.DialContext
	base.DialContext = func(dctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(dctx, network, addr)
		cancel() // the run is cut off while the connection is made
		<-gaveUp // which is there only once the call start has given up
		return conn, err
	}
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, base)
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	close(gaveUp)
	if got := Classify(err); got != Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("cut off before the write: %v (%v), want retryable and context.Canceled", err, got)
	}
}

// TestCallStartCutOffWhileWaitingIsUncertain: a call start cut off after
// it was written, while its answer is awaited, may have started a call.
func TestCallStartCutOffWhileWaitingIsUncertain(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(arrived)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if got := Classify(err); got != Uncertain || !errors.Is(err, context.Canceled) {
		t.Errorf("cut off while waiting: %v (%v), want uncertain and context.Canceled", err, got)
	}
}

func TestCallStartResponseHeaderTimeoutIsUncertain(t *testing.T) {
	t.Parallel()
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
	if got := Classify(err); got != Uncertain || !strings.Contains(fmt.Sprint(err), "timeout awaiting response headers") {
		t.Errorf("got %v (%v), want uncertain after a timeout awaiting the answer", err, got)
	}
}

// TestCallStartsOverTLSSpeakHTTP1: a server that offers HTTP/2 gets call
// starts over HTTP/1.1, with the token, on one kept-alive connection.
func TestCallStartsOverTLSSpeakHTTP1(t *testing.T) {
	t.Parallel()
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

// TestCallStartThroughAProxy: with a proxy, a call start goes to it, for
// the call endpoint's absolute URL; on another origin, without a token.
func TestCallStartThroughAProxy(t *testing.T) {
	t.Parallel()
	var proxied, auth atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(r.RequestURI) // absolute-form: a request for a proxy
		auth.Store(r.Header.Get("Authorization"))
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
	if _, err := startCall(t, c, "http://calls.invalid/call/1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := proxied.Load().(string); got != "http://calls.invalid/call/1" || auth.Load() != "" {
		t.Errorf("the proxy saw %q with Authorization %q, want the absolute URL and none", got, auth.Load())
	}
}

// TestCallStartEndlessBodyDoesNotHoldTheCaller: an answer whose body never
// ends is cut off after what it takes to judge it, not read to the
// request's deadline; JSON too long to judge is the service's kind of
// answer: sent.
func TestCallStartEndlessBodyDoesNotHoldTheCaller(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"success","data":"`))
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

// TestCallStartAnswerCallID: the call id a 2xx answer gives is kept, at
// its top or in its data; an answer without one gives none.
func TestCallStartAnswerCallID(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"status":"success","call_id":"call_7","agent_id":"agent_1"}`: "call_7",
		`{"status":"success","data":{"callId":"c-8"}}`:                 "c-8",
		`{"status":"success"}`:                                         "",
		`{"status":"success","call_id":12}`:                            "12",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Write([]byte(body))
		}))
		c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at-1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.StartCall(context.Background(), &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+14155550132"}})
		srv.Close()
		if err != nil || resp.CallID != want {
			t.Errorf("%s: call id %q (%v), want %q", body, resp.CallID, err, want)
		}
	}
}
