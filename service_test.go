package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestDatabaseTokenSourcesShareOneRotatingToken: four services of one
// campaign whose state is in PostgreSQL (four machines, in effect: each
// has its connections of its own) need a new token at the same moment,
// round after round, from a service that rotates the refresh token on
// every refresh. Each round makes one refresh in all, which the others
// adopt from the database; the service refuses nothing. The clock is
// the tests' own.
func TestDatabaseTokenSourcesShareOneRotatingToken(t *testing.T) {
	const sources, rounds = 4, 6
	var mu sync.Mutex
	var now time.Time // set after the login, which reads the real clock
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := sandbox.NewServer(sandbox.Options{Now: clock, AccessTokenLifetime: 2 * time.Second})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CALLRUN_DATABASE_URL", pgtest.URL(t))
	t.Setenv("CALLRUN_TOKEN_KEY", e2eTokenKey)
	tokenFile := os.Getenv("CALLRUN_TOKEN_FILE")
	t.Setenv("CALLRUN_TOKEN_FILE", "")
	ctx := context.Background()

	var out strings.Builder
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "callrun_tokens") {
		t.Errorf("login says %q, not that the token is in the database", out.String())
	}
	if _, err := os.Stat(tokenFile); err == nil {
		t.Errorf("the login wrote a token file")
	}
	mu.Lock()
	now = time.Now()
	mu.Unlock()
	var svcs []*run.Service
	for range sources {
		svc, err := openService(ctx, nolog, path, campaign.LoadOptions{ServiceOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(svc.Close)
		svc.OAuth.Now = clock
		svcs = append(svcs, svc)
	}
	base := srv.Stats().Refreshes
	for round := range rounds {
		mu.Lock()
		now = now.Add(3 * time.Second) // every token in memory has expired
		mu.Unlock()
		var wg sync.WaitGroup
		var failures atomic.Int32
		for _, svc := range svcs {
			for range 2 {
				wg.Go(func() {
					if _, err := svc.Tokens.Token(ctx); err != nil {
						failures.Add(1)
						t.Errorf("round %d: %v", round, err)
					}
				})
			}
		}
		wg.Wait()
		if failures.Load() > 0 {
			return
		}
		if got := srv.Stats().Refreshes - base; got != round+1 {
			t.Fatalf("round %d: %d refreshes in all, want %d: one a round, the others adopting it", round, got, round+1)
		}
	}
	if n := srv.Stats().TokenErrors; n != 0 {
		t.Errorf("the service refused %d token requests", n)
	}
	var status strings.Builder
	if err := authStatus(svcs[0], &status); err != nil || !strings.Contains(status.String(), "callrun_tokens") {
		t.Errorf("auth status: %v\n%s", err, status.String())
	}
	noSecrets(t, "auth status", status.String())
}
