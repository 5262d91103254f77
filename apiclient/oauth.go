package apiclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Token is an OAuth token pair. Its String and GoString methods never show
// the secrets, so a Token printed by mistake leaks nothing.
type Token struct {
	AccessToken  string
	TokenType    string
	RefreshToken string
	// Expiry is when the access token expires; zero when the service did
	// not say (such a token is used until the service answers 401).
	Expiry time.Time
	// IssuedAt is when callrun received the token; with Expiry it gives the
	// token's lifetime, from which the refresh margin is derived.
	IssuedAt time.Time
}

func (t Token) String() string {
	if t.Expiry.IsZero() {
		return "token(no expiry)"
	}
	return "token(expires " + t.Expiry.UTC().Format(time.RFC3339) + ")"
}

// GoString keeps %#v from printing the secrets.
func (t Token) GoString() string { return t.String() }

// maxRefreshMargin is how long before expiry a long-lived token is refreshed.
const maxRefreshMargin = time.Minute

// margin returns how long before expiry the token should be refreshed: a
// fifth of its lifetime, at most a minute, so that a token living only a
// few seconds is still used rather than refreshed on every request.
func (t *Token) margin() time.Duration {
	if t.IssuedAt.IsZero() || t.Expiry.IsZero() {
		return maxRefreshMargin
	}
	return min(t.Expiry.Sub(t.IssuedAt)/5, maxRefreshMargin)
}

// Fresh reports whether the access token can be used at now without a
// proactive refresh.
func (t *Token) Fresh(now time.Time) bool {
	if t == nil || t.AccessToken == "" {
		return false
	}
	return t.Expiry.IsZero() || now.Add(t.margin()).Before(t.Expiry)
}

// OAuth holds what callrun needs to talk to the service's token endpoints.
// ClientSecret goes to those two endpoints and nowhere else.
type OAuth struct {
	BaseURL      string // the service base URL; the token endpoints live under it
	ClientID     string
	ClientSecret string
	RedirectURI  string
	// AuthorizeURL is the authorization endpoint. The service contract does not show
	// it, so it comes from the campaign file.
	AuthorizeURL string
	// Scope, if set, is sent as the authorize URL's scope parameter (the
	// live service requires it: "*" for full access). The service contract does not
	// show scopes, so it comes from the campaign file.
	Scope string
	// HTTPClient sends the token requests; nil means a client over
	// [DefaultTransport].
	HTTPClient *http.Client
	// Timeout bounds each token request end to end, its answer's body
	// included; zero means DefaultRequestTimeout.
	Timeout time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Token endpoint paths.
const (
	TokenPath        = "/oauth/token"
	RefreshTokenPath = "/oauth/token/refresh"
)

// AuthCodeURL returns the URL a person opens to authorize callrun: the
// configured AuthorizeURL with response_type=code, client_id,
// redirect_uri, state and, when set, scope added.
func (o *OAuth) AuthCodeURL(state string) (string, error) {
	if o.AuthorizeURL == "" {
		return "", errors.New("service.authorize_url is not set in the campaign file (the service contract does not show the authorize endpoint); open your provider's authorization page yourself and pass the code with --code")
	}
	u, err := url.Parse(o.AuthorizeURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("service.authorize_url %q is not an absolute URL", o.AuthorizeURL)
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", o.ClientID)
	q.Set("redirect_uri", o.RedirectURI)
	q.Set("state", state)
	if o.Scope != "" {
		q.Set("scope", o.Scope)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Exchange trades an authorization code for a token. The service contract
// marks refresh_token optional; a token without one works until it expires,
// and then a person has to log in again.
func (o *OAuth) Exchange(ctx context.Context, code string) (*Token, error) {
	form := url.Values{
		"code":          {code},
		"client_id":     {o.ClientID},
		"client_secret": {o.ClientSecret},
		"grant_type":    {"authorization_code"},
		"redirect_uri":  {o.RedirectURI},
	}
	return o.post(ctx, "exchange authorization code", TokenPath, form, code)
}

// Refresh gets a new access token with a refresh token. When the
// service sends no refresh token back, the one sent stays valid and is kept.
// An error wrapping [ErrReauthorize] means the refresh token was refused and
// a person must log in again.
func (o *OAuth) Refresh(ctx context.Context, refreshToken string) (*Token, error) {
	form := url.Values{
		"client_id":     {o.ClientID},
		"client_secret": {o.ClientSecret},
		"grant_type":    {"refresh_token"},
		"redirect_uri":  {o.RedirectURI},
		"refresh_token": {refreshToken},
	}
	tok, err := o.post(ctx, "refresh access token", RefreshTokenPath, form, refreshToken)
	if err != nil {
		if s := StatusCode(err); s >= 400 && s < 500 && s != http.StatusTooManyRequests {
			return nil, fmt.Errorf("%w: %w", ErrReauthorize, err)
		}
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = refreshToken
	}
	return tok, nil
}

// ErrReauthorize means the service refused the saved credentials: a person
// has to log in again. Its message says what happened; the CLI adds how to
// log in when it prints it.
var ErrReauthorize = errors.New("the service refused the saved refresh token")

func (o *OAuth) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// post sends a token request and reads the token response. Any secret of
// the request that an error body echoes is blanked out before the error is
// returned.
func (o *OAuth) post(ctx context.Context, op, path string, form url.Values, grant string) (*Token, error) {
	base, err := ParseBaseURL(o.BaseURL)
	if err != nil {
		return nil, err
	}
	// What the service answers is blanked of what it was sent.
	AddSecret(o.ClientSecret)
	AddSecret(grant)
	endpoint := base.String() + path
	timeout := cmp.Or(o.Timeout, DefaultRequestTimeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: DefaultTransport()}
	}
	// late says so when an error came of this request's deadline, not
	// of the caller's ctx.
	late := func(err error) error {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no complete answer within %s: %w", timeout, err)
		}
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, late(unwrapURLError(err)))
	}
	if err := checkResponse(op, resp); err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		RefreshToken string          `json:"refresh_token"`
	}
	if err := decodeAnswer(req, resp.Body, &body); err != nil {
		if errors.Is(err, errAnswerTooLarge) {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		return nil, fmt.Errorf("%s: the token response is not JSON: %w", op, late(err))
	}
	if body.AccessToken == "" {
		return nil, fmt.Errorf("%s: the token response has no access_token", op)
	}
	if body.TokenType != "" && !strings.EqualFold(body.TokenType, "bearer") {
		return nil, fmt.Errorf("%s: token_type %q is not Bearer", op, body.TokenType)
	}
	AddSecret(body.AccessToken)
	AddSecret(body.RefreshToken)
	now := o.now()
	tok := &Token{AccessToken: body.AccessToken, TokenType: "Bearer", RefreshToken: body.RefreshToken, IssuedAt: now}
	if len(body.ExpiresIn) > 0 && string(body.ExpiresIn) != "null" {
		secs, err := parseExpiresIn(body.ExpiresIn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		tok.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	return tok, nil
}

// parseExpiresIn reads expires_in, an integer in the service contract; a string holding
// an integer is accepted too, as some servers send one.
func parseExpiresIn(raw json.RawMessage) (int64, error) {
	var n json.Number
	s := strings.Trim(string(raw), `"`)
	n = json.Number(s)
	secs, err := n.Int64()
	if err != nil || secs < 0 {
		return 0, fmt.Errorf("expires_in %s is not a number of seconds", raw)
	}
	return secs, nil
}
