package sandbox

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	redirectURI = "http://127.0.0.1:8765/callback"
	phone       = "+15551234567"
)

// env is a running sandbox with an HTTP client of its own.
type env struct {
	t    *testing.T
	srv  *Server
	c    *http.Client
	base string // where paths are sent
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	srv := NewServer(opts)
	tr := &http.Transport{}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	c := &http.Client{
		Transport:     tr,
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &env{t: t, srv: srv, c: c, base: srv.URL}
}

// result is an answer to a raw request. Err is the transport error, if any.
type result struct {
	Status int
	Header http.Header
	Body   map[string]any // the JSON object answered, if it is one
	Raw    string
	Err    error
}

func (r result) errCode() string { s, _ := r.Body["error"].(string); return s }

// do sends a raw request. target is a path on the server or a full URL;
// hdr holds header name/value pairs.
func (e *env) do(method, target, contentType, body string, hdr ...string) result {
	e.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = e.base + target
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.c.Do(req)
	if err != nil {
		return result{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := result{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw), Err: err}
	json.Unmarshal(raw, &r.Body) //nolint:errcheck // not every answer is an object
	return r
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// want fails the test unless r has the status (and error code, if given).
func (e *env) want(r result, status int, errCode string) {
	e.t.Helper()
	if r.Err != nil {
		e.t.Fatalf("request failed: %v", r.Err)
	}
	if r.Status != status || r.errCode() != errCode {
		e.t.Fatalf("got %d %q, want %d %q; body %s", r.Status, r.errCode(), status, errCode, r.Raw)
	}
}

func (e *env) createAgent(tok, body string) string {
	e.t.Helper()
	r := e.do("POST", "/api/ai/agent/create", jsonType, body, bearer(tok)...)
	e.want(r, http.StatusCreated, "")
	return r.Body["agent_id"].(string)
}

func (e *env) endpoint(tok, agentID string) string {
	e.t.Helper()
	r := e.do("GET", "/api/ai/agent/call-endpoint?agent_id="+url.QueryEscape(agentID), jsonType, "", bearer(tok)...)
	e.want(r, http.StatusOK, "")
	return r.Body["data"].(map[string]any)["endpoint"].(string)
}

func (e *env) call(endpoint string, form url.Values, hdr ...string) result {
	e.t.Helper()
	return e.do("POST", endpoint, formType, form.Encode(), hdr...)
}

// seededEndpoint adds an active agent without HTTP and returns its endpoint.
func (e *env) seededEndpoint(a Agent) (Agent, string) {
	e.t.Helper()
	a = e.srv.AddAgent(a)
	ep, ok := e.srv.CallEndpoint(a.AgentID)
	if !ok {
		e.t.Fatal("CallEndpoint: agent not found")
	}
	return a, ep
}

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// eventually polls cond for up to 30 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func codeForm() url.Values {
	return url.Values{"code": {DefaultCode}, "client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret},
		"grant_type": {"authorization_code"}, "redirect_uri": {redirectURI}}
}

func refreshForm(rt string) url.Values {
	return url.Values{"refresh_token": {rt}, "client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret},
		"grant_type": {"refresh_token"}, "redirect_uri": {redirectURI}}
}

func TestTokenExchange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tests := []struct {
		name        string
		edit        func(url.Values)
		contentType string
		status      int
		errCode     string
	}{
		{"demo code", nil, formType, 200, ""},
		{"demo code is reusable", nil, formType, 200, ""},
		{"content type with charset", nil, formType + "; charset=utf-8", 200, ""},
		{"wrong client secret", func(v url.Values) { v.Set("client_secret", "nope") }, formType, 401, "invalid_client"},
		{"wrong client id", func(v url.Values) { v.Set("client_id", "other") }, formType, 401, "invalid_client"},
		{"missing code", func(v url.Values) { v.Del("code") }, formType, 400, "invalid_request"},
		{"missing client_secret", func(v url.Values) { v.Del("client_secret") }, formType, 400, "invalid_request"},
		{"missing grant_type", func(v url.Values) { v.Del("grant_type") }, formType, 400, "invalid_request"},
		{"missing redirect_uri", func(v url.Values) { v.Del("redirect_uri") }, formType, 400, "invalid_request"},
		{"wrong grant_type", func(v url.Values) { v.Set("grant_type", "refresh_token") }, formType, 400, "unsupported_grant_type"},
		{"unknown code", func(v url.Values) { v.Set("code", "no-such-code") }, formType, 400, "invalid_grant"},
		{"relative redirect_uri", func(v url.Values) { v.Set("redirect_uri", "/callback") }, formType, 400, "invalid_request"},
		{"repeated parameter", func(v url.Values) { v.Add("code", DefaultCode) }, formType, 400, "invalid_request"},
		{"JSON content type", nil, jsonType, 415, "invalid_request"},
		{"no content type", nil, "", 415, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{t: t, srv: e.srv, c: e.c, base: e.base}
			form := codeForm()
			if tt.edit != nil {
				tt.edit(form)
			}
			r := e.do("POST", "/oauth/token", tt.contentType, form.Encode(), "Authorization", "Basic ignored")
			e.want(r, tt.status, tt.errCode)
			if tt.status != 200 {
				if r.Body["error_description"] == "" {
					t.Errorf("no error_description in %s", r.Raw)
				}
				return
			}
			if r.Body["token_type"] != "Bearer" || r.Body["expires_in"] != 3600.0 ||
				r.Body["access_token"] == "" || r.Body["refresh_token"] == "" {
				t.Errorf("bad token response %s", r.Raw)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q", cc)
			}
			e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(r.Body["access_token"].(string))...), 200, "")
		})
	}
	if st := e.srv.Stats(); st.TokenExchanges != 3 || st.TokenErrors != len(tests)-3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestAuthorizeAndOneTimeCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	authorize := func(redirect string) string {
		t.Helper()
		q := url.Values{"response_type": {"code"}, "client_id": {DefaultClientID}, "redirect_uri": {redirect}, "state": {"st-42"}}
		r := e.do("GET", "/oauth/authorize?"+q.Encode(), "", "")
		e.want(r, http.StatusFound, "")
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil || loc.Query().Get("state") != "st-42" || loc.Query().Get("code") == "" {
			t.Fatalf("bad redirect %q", r.Header.Get("Location"))
		}
		return loc.Query().Get("code")
	}
	exchange := func(code, redirect string) result {
		form := codeForm()
		form.Set("code", code)
		form.Set("redirect_uri", redirect)
		return e.do("POST", "/oauth/token", formType, form.Encode())
	}

	code := authorize(redirectURI)
	e.want(exchange(code, redirectURI), 200, "")
	e.want(exchange(code, redirectURI), 400, "invalid_grant") // reused

	code = authorize(redirectURI)
	e.want(exchange(code, "http://127.0.0.1:9999/other"), 400, "invalid_grant") // other redirect_uri
	e.want(exchange(code, redirectURI), 400, "invalid_grant")                   // spent by the attempt

	// The redirect keeps the redirect_uri's own query.
	r := e.do("GET", "/oauth/authorize?response_type=code&client_id=sandbox-client&redirect_uri="+
		url.QueryEscape(redirectURI+"?keep=1"), "", "")
	if loc := r.Header.Get("Location"); !strings.Contains(loc, "keep=1") || !strings.Contains(loc, "code=") {
		t.Errorf("Location = %q", loc)
	}

	bad := []struct {
		name, query string
		status      int
		errInLoc    string
	}{
		{"unknown client", "response_type=code&client_id=nobody&redirect_uri=" + url.QueryEscape(redirectURI), 400, ""},
		{"missing redirect_uri", "response_type=code&client_id=sandbox-client", 400, ""},
		{"relative redirect_uri", "response_type=code&client_id=sandbox-client&redirect_uri=%2Fcb", 400, ""},
		{"wrong response_type", "response_type=token&client_id=sandbox-client&redirect_uri=" + url.QueryEscape(redirectURI), 302, "unsupported_response_type"},
		{"missing response_type", "client_id=sandbox-client&redirect_uri=" + url.QueryEscape(redirectURI), 302, "invalid_request"},
	}
	for _, tt := range bad {
		r := e.do("GET", "/oauth/authorize?"+tt.query, "", "")
		if r.Status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, r.Status, tt.status)
		}
		loc, _ := url.Parse(r.Header.Get("Location"))
		if tt.errInLoc != "" && (loc == nil || loc.Query().Get("error") != tt.errInLoc || loc.Query().Get("code") != "") {
			t.Errorf("%s: Location = %q", tt.name, r.Header.Get("Location"))
		}
	}
}

