package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Demo credentials. They are the defaults of Options and are printed by
// `callrun sandbox`.
const (
	DefaultClientID     = "sandbox-client"
	DefaultClientSecret = "sandbox-secret"
	DefaultCode         = "sandbox-code" // reusable authorization code
)

const (
	defaultTokenLifetime = time.Hour
	defaultCallDuration  = 50 * time.Millisecond
	codeLifetime         = 10 * time.Minute // one-time authorization codes
	webhookTimeout       = 5 * time.Second
	closeWait            = webhookTimeout + time.Second
	maxBodyBytes         = 1 << 20
)

// Options configures a Server. The zero value is a working sandbox with the
// demo credentials.
type Options struct {
	// ClientID and ClientSecret are the only accepted OAuth client
	// credentials. Empty means DefaultClientID and DefaultClientSecret.
	ClientID, ClientSecret string
	// Code is a reusable authorization code for scripts and demos; empty
	// means DefaultCode. Codes issued by /oauth/authorize are one-time.
	Code string
	// RedirectURI, if set, is the only redirect_uri the authorize and token
	// endpoints accept. Empty accepts any non-empty absolute URI.
	RedirectURI string
	// AccessTokenLifetime is the lifetime of issued access tokens; 0 means
	// one hour. expires_in is this value in whole seconds, rounded up, at
	// least 1, but the token really expires after exactly this duration.
	AccessTokenLifetime time.Duration
	// RotateRefreshTokens, when nil or true, makes each refresh return a new
	// refresh token and revoke the one sent. When false the refresh token
	// sent is returned again and stays valid.
	RotateRefreshTokens *bool
	// PendingFor is how long agents created over HTTP stay "pending" before
	// they become "active"; 0 makes them active at once.
	PendingFor time.Duration
	// CallDuration is the simulated call length, measured on the real clock,
	// before the completion webhook fires; 0 means 50ms.
	CallDuration time.Duration
	// AllowExternalWebhooks allows webhook delivery to any host. When false,
	// only loopback hosts (127.0.0.0/8, ::1, localhost) are called and other
	// deliveries are recorded as skipped.
	AllowExternalWebhooks bool
	// AccountFields are form fields the account defines beyond the service contract's
	// seven (the live service lets an account add address, city,
	// zip_code, country, phone_number1 and custom ones). Every agent's
	// data.form_data lists them before local_presence_number, and call
	// starts may carry them. See CheckAccountFields for what is allowed.
	AccountFields []string
	// NewestFirst lists agents newest first; false lists them in creation
	// order, oldest first. Live services list either way.
	NewestFirst bool
	// ListHidesCreated leaves the agents created over HTTP out of the
	// agent list (and its total), as the list of an account that lags, or
	// that leaves pending agents out, does; their call endpoints and calls
	// answer as ever. Agents seeded with AddAgent are listed.
	ListHidesCreated bool
	// AnswerWithoutCallID leaves call_id out of a placed call's answer.
	// The service's documentation does not show whether the call
	// endpoint's answer carries a call id; the sandbox gives one by
	// default (call_<n>, the id its webhooks and envelopes carry), and
	// this shows a client the other reading.
	AnswerWithoutCallID bool
	// AnswerStatus is the "status" of a placed call's answer; empty means
	// "success". The documentation does not show the answer, and services
	// write it in words of their own ("in-progress", "queued").
	AnswerStatus string
	// AccountWebhook, when its URL is set, delivers every placed call's
	// account webhooks there, with retries and its own faults; see
	// AccountWebhook and Server.Deliveries.
	AccountWebhook AccountWebhook
	// Faults is the initial fault injection; see Faults and SetFaults.
	Faults Faults
	// Now returns the current time; nil means time.Now. It drives token
	// expiry, pending agents, timestamps and the rate limiter.
	Now func() time.Time
	// Logf, if set, receives one line per request and per webhook. Secrets
	// (Authorization, client_secret, refresh_token, code, access_token) are
	// never logged.
	Logf func(format string, args ...any)
	// Rehearsal makes every answer carry the header RehearsalHeader, by
	// which callrun tells a run against this sandbox from one against the
	// live service, and keeps its state apart as a rehearsal's. `callrun
	// sandbox` sets it; Go tests that stand the sandbox in for the live
	// service leave it off.
	Rehearsal bool
}

