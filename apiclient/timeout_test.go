package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// stallingServer answers every request with the status its path names
// (/200, /422, /500; else 200), its headers and the first bytes of a
// longer body, and then sends nothing more until the client gives up or
// the test ends.
func stallingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/"), "%d", &status)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"data": [`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

// within runs fn and fails the test if it has not returned after a
// generous while: a hang is the failure these tests look for, and a
// failed test must still end.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still waiting for a stalled answer after 20s", what)
	}
}

// TestStalledBodiesAreBounded: an answer whose body stalls after the
// headers ends within the client's Timeout, for every kind of request,
// even when the caller's context has no deadline. Agent and token
// requests fail saying so; a call start keeps the outcome its status
// gave (the service said what it did).
func TestStalledBodiesAreBounded(t *testing.T) {
	t.Parallel()
	srv := stallingServer(t)
	const timeout = 200 * time.Millisecond
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = timeout
	ctx := context.Background()
	late := fmt.Sprintf("no complete answer within %s", timeout)

	within(t, "list agents", func() {
		if _, err := c.ListAgents(ctx, 1, 100); err == nil || !strings.Contains(err.Error(), late) {
			t.Errorf("ListAgents = %v, want %q", err, late)
		}
	})
	within(t, "call endpoint", func() {
		if _, err := c.GetCallEndpoint(ctx, "a1"); err == nil || !strings.Contains(err.Error(), late) {
			t.Errorf("GetCallEndpoint = %v, want %q", err, late)
		}
	})
	within(t, "create agent", func() {
		if _, err := c.CreateAgent(ctx, NewAgent{Name: "A", Prompt: "p"}); err == nil || !strings.Contains(err.Error(), late) {
			t.Errorf("CreateAgent = %v, want %q", err, late)
		}
	})
	o := &OAuth{BaseURL: srv.URL, ClientID: "id", ClientSecret: "secret", RedirectURI: "http://127.0.0.1/cb", Timeout: timeout}
	within(t, "refresh", func() {
		if _, err := o.Refresh(ctx, "rt"); err == nil || !strings.Contains(err.Error(), late) {
			t.Errorf("Refresh = %v, want %q", err, late)
		}
	})

	// Call starts, on a kept connection (POST, PUT) and on one of its own (GET).
	for _, method := range []string{"POST", "PUT", "GET"} {
		for _, tc := range []struct {
			path string
			want Outcome
		}{{"/200", Sent}, {"/422", Failed}, {"/500", Uncertain}} {
			within(t, method+" "+tc.path, func() {
				resp, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + tc.path, Method: method}, url.Values{"phone_number": {"+14155550132"}})
				if got := Classify(err); got != tc.want {
					t.Errorf("%s %s: Classify(%v) = %v, want %v", method, tc.path, err, got, tc.want)
				}
				if tc.want == Sent && (resp == nil || resp.StatusCode != 200 || resp.Body != `{"data": [` || !strings.Contains(resp.Cut, "cut off")) {
					t.Errorf("%s %s: %+v, want 200 with the part of the body that came", method, tc.path, resp)
				}
				if tc.want != Sent && fmt.Sprintf("/%d", StatusCode(err)) != tc.path {
					t.Errorf("%s %s: status %d", method, tc.path, StatusCode(err))
				}
			})
		}
	}
}
