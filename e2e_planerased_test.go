package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestPlanSaysRunWouldStopWithoutTheErasureKey: a person was erased
// (erase --allow-contact: not put on the do-not-call list, never called)
// and CALLRUN_HOME's erasure.key is then lost (a restore that left it
// out). run reads the erased set before its first call and stops: without
// the key callrun cannot tell who was erased. plan did not read the
// erased set and said all was fine (exit 0). Now it says RUN WOULD STOP
// with the run's words (erasure_key_missing in the JSON) and exits 1 as
// run would (4 with --strict), online and --offline. A run in between
// places no call (the sandbox's ledger); once the key is restored, plan
// is clean and a run calls the rest, nobody twice.
func TestPlanSaysRunWouldStopWithoutTheErasureKey(t *testing.T) {
	const n = 3
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	home := t.TempDir()
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 1})
	e.env = append(e.env, "CALLRUN_HOME="+home)
	if res := e.run(60*time.Second, "run", "--limit", "1", e.path); res.code != 0 {
		t.Fatalf("run --limit 1: %s", res)
	}
	if res := e.run(30*time.Second, "erase", "--allow-contact", e.path, "+14155550199"); res.code != 0 {
		t.Fatalf("erase: %s", res)
	}
	keyFile := filepath.Join(home, store.ErasureKeyFileName)
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}

	plan := func(args ...string) (string, e2eResult) {
		t.Helper()
		res := e.run(30*time.Second, append(append([]string{"plan", "--format", "json"}, args...), e.path)...)
		var p struct {
			Missing string `json:"erasure_key_missing"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
			t.Fatalf("plan --format json: %v: %s", err, res)
		}
		return p.Missing, res
	}
	for _, mode := range [][]string{{}, {"--offline"}} {
		if missing, res := plan(mode...); res.code != exitRuntime || !strings.Contains(missing, keyFile) || !strings.Contains(res.stderr, "run would stop") || !strings.Contains(res.stderr, "restore") {
			t.Errorf("plan %v without the erasure key: erasure_key_missing %q: %s", mode, missing, res)
		}
		if text := e.run(30*time.Second, append(append([]string{"plan"}, mode...), e.path)...); text.code != exitRuntime || !strings.Contains(text.stdout, "RUN WOULD STOP") || !strings.Contains(text.stdout, keyFile) {
			t.Errorf("plan %v, text: %s", mode, text)
		}
		if strict := e.run(30*time.Second, append(append([]string{"plan", "--strict"}, mode...), e.path)...); strict.code != run.ExitInvalidRows {
			t.Errorf("plan %v --strict: exit %d, want %d: %s", mode, strict.code, run.ExitInvalidRows, strict)
		}
	}

	// The plan was right: run stops, and calls nobody.
	if res := e.run(60*time.Second, "run", e.path); res.code != exitRuntime || !strings.Contains(res.stderr, "erasure key is missing") {
		t.Errorf("run without the erasure key: %s", res)
	}
	if got := len(srv.Calls()); got != 1 {
		t.Fatalf("the sandbox has %d calls after a run without the erasure key, want the first run's 1", got)
	}

	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{{}, {"--offline"}} {
		if missing, res := plan(mode...); res.code != 0 || missing != "" {
			t.Errorf("plan %v with the key restored: %s", mode, res)
		}
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run with the key restored: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != n {
		t.Errorf("%d of %d contacts placed with the key restored", l.totalPlaced(), n)
	}
}
