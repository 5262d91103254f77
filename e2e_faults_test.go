package main

// End-to-end tests of faults that must not mislabel contacts: the real
// binary against a sandbox served by this test process, whose call
// endpoints are on the service's own origin (so every call start needs an
// access token), judged from the sandbox's ledger.

import (
	"archive/zip"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// checkNoTokenMislabel is what the ledger says about a run during which no
// access token could be had for a while: every contact marked sent was
// placed (checkReportAgainstLedger), every contact marked uncertain or
// failed reached the service, and no contact carries the token endpoint's
// answer as its own.
func (e *e2eCampaign) checkNoTokenMislabel(rows []e2eRow, l e2eLedger) {
	t := e.t
	t.Helper()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	for _, r := range rows {
		phone, status := r["phone_number"], r["status"]
		if (status == "uncertain" || status == "failed") && len(l.byPhone[phone]) == 0 {
			t.Errorf("row %s %s is %s, but the service never received its call start: %s / %s", r["row"], phone, status, r["reason"], r["response"])
		}
		for _, col := range []string{"reason", "response"} {
			if v := r[col]; strings.Contains(v, "invalid_grant") || strings.Contains(v, "simulated internal error of the token endpoint") {
				t.Errorf("row %s %s (%s) carries the token endpoint's answer in %s: %q", r["row"], phone, status, col, v)
			}
		}
	}
}

// TestRefusedRefreshTokenStopsTheRun: the refresh token is revoked while a
// campaign runs with short-lived access tokens. The run stops with exit 1
// and the sentence that says to log in again; the contacts it did not
// send are pending, not failed with the token endpoint's invalid_grant.
// After logging in again, the next run calls exactly those.
func TestRefusedRefreshTokenStopsTheRun(t *testing.T) {
	const n = 80
	srv := sandbox.NewServer(sandbox.Options{AccessTokenLifetime: 2 * time.Second})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 10, concurrency: 2})

	p := e.start("run", e.path)
	waitFor(t, 30*time.Second, "5 calls placed", func() bool { return len(srv.Placed()) >= 5 })
	srv.RevokeRefreshTokens()
	res := p.wait(t, 60*time.Second)
	checkJSONLogs(t, res)
	if res.code != exitRuntime {
		t.Fatalf("run with its refresh token revoked: %s", res)
	}
	if last := lastLine(res.stderr); !strings.Contains(last, "the service refused the saved refresh token") || !strings.Contains(last, "run `callrun auth login` again") {
		t.Errorf("the last line does not say to log in again: %q", last)
	}
	rows := e.report()
	l := e.ledger()
	e.checkNoTokenMislabel(rows, l)
	c := countStatuses(rows)
	if c["failed"] != 0 || c["uncertain"] != 0 || c["pending"] == 0 || c["sent"]+c["pending"] != n {
		t.Errorf("report after the refusal: %s; want only sent and pending, some of each", e2eCounts(c))
	}
	if len(l.calls) >= n {
		t.Errorf("the run went on calling after the refusal: %d requests", len(l.calls))
	}

	// Log in again: the next run calls the pending contacts, once.
	if res := e.run(30*time.Second, "auth", "login", "--code", sandbox.DefaultCode, e.path); res.code != 0 {
		t.Fatalf("auth login: %s", res)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run after logging in again: %s", res)
	}
	rows = e.report()
	l = e.ledger()
	e.checkNoTokenMislabel(rows, l)
	if c := countStatuses(rows); c["sent"] != n || l.totalPlaced() != n {
		t.Errorf("after logging in again: %s, %d placed; want all %d sent", e2eCounts(c), l.totalPlaced(), n)
	}
}

