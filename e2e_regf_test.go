package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestRegFHoldsAfterAConversation is Reg F's second rule, checked
// against the sandbox's ledger: campaign A calls X; the sandbox delivers
// X's call.answered, call.ended and its agent's completion to `callrun
// listen`, which records the conversation (once a delivery that may
// report it) in CALLRUN_HOME. Three days later by the run's clock (past the 24-hour
// limit, inside the 7 days) campaign B, with `pressure: {preset: reg_f}`,
// has X: X gets no second call start, and B's report row is pending with
// the conversation's date and the date X may be called; campaign C,
// without the preset, calls X then. `callrun history` lists the
// conversation; a rehearsal's answered calls record none in the real
// store.
//
// With PostgreSQL the three campaigns and listen share the database: the
// conversation is a row of callrun_conversations.
func TestRegFHoldsAfterAConversation(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testRegFHoldsAfterAConversation(t, kind) })
	}
}

func testRegFHoldsAfterAConversation(t *testing.T, kind string) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 20 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: "http://" + addr + "/callrun/a/" + hookSecret}})
	t.Cleanup(srv.Close)
	const x = "+14155550132" // testCampaign's one contact

	newCampaign := campaignsOnOneStore(t, srv.URL, db)
	a := newCampaign("campaign-a", "pressure: {preset: reg_f}\noutcomes:\n  url: http://"+addr+"/callrun/a/"+hookSecret+"\n")
	home := os.Getenv("CALLRUN_HOME") // every campaign's store
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, a)
	if err := runCampaign(ctx, nolog, runOptions{Path: a}, io.Discard); err != nil {
		t.Fatalf("campaign A: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.WaitWebhooks(wctx); err != nil {
		t.Fatalf("the sandbox's webhooks: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	var starts store.CallStarts = store.OpenCallStartsFile(home)
	if db != "" {
		p, err := store.OpenPostgres(ctx, db, "reader", 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		starts, _ = p.CallStarts()
	}
	// Each delivery of A's call that may report the conversation records
	// one (its call.answered, its call.ended and its agent's completion):
	// the latest holds.
	talks, err := starts.Conversations(ctx, x)
	if err != nil || len(talks) == 0 || slices.ContainsFunc(talks, func(c store.Conversation) bool { return c.Campaign != "campaign-a" }) {
		t.Fatalf("the conversations with X in the store: %+v, %v; want A's call's\nlisten:\n%s", talks, err, logs.String())
	}
	var talked time.Time
	for _, c := range talks {
		if c.At.After(talked) {
			talked = c.At
		}
	}

	later := func() time.Time { return time.Now().Add(3 * 24 * time.Hour) }
	placed := func() int {
		n := 0
		for _, c := range srv.Placed() {
			if c.Form.Get("phone_number") == x {
				n++
			}
		}
		return n
	}
	if n := placed(); n != 1 {
		t.Fatalf("X placed %d times by A, want 1", n)
	}

	// B, Reg F, three days on: held for the conversation.
	b := newCampaign("campaign-b", "pressure: {preset: reg_f}\n")
	err = runCampaign(ctx, nolog, runOptions{Path: b, Now: later}, io.Discard)
	if code := exitCode(ctx, err); code != run.ExitTryLater {
		t.Errorf("campaign B: exit %d (%v), want %d: X left pending", code, err, run.ExitTryLater)
	}
	if n := placed(); n != 1 {
		t.Errorf("X placed %d times after campaign B, want A's one: B called within 7 days after the conversation", n)
	}
	rows := readReportRows(t, filepath.Join(filepath.Dir(b), ".callrun", "campaign-b", "report.csv"))
	until := talked.Add(7 * 24 * time.Hour).UTC().Format(time.RFC3339)
	if r := rows[x]; r["status"] != "pending" || !strings.Contains(r["reason"], "a conversation on "+talked.UTC().Format(time.DateOnly)) ||
		!strings.Contains(r["reason"], "may be called again from "+until) {
		t.Errorf("B's report row of X: %v; want pending, held for the conversation until %s", r, until)
	}
	code, out := runAppOut(t, "history", "--format", "json", b, x)
	var hist []historyEntry
	if err := json.Unmarshal([]byte(out), &hist); err != nil || code != 0 || len(hist) != 1+len(talks) || hist[0].Kind != "call_start" || hist[1].Kind != "conversation" || hist[1].Campaign != "campaign-a" {
		t.Errorf("history: exit %d, %+v (%v)\n%s", code, hist, err, out)
	}
	if code, out := runAppOut(t, "history", b, x); code != 0 || !strings.Contains(out, "CONVERSATION (UTC)") || !strings.Contains(out, "none within 7 days after a conversation") {
		t.Errorf("history text: exit %d\n%s", code, out)
	}

	// C, without Reg F, three days on: the day is over, so it calls X.
	c := newCampaign("campaign-c", "")
	if err := runCampaign(ctx, nolog, runOptions{Path: c, Now: later}, io.Discard); err != nil {
		t.Fatalf("campaign C: %v", err)
	}
	if n := placed(); n != 2 {
		t.Errorf("X placed %d times after campaign C, want 2: a campaign without reg_f ignores conversations", n)
	}

	// A rehearsal's answered calls phoned nobody: no conversation in the
	// real store, nor in the rehearsals'.
	if err := runCampaign(ctx, nolog, runOptions{Path: a, Sandbox: true}, io.Discard); err != nil {
		t.Fatalf("run --sandbox: %v", err)
	}
	if after, err := starts.Conversations(ctx, x); err != nil || len(after) != len(talks) {
		t.Errorf("after a rehearsal, the conversations with X: %+v, %v; want A's %d", after, err, len(talks))
	}
	if _, err := os.Stat(filepath.Join(home, "sandbox", store.ConversationsFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rehearsal recorded conversations: %v", err)
	}
}

// readReportRows reads a report.csv by phone_number.
func readReportRows(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	return readReportBy(t, "phone_number", path)
}

// readReportBy reads a report.csv by the value of its column.
func readReportBy(t *testing.T, column, path string) map[string]map[string]string {
	t.Helper()
	e := &e2eCampaign{t: t, stateDir: filepath.Dir(path)}
	out := map[string]map[string]string{}
	for _, r := range e.reportRows() {
		out[r[column]] = r
	}
	return out
}

// campaignsOnOneStore returns a maker of testCampaign's campaigns for the
// sandbox at baseURL, each named name with yaml added, logged in, and
// every one on the first one's CALLRUN_HOME (of the test's own) and, when
// db is set, in that database: campaigns that share one store.
func campaignsOnOneStore(t *testing.T, baseURL, db string) func(name, yaml string) string {
	home := ""
	return func(name, yaml string) string {
		t.Helper()
		path := testCampaign(t, baseURL, "http://127.0.0.1:8765/callback")
		if home == "" {
			home = os.Getenv("CALLRUN_HOME")
		} else {
			t.Setenv("CALLRUN_HOME", home) // every campaign on one store
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if db != "" {
			yaml += "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"
			t.Setenv("CALLRUN_TOKEN_FILE", "") // the token is kept in the database
			t.Setenv("CALLRUN_DATABASE_URL", db)
			t.Setenv(store.TokenKeyVar, e2eTokenKey)
		}
		b = []byte(strings.Replace(string(b), "name: test\n", "name: "+name+"\n", 1) + yaml)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TEST_SECRET", sandbox.DefaultClientSecret)
		if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// TestRegFHoldIsNotCutShortByListensSlowClock: listen stamps a
// conversation with its own clock, and it asks the service nothing that
// would tell it that clock is wrong. Here it runs two days behind: the
// sandbox's envelopes carry their own timestamp, the conversation is
// recorded at that, and campaign B, with Reg F, six days after the call
// by the service's clock, does not call X (the ledger: A's one call).
// Stamped by listen's clock, the hold would have ended after five.
func TestRegFHoldIsNotCutShortByListensSlowClock(t *testing.T) {
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 20 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: "http://" + addr + "/callrun/a/" + hookSecret, Shape: sandbox.ShapeEnvelope}})
	t.Cleanup(srv.Close)
	const x = "+14155550132" // testCampaign's one contact

	newCampaign := campaignsOnOneStore(t, srv.URL, "")
	a := newCampaign("campaign-a", "pressure: {preset: reg_f}\noutcomes:\n  url: http://"+addr+"/callrun/a/"+hookSecret+"\n")
	var logs e2eBuffer
	behind := func() time.Time { return time.Now().Add(-2 * 24 * time.Hour) }
	_, stop := startListenWith(t, &logs, listenOptions{Paths: []string{a}, Addr: addr, Now: behind})
	if err := runCampaign(ctx, nolog, runOptions{Path: a}, io.Discard); err != nil {
		t.Fatalf("campaign A: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.WaitWebhooks(wctx); err != nil {
		t.Fatalf("the sandbox's webhooks: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if !strings.Contains(logs.String(), "this machine's clock is behind the delivery's timestamp") {
		t.Errorf("listen did not say its clock is behind:\n%s", logs.String())
	}

	b := newCampaign("campaign-b", "pressure: {preset: reg_f}\n")
	sixDays := func() time.Time { return time.Now().Add(6 * 24 * time.Hour) }
	err := runCampaign(ctx, nolog, runOptions{Path: b, Now: sixDays}, io.Discard)
	if code := exitCode(ctx, err); code != run.ExitTryLater {
		t.Errorf("campaign B: exit %d (%v), want %d: X left pending", code, err, run.ExitTryLater)
	}
	n := 0
	for _, c := range srv.Placed() {
		if c.Form.Get("phone_number") == x {
			n++
		}
	}
	if n != 1 {
		t.Errorf("X placed %d times, want A's one: B called within 7 days after the conversation\nlisten:\n%s", n, logs.String())
	}
}
