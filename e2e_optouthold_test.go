package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestOptOutHeldStopsEveryRun is the fail-closed promise of an opt-out
// whose number cannot be read, checked against the sandbox's ledger, with
// files and with PostgreSQL: listen stores it and holds it on the store;
// the run going on stops starting calls (at most the calls already in
// flight reach the service after the hold was acknowledged), and says
// why, naming the delivery; a new run refuses to start; status says so;
// once a person resolves it (callrun outcomes resolve), a run calls the
// rest, nobody twice.
func TestOptOutHeldStopsEveryRun(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testOptOutHeld(t, kind) })
	}
}

func testOptOutHeld(t *testing.T, kind string) {
	const concurrency = 2
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	phones := e2ePhones(80)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 10, concurrency: concurrency, postgres: e2eDatabase(t, kind)})
	e.rename("held")
	e.env = append(e.env, "CALLRUN_HOME="+t.TempDir(), "E2E_HOOK_SECRET="+hookSecret)
	e.appendYAML("outcomes:\n  url: http://" + addr + "/callrun/held/${E2E_HOOK_SECRET}\n  opt_out: {field: disposition, values: [opted_out]}\n")

	listen := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
	going := e.start("run", e.path)
	waitFor(t, 30*time.Second, "the run to call 5 contacts", func() bool { return len(srv.Calls()) >= 5 })

	postUnreadableOptOut(t, addr)
	acked := time.Now()
	res := going.wait(t, 60*time.Second)
	if res.code != exitRuntime || !strings.Contains(res.stderr, "callrun outcomes resolve") || !strings.Contains(res.stderr, "of campaign held") {
		t.Errorf("the run going on: %s, want it stopped (exit 1), naming the hold and how to resolve it", res)
	}
	calls := e.ledger()
	calls.checkNobodyTwice(t)
	after := 0
	for _, c := range calls.calls {
		if c.ReceivedAt.After(acked) {
			after++
		}
	}
	if after > concurrency {
		t.Errorf("%d call starts reached the service after the hold was acknowledged, more than the %d a run has in flight", after, concurrency)
	}
	before := len(srv.Calls())
	t.Logf("%d call starts before the run stopped, %d after the hold was acknowledged; it said: %s", before, after, lastLine(res.stderr))
	if before >= len(phones) {
		t.Fatalf("the run called all %d contacts before the hold: the test proves nothing", before)
	}

	// A new run refuses to start.
	res = e.run(30*time.Second, "run", e.path)
	if res.code != exitRuntime || !strings.Contains(res.stderr, "callrun outcomes resolve") || len(srv.Calls()) != before {
		t.Errorf("a run while the opt-out is held: %s; %d new call starts", res, len(srv.Calls())-before)
	}
	// status says so, with the delivery's key.
	res = e.run(30*time.Second, "status", "--format", "json", e.path)
	var st struct {
		OptOutsHeld []store.OptOutHold `json:"opt_outs_held"`
		Warnings    []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || len(st.OptOutsHeld) != 1 || st.OptOutsHeld[0].Campaign != "held" || len(st.Warnings) == 0 {
		t.Fatalf("status --format json: %+v, %v\n%s", st, err, res)
	}
	key := st.OptOutsHeld[0].Key
	if !strings.Contains(listen.stderr.String(), key) {
		t.Errorf("listen's log does not name the held delivery %s", key)
	}

	// A person reads the delivery, finds the number (here, none of the
	// campaign's) and resolves the hold; the next run calls the rest.
	if res := e.run(30*time.Second, "outcomes", "show", e.path, key); res.code != 0 || !strings.Contains(res.stdout, `"data.disposition": "opted_out"`) || !strings.Contains(res.stdout, key) {
		t.Errorf("outcomes show: %s", res)
	}
	if res := e.run(30*time.Second, "outcomes", "resolve", "--note", "the caller was a wrong number", e.path, "no-such-key"); res.code != run.ExitUsage {
		t.Errorf("resolving a key not held: %s", res)
	}
	if res := e.run(30*time.Second, "outcomes", "resolve", "--note", "the caller was a wrong number", e.path, key); res.code != 0 || !strings.Contains(res.stdout, "start calls again") {
		t.Fatalf("outcomes resolve: %s", res)
	}
	if res := e.run(90*time.Second, "run", e.path); res.code != 0 {
		t.Errorf("the run after the resolution: %s", res)
	}
	calls = e.ledger()
	calls.checkNobodyTwice(t)
	if calls.totalPlaced() != len(phones) {
		t.Errorf("%d of %d contacts placed after the resolution", calls.totalPlaced(), len(phones))
	}
	listen.signal(t, syscall.SIGTERM)
	if res := listen.wait(t, 30*time.Second); res.code != 0 {
		t.Errorf("listen: %s", res)
	}
}

// postUnreadableOptOut posts to the listen at addr, for campaign "held",
// the documented envelope of an opt-out whose number is nowhere in it:
// the person said "do not call me", and callrun cannot tell who.
func postUnreadableOptOut(t *testing.T, addr string) {
	t.Helper()
	body := `{"event":"call.ended","timestamp":"2024-01-15T10:30:00Z","data":{"call_id":"call_unknown_1","status":"completed","disposition":"opted_out"}}`
	resp, err := http.Post("http://"+addr+"/callrun/held/"+hookSecret, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the opt-out was answered %d", resp.StatusCode)
	}
}
