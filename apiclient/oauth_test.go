package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testClientID     = "client-1"
	testClientSecret = "s3cret-value"
	testRedirect     = "http://127.0.0.1:8765/callback"
)

// tokenServer is a strict fake of the two token endpoints and one agent
// endpoint. It rotates refresh tokens and refuses a rotated-away one, so a
// broken refresh-token chain shows up as an error.
type tokenServer struct {
	t        *testing.T
	srv      *httptest.Server
	lifetime int // expires_in of issued tokens

	mu        sync.Mutex
	n         int
	refresh   map[string]bool // refresh token -> still valid
	access    map[string]bool // access token -> still valid
	refreshes int
	failWith  int                  // answer refreshes with this status when non-zero
	kept      map[string]*keptCell // the tokens kept, by tokenFile path
}

func newTokenServer(t *testing.T, lifetime int) *tokenServer {
	ts := &tokenServer{t: t, lifetime: lifetime, refresh: map[string]bool{}, access: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", ts.exchange)
	mux.HandleFunc("POST /oauth/token/refresh", ts.refreshHandler)
	mux.HandleFunc("GET /api/ai/agent/list", ts.list)
	ts.srv = httptest.NewServer(mux)
	t.Cleanup(ts.srv.Close)
	return ts
}

// checkForm asserts the token request's headers and form, field by field.
func (ts *tokenServer) checkForm(r *http.Request, want url.Values) bool {
	t := ts.t
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("%s: Content-Type = %q", r.URL.Path, ct)
	}
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("%s: token endpoint got an Authorization header", r.URL.Path)
	}
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if len(r.URL.Query()) != 0 {
		t.Errorf("%s: query string %q; secrets belong in the body", r.URL.Path, r.URL.RawQuery)
	}
	got := r.PostForm
	wantKeys := map[string]bool{}
	for k := range want {
		wantKeys[k] = true
		if k == "refresh_token" || k == "code" || k == "client_secret" {
			continue // checked by the handler
		}
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: %s = %q, want %q", r.URL.Path, k, got[k], want[k])
		}
	}
	for k := range got {
		if !wantKeys[k] {
			t.Errorf("%s: unexpected field %s", r.URL.Path, k)
		}
	}
	if !got.Has("client_secret") {
		t.Errorf("%s: no client_secret", r.URL.Path)
	}
	return got.Get("client_secret") == testClientSecret
}

func (ts *tokenServer) issue(w http.ResponseWriter) {
	ts.n++
	at, rt := fmt.Sprintf("at-%d", ts.n), fmt.Sprintf("rt-%d", ts.n)
	ts.access[at], ts.refresh[rt] = true, true
	json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": ts.lifetime, "refresh_token": rt})
}

func (ts *tokenServer) exchange(w http.ResponseWriter, r *http.Request) {
	ok := ts.checkForm(r, url.Values{"code": nil, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"grant_type": {"authorization_code"}, "redirect_uri": {testRedirect}})
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	if r.PostForm.Get("code") != "good-code" {
		http.Error(w, `{"error":"invalid_grant","error_description":"code `+r.PostForm.Get("code")+` is unknown"}`, 400)
		return
	}
	ts.issue(w)
}

func (ts *tokenServer) refreshHandler(w http.ResponseWriter, r *http.Request) {
	ok := ts.checkForm(r, url.Values{"refresh_token": nil, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"grant_type": {"refresh_token"}, "redirect_uri": {testRedirect}})
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refreshes++
	if ts.failWith != 0 {
		http.Error(w, "try later", ts.failWith)
		return
	}
	rt := r.PostForm.Get("refresh_token")
	if !ok || !ts.refresh[rt] {
		http.Error(w, `{"error":"invalid_grant","error_description":"refresh token `+rt+` revoked"}`, 400)
		return
	}
	delete(ts.refresh, rt) // rotation: the old one dies
	ts.issue(w)
}

func (ts *tokenServer) list(w http.ResponseWriter, r *http.Request) {
	ts.mu.Lock()
	ok := ts.access[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	ts.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	fmt.Fprint(w, `{"data":[],"current_page":1,"per_page":100,"total":0}`)
}

// expireAll makes every issued access token invalid, as a server restart or
// revocation would.
func (ts *tokenServer) expireAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.access = map[string]bool{}
}

func (ts *tokenServer) refreshCount() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.refreshes
}

