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
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestGETCallStartIsNeverReplayed: net/http re-sends a GET (a replayable
// method) when a reused connection dies before the answer. The service
// here acts on the second contact's request and drops the connection; the
// client must not send it again, and the outcome must be uncertain.
func TestGETCallStartIsNeverReplayed(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // acted on, then the connection drops
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c, err := New(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := &CallEndpoint{URL: srv.URL + "/call", Method: "GET"}
	var outcomes []Outcome
	for _, p := range []string{"+14155550132", "+12125550199"} {
		_, err := c.StartCall(context.Background(), ep, url.Values{"phone_number": {p}})
		outcomes = append(outcomes, Classify(err))
	}
	if n.Load() != 2 {
		t.Errorf("the service received %d requests for 2 contacts", n.Load())
	}
	if outcomes[0] != Sent || outcomes[1] != Uncertain {
		t.Errorf("outcomes %v, want [sent uncertain]", outcomes)
	}
}

// TestHTTP2ResetIsNeverRetried: over HTTP/2, net/http retries a POST whose
// stream the server reset with PROTOCOL_ERROR, though the server may have
// acted on it. Call starts must not use HTTP/2 for that reason; this
// server speaks only h2, so the call start fails instead, uncertain or
// not written, and is never received twice.
func TestHTTP2ResetIsNeverRetried(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	cert := ts.TLS.Certificates[0]
	ts.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var received atomic.Int32
	var negotiatedH2 atomic.Bool
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveResettingH2(conn, &received, &negotiatedH2)
		}
	}()
	base := DefaultTransport()
	base.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	origin := "https://" + ln.Addr().String()
	c, err := New(origin, nil, base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartCall(context.Background(), &CallEndpoint{URL: origin + "/call", Method: "POST"}, url.Values{"phone_number": {"+14155550132"}})
	if negotiatedH2.Load() {
		t.Error("a call start negotiated HTTP/2, whose client retries reset streams by itself")
	}
	if received.Load() > 1 {
		t.Fatalf("the server received the call start %d times", received.Load())
	}
	if got := Classify(err); got == Sent {
		t.Errorf("outcome sent for a stream the server reset (err %v)", err)
	}
}

// serveResettingH2 answers HTTP/2 only: it acts on the first request's
// body and resets its stream with PROTOCOL_ERROR; later ones get 200.
// A client speaking HTTP/1.1 gets its connection closed.
func serveResettingH2(conn net.Conn, received *atomic.Int32, negotiatedH2 *atomic.Bool) {
	defer conn.Close()
	tc := conn.(*tls.Conn)
	if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
		return // an HTTP/1.1 client: hang up
	}
	negotiatedH2.Store(true)
	pre := make([]byte, len(http2.ClientPreface))
	io.ReadFull(conn, pre)
	fr := http2.NewFramer(conn, conn)
	fr.WriteSettings()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				if received.Add(1) == 1 {
					fr.WriteRSTStream(f.StreamID, http2.ErrCodeProtocol)
					continue
				}
				var hb bytes.Buffer
				hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: true})
			}
		}
	}
}

// TestRefusedTokenIsNotSent: the service answers a call start 401 and the
// token cannot be renewed: nothing was acted on, so the attempt is
// retryable, never uncertain, and the *AuthError reaches the caller.
func TestRefusedTokenIsNotSent(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	clock := newClock()
	src := loggedIn(t, ts, clock, t.TempDir()+"/tok.json")
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/call", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "token revoked", http.StatusUnauthorized)
	})
	ts.srv.Config.Handler.(*http.ServeMux).Handle("/call", mux)
	ts.mu.Lock()
	ts.refresh = map[string]bool{} // the refresh token is dead too
	ts.mu.Unlock()
	c, err := New(ts.srv.URL, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartCall(context.Background(), &CallEndpoint{URL: ts.srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+14155550132"}})
	if got := Classify(err); got != Retryable {
		t.Errorf("Classify(%v) = %v, want retryable", err, got)
	}
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Errorf("the login problem is lost: %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d requests, want 1", calls.Load())
	}
}