// TestFailingRefreshEndpointIsRetried: the token endpoint answers every
// refresh 500 for a while during a run with short-lived access tokens.
// The call starts that could get no token were not sent: they are retried
// once the endpoint recovers, and nobody is uncertain.
func TestFailingRefreshEndpointIsRetried(t *testing.T) {
	const n = 40
	srv := sandbox.NewServer(sandbox.Options{AccessTokenLifetime: 2 * time.Second})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 10, concurrency: 2})

	p := e.start("run", e.path)
	waitFor(t, 30*time.Second, "5 calls placed", func() bool { return len(srv.Placed()) >= 5 })
	srv.SetFaults(sandbox.Faults{ShareRefresh500: 1})
	// Two refreshes answered 500: the second one is callrun trying again.
	waitFor(t, 30*time.Second, "2 refreshes answered 500", func() bool { return srv.Stats().Faults.Refresh500 >= 2 })
	srv.SetFaults(sandbox.Faults{})
	res := p.wait(t, 90*time.Second)
	checkJSONLogs(t, res)
	if res.code != 0 {
		t.Errorf("run through a failing token endpoint: %s", res)
	}
	rows := e.report()
	l := e.ledger()
	e.checkNoTokenMislabel(rows, l)
	if c := countStatuses(rows); c["sent"] != n || l.totalPlaced() != n || len(l.calls) != n {
		t.Errorf("report %s, ledger %d requests and %d placed; want all %d sent, each once", e2eCounts(c), len(l.calls), l.totalPlaced(), n)
	}
}

// TestBreakerStopsAnOutage: the service places every call and answers 500
// (the sandbox's --share-500 1). The run stops starting calls after
// campaign.BreakAfter contacts in a row ended uncertain (and the calls in
// flight then), exits 1 saying what happened and that a later run
// resumes, and leaves the rest pending: the ledger holds exactly the
// uncertain ones. Once the service is mended, the next run calls the
// pending contacts once each and leaves the uncertain ones alone.
func TestBreakerStopsAnOutage(t *testing.T) {
	const n, concurrency = 40, 4
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Share500: 1}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: concurrency})

	res := e.run(60*time.Second, "run", e.path)
	if res.code != exitRuntime {
		t.Fatalf("run against a failing service: %s", res)
	}
	last := lastLine(res.stderr)
	for _, want := range []string{"stopped starting calls", "500 Internal Server Error", "a later run resumes them"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line does not say %q: %s", want, last)
		}
	}
	if sum := e.summary(); sum.Ending != "stopped" {
		t.Errorf("summary.json ending %q, want stopped", sum.Ending)
	}
	rows := e.report()
	l := e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	c := countStatuses(rows)
	if c["uncertain"] < campaign.BreakAfter || c["uncertain"] > campaign.BreakAfter+concurrency-1 || c["uncertain"] != len(l.calls) || c["pending"] != n-c["uncertain"] {
		t.Errorf("report %s with %d requests in the ledger; want %d to %d uncertain, each in the ledger, the rest pending",
			e2eCounts(c), len(l.calls), campaign.BreakAfter, campaign.BreakAfter+concurrency-1)
	}

	srv.SetFaults(sandbox.Faults{})
	if res := e.run(60*time.Second, "run", e.path); res.code != run.ExitIncomplete {
		t.Fatalf("run once the service is mended: %s", res)
	}
	rows = e.report()
	l = e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if c2 := countStatuses(rows); c2["uncertain"] != c["uncertain"] || c2["sent"] != n-c["uncertain"] || len(l.calls) != n {
		t.Errorf("after the mended run: %s, %d requests; want the %d uncertain left alone and the rest sent", e2eCounts(c2), len(l.calls), c["uncertain"])
	}
}

// issueSecretForms returns s in the encodings the service may echo it in:
// raw, form-encoded (a space as + or %20, escapes in either case),
// JSON-escaped and base64.
func issueSecretForms(s string) []string {
	q := url.QueryEscape(s)
	j, _ := json.Marshal(s)
	lower := regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(q, strings.ToLower)
	return []string{s, q, strings.ReplaceAll(q, "+", "%20"), lower, string(j[1 : len(j)-1]),
		base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))}
}

// echoAll is an error body that echoes each secret in every form.
func echoAll(secrets ...string) string {
	var b strings.Builder
	b.WriteString(`{"error":"invalid_grant","echo":"`)
	for _, s := range secrets {
		for _, f := range issueSecretForms(s) {
			b.WriteString(" refresh_token=" + f)
		}
	}
	b.WriteString(`"}`)
	return b.String()
}