// RehearsalHeader is the header of every answer of a sandbox with
// Options.Rehearsal: "Callrun-Sandbox: rehearsal". callrun believes it
// only from a service on loopback.
const (
	RehearsalHeader = "Callrun-Sandbox"
	RehearsalValue  = "rehearsal"
)

// Server is an in-memory emulator of the Voice AI Agent service. All state
// lives in memory under one mutex; its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the server, for example http://127.0.0.1:41234,
	// with no trailing slash. It is set by NewServer, Listen and Start. When
	// it is empty (Handler used on its own), call endpoint URLs are built
	// from the request's Host.
	URL string
	// Listener is the listener Start and Serve use. It may be replaced
	// between NewUnstartedServer and Start.
	Listener net.Listener
	// Config is the http.Server Start and Serve use. It may be changed
	// between NewUnstartedServer and Start.
	Config *http.Server

	opts       Options
	rotate     bool
	routes     map[string]route
	hookClient *http.Client
	ctx        context.Context // canceled by Close
	cancel     context.CancelFunc
	hooks      sync.WaitGroup // webhook deliveries

	mu       sync.Mutex
	started  bool
	closed   bool
	faults   Faults
	rng      *mrand.Rand
	rngToken *mrand.Rand // the choice of Faults.ShareRefresh500
	bucket   bucket
	active   []time.Time // ends of the placed calls in progress, for Faults.MaxActive
	codes    map[string]oneTimeCode
	access   map[string]time.Time // access token -> expiry
	refresh  map[string]bool      // valid refresh tokens
	agents   []*agentRecord
	byID     map[string]*agentRecord
	listHook func(page int) // see OnListPage
	calls    []Call
	webhooks []Webhook
	// deliveries is the account webhooks' ledger; rngHook draws their
	// duplicates.
	deliveries []Delivery
	rngHook    *mrand.Rand
	// pending counts the webhook goroutines not yet done; idle is closed
	// when it drops to zero, for WaitWebhooks.
	pending int
	idle    chan struct{}
	stats   Stats
}

// route is one fixed path with its allowed methods.
type route struct {
	methods []string
	handle  http.HandlerFunc
}

// NewServer starts and returns a new Server listening on a loopback port,
// like httptest.NewServer. The caller should call Close when done. It panics
// if opts.Faults or opts.AccountFields is invalid.
func NewServer(opts Options) *Server {
	s := NewUnstartedServer(opts)
	s.Start()
	return s
}

// NewUnstartedServer returns a new Server listening on a loopback port but
// not serving yet. The caller may change Listener or Config and then call
// Start, or use Handler with a server of its own. It panics if opts.Faults
// or opts.AccountFields is invalid.
func NewUnstartedServer(opts Options) *Server {
	s := newServer(opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if l, err = net.Listen("tcp6", "[::1]:0"); err != nil {
			panic(fmt.Sprintf("sandbox: failed to listen on a port: %v", err))
		}
	}
	s.Listener = l
	return s
}

// Listen returns a Server listening on addr (for example 127.0.0.1:8089)
// with URL set; an unspecified host such as 0.0.0.0 is shown as loopback in
// URL. Call Serve to serve it and Close to stop it. It fails if
// opts.Faults or opts.AccountFields is invalid.
func Listen(addr string, opts Options) (*Server, error) {
	if err := opts.Faults.Validate(); err != nil {
		return nil, err
	}
	if err := CheckAccountFields(opts.AccountFields); err != nil {
		return nil, err
	}
	if err := checkAccountWebhook(&opts.AccountWebhook); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(opts)
	s.Listener = l
	s.URL = baseURL(l.Addr())
	return s, nil
}