func (ts *tokenServer) oauth(now func() time.Time) *OAuth {
	return &OAuth{BaseURL: ts.srv.URL, ClientID: testClientID, ClientSecret: testClientSecret, RedirectURI: testRedirect, Now: now}
}

// tokenFile is the token kept at path, as two processes share a token
// file: each call a store of its own, over one token and one lock.
func (ts *tokenServer) tokenFile(path string) TokenStore {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.kept == nil {
		ts.kept = map[string]*keptCell{}
	}
	c := ts.kept[path]
	if c == nil {
		c = &keptCell{sem: make(chan struct{}, 1)}
		ts.kept[path] = c
	}
	return &keptTokens{cell: c, path: path}
}

// keptCell is one kept token and its lock.
type keptCell struct {
	sem chan struct{}
	mu  sync.Mutex
	tok *Token
}

// keptTokens is a [TokenStore] in memory for the tests: the token file
// itself is the campaign's store's (report/store), tested there.
type keptTokens struct {
	cell *keptCell
	path string
}

func (k *keptTokens) Lock(ctx context.Context) (func(), error) {
	select {
	case k.cell.sem <- struct{}{}:
		return func() { <-k.cell.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (k *keptTokens) Load() (*Token, error) {
	k.cell.mu.Lock()
	defer k.cell.mu.Unlock()
	if k.cell.tok == nil {
		return nil, fmt.Errorf("%w (no token at %s)", ErrNotLoggedIn, k.path)
	}
	t := *k.cell.tok
	return &t, nil
}

func (k *keptTokens) Save(tok *Token) error {
	k.cell.mu.Lock()
	defer k.cell.mu.Unlock()
	t := *tok
	k.cell.tok = &t
	return nil
}

func (k *keptTokens) Remove() error {
	k.cell.mu.Lock()
	defer k.cell.mu.Unlock()
	k.cell.tok = nil
	return nil
}

func (k *keptTokens) String() string { return k.path }

// fakeClock is a clock that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

func TestExchange(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	clock := newClock()
	tok, err := ts.oauth(clock.Now).Exchange(context.Background(), "good-code")
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "at-1" || tok.RefreshToken != "rt-1" || tok.TokenType != "Bearer" || !tok.Expiry.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("token = %+v", *tok)
	}
}

func TestExchangeErrorsNameNoSecret(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	o := ts.oauth(nil)
	_, err := o.Exchange(context.Background(), "bad-code-123")
	if StatusCode(err) != 400 {
		t.Fatalf("err = %v, want a 400", err)
	}
	if strings.Contains(err.Error(), "bad-code-123") || strings.Contains(err.Error(), testClientSecret) {
		t.Errorf("error shows a secret: %v", err)
	}
	o.ClientSecret = "wrong-secret"
	if _, err := o.Exchange(context.Background(), "good-code"); StatusCode(err) != http.StatusUnauthorized || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("wrong secret: err = %v", err)
	}
}

func TestRefreshRotatesAndRefusesOldToken(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	o := ts.oauth(nil)
	tok, err := o.Exchange(context.Background(), "good-code")
	if err != nil {
		t.Fatal(err)
	}
	tok2, err := o.Refresh(context.Background(), tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken {
		t.Errorf("refresh did not rotate: %q -> %q", tok.RefreshToken, tok2.RefreshToken)
	}
	_, err = o.Refresh(context.Background(), tok.RefreshToken)
	if !errors.Is(err, ErrReauthorize) {
		t.Fatalf("reusing a rotated-away refresh token: err = %v, want ErrReauthorize", err)
	}
	if strings.Contains(err.Error(), tok.RefreshToken) {
		t.Errorf("error shows the refresh token: %v", err)
	}
}

func TestRefreshKeepsRefreshTokenWhenNoneReturned(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"access_token":"new","token_type":"bearer","expires_in":"60"}`)
	}))
	defer srv.Close()
	o := &OAuth{BaseURL: srv.URL, ClientID: "c", ClientSecret: "s", RedirectURI: testRedirect}
	tok, err := o.Refresh(context.Background(), "keep-me")
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "keep-me" || tok.AccessToken != "new" {
		t.Errorf("token = %+v", *tok)
	}
}

func TestTokenResponseValidation(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`not json`, `{"token_type":"Bearer","expires_in":60}`, `{"access_token":"a","token_type":"mac","expires_in":60}`, `{"access_token":"a","expires_in":-5}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		o := &OAuth{BaseURL: srv.URL, ClientID: "c", ClientSecret: "s", RedirectURI: testRedirect}
		if _, err := o.Exchange(context.Background(), "c"); err == nil {
			t.Errorf("body %s: no error", body)
		}
		srv.Close()
	}
}