// stateTexts returns what callrun keeps in the state directory, as text:
// every file, and every file inside report.xlsx.
func stateTexts(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		path := filepath.Join(dir, ent.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the lock, a directory
		}
		out[ent.Name()] = string(b)
		if strings.HasSuffix(ent.Name(), ".xlsx") {
			zr, err := zip.OpenReader(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, zf := range zr.File {
				rc, err := zf.Open()
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				out[ent.Name()+"/"+zf.Name] = string(b)
			}
			zr.Close()
		}
	}
	if out["journal.jsonl"] == "" || out["report.csv"] == "" {
		t.Fatalf("state directory %s has no journal or report: %v", dir, slices.Collect(maps.Keys(out)))
	}
	return out
}

// checkNoSecretShown fails the test if any form of any secret is in the
// run's output or in a file of the state directory.
func (e *e2eCampaign) checkNoSecretShown(res e2eResult, secrets ...string) {
	t := e.t
	t.Helper()
	texts := stateTexts(t, e.stateDir)
	texts["stdout"], texts["stderr"] = res.stdout, res.stderr
	for where, text := range texts {
		for _, s := range secrets {
			for _, f := range issueSecretForms(s) {
				if strings.Contains(text, f) {
					t.Errorf("%s shows a secret as %q", where, f)
				}
			}
		}
	}
}