func newServer(opts Options) *Server {
	if err := opts.Faults.Validate(); err != nil {
		panic("sandbox: " + err.Error())
	}
	if err := CheckAccountFields(opts.AccountFields); err != nil {
		panic("sandbox: " + err.Error())
	}
	if err := checkAccountWebhook(&opts.AccountWebhook); err != nil {
		panic("sandbox: " + err.Error())
	}
	opts.AccountFields = slices.Clone(opts.AccountFields)
	if opts.ClientID == "" {
		opts.ClientID = DefaultClientID
	}
	if opts.ClientSecret == "" {
		opts.ClientSecret = DefaultClientSecret
	}
	if opts.Code == "" {
		opts.Code = DefaultCode
	}
	if opts.AccessTokenLifetime <= 0 {
		opts.AccessTokenLifetime = defaultTokenLifetime
	}
	if opts.CallDuration <= 0 {
		opts.CallDuration = defaultCallDuration
	}
	opts.PendingFor = max(opts.PendingFor, 0)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:   opts,
		rotate: opts.RotateRefreshTokens == nil || *opts.RotateRefreshTokens,
		hookClient: &http.Client{
			Transport: transport,
			Timeout:   webhookTimeout,
			// A webhook is one request; never follow a redirect off loopback.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		ctx:     ctx,
		cancel:  cancel,
		codes:   map[string]oneTimeCode{},
		access:  map[string]time.Time{},
		refresh: map[string]bool{},
		byID:    map[string]*agentRecord{},
		rngHook: newHookRand(opts.AccountWebhook.Seed),
	}
	s.setFaultsLocked(opts.Faults)
	get, post := []string{http.MethodGet}, []string{http.MethodPost}
	s.routes = map[string]route{
		"/oauth/authorize":                {get, s.handleAuthorize},
		"/oauth/token":                    {post, s.handleToken},
		"/oauth/token/refresh":            {post, s.handleRefresh},
		"/api/ai/agent/create":            {post, s.handleCreate},
		"/api/ai/agent/list":              {get, s.handleList},
		"/api/ai/agent/call-endpoint":     {get, s.handleCallEndpoint},
		"/healthz":                        {get, adminAction(func() {})},
		"/_sandbox/ledger":                {get, inspect(s.Calls)},
		"/_sandbox/agents":                {get, inspect(s.Agents)},
		"/_sandbox/webhooks":              {get, inspect(s.Webhooks)},
		"/_sandbox/deliveries":            {get, inspect(s.Deliveries)},
		"/_sandbox/stats":                 {get, inspect(s.Stats)},
		"/_sandbox/faults":                {[]string{http.MethodGet, http.MethodPost}, s.handleFaults},
		"/_sandbox/expire-tokens":         {post, adminAction(s.ExpireAccessTokens)},
		"/_sandbox/revoke-refresh-tokens": {post, adminAction(s.RevokeRefreshTokens)},
	}
	s.Config = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return s
}

// Start starts serving on Listener. It panics if the server was already
// started or closed.
func (s *Server) Start() {
	if err := s.markStarted(); err != nil {
		panic("sandbox: " + err.Error())
	}
	go s.Config.Serve(s.Listener) //nolint:errcheck // ErrServerClosed after Close
}

// Serve serves on Listener until Close is called, then returns nil. It is
// meant for servers made by Listen, and fails at once if the server was
// already started or closed.
func (s *Server) Serve() error {
	if err := s.markStarted(); err != nil {
		return err
	}
	if err := s.Config.Serve(s.Listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) markStarted() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("server is closed")
	case s.started:
		return errors.New("server already started")
	case s.Listener == nil:
		return errors.New("server has no Listener")
	}
	s.started = true
	if s.URL == "" {
		s.URL = baseURL(s.Listener.Addr())
	}
	if s.Config.Handler == nil {
		s.Config.Handler = s.Handler()
	}
	return nil
}