func TestAuthCodeURL(t *testing.T) {
	t.Parallel()
	o := &OAuth{ClientID: "c 1", RedirectURI: testRedirect, AuthorizeURL: "https://app.example.com/oauth/authorize?prompt=consent"}
	got, err := o.AuthCodeURL("st4te")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(got)
	q := u.Query()
	if u.Host != "app.example.com" || q.Get("response_type") != "code" || q.Get("client_id") != "c 1" ||
		q.Get("redirect_uri") != testRedirect || q.Get("state") != "st4te" || q.Get("prompt") != "consent" {
		t.Errorf("AuthCodeURL = %s", got)
	}
	if strings.Contains(got, "secret") {
		t.Error("authorize URL carries a secret")
	}
	if _, sent := q["scope"]; sent {
		t.Errorf("AuthCodeURL sends a scope nobody set: %s", got)
	}
	// The live service's authorize endpoint, as its documentation shows it.
	o = &OAuth{ClientID: "c1", RedirectURI: testRedirect, AuthorizeURL: "https://app.aisync.link/oauth/authorize", Scope: "*"}
	got, err = o.AuthCodeURL("st4te")
	if err != nil {
		t.Fatal(err)
	}
	u, _ = url.Parse(got)
	if q := u.Query(); u.Host != "app.aisync.link" || u.Path != "/oauth/authorize" || q.Get("response_type") != "code" ||
		q.Get("scope") != "*" || q.Get("client_id") != "c1" || q.Get("redirect_uri") != testRedirect || q.Get("state") != "st4te" {
		t.Errorf("AuthCodeURL with scope = %s", got)
	}
	o.AuthorizeURL = ""
	if _, err := o.AuthCodeURL("x"); err == nil {
		t.Error("no error without an authorize URL")
	}
}

func TestTokenNeverPrints(t *testing.T) {
	t.Parallel()
	tok := Token{AccessToken: "AT-SECRET", RefreshToken: "RT-SECRET", Expiry: time.Unix(0, 0)}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, &tok)} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("printed token shows a secret: %s", s)
		}
	}
}

func TestTokenFresh(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		age      time.Duration
		want     bool
	}{
		{"new hour token", time.Hour, 0, true},
		{"hour token with 2m left", time.Hour, 58 * time.Minute, true},
		{"hour token within the minute margin", time.Hour, 59*time.Minute + 30*time.Second, false},
		{"2s token just issued", 2 * time.Second, 0, true},
		{"2s token after 1s", 2 * time.Second, time.Second, true},
		{"2s token within its fifth", 2 * time.Second, 1700 * time.Millisecond, false},
		{"expired", time.Minute, 2 * time.Minute, false},
	} {
		tok := &Token{AccessToken: "a", IssuedAt: now, Expiry: now.Add(tc.lifetime)}
		if got := tok.Fresh(now.Add(tc.age)); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !(&Token{AccessToken: "a"}).Fresh(now) {
		t.Error("a token without expiry should be used until a 401")
	}
}