// TestNoSecretInAnyOutput: a service that echoes secrets in its error
// answers, in every encoding, gets none of them into callrun's output,
// logs, journal or report files:
//   - call endpoints that answer 422 echoing the access token: the contacts
//     are failed, with the answer's excerpt in the report, blanked;
//   - a token endpoint that refuses a refresh token ending "ab+/cd==" and
//     echoes it URL-encoded: the run stops with the login message;
//   - `auth login` with a client secret "S3cr3t/+&= x~!" that the token
//     endpoint echoes form-encoded.
func TestNoSecretInAnyOutput(t *testing.T) {
	const n = 6
	const refreshToken, clientSecret = "sbx_rt_Zk9Q0x7mQv3Lab+/cd==", "S3cr3t/+&= x~!"
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	inner := srv.Handler()
	var echoRefresh, echoLogin atomic.Bool
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/call/"):
			at := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, echoAll(at))
		case r.URL.Path == "/oauth/token/refresh" && echoRefresh.Load():
			raw, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","request":"`+string(raw)+`",`+strings.TrimPrefix(echoAll(refreshToken), "{"))
		case r.URL.Path == "/oauth/token" && echoLogin.Load():
			raw, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client","request":"`+string(raw)+`",`+strings.TrimPrefix(echoAll(clientSecret), "{"))
		default:
			inner.ServeHTTP(w, r)
		}
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
	tokenPath := filepath.Join(e.dir, "token.json")
	file := campaign.TokenStore(&store.TokenFile{Path: tokenPath, BaseURL: srv.URL, ClientID: sandbox.DefaultClientID})
	tok, err := file.Load()
	if err != nil {
		t.Fatal(err)
	}

	// Call endpoints echo the access token.
	res := e.run(60*time.Second, "run", e.path)
	rows := e.report()
	// The breaker opens on the fifth refusal in a row and stops the call
	// starts still waiting for their turn: the last contact stays pending
	// unless its turn came before the fifth answer did.
	c := countStatuses(rows)
	switch {
	case c["failed"] == n && res.code != run.ExitIncomplete,
		c["failed"] < n && (res.code != run.ExitTryLater || c["failed"] < campaign.BreakAfter || c["failed"]+c["pending"] != n):
		t.Fatalf("run against call endpoints answering 422: report %s; %s", e2eCounts(c), res)
	}
	if !strings.Contains(rows[0]["response"], "invalid_grant") {
		t.Errorf("response %q; want the service's answer", rows[0]["response"])
	}
	e.checkNoSecretShown(res, tok.AccessToken)

	// The token endpoint refuses the refresh token and echoes it.
	if err := file.Save(&apiclient.Token{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: refreshToken,
		Expiry: time.Now().Add(-time.Hour), IssuedAt: time.Now().Add(-2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	echoRefresh.Store(true)
	res = e.run(60*time.Second, "run", "--retry-failed", e.path)
	if res.code != exitRuntime || !strings.Contains(lastLine(res.stderr), "run `callrun auth login` again") {
		t.Fatalf("run with a refused refresh token: %s", res)
	}
	e.checkNoSecretShown(res, tok.AccessToken, refreshToken)

	// auth login with a client secret the token endpoint echoes.
	echoLogin.Store(true)
	e.env = append(slices.Clone(e.env), "E2E_CLIENT_SECRET="+clientSecret) // the last one wins
	res = e.run(30*time.Second, "auth", "login", "--code", sandbox.DefaultCode, e.path)
	if res.code == 0 || !strings.Contains(res.stderr, "invalid_client") {
		t.Fatalf("auth login against an echoing token endpoint: %s", res)
	}
	e.checkNoSecretShown(res, tok.AccessToken, refreshToken, clientSecret)
}

// TestOddAnswersThroughTheCLI: what `callrun run` says and exits with
// when the service answers in the odd ways real ones do, checked against
// the sandbox's ledger:
//
//   - 200 with an HTML page: uncertain, the breaker stops the run (exit
//     1), and the summary says what came back;
//   - 200 {"status":"error"}: refused the same way 5 times in a row, the
//     run stops with exit 75 naming the answer, nobody sent;
//   - 429 with Retry-After: 86400: the run ends at once with exit 75,
//     saying when the service asked to be called again; nobody placed,
//     everyone pending.
//
// The summary's calls of this run count only the calls that may have
// started (uncertain), never a refused attempt.
func TestOddAnswersThroughTheCLI(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults sandbox.Faults
		code   int
		says   []string // in the last line
		stdout string   // in the summary
	}{
		{"html", sandbox.Faults{Share200HTML: 1}, exitRuntime, []string{"stopped starting calls", "answered 200 OK"},
			"call start(s) were answered 200 OK with a body that is not the service's JSON (<!DOCTYPE html>"},
		{"200 error", sandbox.Faults{Share200Error: 1}, run.ExitTryLater, []string{"refused the call starts of 5 contacts in a row with the same answer", "200 OK: the call could not be started"},
			"call start(s) were answered 200 OK with a body that says error (the call could not be started)"},
		{"retry after a day", sandbox.Faults{Share429: 1, RetryAfter: 24 * time.Hour}, run.ExitTryLater, []string{"asked to be called again in 24h0m0s, at ", "pace.max_retry_after (5m0s)"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20
			srv := sandbox.NewServer(sandbox.Options{Faults: tc.faults})
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
			res := e.run(60*time.Second, "run", e.path)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", res.code, tc.code, res)
			}
			last := lastLine(res.stderr)
			for _, want := range tc.says {
				if !strings.Contains(last, want) {
					t.Errorf("the last line does not say %q: %s", want, last)
				}
			}
			if !strings.Contains(res.stdout, tc.stdout) {
				t.Errorf("the summary does not say %q:\n%s", tc.stdout, res.stdout)
			}
			rows := e.report()
			l := e.ledger()
			l.checkNobodyTwice(t)
			e.checkReportAgainstLedger(rows, l)
			if l.totalPlaced() != 0 {
				t.Errorf("%d placed", l.totalPlaced())
			}
			c := countStatuses(rows)
			if c["sent"] != 0 || c["pending"] < n-len(l.calls) {
				t.Errorf("report %s with %d requests in the ledger", e2eCounts(c), len(l.calls))
			}
			// Calls started are those the service placed or may have: a
			// refused or deferred attempt is none.
			if sum := e.summary(); sum.CallsThisRun != c["uncertain"] {
				t.Errorf("summary.json says %d calls this run; %d may have started (uncertain), none was placed", sum.CallsThisRun, c["uncertain"])
			}
		})
	}
}