// baseURL turns a listener address into a base URL, replacing an
// unspecified address (0.0.0.0, ::) by loopback so that the URL is usable.
func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Close stops serving, cancels webhook deliveries that have not started and
// waits (about five seconds at most) for those in flight. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	started := s.started
	s.mu.Unlock()

	s.cancel() // ends injected latency and pending webhook timers
	if started {
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		if s.Config.Shutdown(ctx) != nil {
			s.Config.Close()
		}
		cancel()
	}
	if s.Listener != nil {
		s.Listener.Close()
	}
	done := make(chan struct{})
	go func() { s.hooks.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	s.hookClient.CloseIdleConnections()
}

// Handler returns the HTTP handler of the whole service, including the
// /_sandbox inspection endpoints.
func (s *Server) Handler() http.Handler {
	h := http.Handler(http.HandlerFunc(s.route))
	if s.opts.Rehearsal {
		route := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(RehearsalHeader, RehearsalValue)
			route.ServeHTTP(w, r)
		})
	}
	if s.opts.Logf == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		path := r.URL.Path
		if q := redactQuery(r.URL.RawQuery); q != "" {
			path += "?" + q
		}
		result := strconv.Itoa(rec.status)
		if rec.status == 0 {
			result = "connection dropped"
		}
		s.opts.Logf("sandbox: %s %s -> %s", r.Method, path, result)
	})
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if rt, ok := s.routes[r.URL.Path]; ok {
		if !slices.Contains(rt.methods, r.Method) {
			w.Header().Set("Allow", strings.Join(rt.methods, ", "))
			apiError(w, http.StatusMethodNotAllowed, "method_not_allowed",
				fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(rt.methods, " or ")))
			return
		}
		rt.handle(w, r)
		return
	}
	if agentID, token, ok := parseCallPath(r.URL.EscapedPath()); ok {
		s.handleCall(w, r, agentID, token)
		return
	}
	apiError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
}

// Stats holds the server's counters.
type Stats struct {
	TokenExchanges int        `json:"token_exchanges"` // successful code exchanges
	Refreshes      int        `json:"refreshes"`       // successful refreshes
	TokenErrors    int        `json:"token_errors"`    // failed requests to both token endpoints
	AgentsCreated  int        `json:"agents_created"`  // agents created over HTTP
	ListCalls      int        `json:"list_calls"`      // successful list requests
	EndpointReads  int        `json:"endpoint_reads"`  // successful call-endpoint requests
	CallsReceived  int        `json:"calls_received"`  // ledger length
	CallsPlaced    int        `json:"calls_placed"`    // ledger entries with Placed
	Unauthorized   int        `json:"unauthorized"`    // 401 answers for a missing or bad bearer token
	Faults         FaultStats `json:"faults"`
}

// FaultStats counts injected faults by kind.
type FaultStats struct {
	Latency       int `json:"latency"`        // requests delayed
	RateLimited   int `json:"rate_limited"`   // 429 from the token bucket
	Injected429   int `json:"429"`            // 429 from Share429
	Injected503   int `json:"503"`            // 503 from Share503
	Injected500   int `json:"500"`            // 500 after acting, from Share500
	DroppedBefore int `json:"dropped_before"` // connections closed before acting
	DroppedAfter  int `json:"dropped_after"`  // connections closed after acting
	Refresh500    int `json:"refresh_500"`    // refresh requests answered 500, from ShareRefresh500
	HTML200       int `json:"200_html"`       // 200 with an HTML page, from Share200HTML
	Error200      int `json:"200_error"`      // 200 {"status":"error"}, from Share200Error
	Error202      int `json:"202_error"`      // 202 {"error":...}, from Share202Error
	Limit403      int `json:"403_limit"`      // 403 concurrency limit, from Share403Limit
	OverActive    int `json:"over_active"`    // 403 concurrency limit, from MaxActive
	Stalled       int `json:"stalled"`        // placed, answered 200, body stalled, from ShareStall
}