// loggedIn returns a token source whose file holds a token from a code
// exchange.
func loggedIn(t *testing.T, ts *tokenServer, clock *fakeClock, path string) *StoredTokenSource {
	t.Helper()
	src := NewStoredTokenSource(ts.oauth(clock.Now), ts.tokenFile(path))
	if _, err := src.Login(context.Background(), "good-code"); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestOneRefreshForManyGoroutines: 64 workers find the token expired at
// once; one refresh is made and all get the new token.
func TestOneRefreshForManyGoroutines(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	clock := newClock()
	src := loggedIn(t, ts, clock, filepath.Join(t.TempDir(), "tok.json"))
	clock.Add(2 * time.Minute) // expired
	var wg sync.WaitGroup
	got := make([]string, 64)
	errs := make([]error, 64)
	for i := range 64 {
		wg.Go(func() {
			tok, err := src.Token(context.Background())
			errs[i] = err
			if tok != nil {
				got[i] = tok.AccessToken
			}
		})
	}
	wg.Wait()
	for i := range 64 {
		if errs[i] != nil || got[i] != "at-2" {
			t.Fatalf("goroutine %d: token %q, err %v", i, got[i], errs[i])
		}
	}
	if n := ts.refreshCount(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

// TestTwoStoresKeepTheChain: two token sources (two processes, in effect:
// their file locks conflict as two processes' would) share one token file
// and both need a refresh at once. With a server that rotates refresh tokens
// and refuses old ones, both must succeed, with one refresh between them.
func TestTwoStoresKeepTheChain(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	clock := newClock()
	path := filepath.Join(t.TempDir(), "tok.json")
	a := loggedIn(t, ts, clock, path)
	b := NewStoredTokenSource(ts.oauth(clock.Now), ts.tokenFile(path))
	if _, err := b.Token(context.Background()); err != nil { // b loads the same token
		t.Fatal(err)
	}
	for round := range 5 {
		clock.Add(2 * time.Minute)
		var wg sync.WaitGroup
		var failures atomic.Int32
		for _, src := range []*StoredTokenSource{a, b, a, b} {
			wg.Go(func() {
				if _, err := src.Token(context.Background()); err != nil {
					failures.Add(1)
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
		if failures.Load() != 0 {
			return
		}
		if n := ts.refreshCount(); n != round+1 {
			t.Fatalf("round %d: %d refreshes in all, want %d", round, n, round+1)
		}
	}
	ta, _ := a.Token(context.Background())
	tb, _ := b.Token(context.Background())
	if ta.AccessToken != tb.AccessToken {
		t.Errorf("the two stores hold different tokens")
	}
	disk, _ := ts.tokenFile(path).Load()
	if disk.RefreshToken != "rt-6" {
		t.Errorf("file holds refresh token %q, want the newest, rt-6", disk.RefreshToken)
	}
}

// TestRefreshAfter401: the service revokes the access token mid-run; the
// next request is answered 401, refreshed once, and sent again with success.
func TestRefreshAfter401(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	clock := newClock()
	src := loggedIn(t, ts, clock, filepath.Join(t.TempDir(), "tok.json"))
	c, err := New(ts.srv.URL, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListAgents(context.Background(), 1, 100); err != nil {
		t.Fatal(err)
	}
	ts.expireAll()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := c.ListAgents(context.Background(), 1, 100); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := ts.refreshCount(); n != 1 {
		t.Errorf("%d refreshes after a 401 seen by 16 requests, want 1", n)
	}
}

func TestRefreshFailureDoesNotStorm(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	clock := newClock()
	src := loggedIn(t, ts, clock, filepath.Join(t.TempDir(), "tok.json"))
	clock.Add(2 * time.Minute)
	ts.mu.Lock()
	ts.failWith = 500
	ts.mu.Unlock()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := src.Token(context.Background()); err == nil {
				t.Error("no error while the token endpoint fails")
			}
		})
	}
	wg.Wait()
	if n := ts.refreshCount(); n != 1 {
		t.Errorf("%d refresh requests from 20 callers during a failure, want 1", n)
	}
	// After the pause, one more try; when the endpoint is back, it works.
	ts.mu.Lock()
	ts.failWith = 0
	ts.mu.Unlock()
	clock.Add(2 * time.Second)
	if _, err := src.Token(context.Background()); err != nil {
		t.Fatalf("after the pause: %v", err)
	}
	if n := ts.refreshCount(); n != 2 {
		t.Errorf("%d refresh requests, want 2", n)
	}
}

func TestRevokedRefreshTokenNeedsLogin(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	clock := newClock()
	src := loggedIn(t, ts, clock, filepath.Join(t.TempDir(), "tok.json"))
	ts.mu.Lock()
	ts.refresh = map[string]bool{}
	ts.mu.Unlock()
	clock.Add(2 * time.Minute)
	_, err := src.Token(context.Background())
	if !errors.Is(err, ErrReauthorize) || !strings.Contains(err.Error(), "refused the saved refresh token") {
		t.Fatalf("err = %v, want ErrReauthorize saying the refresh token was refused", err)
	}
	if _, err := src.Token(context.Background()); !errors.Is(err, ErrReauthorize) {
		t.Fatalf("second call: %v", err)
	}
	if n := ts.refreshCount(); n != 1 {
		t.Errorf("%d refresh requests after a refusal, want 1", n)
	}
}

func TestNotLoggedIn(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	src := NewStoredTokenSource(ts.oauth(nil), ts.tokenFile(filepath.Join(t.TempDir(), "none.json")))
	if _, err := src.Token(context.Background()); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("err = %v", err)
	}
}
