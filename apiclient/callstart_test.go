package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// roundTripperFunc hides an *http.Transport from New, so that call starts
// take net/http's general way.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPreparedCallSendsWhatNetHTTPSends: a prepared call start and one
// sent through net/http's client arrive alike: method, target, Host,
// every header and the body.
func TestPreparedCallSendsWhatNetHTTPSends(t *testing.T) {
	type seen struct {
		Method, RequestURI, Host, Proto string
		Header                          http.Header
		Body                            string
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Host, r.Proto, r.Header.Clone(), string(b)})
		mu.Unlock()
		w.Write([]byte(`{"status":"success"}`))
	}))
	defer srv.Close()
	tokens := staticTokens{&Token{AccessToken: "at-1"}}
	prepared, err := New(srv.URL, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := DefaultTransport()
	defer base.CloseIdleConnections()
	general, err := New(srv.URL, tokens, roundTripperFunc(base.RoundTrip))
	if err != nil {
		t.Fatal(err)
	}
	if prepared.h1 == nil || general.h1 != nil {
		t.Fatalf("h1: %v and %v, want one and none", prepared.h1 != nil, general.h1 != nil)
	}
	ep := &CallEndpoint{URL: srv.URL + "/call/ag1?src=callrun&x=a%20b", Method: "PATCH"}
	form := url.Values{"phone_number": {"+14155550132"}, "first_name": {"Zoë & Ada"}, "notes": {"a=b\r\nc"}}
	for _, c := range []*Client{prepared, general} {
		if _, err := c.StartCall(context.Background(), ep, form); err != nil {
			t.Fatal(err)
		}
	}
	if p := prepared.prepared(ep, "PATCH"); !p.usable {
		t.Fatal("the call start was not prepared")
	}
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	// net/http's Transport offers gzip and unpacks it unseen; a prepared
	// call start takes the answer as it is, so it offers none.
	got[1].Header.Del("Accept-Encoding")
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("prepared:\n%+v\nnet/http:\n%+v", got[0], got[1])
	}
	if got[0].Header.Get("Authorization") != "Bearer at-1" || got[0].Body != form.Encode() {
		t.Errorf("prepared call start: %+v", got[0])
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

// TestPreparedCall401IsSentOnceMoreWithANewToken: a 401 means the service
// did not act; the call start goes once more with a renewed token.
func TestPreparedCall401IsSentOnceMoreWithANewToken(t *testing.T) {
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
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
	resp, err := startCall(t, c, srv.URL+"/call")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if want := []string{"Bearer at-1", "Bearer at-2"}; !reflect.DeepEqual(auths, want) || tokens.invalidated != 1 {
		t.Errorf("requests with %q, %d invalidated; want %q and 1", auths, tokens.invalidated, want)
	}

	// A second 401 is the service's answer: failed, not sent a third time.
	auths = nil
	tokens.n = 5
	_, err = startCall(t, c, srv.URL+"/call")
	if Classify(err) != Failed || StatusCode(err) != http.StatusUnauthorized || len(auths) != 2 {
		t.Errorf("after two 401s: %v (%v), %d requests; want failed 401 after 2", err, Classify(err), len(auths))
	}
}

// TestPreparedCallWithoutATokenSendsNothing: no token, no request, and the
// attempt is retryable with the token's error kept.
func TestPreparedCallWithoutATokenSendsNothing(t *testing.T) {
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

// TestPreparedCallRefusesATokenThatWouldSplitTheHeader: a token with a line
// break is not written, so it cannot smuggle a header in.
func TestPreparedCallRefusesATokenThatWouldSplitTheHeader(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
	}))
	defer srv.Close()
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at-1\r\nX-Evil: 1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = startCall(t, c, srv.URL+"/call")
	if Classify(err) != Retryable || requests.Load() != 0 || strings.Contains(err.Error(), "at-1") {
		t.Errorf("%v (%v), %d requests; want retryable, none sent, no token in the message", err, Classify(err), requests.Load())
	}
}

// TestPreparedCall401ThenNotWrittenIsRetryable: the service answers 401
// and closes; the second send never reaches it. It acted on neither, so
// the attempt may be tried again.
func TestPreparedCall401ThenNotWrittenIsRetryable(t *testing.T) {
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

// TestPreparedCallHostAsNetHTTPWritesIt: an empty port is left out of the
// Host header, as net/http does.
func TestPreparedCallHostAsNetHTTPWritesIt(t *testing.T) {
	c, err := New("http://127.0.0.1:1", staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := c.prepared(&CallEndpoint{URL: "http://localhost:/call", Method: "POST"}, "POST")
	if !p.usable || !strings.Contains(string(p.head), "\r\nHost: localhost\r\n") {
		t.Errorf("usable %v, head %q", p.usable, p.head)
	}
}