// Calls returns a copy of the ledger: every call-start request that reached
// a valid call endpoint, in order of arrival.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Form = cloneValues(c.Form)
		c.Header = c.Header.Clone()
		out[i] = c
	}
	return out
}

// Placed returns the ledger entries whose call was placed.
func (s *Server) Placed() []Call {
	return slices.DeleteFunc(s.Calls(), func(c Call) bool { return !c.Placed })
}

// Agents returns a copy of all agents in creation order.
func (s *Server) Agents() []Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Agent, len(s.agents))
	for i, a := range s.agents {
		out[i] = s.agentLocked(a)
	}
	return out
}

// Webhooks returns every webhook delivery attempted or skipped, in order.
func (s *Server) Webhooks() []Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Webhook{}, s.webhooks...)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ExpireAccessTokens invalidates every access token issued so far; the next
// API request with one of them is answered 401.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeRefreshTokens invalidates every refresh token issued so far.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// IssueToken mints a valid access and refresh token pair without the HTTP
// flow.
func (s *Server) IssueToken() (access, refresh string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.issueLocked()
	return t.AccessToken, t.RefreshToken
}

func (s *Server) handleFaults(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var f Faults
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&f); err != nil {
			apiError(w, http.StatusBadRequest, "invalid_json", "faults: "+err.Error())
			return
		}
		if err := f.Validate(); err != nil {
			apiError(w, http.StatusBadRequest, "invalid_faults", err.Error())
			return
		}
		s.SetFaults(f)
	}
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, f)
}

// inspect serves what snapshot returns as JSON.
func inspect[T any](snapshot func() T) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, snapshot()) }
}

// adminAction runs action and answers {"status": "ok"}.
func adminAction(action func()) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		action()
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

func (s *Server) now() time.Time { return s.opts.Now() }

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// statusRecorder remembers the status code written, for the request log.
// Unwrap lets http.ResponseController reach the connection for Hijack.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// secretParams are query and form parameters whose values are never logged.
var secretParams = []string{"code", "access_token", "refresh_token", "client_secret"}

// redactQuery returns rawQuery with the values of secret parameters replaced.
func redactQuery(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "<unparsable query>"
	}
	for _, k := range secretParams {
		if _, ok := q[k]; ok {
			q[k] = []string{"REDACTED"}
		}
	}
	return q.Encode()
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// Keep "<" and ">" readable in messages; the client may be gone, so the
	// write error is of no use.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck
}

// apiError answers {"error": code, "message": msg}, the shape of API errors.
func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": code, "message": msg})
}

// oauthError answers {"error": code, "error_description": msg} (RFC 6749).
func oauthError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": msg})
}

// randomHex returns n random bytes as 2n hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// wholeSeconds is d in whole seconds, rounded up, at least 1.
func wholeSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// hookStartLocked counts a webhook goroutine about to start; s.mu is held.
func (s *Server) hookStartLocked() {
	s.hooks.Add(1)
	if s.pending == 0 {
		s.idle = make(chan struct{})
	}
	s.pending++
}

// hookDone counts a webhook goroutine done.
func (s *Server) hookDone() {
	s.mu.Lock()
	s.pending--
	if s.pending == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
	s.hooks.Done()
}

// PendingWebhooks returns how many calls' webhooks (completion webhooks,
// account webhook deliveries with their retries, late, duplicate and
// forged ones) are not done yet.
func (s *Server) PendingWebhooks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// WaitWebhooks waits until every webhook scheduled so far is done
// (delivered, given up or skipped), or ctx ends, and returns ctx's error
// then. A caller that has stopped placing calls, as `callrun run
// --sandbox` at its end, waits for everything the service would send.
func (s *Server) WaitWebhooks(ctx context.Context) error {
	s.mu.Lock()
	if s.pending == 0 {
		s.mu.Unlock()
		return nil
	}
	idle := s.idle
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
