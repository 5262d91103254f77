package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
)

// session is a client logged in to a sandbox through the real OAuth flow.
type session struct {
	srv    *sandbox.Server
	tokens *apiclient.StoredTokenSource
	client *apiclient.Client
}

func newSession(t *testing.T, opts sandbox.Options, now func() time.Time) *session {
	t.Helper()
	if opts.Now == nil {
		opts.Now = now
	}
	srv := sandbox.NewServer(opts)
	t.Cleanup(srv.Close)
	o := &apiclient.OAuth{
		BaseURL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
		RedirectURI: "http://127.0.0.1:8765/callback", Now: now,
	}
	file := apiclient.MemoryTokens("token.json")
	tokens := apiclient.NewStoredTokenSource(o, file)
	if _, err := tokens.Login(context.Background(), sandbox.DefaultCode); err != nil {
		t.Fatalf("login: %v", err)
	}
	c, err := apiclient.New(srv.URL, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &session{srv: srv, tokens: tokens, client: c}
}

func TestAgainstSandboxEndToEnd(t *testing.T) {
	t.Parallel()
	s := newSession(t, sandbox.Options{}, nil)
	ctx := context.Background()
	hook := "http://127.0.0.1:1/hook"
	created, err := s.client.CreateAgent(ctx, apiclient.NewAgent{Name: "Spring Promo", Prompt: "Be kind.", Webhook: hook, WebhookMethod: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Status != "active" || created.AgentID == "" {
		t.Fatalf("created = %+v", created)
	}
	all, err := s.client.ListAllAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Webhook != hook || all[0].WebhookMethod != "GET" || all[0].Prompt != "Be kind." || all[0].CreatedAt == "" {
		t.Fatalf("listed = %+v", all)
	}
	ep, err := s.client.GetCallEndpoint(ctx, created.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"phone_number": {"+14155550132"}, "first_name": {"Ada"}, "local_presence_number": {"No"}}
	resp, err := s.client.StartCall(ctx, ep, form)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("call answer = %+v", resp)
	}
	placed := s.srv.Placed()
	if len(placed) != 1 || placed[0].AgentID != created.AgentID || placed[0].Form.Get("first_name") != "Ada" || placed[0].Form.Get("phone_number") != "+14155550132" {
		t.Fatalf("ledger = %+v", placed)
	}
}

func TestAgainstSandboxPagination(t *testing.T) {
	t.Parallel()
	s := newSession(t, sandbox.Options{}, nil)
	for i := range 250 {
		s.srv.AddAgent(sandbox.Agent{AgentName: fmt.Sprintf("agent %03d", i), Status: "active", GeneralPrompt: "p"})
	}
	all, err := s.client.ListAllAgents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 250 || all[0].Name != "agent 000" || all[249].Name != "agent 249" {
		t.Fatalf("got %d agents", len(all))
	}
	if n := s.srv.Stats().ListCalls; n != 3 {
		t.Errorf("%d list requests for 250 agents, want 3", n)
	}
}

// TestAgainstSandboxShiftingList: an agent added between page 1 and page
// 2 of a newest-first list pushes the last agent of page 1 to page 2; the
// listing holds it once. An agent removed between the pages of an
// oldest-first list pulls the first agent of page 2 onto page 1, and that
// one listing misses it.
func TestAgainstSandboxShiftingList(t *testing.T) {
	t.Parallel()
	for _, newest := range []bool{true, false} {
		s := newSession(t, sandbox.Options{NewestFirst: newest}, nil)
		var seeded []sandbox.Agent
		for i := range 101 {
			seeded = append(seeded, s.srv.AddAgent(sandbox.Agent{AgentName: fmt.Sprintf("agent %03d", i), GeneralPrompt: "p"}))
		}
		shifted := false
		s.srv.OnListPage(func(page int) {
			if page != 1 || shifted {
				return
			}
			shifted = true
			if newest {
				s.srv.AddAgent(sandbox.Agent{AgentName: "added", GeneralPrompt: "p"})
			} else {
				s.srv.RemoveAgent(seeded[0].AgentID)
			}
		})
		all, err := s.client.ListAllAgents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, a := range all {
			count[a.AgentID]++
		}
		moved := seeded[100] // first on page 2 oldest first; page 1 starts at it newest first
		if newest {
			moved = seeded[1] // last on page 1 before the addition, first on page 2 after
		}
		switch {
		case newest && (len(all) != 101 || count[moved.AgentID] != 1):
			t.Errorf("newest first, one added between pages: %d agents listed, %s %d times; want 101, once", len(all), moved.AgentName, count[moved.AgentID])
		case !newest && (len(all) != 100 || count[moved.AgentID] != 0):
			t.Errorf("oldest first, one removed between pages: %d agents listed, %s %d times; want 100 listed, the moved one missed", len(all), moved.AgentName, count[moved.AgentID])
		}
		for id, n := range count {
			if n != 1 {
				t.Errorf("agent %s listed %d times", id, n)
			}
		}
	}
}

// TestAgainstSandboxTokensExpireMidRun: short-lived tokens, rotated on every
// refresh, with many workers: every request succeeds and refreshes stay few.
func TestAgainstSandboxTokensExpireMidRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	s := newSession(t, sandbox.Options{AccessTokenLifetime: 10 * time.Second}, now)
	ctx := context.Background()
	for round := range 5 {
		mu.Lock()
		clock = clock.Add(11 * time.Second) // every token issued so far has expired
		mu.Unlock()
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				if _, err := s.client.ListAgents(ctx, 1, 100); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
	}
	st := s.srv.Stats()
	if st.Refreshes != 5 {
		t.Errorf("%d refreshes over 5 expiries, want 5", st.Refreshes)
	}
	if st.Unauthorized != 0 {
		t.Errorf("%d requests answered 401; proactive refresh should prevent them", st.Unauthorized)
	}
}

func TestAgainstSandbox401IsRefreshedOnce(t *testing.T) {
	t.Parallel()
	s := newSession(t, sandbox.Options{}, nil)
	ctx := context.Background()
	s.srv.ExpireAccessTokens()
	if _, err := s.client.ListAgents(ctx, 1, 100); err != nil {
		t.Fatalf("after the service dropped the token: %v", err)
	}
	if st := s.srv.Stats(); st.Refreshes != 1 || st.Unauthorized != 1 {
		t.Errorf("refreshes %d, 401s %d; want 1 and 1", st.Refreshes, st.Unauthorized)
	}
	s.srv.ExpireAccessTokens()
	s.srv.RevokeRefreshTokens()
	_, err := s.client.ListAgents(ctx, 1, 100)
	if !errors.Is(err, apiclient.ErrReauthorize) {
		t.Errorf("with the refresh token revoked: err = %v, want ErrReauthorize", err)
	}
}

// newEndpoint creates an agent and returns its call endpoint.
func (s *session) newEndpoint(t *testing.T) *apiclient.CallEndpoint {
	t.Helper()
	ctx := context.Background()
	a, err := s.client.CreateAgent(ctx, apiclient.NewAgent{Name: "A", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := s.client.GetCallEndpoint(ctx, a.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// TestAgainstSandboxClassifiesFaults checks each fault the sandbox injects
// on call starts against the outcome the client gives it, and whether the
// sandbox says the call was placed.
func TestAgainstSandboxClassifiesFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults sandbox.Faults
		want   apiclient.Outcome
		placed bool
	}{
		{"none", sandbox.Faults{}, apiclient.Sent, true},
		{"429", sandbox.Faults{Share429: 1, RetryAfter: 2 * time.Second}, apiclient.Retryable, false},
		{"503", sandbox.Faults{Share503: 1}, apiclient.Retryable, false},
		{"500 after placing", sandbox.Faults{Share500: 1}, apiclient.Uncertain, true},
		{"dropped after placing", sandbox.Faults{ShareDrop: 1}, apiclient.Uncertain, true},
		// Not placed, but the client cannot know that: uncertain is right.
		{"dropped before placing", sandbox.Faults{ShareDropBefore: 1}, apiclient.Uncertain, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, sandbox.Options{}, nil)
			ctx := context.Background()
			ep := s.newEndpoint(t)
			s.srv.SetFaults(tc.faults)
			_, err := s.client.StartCall(ctx, ep, url.Values{"phone_number": {"+14155550132"}})
			if got := apiclient.Classify(err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tc.want)
			}
			calls := s.srv.Calls()
			if len(calls) != 1 || calls[0].Placed != tc.placed {
				t.Errorf("ledger = %+v, want one call, placed %v", calls, tc.placed)
			}
			if tc.name == "429" {
				var e *apiclient.Error
				if !errors.As(err, &e) || e.RetryAfter != 2*time.Second {
					t.Errorf("Retry-After not carried: %v", err)
				}
			}
		})
	}
}