func TestRegisteredRedirectURI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{RedirectURI: redirectURI, ClientID: "id", ClientSecret: "secret", Code: "demo"})
	form := codeForm()
	form.Set("client_id", "id")
	form.Set("client_secret", "secret")
	form.Set("code", "demo")
	e.want(e.do("POST", "/oauth/token", formType, form.Encode()), 200, "")
	form.Set("redirect_uri", "http://127.0.0.1:1/elsewhere")
	e.want(e.do("POST", "/oauth/token", formType, form.Encode()), 400, "invalid_grant")
	e.want(e.do("GET", "/oauth/authorize?response_type=code&client_id=id&redirect_uri="+url.QueryEscape("http://127.0.0.1:1/elsewhere"), "", ""), 400, "invalid_request")
	e.want(e.do("GET", "/oauth/authorize?response_type=code&client_id=id&redirect_uri="+url.QueryEscape(redirectURI), "", ""), 302, "")
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	t.Run("rotation", func(t *testing.T) {
		e := newEnv(t, Options{})
		access, rt := e.srv.IssueToken()
		r := e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode())
		e.want(r, 200, "")
		rt2, _ := r.Body["refresh_token"].(string)
		if rt2 == "" || rt2 == rt || r.Body["access_token"] == access || r.Body["token_type"] != "Bearer" {
			t.Fatalf("bad refresh answer %s", r.Raw)
		}
		e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(r.Body["access_token"].(string))...), 200, "")
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 400, "invalid_grant") // rotated away
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt2).Encode()), 200, "")
		if st := e.srv.Stats(); st.Refreshes != 2 {
			t.Errorf("Refreshes = %d", st.Refreshes)
		}
	})
	t.Run("refresh 500", func(t *testing.T) {
		// ShareRefresh500 answers the refresh endpoint 500 whatever the
		// scope, before acting: the refresh token sent stays valid.
		e := newEnv(t, Options{Faults: Faults{ShareRefresh500: 1}})
		_, rt := e.srv.IssueToken()
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 500, "internal_error")
		e.want(e.do("POST", "/oauth/token", formType, codeForm().Encode()), 200, "") // the code exchange is not faulted
		e.srv.SetFaults(Faults{Scope: ScopeAll})
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 200, "")
		e.want(e.do("POST", "/_sandbox/faults", jsonType, `{"share_refresh_500": 1}`), 200, "")
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 500, "internal_error")
		if st := e.srv.Stats(); st.Faults.Refresh500 != 2 || st.Refreshes != 1 || st.TokenErrors != 2 {
			t.Errorf("stats = %+v", st)
		}
	})
	t.Run("no rotation", func(t *testing.T) {
		rotate := false
		e := newEnv(t, Options{RotateRefreshTokens: &rotate})
		_, rt := e.srv.IssueToken()
		for range 2 {
			r := e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode())
			e.want(r, 200, "")
			if r.Body["refresh_token"] != rt {
				t.Fatalf("refresh token changed: %s", r.Raw)
			}
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		e := newEnv(t, Options{})
		_, rt := e.srv.IssueToken()
		tests := []struct {
			name        string
			edit        func(url.Values)
			contentType string
			status      int
			errCode     string
		}{
			{"missing refresh_token", func(v url.Values) { v.Del("refresh_token") }, formType, 400, "invalid_request"},
			{"missing redirect_uri", func(v url.Values) { v.Del("redirect_uri") }, formType, 400, "invalid_request"},
			{"wrong grant_type", func(v url.Values) { v.Set("grant_type", "authorization_code") }, formType, 400, "unsupported_grant_type"},
			{"wrong client secret", func(v url.Values) { v.Set("client_secret", "x") }, formType, 401, "invalid_client"},
			{"unknown refresh token", func(v url.Values) { v.Set("refresh_token", "sbx_rt_nope") }, formType, 400, "invalid_grant"},
			{"JSON content type", nil, jsonType, 415, "invalid_request"},
		}
		for _, tt := range tests {
			form := refreshForm(rt)
			if tt.edit != nil {
				tt.edit(form)
			}
			r := e.do("POST", "/oauth/token/refresh", tt.contentType, form.Encode())
			if r.Status != tt.status || r.errCode() != tt.errCode {
				t.Errorf("%s: got %d %s", tt.name, r.Status, r.Raw)
			}
		}
		// None of those spent the refresh token; revocation does.
		e.want(e.do("POST", "/_sandbox/revoke-refresh-tokens", "", ""), 200, "")
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 400, "invalid_grant")
		_, rt = e.srv.IssueToken()
		e.srv.RevokeRefreshTokens()
		e.want(e.do("POST", "/oauth/token/refresh", formType, refreshForm(rt).Encode()), 400, "invalid_grant")
	})
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newEnv(t, Options{Now: clk.Now, AccessTokenLifetime: 30 * time.Second})
	access, _ := e.srv.IssueToken()
	tests := []struct {
		name, auth string
		status     int
	}{
		{"missing", "", 401},
		{"basic scheme", "Basic " + access, 401},
		{"empty bearer", "Bearer ", 401},
		{"unknown token", "Bearer sbx_at_unknown", 401},
		{"valid", "Bearer " + access, 200},
		{"lower-case scheme", "bearer " + access, 200},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.auth != "" {
			hdr = []string{"Authorization", tt.auth}
		}
		r := e.do("GET", "/api/ai/agent/list", "", "", hdr...)
		if r.Status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, r.Status, tt.status, r.Raw)
		}
		if tt.status == 401 && (r.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token"` || r.errCode() != "invalid_token") {
			t.Errorf("%s: WWW-Authenticate %q, body %s", tt.name, r.Header.Get("WWW-Authenticate"), r.Raw)
		}
	}

	r := e.do("POST", "/oauth/token", formType, codeForm().Encode())
	if r.Body["expires_in"] != 30.0 {
		t.Errorf("expires_in = %v", r.Body["expires_in"])
	}
	clk.Add(30 * time.Second)
	r = e.do("GET", "/api/ai/agent/list", "", "", bearer(access)...)
	if e.want(r, 401, "invalid_token"); !strings.Contains(r.Body["message"].(string), "expired") {
		t.Errorf("message = %v", r.Body["message"])
	}

	access, _ = e.srv.IssueToken()
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(access)...), 200, "")
	e.srv.ExpireAccessTokens()
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(access)...), 401, "invalid_token")
	access, _ = e.srv.IssueToken()
	e.want(e.do("POST", "/_sandbox/expire-tokens", "", ""), 200, "")
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(access)...), 401, "invalid_token")
	if got := e.srv.Stats().Unauthorized; got != 7 {
		t.Errorf("Unauthorized = %d, want 7", got)
	}
}

func TestCreateAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok, _ := e.srv.IssueToken()
	tests := []struct {
		name, contentType, body string
		status                  int
		errCode                 string
	}{
		{"minimal", jsonType, `{"agent_name":"A","general_prompt":"Be kind."}`, 201, ""},
		{"duplicate name allowed", jsonType, `{"agent_name":"A","general_prompt":"Be kind."}`, 201, ""},
		{"all fields", jsonType + "; charset=utf-8", `{"agent_name":"B","general_prompt":"p","weebhook_endpoint":"https://hooks.example.com/x","weebhook_endpoint_method":"GET"}`, 201, ""},
		{"empty webhook and method", jsonType, `{"agent_name":"C","general_prompt":"p","weebhook_endpoint":"","weebhook_endpoint_method":""}`, 201, ""},
		{"form content type", formType, `agent_name=A&general_prompt=p`, 415, "unsupported_media_type"},
		{"no content type", "", `{"agent_name":"A","general_prompt":"p"}`, 415, "unsupported_media_type"},
		{"malformed JSON", jsonType, `{"agent_name":`, 400, "invalid_json"},
		{"trailing data", jsonType, `{"agent_name":"A","general_prompt":"p"} {}`, 400, "invalid_json"},
		{"array body", jsonType, `[{"agent_name":"A"}]`, 422, "validation_failed"},
		{"missing agent_name", jsonType, `{"general_prompt":"p"}`, 422, "validation_failed"},
		{"blank agent_name", jsonType, `{"agent_name":"  ","general_prompt":"p"}`, 422, "validation_failed"},
		{"empty general_prompt", jsonType, `{"agent_name":"A","general_prompt":""}`, 422, "validation_failed"},
		{"agent_name not a string", jsonType, `{"agent_name":7,"general_prompt":"p"}`, 422, "validation_failed"},
		{"null prompt", jsonType, `{"agent_name":"A","general_prompt":null}`, 422, "validation_failed"},
		{"unknown field", jsonType, `{"agent_name":"A","general_prompt":"p","webhook_endpoint":"http://x"}`, 422, "validation_failed"},
		{"relative webhook", jsonType, `{"agent_name":"A","general_prompt":"p","weebhook_endpoint":"/hook"}`, 422, "validation_failed"},
		{"ftp webhook", jsonType, `{"agent_name":"A","general_prompt":"p","weebhook_endpoint":"ftp://h/x"}`, 422, "validation_failed"},
		{"bad webhook method", jsonType, `{"agent_name":"A","general_prompt":"p","weebhook_endpoint_method":"PUT"}`, 422, "validation_failed"},
		{"lower-case method", jsonType, `{"agent_name":"A","general_prompt":"p","weebhook_endpoint_method":"post"}`, 422, "validation_failed"},
	}
	for _, tt := range tests {
		r := e.do("POST", "/api/ai/agent/create", tt.contentType, tt.body, bearer(tok)...)
		if r.Status != tt.status || r.errCode() != tt.errCode {
			t.Errorf("%s: got %d %s, want %d %s", tt.name, r.Status, r.Raw, tt.status, tt.errCode)
			continue
		}
		if tt.status == 201 && (len(r.Body) != 3 || r.Body["agent_id"] == "" || r.Body["status"] != "active") {
			t.Errorf("%s: create answer must be exactly agent_id, agent_name, status: %s", tt.name, r.Raw)
		}
	}
	e.want(e.do("POST", "/api/ai/agent/create", jsonType, `{"agent_name":"A","general_prompt":"p"}`), 401, "invalid_token")

	agents := e.srv.Agents()
	if len(agents) != 4 || agents[0].AgentID == agents[1].AgentID || e.srv.Stats().AgentsCreated != 4 {
		t.Fatalf("agents = %+v", agents)
	}
	if a := agents[2]; a.WebhookEndpoint != "https://hooks.example.com/x" || a.WebhookEndpointMethod != "GET" {
		t.Errorf("agent B = %+v", a)
	}
	if a := agents[3]; a.WebhookEndpointMethod != "POST" || a.CreatedAt == "" || a.UpdatedAt != a.CreatedAt {
		t.Errorf("agent C = %+v", a)
	}
}

func TestListAgents(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newEnv(t, Options{Now: clk.Now})
	tok, _ := e.srv.IssueToken()
	var ids []string
	for i := range 5 {
		ids = append(ids, e.createAgent(tok, fmt.Sprintf(`{"agent_name":"agent %d","general_prompt":"p"}`, i)))
	}
	list := func(query string) result { return e.do("GET", "/api/ai/agent/list"+query, "", "", bearer(tok)...) }

	pages := []struct {
		query            string
		page, per, count int
		first            string
	}{
		{"", 1, 100, 5, ids[0]},
		{"?page=1&per_page=2", 1, 2, 2, ids[0]},
		{"?page=2&per_page=2", 2, 2, 2, ids[2]},
		{"?page=3&per_page=2", 3, 2, 1, ids[4]},
		{"?page=4&per_page=2", 4, 2, 0, ""},
		{"?page=999999999999&per_page=100", 999999999999, 100, 0, ""},
		{"?per_page=1", 1, 1, 1, ids[0]},
		{"?page=1&per_page=100", 1, 100, 5, ids[0]},
	}
	for _, p := range pages {
		r := list(p.query)
		e.want(r, 200, "")
		data, ok := r.Body["data"].([]any)
		if !ok || len(data) != p.count || r.Body["current_page"] != float64(p.page) ||
			r.Body["per_page"] != float64(p.per) || r.Body["total"] != 5.0 {
			t.Errorf("%s: %s", p.query, r.Raw)
			continue
		}
		if p.count > 0 {
			first := data[0].(map[string]any)
			if first["agent_id"] != p.first {
				t.Errorf("%s: first agent %v, want %s", p.query, first["agent_id"], p.first)
			}
			for _, k := range []string{"agent_id", "agent_name", "status", "general_prompt", "weebhook_endpoint",
				"weebhook_endpoint_method", "created_at", "updated_at"} {
				if _, ok := first[k]; !ok {
					t.Errorf("%s: list item lacks %s: %v", p.query, k, first)
				}
			}
			if first["created_at"] != "2025-03-01T09:00:00Z" {
				t.Errorf("created_at = %v", first["created_at"])
			}
		}
	}

	bad := []struct{ query, mention string }{
		{"?per_page=0", "per_page must be an integer from 1 to 100"},
		{"?per_page=101", "per_page must be an integer from 1 to 100"},
		{"?page=0", "page must be an integer >= 1"},
		{"?page=-1", "page must be an integer >= 1"},
		{"?page=abc", "page must be an integer >= 1"},
		{"?page=", "page must be an integer >= 1"},
		{"?per_page=1.5", "per_page must be an integer from 1 to 100"},
		{"?page=1&page=2", "page is given more than once"},
	}
	for _, b := range bad {
		r := list(b.query)
		if r.Status != 400 || r.errCode() != "invalid_request" || !strings.Contains(r.Raw, b.mention) {
			t.Errorf("%s: got %d %s, want 400 mentioning %q", b.query, r.Status, r.Raw, b.mention)
		}
	}
	if got := e.srv.Stats().ListCalls; got != len(pages) {
		t.Errorf("ListCalls = %d, want %d", got, len(pages))
	}
}

