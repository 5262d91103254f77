package sandbox

import (
	"crypto/subtle"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// oneTimeCode is an authorization code issued by /oauth/authorize.
type oneTimeCode struct {
	redirectURI string
	expires     time.Time
}

// tokenResponse is the token response of both token endpoints.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// handleAuthorize auto-approves an authorization request and redirects to
// redirect_uri with a fresh one-time code and the state sent.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.opts.ClientID {
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	redirect := q.Get("redirect_uri")
	if msg := s.checkRedirectURI(redirect); msg != "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}
	target, _ := url.Parse(redirect) // checked above
	params := target.Query()
	if state := q.Get("state"); state != "" {
		params.Set("state", state)
	}
	switch rt := q.Get("response_type"); rt {
	case "code":
		code := "sbx_code_" + randomHex(16)
		s.mu.Lock()
		s.codes[code] = oneTimeCode{redirectURI: redirect, expires: s.now().Add(codeLifetime)}
		s.mu.Unlock()
		params.Set("code", code)
	case "":
		params.Set("error", "invalid_request")
		params.Set("error_description", "response_type is required")
	default:
		params.Set("error", "unsupported_response_type")
		params.Set("error_description", "only response_type=code is supported")
	}
	target.RawQuery = params.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// checkRedirectURI returns why uri is not acceptable as a redirect_uri, or
// "" if it is.
func (s *Server) checkRedirectURI(uri string) string {
	if uri == "" {
		return "redirect_uri is required"
	}
	if s.opts.RedirectURI != "" && uri != s.opts.RedirectURI {
		return "redirect_uri does not match the one registered for the client"
	}
	if u, err := url.Parse(uri); err != nil || !u.IsAbs() || u.Host == "" {
		return "redirect_uri must be an absolute URI"
	}
	return ""
}

// handleToken exchanges an authorization code.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readTokenForm(w, r, "authorization_code", "code", "client_id", "client_secret", "grant_type", "redirect_uri")
	if !ok {
		return
	}
	code := form.Get("code")
	s.mu.Lock()
	if code != s.opts.Code {
		c, found := s.codes[code]
		delete(s.codes, code) // a one-time code is spent by any attempt
		var msg string
		switch {
		case !found:
			msg = "unknown or already used authorization code"
		case !s.now().Before(c.expires):
			msg = "authorization code expired"
		case c.redirectURI != form.Get("redirect_uri"):
			msg = "redirect_uri differs from the one of the authorization request"
		}
		if msg != "" {
			s.stats.TokenErrors++
			s.mu.Unlock()
			oauthError(w, http.StatusBadRequest, "invalid_grant", msg)
			return
		}
	}
	t := s.issueLocked()
	s.stats.TokenExchanges++
	s.mu.Unlock()
	writeToken(w, t)
}

// handleRefresh issues a new access token for a refresh token.
func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readTokenForm(w, r, "refresh_token", "client_id", "client_secret", "grant_type", "redirect_uri", "refresh_token")
	if !ok {
		return
	}
	if s.refreshFault() {
		apiError(w, http.StatusInternalServerError, "internal_error", "simulated internal error of the token endpoint")
		return
	}
	old := form.Get("refresh_token")
	s.mu.Lock()
	if !s.refresh[old] {
		s.stats.TokenErrors++
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, revoked or already rotated refresh token")
		return
	}
	t := s.issueLocked()
	if s.rotate {
		delete(s.refresh, old)
	} else {
		delete(s.refresh, t.RefreshToken)
		t.RefreshToken = old
	}
	s.stats.Refreshes++
	s.mu.Unlock()
	writeToken(w, t)
}

// readTokenForm reads and checks the form of a token endpoint: content
// type, no repeated parameters, the required ones present, grant_type,
// client credentials and redirect_uri. On failure it answers and returns
// false.
func (s *Server) readTokenForm(w http.ResponseWriter, r *http.Request, grant string, required ...string) (url.Values, bool) {
	fail := func(status int, code, msg string) (url.Values, bool) {
		s.mu.Lock()
		s.stats.TokenErrors++
		s.mu.Unlock()
		oauthError(w, status, code, msg)
		return nil, false
	}
	if !hasMediaType(r, "application/x-www-form-urlencoded") {
		return fail(http.StatusUnsupportedMediaType, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
	}
	form, err := readForm(w, r)
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "unreadable form body: "+err.Error())
	}
	for k, vs := range form {
		if len(vs) > 1 {
			return fail(http.StatusBadRequest, "invalid_request", "parameter "+k+" is given more than once")
		}
	}
	var missing []string
	for _, k := range required {
		if form.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fail(http.StatusBadRequest, "invalid_request", "missing required parameter(s): "+strings.Join(missing, ", "))
	}
	if form.Get("grant_type") != grant {
		return fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be "+grant)
	}
	if !equalSecret(form.Get("client_id"), s.opts.ClientID) || !equalSecret(form.Get("client_secret"), s.opts.ClientSecret) {
		return fail(http.StatusUnauthorized, "invalid_client", "client authentication failed")
	}
	if msg := s.checkRedirectURI(form.Get("redirect_uri")); msg != "" {
		code := "invalid_request"
		if s.opts.RedirectURI != "" {
			code = "invalid_grant"
		}
		return fail(http.StatusBadRequest, code, msg)
	}
	return form, true
}

// issueLocked mints and records a new access and refresh token pair.
func (s *Server) issueLocked() tokenResponse {
	t := tokenResponse{
		AccessToken:  "sbx_at_" + randomHex(16),
		TokenType:    "Bearer",
		ExpiresIn:    wholeSeconds(s.opts.AccessTokenLifetime),
		RefreshToken: "sbx_rt_" + randomHex(16),
	}
	s.access[t.AccessToken] = s.now().Add(s.opts.AccessTokenLifetime)
	s.refresh[t.RefreshToken] = true
	return t
}

func writeToken(w http.ResponseWriter, t tokenResponse) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, t)
}

// bearerProblemLocked returns why the Authorization header value h does not
// carry a valid access token, or "" if it does.
func (s *Server) bearerProblemLocked(h string) string {
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	switch {
	case h == "":
		return "missing Authorization header"
	case !strings.EqualFold(scheme, "Bearer") || token == "":
		return "Authorization header must be Bearer <access token>"
	}
	exp, ok := s.access[token]
	switch {
	case !ok:
		return "unknown or revoked access token"
	case !s.now().Before(exp):
		return "access token expired"
	}
	return ""
}

// requireBearer answers 401 and returns false unless r carries a valid
// access token.
func (s *Server) requireBearer(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	problem := s.bearerProblemLocked(r.Header.Get("Authorization"))
	if problem != "" {
		s.stats.Unauthorized++
	}
	s.mu.Unlock()
	if problem != "" {
		unauthorized(w, problem)
		return false
	}
	return true
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	apiError(w, http.StatusUnauthorized, "invalid_token", msg)
}

// hasMediaType reports whether r's Content-Type is want (parameters such as
// charset are allowed).
func hasMediaType(r *http.Request, want string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && strings.EqualFold(mt, want)
}

// readForm reads an application/x-www-form-urlencoded body of bounded size.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, err
	}
	return url.ParseQuery(string(b))
}

func equalSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
