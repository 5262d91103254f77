package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// e2ePlanHeld is what plan --format json says of the opt-outs held on
// the store.
type e2ePlanHeld struct {
	Totals struct {
		ToCall int `json:"to_call"`
	} `json:"totals"`
	OptOutsHeld []store.OptOutHold `json:"opt_outs_held"`
	Warnings    []string           `json:"warnings"`
}

// TestPlanSaysRunWouldStopWhileAnOptOutIsHeld: an opt-out whose number
// listen could not read is held on the store (posted to the real listen),
// and every run stops before its first call until a person resolves it.
// plan used to say all was fine (exit 0, every contact "to call"), so a
// CI dry-run passed and the cron run stopped. Now plan, online and, with
// the store in files, --offline, says RUN WOULD STOP, names the held
// delivery and the commands that resolve it, and exits 1 as run would (4
// with --strict); --offline with the store in PostgreSQL, which it does
// not ask, says it did not read the holds. A run in between places no
// call (the sandbox's ledger); once the hold is resolved, plan is clean
// and a run calls everyone once.
func TestPlanSaysRunWouldStopWhileAnOptOutIsHeld(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testPlanHeld(t, kind) })
	}
}

func testPlanHeld(t *testing.T, kind string) {
	const n = 4
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2, postgres: e2eDatabase(t, kind)})
	e.rename("held")
	e.env = append(e.env, "CALLRUN_HOME="+t.TempDir(), "E2E_HOOK_SECRET="+hookSecret)
	e.appendYAML("outcomes:\n  url: http://" + addr + "/callrun/held/${E2E_HOOK_SECRET}\n  opt_out: {field: disposition, values: [opted_out]}\n")

	listen := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
	defer func() {
		listen.signal(t, syscall.SIGTERM)
		if res := listen.wait(t, 30*time.Second); res.code != 0 {
			t.Errorf("listen: %s", res)
		}
	}()
	if p, res := planHeld(t, e); res.code != 0 || len(p.OptOutsHeld) != 0 || p.Totals.ToCall != n {
		t.Fatalf("plan before any opt-out: %s", res)
	}
	postUnreadableOptOut(t, addr)

	modes := [][]string{{}, {"--offline"}}
	if kind == "postgres" {
		// --offline asks no database: it cannot see the hold, and says so.
		if p, res := planHeld(t, e, "--offline"); res.code != 0 || len(p.OptOutsHeld) != 0 || !strings.Contains(strings.Join(p.Warnings, "\n"), "opt-outs held") {
			t.Errorf("plan --offline with the store in PostgreSQL: want exit 0 and a warning that it did not read the holds: %s", res)
		}
		modes = modes[:1]
	}
	var key string
	for _, mode := range modes {
		p, res := planHeld(t, e, mode...)
		if res.code != exitRuntime {
			t.Errorf("plan %v: exit %d, want %d as run would stop: %s", mode, res.code, exitRuntime, res)
		}
		if len(p.OptOutsHeld) != 1 || p.OptOutsHeld[0].Campaign != "held" || p.OptOutsHeld[0].Key == "" {
			t.Fatalf("plan %v --format json: opt_outs_held %+v, want the one held: %s", mode, p.OptOutsHeld, res)
		}
		key = p.OptOutsHeld[0].Key
		if !strings.Contains(res.stderr, key) || !strings.Contains(res.stderr, "callrun outcomes resolve") || !strings.Contains(res.stderr, "run would stop") {
			t.Errorf("plan %v: the error does not name the hold and how to resolve it: %s", mode, res)
		}
		text := e.run(30*time.Second, append(append([]string{"plan"}, mode...), e.path)...)
		if text.code != exitRuntime || !strings.Contains(text.stdout, "RUN WOULD STOP") || !strings.Contains(text.stdout, key) ||
			!strings.Contains(text.stdout, "callrun outcomes resolve --note \"NUMBER, by NAME\" "+e.path+" "+key) {
			t.Errorf("plan %v, text: %s", mode, text)
		}
		if strict := e.run(30*time.Second, append(append([]string{"plan", "--strict"}, mode...), e.path)...); strict.code != run.ExitInvalidRows {
			t.Errorf("plan %v --strict: exit %d, want %d: %s", mode, strict.code, run.ExitInvalidRows, strict)
		}
	}
	if got := len(srv.Calls()); got != 0 {
		t.Fatalf("the plans placed %d calls", got)
	}

	// The plan was right: run stops, and calls nobody.
	if res := e.run(60*time.Second, "run", e.path); res.code != exitRuntime || !strings.Contains(res.stderr, key) {
		t.Errorf("run while the opt-out is held: %s", res)
	}
	if got := len(srv.Calls()); got != 0 {
		t.Fatalf("a run while the opt-out is held placed %d calls, want 0", got)
	}

	// A person resolves it: plan is clean, and a run calls everyone once.
	if res := e.run(30*time.Second, "outcomes", "resolve", "--note", "a wrong number", e.path, key); res.code != 0 {
		t.Fatalf("outcomes resolve: %s", res)
	}
	for _, mode := range modes {
		if p, res := planHeld(t, e, mode...); res.code != 0 || len(p.OptOutsHeld) != 0 || p.Totals.ToCall != n {
			t.Errorf("plan %v once the hold is resolved: %s", mode, res)
		}
	}
	if res := e.run(90*time.Second, "run", e.path); res.code != 0 {
		t.Errorf("the run after the resolution: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != n {
		t.Errorf("%d of %d contacts placed after the resolution", l.totalPlaced(), n)
	}
}

// planHeld runs plan --format json with args on e's campaign.
func planHeld(t *testing.T, e *e2eCampaign, args ...string) (e2ePlanHeld, e2eResult) {
	t.Helper()
	res := e.run(30*time.Second, append(append([]string{"plan", "--format", "json"}, args...), e.path)...)
	var p e2ePlanHeld
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("plan --format json: %v: %s", err, res)
	}
	return p, res
}