func TestCallEndpointDescriptor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok, _ := e.srv.IssueToken()
	a := e.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`)
	b := e.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`)

	get := func(query, contentType string) result {
		return e.do("GET", "/api/ai/agent/call-endpoint"+query, contentType, "", bearer(tok)...)
	}
	e.want(get("?agent_id="+a, ""), 415, "unsupported_media_type")
	e.want(get("?agent_id="+a, "text/plain"), 415, "unsupported_media_type")
	e.want(get("", jsonType), 400, "invalid_request")
	e.want(get("?agent_id=agent_nope", jsonType), 404, "not_found")
	e.want(e.do("GET", "/api/ai/agent/call-endpoint?agent_id="+a, jsonType, ""), 401, "invalid_token")

	r := get("?agent_id="+a, jsonType)
	e.want(r, 200, "")
	data := r.Body["data"].(map[string]any)
	// form_data as the live service writes it, HTML hint and all, unescaped.
	wantFields := `"form_data":["phone_number","email","first_name","last_name","ghl_contact_id","override_agent_id","local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"]`
	if r.Body["status"] != "success" || data["Method"] != "POST" || !strings.Contains(r.Raw, wantFields) {
		t.Errorf("descriptor = %s", r.Raw)
	}
	epA := data["endpoint"].(string)
	if !strings.HasPrefix(epA, e.srv.URL+"/call/"+a+"/") {
		t.Errorf("endpoint = %s", epA)
	}
	if again := e.endpoint(tok, a); again != epA {
		t.Errorf("endpoint not stable: %s then %s", epA, again)
	}
	if epB := e.endpoint(tok, b); epB == epA {
		t.Errorf("two agents share endpoint %s", epA)
	}
	if got, _ := e.srv.CallEndpoint(a); got != epA {
		t.Errorf("CallEndpoint = %s, want %s", got, epA)
	}
	if got := e.srv.Stats().EndpointReads; got != 3 {
		t.Errorf("EndpointReads = %d", got)
	}
}

func TestCallStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok, _ := e.srv.IssueToken()
	id := e.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`)
	ep := e.endpoint(tok, id)
	ok := url.Values{"phone_number": {phone}, "first_name": {"Ada"}, "local_presence_number": {"No"}}
	all := url.Values{"phone_number": {phone}, "email": {"a@b.c"}, "first_name": {"A"}, "last_name": {"L"},
		"ghl_contact_id": {"g1"}, "override_agent_id": {"x"}, "local_presence_number": {"Yes"}}
	with := func(k, v string) url.Values {
		f := url.Values{"phone_number": {phone}}
		f.Set(k, v)
		return f
	}
	tests := []struct {
		name, method, contentType string
		form                      url.Values
		hdr                       []string
		status                    int
		errCode                   string
		outcome                   string // prefix
	}{
		{"minimal", "POST", formType, ok, nil, 200, "", "placed"},
		{"all fields", "POST", formType, all, nil, 200, "", "placed"},
		{"valid bearer", "POST", formType, ok, bearer(tok), 200, "", "placed"},
		{"bad bearer", "POST", formType, ok, bearer("sbx_at_bad"), 401, "invalid_token", "rejected: "},
		{"missing phone", "POST", formType, url.Values{"first_name": {"A"}}, nil, 422, "validation_failed", "rejected: phone_number is required"},
		{"national phone", "POST", formType, with("phone_number", "5551234567"), nil, 422, "validation_failed", "rejected: phone_number must"},
		{"short phone", "POST", formType, with("phone_number", "+1234567"), nil, 422, "validation_failed", "rejected: "},
		{"long phone", "POST", formType, with("phone_number", "+1234567890123456"), nil, 422, "validation_failed", "rejected: "},
		{"phone with spaces", "POST", formType, with("phone_number", "+1 555 123 4567"), nil, 422, "validation_failed", "rejected: "},
		{"lower-case yes", "POST", formType, with("local_presence_number", "yes"), nil, 422, "validation_failed", "rejected: local_presence_number"},
		{"hint as field name", "POST", formType, with("local_presence_number (Yes/No)", "Yes"), nil, 422, "validation_failed", "rejected: unknown form field"},
		{"unknown field", "POST", formType, with("agent_id", "x"), nil, 422, "validation_failed", "rejected: unknown form field"},
		{"repeated field", "POST", formType, url.Values{"phone_number": {phone, phone}}, nil, 422, "validation_failed", "rejected: "},
		{"JSON body", "POST", jsonType, nil, nil, 415, "unsupported_media_type", "rejected: "},
		{"GET", "GET", "", nil, nil, 405, "method_not_allowed", "rejected: "},
	}
	for i, tt := range tests {
		r := e.do(tt.method, ep, tt.contentType, tt.form.Encode(), tt.hdr...)
		if r.Status != tt.status || r.errCode() != tt.errCode {
			t.Errorf("%s: got %d %s, want %d %s", tt.name, r.Status, r.Raw, tt.status, tt.errCode)
			continue
		}
		calls := e.srv.Calls()
		if len(calls) != i+1 {
			t.Fatalf("%s: ledger has %d calls, want %d", tt.name, len(calls), i+1)
		}
		c := calls[i]
		if c.Seq != i+1 || c.AgentID != id || c.Method != tt.method || c.Status != tt.status ||
			!strings.HasPrefix(c.Outcome, tt.outcome) || c.Placed != (tt.status == 200) {
			t.Errorf("%s: ledger entry %+v", tt.name, c)
		}
		if tt.status == 200 && (r.Body["status"] != "success" || r.Body["agent_id"] != id || r.Body["call_id"] != c.CallID) {
			t.Errorf("%s: answer %s, ledger call_id %s", tt.name, r.Raw, c.CallID)
		}
		if tt.status == 405 && r.Header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow = %q", tt.name, r.Header.Get("Allow"))
		}
	}
	placed := e.srv.Placed()
	if len(placed) != 3 || placed[0].CallID != "call_1" || placed[2].CallID != "call_3" {
		t.Errorf("placed = %+v", placed)
	}
	if h := placed[2].Header.Get("Authorization"); h != "Bearer <redacted>" {
		t.Errorf("ledger Authorization = %q", h)
	}
	if placed[1].Form.Get("ghl_contact_id") != "g1" {
		t.Errorf("ledger form = %v", placed[1].Form)
	}

	// Wrong endpoint token or agent: 404, not recorded.
	n := len(e.srv.Calls())
	wrong := ep[:len(ep)-1] + "0"
	if strings.HasSuffix(ep, "0") {
		wrong = ep[:len(ep)-1] + "1"
	}
	for _, u := range []string{wrong, e.srv.URL + "/call/agent_nope/0123456789abcdef", e.srv.URL + "/call/" + id} {
		e.want(e.call(u, ok), 404, "not_found")
	}
	if st := e.srv.Stats(); len(e.srv.Calls()) != n || st.CallsReceived != n || st.CallsPlaced != 3 {
		t.Errorf("404s must not be recorded; stats %+v", st)
	}
}

// TestAccountFields: fields the account defines are listed in every
// agent's form_data before local_presence_number, as the live service
// lists them, and call starts may carry them; other names stay unknown.
func TestAccountFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{AccountFields: []string{"city", "zip_code"}})
	tok, _ := e.srv.IssueToken()
	id := e.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`)
	r := e.do("GET", "/api/ai/agent/call-endpoint?agent_id="+id, jsonType, "", bearer(tok)...)
	e.want(r, 200, "")
	want := `"form_data":["phone_number","email","first_name","last_name","ghl_contact_id","override_agent_id","city","zip_code",` +
		`"local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"]`
	if !strings.Contains(r.Raw, want) {
		t.Errorf("descriptor = %s, want %s", r.Raw, want)
	}
	ep := e.endpoint(tok, id)
	e.want(e.call(ep, url.Values{"phone_number": {phone}, "city": {"Springfield"}, "zip_code": {"62701"}}), 200, "")
	e.want(e.call(ep, url.Values{"phone_number": {phone}, "country": {"US"}}), 422, "validation_failed")
	if placed := e.srv.Placed(); len(placed) != 1 || placed[0].Form.Get("city") != "Springfield" || placed[0].Form.Get("zip_code") != "62701" {
		t.Errorf("placed = %+v", placed)
	}
	// A server without account fields takes none of them.
	plain := newEnv(t, Options{})
	tok, _ = plain.srv.IssueToken()
	ep = plain.endpoint(tok, plain.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`))
	plain.want(plain.call(ep, url.Values{"phone_number": {phone}, "city": {"Springfield"}}), 422, "validation_failed")

	for _, bad := range [][]string{{"zip code"}, {""}, {"city", "city"}, {"email"}, {"local_presence_number=No"}} {
		if err := CheckAccountFields(bad); err == nil {
			t.Errorf("CheckAccountFields(%q) = nil", bad)
		}
		if _, err := Listen("127.0.0.1:0", Options{AccountFields: bad}); err == nil {
			t.Errorf("Listen with AccountFields %q: no error", bad)
		}
	}
}

func TestPendingAgent(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newEnv(t, Options{Now: clk.Now, PendingFor: time.Minute})
	tok, _ := e.srv.IssueToken()
	r := e.do("POST", "/api/ai/agent/create", jsonType, `{"agent_name":"A","general_prompt":"p"}`, bearer(tok)...)
	e.want(r, 201, "")
	if r.Body["status"] != "pending" {
		t.Fatalf("new agent status %v, want pending", r.Body["status"])
	}
	id := r.Body["agent_id"].(string)
	ep := e.endpoint(tok, id)
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 409, "agent_not_active")

	clk.Add(59 * time.Second)
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 409, "agent_not_active")
	clk.Add(time.Second)
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")

	r = e.do("GET", "/api/ai/agent/list", "", "", bearer(tok)...)
	a := r.Body["data"].([]any)[0].(map[string]any)
	if a["status"] != "active" || a["created_at"] != "2025-03-01T09:00:00Z" || a["updated_at"] != "2025-03-01T09:01:00Z" {
		t.Errorf("agent after pending = %v", a)
	}
	if c := e.srv.Calls(); len(c) != 3 || c[0].Placed || !strings.HasPrefix(c[0].Outcome, "rejected: ") || !c[2].Placed {
		t.Errorf("ledger = %+v", c)
	}
}

func TestSeededAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{PendingFor: time.Hour})
	a := e.srv.AddAgent(Agent{AgentName: "Existing", GeneralPrompt: "p"})
	if a.AgentID == "" || a.Status != "active" || a.WebhookEndpointMethod != "POST" || a.CreatedAt == "" || a.UpdatedAt == "" {
		t.Errorf("AddAgent filled %+v", a)
	}
	odd, ep := e.seededEndpoint(Agent{AgentID: "ag/1", AgentName: "Odd", Status: "training", CreatedAt: "2024-01-01T00:00:00Z"})
	if odd.CreatedAt != "2024-01-01T00:00:00Z" || odd.UpdatedAt != odd.CreatedAt {
		t.Errorf("AddAgent changed timestamps: %+v", odd)
	}
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "") // unknown statuses are not blocked
	if c := e.srv.Calls(); c[0].AgentID != "ag/1" {
		t.Errorf("agent id with a slash: %+v", c[0])
	}
	p, ep := e.seededEndpoint(Agent{AgentName: "Slow", Status: "pending"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 409, "agent_not_active")
	if !e.srv.SetAgentStatus(p.AgentID, "active") || e.srv.SetAgentStatus("nope", "active") {
		t.Fatal("SetAgentStatus result")
	}
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")

	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddAgent with a taken id did not panic")
			}
		}()
		e.srv.AddAgent(Agent{AgentID: a.AgentID})
	}()
	if got := len(e.srv.Agents()); got != 3 {
		t.Errorf("%d agents", got)
	}
}

func TestFaultKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		faults     Faults
		status     int // 0: the connection is dropped
		retryAfter string
		placed     bool
		outcome    string
		count      func(FaultStats) int
	}{
		{"429", Faults{Share429: 1, RetryAfter: 1500 * time.Millisecond}, 429, "2", false, "429", func(f FaultStats) int { return f.Injected429 }},
		{"503", Faults{Share503: 1}, 503, "1", false, "503", func(f FaultStats) int { return f.Injected503 }},
		{"500 after placing", Faults{Share500: 1}, 500, "", true, "500-after-placing", func(f FaultStats) int { return f.Injected500 }},
		{"drop after placing", Faults{ShareDrop: 1}, 0, "", true, "dropped-after-placing", func(f FaultStats) int { return f.DroppedAfter }},
		{"drop before placing", Faults{ShareDropBefore: 1}, 0, "", false, "dropped-before-placing", func(f FaultStats) int { return f.DroppedBefore }},
		{"latency", Faults{Latency: 10 * time.Millisecond}, 200, "", true, "placed", func(f FaultStats) int { return f.Latency }},
		{"200 html", Faults{Share200HTML: 1}, 200, "", false, "200-html", func(f FaultStats) int { return f.HTML200 }},
		{"200 error", Faults{Share200Error: 1}, 200, "", false, "200-error", func(f FaultStats) int { return f.Error200 }},
		{"202 error", Faults{Share202Error: 1}, 202, "", false, "202-error", func(f FaultStats) int { return f.Error202 }},
		{"403 limit", Faults{Share403Limit: 1}, 403, "", false, "403-limit", func(f FaultStats) int { return f.Limit403 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks := make(chan struct{}, 1)
			hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hooks <- struct{}{} }))
			t.Cleanup(hook.Close)
			e := newEnv(t, Options{Faults: tt.faults})
			_, ep := e.seededEndpoint(Agent{AgentName: "A", WebhookEndpoint: hook.URL})
			r := e.call(ep, url.Values{"phone_number": {phone}})
			if tt.status == 0 {
				if r.Err == nil {
					t.Fatalf("got %d %s, want a transport error", r.Status, r.Raw)
				}
			} else if r.Err != nil || r.Status != tt.status || r.Header.Get("Retry-After") != tt.retryAfter {
				t.Fatalf("got %d (Retry-After %q) %v, want %d (Retry-After %q)", r.Status, r.Header.Get("Retry-After"), r.Err, tt.status, tt.retryAfter)
			}
			calls := e.srv.Calls()
			if len(calls) != 1 || calls[0].Placed != tt.placed || calls[0].Outcome != tt.outcome {
				t.Fatalf("ledger = %+v", calls)
			}
			if got := tt.count(e.srv.Stats().Faults); got != 1 {
				t.Errorf("fault counter = %d, want 1", got)
			}
			if tt.placed { // the webhook fires whatever the client saw
				select {
				case <-hooks:
				case <-time.After(30 * time.Second):
					t.Fatal("no webhook for a placed call")
				}
			}
		})
	}
}

// TestStalledBody: a stalled answer places the call and sends its status
// line; the body never comes, and the client's timeout ends the wait.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Faults: Faults{ShareStall: 1}})
	e.c.Timeout = 200 * time.Millisecond
	_, ep := e.seededEndpoint(Agent{AgentName: "A"})
	r := e.call(ep, url.Values{"phone_number": {phone}})
	if r.Status != http.StatusOK || r.Err == nil {
		t.Fatalf("got %d %q %v; want 200 and a body cut off by the timeout", r.Status, r.Raw, r.Err)
	}
	calls := e.srv.Calls()
	if len(calls) != 1 || !calls[0].Placed || calls[0].Outcome != "placed-stall" || e.srv.Stats().Faults.Stalled != 1 {
		t.Fatalf("ledger = %+v, stats %+v", calls, e.srv.Stats().Faults)
	}
}

// TestMaxActive: with MaxActive 2 and calls of 1s on the sandbox's clock,
// a third call start within that second is refused with 403 concurrency
// limit reached and not placed; once the first calls end, one is placed
// again.
func TestMaxActive(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newEnv(t, Options{Now: clk.Now, Faults: Faults{MaxActive: 2, CallLength: time.Second}})
	_, ep := e.seededEndpoint(Agent{AgentName: "A"})
	for i, want := range []int{200, 200, 403} {
		r := e.call(ep, url.Values{"phone_number": {phone}})
		if r.Status != want {
			t.Fatalf("call %d: %d %s, want %d", i, r.Status, r.Raw, want)
		}
		if want == 403 && r.errCode() != "concurrency limit reached" {
			t.Errorf("403 body %s", r.Raw)
		}
		clk.Add(100 * time.Millisecond)
	}
	clk.Add(time.Second)
	if r := e.call(ep, url.Values{"phone_number": {phone}}); r.Status != 200 {
		t.Fatalf("after the calls ended: %d %s", r.Status, r.Raw)
	}
	if n := len(e.srv.Placed()); n != 3 || e.srv.Stats().Faults.OverActive != 1 {
		t.Errorf("%d placed, stats %+v; want 3 and one refused", n, e.srv.Stats().Faults)
	}
}

func TestFaultScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Faults: Faults{Scope: ScopeAPI, Share503: 1}})
	tok, _ := e.srv.IssueToken()
	_, ep := e.seededEndpoint(Agent{AgentName: "A"})
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(tok)...), 503, "service_unavailable")
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "") // calls not in scope
	e.want(e.do("POST", "/oauth/token", formType, codeForm().Encode()), 200, "")

	// A create that fails with 500 after acting has created the agent.
	e.srv.SetFaults(Faults{Scope: ScopeAPI, Share500: 1})
	e.want(e.do("POST", "/api/ai/agent/create", jsonType, `{"agent_name":"B","general_prompt":"p"}`, bearer(tok)...), 500, "internal_error")
	if a := e.srv.Agents(); len(a) != 2 || a[1].AgentName != "B" {
		t.Errorf("agents = %+v", a)
	}
	e.srv.SetFaults(Faults{Scope: ScopeAPI, ShareDrop: 1})
	if r := e.do("POST", "/api/ai/agent/create", jsonType, `{"agent_name":"C","general_prompt":"p"}`, bearer(tok)...); r.Err == nil {
		t.Errorf("create: got %d, want a dropped connection", r.Status)
	}
	if a := e.srv.Agents(); len(a) != 3 {
		t.Errorf("dropped create did not create: %d agents", len(a))
	}

	// The default scope leaves the API alone; "all" faults both, never the
	// token endpoints.
	e.srv.SetFaults(Faults{Share503: 1})
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(tok)...), 200, "")
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 503, "service_unavailable")
	e.srv.SetFaults(Faults{Scope: ScopeAll, Share429: 1})
	e.want(e.do("GET", "/api/ai/agent/call-endpoint?agent_id=x", jsonType, "", bearer(tok)...), 429, "rate_limited")
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 429, "rate_limited")
	e.want(e.do("POST", "/oauth/token", formType, codeForm().Encode()), 200, "")
	e.want(e.do("GET", "/_sandbox/stats", "", ""), 200, "")
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newEnv(t, Options{Now: clk.Now, Faults: Faults{RateLimit: 1}})
	_, ep := e.seededEndpoint(Agent{AgentName: "A"})
	form := url.Values{"phone_number": {phone}}
	e.want(e.call(ep, form), 200, "")
	r := e.call(ep, form)
	e.want(r, 429, "rate_limited")
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q", got)
	}
	clk.Add(500 * time.Millisecond)
	e.want(e.call(ep, form), 429, "rate_limited")
	clk.Add(500 * time.Millisecond)
	e.want(e.call(ep, form), 200, "")

	e.srv.SetFaults(Faults{RateLimit: 0.25})
	e.want(e.call(ep, form), 200, "")
	if r := e.call(ep, form); r.Status != 429 || r.Header.Get("Retry-After") != "4" {
		t.Errorf("got %d, Retry-After %q; want 429, 4", r.Status, r.Header.Get("Retry-After"))
	}
	var outcomes []string
	for _, c := range e.srv.Calls() {
		outcomes = append(outcomes, c.Outcome)
	}
	if got := strings.Join(outcomes, ","); got != "placed,429,429,placed,placed,429" {
		t.Errorf("outcomes = %s", got)
	}
	if st := e.srv.Stats(); st.Faults.RateLimited != 3 || st.CallsPlaced != 3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestFaultsAreDeterministic(t *testing.T) {
	t.Parallel()
	run := func(e *env, ep string) string {
		var b strings.Builder
		for range 30 {
			fmt.Fprintf(&b, "%d ", e.call(ep, url.Values{"phone_number": {phone}}).Status)
		}
		return b.String()
	}
	f := Faults{Share429: 0.3, Share503: 0.2, Seed: 42}
	e1 := newEnv(t, Options{Faults: f})
	_, ep1 := e1.seededEndpoint(Agent{AgentName: "A"})
	e2 := newEnv(t, Options{Faults: f})
	_, ep2 := e2.seededEndpoint(Agent{AgentName: "A"})
	a, b := run(e1, ep1), run(e2, ep2)
	if a != b {
		t.Errorf("same seed, different faults:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "200") || !strings.Contains(a, "429") || !strings.Contains(a, "503") {
		t.Errorf("30 draws gave %s", a)
	}
	e1.srv.SetFaults(f) // re-seeds
	if again := run(e1, ep1); again != a {
		t.Errorf("SetFaults did not re-seed:\n%s\n%s", a, again)
	}
}

func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	type got struct {
		method, contentType string
		query               url.Values
		body                map[string]any
	}
	received := make(chan got, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := got{method: r.Method, contentType: r.Header.Get("Content-Type"), query: r.URL.Query()}
		json.NewDecoder(r.Body).Decode(&g.body) //nolint:errcheck
		received <- g
	}))
	t.Cleanup(hook.Close)

	e := newEnv(t, Options{})
	tok, _ := e.srv.IssueToken()
	post := e.createAgent(tok, fmt.Sprintf(`{"agent_name":"P","general_prompt":"p","weebhook_endpoint":%q}`, hook.URL+"/done"))
	get := e.createAgent(tok, fmt.Sprintf(`{"agent_name":"G","general_prompt":"p","weebhook_endpoint":%q,"weebhook_endpoint_method":"GET"}`, hook.URL+"/done?k=v"))
	none := e.createAgent(tok, `{"agent_name":"N","general_prompt":"p"}`)
	for _, id := range []string{post, get, none} {
		e.want(e.call(e.endpoint(tok, id), url.Values{"phone_number": {phone}}), 200, "")
	}

	var byMethod = map[string]got{}
	for range 2 {
		select {
		case g := <-received:
			byMethod[g.method] = g
		case <-time.After(30 * time.Second):
			t.Fatal("webhook not delivered")
		}
	}
	p := byMethod["POST"]
	if p.contentType != jsonType || p.body["event"] != "call.completed" || p.body["call_id"] != "call_1" ||
		p.body["agent_id"] != post || p.body["phone_number"] != phone || p.body["status"] != "completed" ||
		p.body["duration_seconds"] != 1.0 || p.body["completed_at"] == "" {
		t.Errorf("POST webhook = %+v", p)
	}
	g := byMethod["GET"].query
	if g.Get("k") != "v" || g.Get("event") != "call.completed" || g.Get("call_id") != "call_2" || g.Get("agent_id") != get ||
		g.Get("phone_number") != phone || g.Get("duration_seconds") != "1" || g.Get("completed_at") == "" {
		t.Errorf("GET webhook query = %v", g)
	}
	eventually(t, "two recorded webhooks", func() bool { return len(e.srv.Webhooks()) == 2 })
	for _, w := range e.srv.Webhooks() {
		if !w.Delivered || w.Status != 200 || w.Err != "" || w.Skipped != "" {
			t.Errorf("webhook record %+v", w)
		}
	}
	select {
	case g := <-received:
		t.Errorf("unexpected webhook %+v", g)
	default:
	}
}

func TestWebhookSkippedAndFailed(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(failing.Close)
	e := newEnv(t, Options{})
	_, external := e.seededEndpoint(Agent{AgentName: "X", WebhookEndpoint: "http://example.com/hook"})
	_, teapot := e.seededEndpoint(Agent{AgentName: "T", WebhookEndpoint: failing.URL, WebhookEndpointMethod: "GET"})
	e.want(e.call(external, url.Values{"phone_number": {phone}}), 200, "")
	eventually(t, "skipped webhook", func() bool { return len(e.srv.Webhooks()) == 1 })
	e.want(e.call(teapot, url.Values{"phone_number": {phone}}), 200, "")
	eventually(t, "failed webhook", func() bool { return len(e.srv.Webhooks()) == 2 })
	w := e.srv.Webhooks()
	if w[0].Delivered || !strings.Contains(w[0].Skipped, "loopback") || w[0].URL != "http://example.com/hook" || w[0].CallID != "call_1" {
		t.Errorf("external webhook = %+v", w[0])
	}
	if w[1].Delivered || w[1].Status != http.StatusTeapot || w[1].Err == "" || w[1].Method != "GET" {
		t.Errorf("failing webhook = %+v", w[1])
	}
}

func TestCloseCancelsPendingWebhooks(t *testing.T) {
	t.Parallel()
	srv := NewServer(Options{CallDuration: time.Hour})
	t.Cleanup(srv.Close)
	a := srv.AddAgent(Agent{AgentName: "A", WebhookEndpoint: "http://127.0.0.1:1/hook"})
	ep, _ := srv.CallEndpoint(a.AgentID)
	resp, err := http.PostForm(ep, url.Values{"phone_number": {phone}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	srv.Close() // idempotent
	if w := srv.Webhooks(); len(w) != 1 || !strings.Contains(w[0].Skipped, "canceled") {
		t.Errorf("webhooks after Close = %+v", w)
	}
	if _, err := http.Get(srv.URL + "/_sandbox/stats"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestInspectionOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tok, _ := e.srv.IssueToken()
	a, ep := e.seededEndpoint(Agent{AgentName: "A"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}, bearer(tok)...), 200, "")

	r := e.do("GET", "/_sandbox/ledger", "", "")
	var ledger []Call
	if err := json.Unmarshal([]byte(r.Raw), &ledger); err != nil || len(ledger) != 1 {
		t.Fatalf("ledger %s: %v", r.Raw, err)
	}
	if c := ledger[0]; !c.Placed || c.AgentID != a.AgentID || c.Form.Get("phone_number") != phone ||
		c.Header.Get("Authorization") != "Bearer <redacted>" || strings.Contains(r.Raw, tok) {
		t.Errorf("ledger entry %+v", c)
	}
	var agents []Agent
	r = e.do("GET", "/_sandbox/agents", "", "")
	if json.Unmarshal([]byte(r.Raw), &agents); len(agents) != 1 || agents[0].AgentID != a.AgentID {
		t.Errorf("agents %s", r.Raw)
	}
	if r = e.do("GET", "/_sandbox/webhooks", "", ""); strings.TrimSpace(r.Raw) != "[]" {
		t.Errorf("webhooks %s", r.Raw)
	}
	r = e.do("GET", "/_sandbox/stats", "", "")
	if r.Body["calls_received"] != 1.0 || r.Body["calls_placed"] != 1.0 {
		t.Errorf("stats %s", r.Raw)
	}

	r = e.do("POST", "/_sandbox/faults", jsonType, `{"share_503": 1, "retry_after": "2s", "latency": 5}`)
	e.want(r, 200, "")
	if r.Body["latency"] != "5ms" || r.Body["retry_after"] != "2s" || r.Body["scope"] != "calls" {
		t.Errorf("faults answer %s", r.Raw)
	}
	r = e.call(ep, url.Values{"phone_number": {phone}})
	if e.want(r, 503, "service_unavailable"); r.Header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	for _, bad := range []struct{ body, errCode string }{
		{`{"bogus": 1}`, "invalid_json"},
		{`{"latency": "soon"}`, "invalid_json"},
		{`nope`, "invalid_json"},
		{`{"share_503": 2}`, "invalid_faults"},
		{`{"scope": "tokens"}`, "invalid_faults"},
	} {
		e.want(e.do("POST", "/_sandbox/faults", jsonType, bad.body), 400, bad.errCode)
	}
	if r = e.do("GET", "/_sandbox/faults", "", ""); r.Body["share_503"] != 1.0 {
		t.Errorf("faults after bad posts %s", r.Raw)
	}
	e.want(e.do("POST", "/_sandbox/faults", jsonType, `{}`), 200, "")
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")

	e.want(e.do("POST", "/_sandbox/expire-tokens", "", ""), 200, "")
	e.want(e.do("GET", "/api/ai/agent/list", "", "", bearer(tok)...), 401, "invalid_token")
}

func TestRouting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/nowhere", 404, ""},
		{"GET", "/api/ai/agent", 404, ""},
		{"GET", "/call/x", 404, ""},
		{"GET", "/oauth/token", 405, "POST"},
		{"PUT", "/oauth/token/refresh", 405, "POST"},
		{"POST", "/oauth/authorize", 405, "GET"},
		{"GET", "/api/ai/agent/create", 405, "POST"},
		{"POST", "/api/ai/agent/list", 405, "GET"},
		{"POST", "/api/ai/agent/call-endpoint", 405, "GET"},
		{"DELETE", "/_sandbox/faults", 405, "GET, POST"},
		{"POST", "/_sandbox/ledger", 405, "GET"},
		{"GET", "/_sandbox/expire-tokens", 405, "POST"},
	}
	for _, tt := range tests {
		r := e.do(tt.method, tt.path, "", "")
		want := map[int]string{404: "not_found", 405: "method_not_allowed"}[tt.status]
		if r.Status != tt.status || r.errCode() != want || r.Header.Get("Allow") != tt.allow ||
			r.Header.Get("Content-Type") != jsonType {
			t.Errorf("%s %s: %d Allow %q %s", tt.method, tt.path, r.Status, r.Header.Get("Allow"), r.Raw)
		}
	}
}

func TestLogsRedactSecrets(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logs []string
	e := newEnv(t, Options{ClientSecret: "s3cr3t-value", Code: "demo-code-value", Logf: func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	form := codeForm()
	form.Set("client_secret", "s3cr3t-value")
	form.Set("code", "demo-code-value")
	r := e.do("POST", "/oauth/token", formType, form.Encode())
	e.want(r, 200, "")
	access, refresh := r.Body["access_token"].(string), r.Body["refresh_token"].(string)
	rf := refreshForm(refresh)
	rf.Set("client_secret", "s3cr3t-value")
	r = e.do("POST", "/oauth/token/refresh", formType, rf.Encode())
	e.want(r, 200, "")
	access2, refresh2 := r.Body["access_token"].(string), r.Body["refresh_token"].(string)
	q := url.Values{"response_type": {"code"}, "client_id": {DefaultClientID}, "redirect_uri": {redirectURI}, "state": {"s"}}
	r = e.do("GET", "/oauth/authorize?"+q.Encode(), "", "")
	loc, _ := url.Parse(r.Header.Get("Location"))
	issued := loc.Query().Get("code")
	e.do("GET", "/api/ai/agent/list?access_token=query-token-value&code=query-code-value", "", "", bearer(access)...)
	_, ep := e.seededEndpoint(Agent{AgentName: "A"})
	e.call(ep, url.Values{"phone_number": {phone}}, bearer(access)...)

	mu.Lock()
	all := strings.Join(logs, "\n")
	mu.Unlock()
	if !strings.Contains(all, "POST /oauth/token -> 200") || !strings.Contains(all, "GET /api/ai/agent/list?") {
		t.Errorf("request log lacks lines:\n%s", all)
	}
	for _, secret := range []string{"s3cr3t-value", "demo-code-value", access, refresh, access2, refresh2,
		issued, "query-token-value", "query-code-value"} {
		if secret != "" && strings.Contains(all, secret) {
			t.Errorf("log leaks %q:\n%s", secret, all)
		}
	}
}

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	if _, err := Listen("127.0.0.1:0", Options{Faults: Faults{Share503: 3}}); err == nil {
		t.Error("Listen accepted invalid faults")
	}
	srv, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/_sandbox/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("stats: %d", resp.StatusCode)
	}
	srv.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve returned %v after Close", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	if err := srv.Serve(); err == nil {
		t.Error("Serve after Close succeeded")
	}
}

func TestHandlerOnItsOwn(t *testing.T) {
	t.Parallel()
	srv := NewUnstartedServer(Options{})
	t.Cleanup(srv.Close)
	if srv.URL != "" {
		t.Fatalf("unstarted server has URL %s", srv.URL)
	}
	hts := httptest.NewServer(srv.Handler())
	t.Cleanup(hts.Close)
	e := &env{t: t, srv: srv, c: hts.Client(), base: hts.URL}
	tok, _ := srv.IssueToken()
	id := e.createAgent(tok, `{"agent_name":"A","general_prompt":"p"}`)
	ep := e.endpoint(tok, id) // built from the request's Host
	if !strings.HasPrefix(ep, hts.URL+"/call/") {
		t.Errorf("endpoint %s not on %s", ep, hts.URL)
	}
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")
}

func TestUnstartedServerStart(t *testing.T) {
	t.Parallel()
	srv := NewUnstartedServer(Options{})
	t.Cleanup(srv.Close)
	srv.Start()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") && !strings.HasPrefix(srv.URL, "http://[::1]:") {
		t.Fatalf("URL = %q", srv.URL)
	}
	resp, err := http.Get(srv.URL + "/_sandbox/agents")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	defer func() {
		if recover() == nil {
			t.Error("second Start did not panic")
		}
	}()
	srv.Start()
}

func TestFaultsValidate(t *testing.T) {
	t.Parallel()
	for _, f := range []Faults{{Scope: "x"}, {Latency: -1}, {RetryAfter: -1}, {RateLimit: -1}, {Share429: 1.1}, {ShareDrop: -0.1}} {
		if f.Validate() == nil {
			t.Errorf("%+v: Validate = nil", f)
		}
	}
	var f Faults
	if err := json.Unmarshal([]byte(`{"scope":"all","latency":1500,"retry_after":"3s","rate_limit":2,"seed":9}`), &f); err != nil {
		t.Fatal(err)
	}
	if f != (Faults{Scope: ScopeAll, Latency: 1500 * time.Millisecond, RetryAfter: 3 * time.Second, RateLimit: 2, Seed: 9}) {
		t.Errorf("decoded %+v", f)
	}
	b, _ := json.Marshal(f)
	var back Faults
	if err := json.Unmarshal(b, &back); err != nil || back != f {
		t.Errorf("round trip %s -> %+v, %v", b, back, err)
	}
}

// TestStandardLibraryOnly keeps the sandbox independent of the client it
// tests: its non-test files may import only the standard library.
func TestStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

// TestShiftingList checks the list's two orders and a list that changes
// between the page requests of one listing.
func TestShiftingList(t *testing.T) {
	t.Parallel()
	ids := func(r result) []string {
		var out []string
		for _, a := range r.Body["data"].([]any) {
			out = append(out, a.(map[string]any)["agent_id"].(string))
		}
		return out
	}
	for _, newest := range []bool{false, true} {
		e := newEnv(t, Options{NewestFirst: newest})
		tok, _ := e.srv.IssueToken()
		var seeded []string
		for i := range 4 {
			seeded = append(seeded, e.srv.AddAgent(Agent{AgentName: fmt.Sprint("agent ", i), GeneralPrompt: "p"}).AgentID)
		}
		if newest {
			slices.Reverse(seeded)
		}
		page := func(n int) result {
			r := e.do("GET", fmt.Sprintf("/api/ai/agent/list?page=%d&per_page=2", n), "", "", bearer(tok)...)
			e.want(r, 200, "")
			return r
		}
		if got := append(ids(page(1)), ids(page(2))...); !slices.Equal(got, seeded) {
			t.Errorf("newest first %v: listed %v, want %v", newest, got, seeded)
		}

		var pages []int
		var added Agent
		e.srv.OnListPage(func(n int) {
			pages = append(pages, n)
			if n != 1 || len(pages) > 1 {
				return // once, after the first page 1
			}
			if newest { // someone adds an agent: everything moves down one place
				added = e.srv.AddAgent(Agent{AgentName: "new", GeneralPrompt: "p"})
			} else if !e.srv.RemoveAgent(seeded[0]) { // someone deletes the oldest: everything moves up
				t.Error("RemoveAgent of an agent that exists said false")
			}
		})
		first, second := ids(page(1)), ids(page(2))
		if newest {
			// seeded[1], last on page 1, comes again first on page 2.
			if !slices.Equal(first, seeded[:2]) || !slices.Equal(second, seeded[1:3]) {
				t.Errorf("added between pages: %v then %v", first, second)
			}
			if got := ids(page(1)); got[0] != added.AgentID {
				t.Errorf("newest first: page 1 starts %v, want the added %s", got, added.AgentID)
			}
		} else {
			// seeded[2] moved to page 1 after it was read: no page shows it.
			if !slices.Equal(first, seeded[:2]) || !slices.Equal(second, seeded[3:]) {
				t.Errorf("removed between pages: %v then %v", first, second)
			}
			if e.srv.RemoveAgent(seeded[0]) {
				t.Error("RemoveAgent of a removed agent said true")
			}
		}
		want := []int{1, 2}
		if newest {
			want = append(want, 1)
		}
		if !slices.Equal(pages, want) {
			t.Errorf("OnListPage saw pages %v, want %v", pages, want)
		}
		e.srv.OnListPage(nil)
	}
}

func TestRemovedAgentsEndpointIsGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	a, ep := e.seededEndpoint(Agent{AgentName: "Gone", GeneralPrompt: "p"})
	if !e.srv.RemoveAgent(a.AgentID) {
		t.Fatal("RemoveAgent said false")
	}
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 404, "not_found")
	if len(e.srv.Agents()) != 0 || len(e.srv.Calls()) != 0 {
		t.Errorf("after removal: agents %v, ledger %v", e.srv.Agents(), e.srv.Calls())
	}
}

// TestHealthz: GET /healthz answers 200 {"status": "ok"} without
// authentication, for scripts that wait until the sandbox listens.
func TestHealthz(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	r := e.do(http.MethodGet, "/healthz", "", "")
	if r.Err != nil || r.Status != http.StatusOK || r.Body["status"] != "ok" {
		t.Errorf("GET /healthz: %d %q %v", r.Status, r.Raw, r.Err)
	}
	if r := e.do(http.MethodPost, "/healthz", "", ""); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d %q", r.Status, r.Raw)
	}
}
