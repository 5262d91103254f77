package apiclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The secrets of issue 14: a refresh token ending ab+/cd== and a client
// secret with every character form encoding changes.
const (
	issueRefreshToken = "rt-Zk9Q0x7mab+/cd=="
	issueClientSecret = "S3cr3t/+&= x~!"
)

// encodedForms returns s in the encodings a test checks output for: raw,
// form-encoded (+ and %20 for a space, upper and lower case escapes),
// JSON-escaped and base64.
func encodedForms(s string) []string {
	q := url.QueryEscape(s)
	j, _ := json.Marshal(s)
	lower := regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(q, strings.ToLower)
	return []string{s, q, strings.ReplaceAll(q, "+", "%20"), lower, url.PathEscape(s),
		string(j[1 : len(j)-1]), base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))}
}

// noSecretIn fails the test if text holds any form of any of secrets.
func noSecretIn(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, f := range encodedForms(s) {
			if strings.Contains(text, f) {
				t.Errorf("%s shows a secret as %q: %s", what, f, text)
			}
		}
	}
}

func TestRedactEveryEncoding(t *testing.T) {
	t.Parallel()
	AddSecret(issueRefreshToken)
	AddSecret(issueClientSecret)
	for _, s := range []string{issueRefreshToken, issueClientSecret} {
		for _, f := range append(encodedForms(s), url.QueryEscape(url.QueryEscape(s)), strings.Trim(strings.ReplaceAll(string(must(json.Marshal(s))), "/", `\/`), `"`)) {
			text := "before " + f + " after"
			if got := Redact(text); got != "before "+Redacted+" after" {
				t.Errorf("Redact(%q) = %q", text, got)
			}
		}
	}
	// A body cut off in the middle of a secret: the piece left is blanked.
	cut := "refresh_token=" + url.QueryEscape(issueRefreshToken)[:12]
	if got := redactCut(cut, true); got != "refresh_token="+Redacted {
		t.Errorf("redactCut(%q) = %q", cut, got)
	}
	if got := Redact("nothing to hide"); got != "nothing to hide" {
		t.Errorf("Redact changed plain text: %q", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTokenErrorsShowNoSecret: a token endpoint whose error answers echo
// the form it was sent, in every encoding, gives errors that show none
// of the secrets: the refresh token on refresh, the client secret and the
// code on exchange.
func TestTokenErrorsShowNoSecret(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(raw))
		var echo strings.Builder
		echo.WriteString(`{"error":"invalid_grant","request":"` + string(raw) + `","fields":`)
		json.NewEncoder(&echo).Encode(form)
		for _, k := range []string{"refresh_token", "client_secret"} {
			echo.WriteString(" " + k + "=" + base64.StdEncoding.EncodeToString([]byte(form.Get(k))))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, echo.String()+"}")
	}))
	defer srv.Close()
	o := &OAuth{BaseURL: srv.URL, ClientID: "client-1", ClientSecret: issueClientSecret, RedirectURI: "http://127.0.0.1/cb"}
	_, err := o.Refresh(context.Background(), issueRefreshToken)
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("Refresh = %v, want the service's invalid_grant", err)
	}
	noSecretIn(t, "the refresh error", err.Error(), issueRefreshToken, issueClientSecret)
	_, err = o.Exchange(context.Background(), "code-0123456789")
	if err == nil {
		t.Fatal("Exchange succeeded against an error answer")
	}
	noSecretIn(t, "the exchange error", err.Error(), issueClientSecret, "code-0123456789")
}

// TestRedactBase64OfATextHoldingIt: a service that echoes the request it
// got in base64 (a form, a header) carries a secret not as the base64 of
// the secret alone but inside the base64 of the whole text, at any of
// three alignments. Every run of 12 base64 characters that only the
// secret's bytes make is blanked, whatever the bytes around it, as is its
// form-encoded form's (a form body echoed).
func TestRedactBase64OfATextHoldingIt(t *testing.T) {
	t.Parallel()
	const secret = "rt-base64-echo-Zk9Q0x7m4711/+=AbCdEf"
	AddSecret(secret)
	for _, s := range []string{secret, url.QueryEscape(secret)} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			for pre := 0; pre < 6; pre++ {
				before := "grant_type=refresh_token&refresh_token="[:25+pre]
				body := enc.EncodeToString([]byte(before + s + "&client_id=callrun"))
				got := Redact(`{"request":"` + body + `"}`)
				// Character i holds bits [6i, 6i+6) of the text; the
				// secret's are [8*len(before), 8*(len(before)+len(s))).
				from, to := 8*len(before), 8*(len(before)+len(s))
				for i := 0; 6*(i+12) <= len(body)*6; i++ {
					if 6*i >= from && 6*(i+12) <= to && strings.Contains(got, body[i:i+12]) {
						t.Errorf("base64 (%d bytes before, form %v) still shows 12 characters only the secret makes", len(before), s != secret)
						break
					}
				}
			}
		}
	}
}
