package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestStatePushMovesACampaignToPostgres runs part of a campaign from the
// state directory's files, pushes its journal into PostgreSQL, and
// finishes it from there: nobody is phoned twice, the database's status
// counts the calls made from the files, a second push is refused, and a
// run from the files (state: removed again) is refused rather than
// calling again everyone called since the push.
func TestStatePushMovesACampaignToPostgres(t *testing.T) {
	const n = 30
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 200, concurrency: 4})
	home := t.TempDir()
	e.env = append(e.env, "CALLRUN_HOME="+home)
	if res := e.run(60*time.Second, "run", "--limit", "12", e.path); res.code != 0 {
		t.Fatalf("first run, from files: %s", res)
	}
	// Number 20 opts out while the campaign is in files: the database's
	// runs must not call it either. 21 was put on and taken off.
	for _, args := range [][]string{
		{"suppress", "add", e.path, e.contacts[20].Raw, e.contacts[21].Raw},
		{"suppress", "remove", "--reason", "a mistake", e.path, e.contacts[21].Raw},
	} {
		if res := e.run(30*time.Second, args...); res.code != 0 {
			t.Fatalf("%s: %s", args[1], res)
		}
	}
	plain, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	url := pgtest.URL(t)
	e.usePostgres(url)
	if err := os.WriteFile(e.path, append(plain, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	// Before the push, the database knows nobody: a run, plan or status
	// would call again those the files called. Refused.
	before := len(srv.Calls())
	for _, args := range [][]string{{"run", e.path}, {"plan", "--offline", e.path}, {"status", e.path}} {
		if res := e.run(30*time.Second, args...); res.code != run.ExitUsage || !strings.Contains(res.stderr, "state push") {
			t.Errorf("%s before the push: %s", args[0], res)
		}
	}
	if len(srv.Calls()) != before {
		t.Errorf("%d call starts before the push", len(srv.Calls())-before)
	}
	// The erasure key and the erased set of the files go too (made here
	// as an erase will make them).
	erasure := store.OpenErasureFile(home)
	keys, err := erasure.MakeKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.AddErased(context.Background(), []store.ErasedEntry{{Hash: keys.Hashes("+14155550199")[0], Why: "erase"}}); err != nil {
		t.Fatal(err)
	}
	push := e.run(30*time.Second, "state", "push", e.path)
	if push.code != 0 || !strings.Contains(push.stdout, "Copied 3 of the 3 entries of the do-not-call list") ||
		!strings.Contains(push.stdout, "Copied 1 of the 1 erasure keys and 1 of the 1 erased people's hashes") {
		t.Fatalf("state push: %s", push)
	}
	if db, err := store.OpenPostgres(context.Background(), url, "other", 0, 1); err != nil {
		t.Fatal(err)
	} else {
		defer db.Close()
		dbErasure, _ := db.Erasure()
		if on, err := dbErasure.OnErased(context.Background(), []string{"+14155550199"}); err != nil || !on["+14155550199"] {
			t.Errorf("the pushed erased set in the database: %v, %v", on, err)
		}
	}
	if password := strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(url, "postgres://"), "@", 2)[0], "callrun_test:"); strings.Contains(push.stdout+push.stderr, password) {
		t.Errorf("state push printed the database password: %s", push)
	}
	if st := e.status(); st["sent"] != 12 || st["pending"] != n-13 || st["suppressed"] != 1 {
		t.Errorf("status from the database after the push: %v; want 12 sent, %d pending, 1 on the do-not-call list", st, n-13)
	}
	// The token moves to the database with one login.
	if res := e.run(30*time.Second, "run", e.path); res.code != 1 || !strings.Contains(res.stderr, "auth login") || len(srv.Calls()) != before {
		t.Errorf("a run from PostgreSQL before logging in there: %s", res)
	}
	os.Remove(filepath.Join(e.dir, "token.json"))
	e.login()
	if again := e.run(30*time.Second, "state", "push", e.path); again.code == 0 || !strings.Contains(again.stderr, "pushed already") {
		t.Errorf("a second push: %s", again)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run from PostgreSQL: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	for phone, calls := range l.byPhone {
		if len(calls) != 1 {
			t.Errorf("%s reached the service %d times", phone, len(calls))
		}
	}
	if len(l.byPhone) != n-1 || len(l.byPhone[e.contacts[20].E164]) != 0 {
		t.Errorf("the ledger has %d numbers, want %d: all but the one on the do-not-call list", len(l.byPhone), n-1)
	}

	// Back to the files by mistake: refused, and nobody is called.
	if err := os.WriteFile(e.path, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	e.postgres = false
	before = len(srv.Calls())
	back := e.run(30*time.Second, "run", e.path)
	if back.code != run.ExitUsage || !strings.Contains(back.stderr, "pushed to PostgreSQL") || len(srv.Calls()) != before {
		t.Errorf("a run from the pushed files: %s; %d new calls", back, len(srv.Calls())-before)
	}
}

// TestStatePushCarriesTheCallStarts: a campaign run from files calls X;
// after its push, a second campaign, on PostgreSQL and another machine's
// CALLRUN_HOME, with X and Z in its sheet, calls Z and holds X back the
// same day: the sandbox's ledger shows one call start to X.
func TestStatePushCarriesTheCallStarts(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(2)
	x, z := phones[0], phones[1]
	e := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:1], perSecond: 100, concurrency: 2})
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("the run from files: %s", res)
	}
	url := pgtest.URL(t)
	e.usePostgres(url)
	plain, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.path, append(plain, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	push := e.run(30*time.Second, "state", "push", e.path)
	if push.code != 0 || !strings.Contains(push.stdout, "Copied 1 of the 1 call starts of the last 30 days") {
		t.Fatalf("state push: %s", push)
	}

	second := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 100, concurrency: 2, postgres: url, noLogin: true})
	yaml, err := os.ReadFile(second.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second.path, []byte(strings.Replace(string(yaml), "name: e2e\n", "name: e2e-second\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	second.login()
	res := second.run(60*time.Second, "run", second.path)
	if res.code != run.ExitTryLater || !strings.Contains(res.stderr+res.stdout, "contact pressure") {
		t.Errorf("the second campaign: %s; want exit %d, X held back by contact pressure", res, run.ExitTryLater)
	}
	l := second.ledger()
	l.checkNobodyTwice(t)
	if n, m := len(l.byPhone[x.E164]), len(l.byPhone[z.E164]); n != 1 || m != 1 {
		t.Errorf("the ledger has %d call starts to X and %d to Z, want one each", n, m)
	}
}

// TestStatePushCarriesHoldsAndDeliveries: an opt-out listen held in the
// files (its number unreadable) still stops every run once the campaign
// is pushed to PostgreSQL, and its delivery is in the database for a
// person to read; a push while listen stores into the files is refused.
// Checked against the sandbox's ledger.
func TestStatePushCarriesHoldsAndDeliveries(t *testing.T) {
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	phones := e2ePhones(6)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 100, concurrency: 2})
	e.rename("held")
	e.env = append(e.env, "CALLRUN_HOME="+t.TempDir(), "E2E_HOOK_SECRET="+hookSecret)
	e.appendYAML("outcomes:\n  url: http://" + addr + "/callrun/held/${E2E_HOOK_SECRET}\n  opt_out: {field: disposition, values: [opted_out]}\n")
	if res := e.run(60*time.Second, "run", "--limit", "2", e.path); res.code != 0 {
		t.Fatalf("the run from files: %s", res)
	}
	listen := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
	postUnreadableOptOut(t, addr)

	plain, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	e.usePostgres(pgtest.URL(t))
	if err := os.WriteFile(e.path, append(plain, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := e.run(30*time.Second, "state", "push", e.path); res.code != exitRuntime || !strings.Contains(res.stderr, "stop the callrun listen") {
		t.Errorf("state push while listen stores into the files: %s", res)
	}
	listen.signal(t, syscall.SIGTERM)
	if res := listen.wait(t, 30*time.Second); res.code != 0 {
		t.Errorf("listen: %s", res)
	}
	push := e.run(30*time.Second, "state", "push", e.path)
	if push.code != 0 || !strings.Contains(push.stdout, "Copied 1 of the 1 opt-out holds") || !strings.Contains(push.stdout, "Copied 1 of the 1 deliveries") {
		t.Fatalf("state push: %s", push)
	}
	os.Remove(filepath.Join(e.dir, "token.json"))
	e.login()
	before := len(srv.Calls())
	if res := e.run(30*time.Second, "run", e.path); res.code != exitRuntime || !strings.Contains(res.stderr, "callrun outcomes resolve") || len(srv.Calls()) != before {
		t.Fatalf("a run on the database while the opt-out pushed is held: %s; %d new call starts", res, len(srv.Calls())-before)
	}
	res := e.run(30*time.Second, "status", "--format", "json", e.path)
	var st struct {
		OptOutsHeld []store.OptOutHold `json:"opt_outs_held"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || len(st.OptOutsHeld) != 1 {
		t.Fatalf("status --format json: %+v, %v\n%s", st, err, res)
	}
	key := st.OptOutsHeld[0].Key
	if res := e.run(30*time.Second, "outcomes", "show", e.path, key); res.code != 0 || !strings.Contains(res.stdout, `"data.disposition": "opted_out"`) {
		t.Errorf("outcomes show of the pushed delivery: %s", res)
	}
	if res := e.run(30*time.Second, "outcomes", "resolve", "--note", "a wrong number", e.path, key); res.code != 0 {
		t.Fatalf("outcomes resolve: %s", res)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Errorf("the run after the resolution: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != len(phones) {
		t.Errorf("%d of %d contacts placed after the resolution", l.totalPlaced(), len(phones))
	}
}

// TestRehearsalLeavesTheLiveTokenAlone: on a machine where
// CALLRUN_TOKEN_FILE names the live service's token (cron, Kubernetes), a
// rehearsal (run --sandbox) keeps its sandbox token apart: the live token
// file is byte for byte what it was, and the next real run still uses it.
func TestRehearsalLeavesTheLiveTokenAlone(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 2})
	token := filepath.Join(e.dir, "token.json") // CALLRUN_TOKEN_FILE: the login above wrote it
	before, err := os.ReadFile(token)
	if err != nil {
		t.Fatal(err)
	}
	if res := e.run(60*time.Second, "run", "--sandbox", e.path); res.code != 0 {
		t.Fatalf("rehearsal: %s", res)
	}
	if after, err := os.ReadFile(token); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the rehearsal changed the live token file (%v)", err)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Errorf("the real run after a rehearsal: %s", res)
	}
}

// TestDatabaseDownSaysWhatToCheck: a campaign whose database cannot be
// reached stops before calling anyone, exit 1, with a message that points
// at state.postgres and its variable, not at the service, and no password.
func TestDatabaseDownSaysWhatToCheck(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 2,
		postgres: "postgres://callrun:down-secret-1234@127.0.0.1:1/nowhere?connect_timeout=5", noLogin: true})
	res := e.run(60*time.Second, "run", e.path)
	if res.code != 1 || !strings.Contains(res.stderr, "state.postgres") || !strings.Contains(res.stderr, "CALLRUN_DATABASE_URL") ||
		strings.Contains(res.stderr, "service.base_url") || strings.Contains(res.stderr+res.stdout, "down-secret-1234") {
		t.Errorf("a run whose database is down: %s", res)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d call starts without the database", n)
	}
}