func TestAgainstSandboxRefusesWhatTheSpecDoesNot(t *testing.T) {
	t.Parallel()
	s := newSession(t, sandbox.Options{}, nil)
	ctx := context.Background()
	ep := s.newEndpoint(t)
	_, err := s.client.StartCall(ctx, ep, url.Values{"phone_number": {"+14155550132"}, "favourite_colour": {"red"}})
	if apiclient.Classify(err) != apiclient.Failed || apiclient.StatusCode(err) != 422 {
		t.Errorf("unknown form field: err = %v, want a 422 classified failed", err)
	}
	if _, err := s.client.CreateAgent(ctx, apiclient.NewAgent{Name: "B"}); apiclient.StatusCode(err) != 422 {
		t.Errorf("create without prompt: err = %v, want 422", err)
	}
}

// TestAgainstSandboxNoTokenIsNotSent: a call endpoint on the service's own
// origin needs an access token. When none can be had (the refresh endpoint
// answers 500, or refuses the refresh token), the call start is not sent,
// and its outcome is Retryable and NoToken, whatever status the token
// endpoint answered: the service never saw it. A call start on a kept
// connection (POST) and one on a connection of its own (GET) are checked.
func TestAgainstSandboxNoTokenIsNotSent(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"POST", "GET"} {
		t.Run(method, func(t *testing.T) {
			var mu sync.Mutex
			clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			later := func() { mu.Lock(); clock = clock.Add(2 * time.Hour); mu.Unlock() } // past every token's expiry and any refresh pause
			s := newSession(t, sandbox.Options{}, now)
			ctx := context.Background()
			ep := s.newEndpoint(t)
			ep.Method = method
			form := url.Values{"phone_number": {"+14155550132"}}

			later()
			s.srv.SetFaults(sandbox.Faults{ShareRefresh500: 1})
			_, err := s.client.StartCall(ctx, ep, form)
			var ae *apiclient.AuthError
			if got := apiclient.Classify(err); got != apiclient.Retryable || !apiclient.NoToken(err) || errors.As(err, &ae) {
				t.Errorf("refresh answered 500: Classify(%v) = %v, NoToken %v; want retryable, no token, no AuthError", err, got, apiclient.NoToken(err))
			}

			later()
			s.srv.SetFaults(sandbox.Faults{})
			s.srv.RevokeRefreshTokens()
			_, err = s.client.StartCall(ctx, ep, form)
			if got := apiclient.Classify(err); got != apiclient.Retryable || !apiclient.NoToken(err) || !errors.As(err, &ae) || !errors.Is(err, apiclient.ErrReauthorize) {
				t.Errorf("refresh token refused: Classify(%v) = %v, NoToken %v; want retryable, no token, an AuthError", err, got, apiclient.NoToken(err))
			}
			if calls := s.srv.Calls(); len(calls) != 0 {
				t.Errorf("the sandbox received %d call starts, want none", len(calls))
			}
		})
	}
}
