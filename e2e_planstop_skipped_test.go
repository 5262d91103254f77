package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestPlanSaysRunWouldStopForAContactItsJournalSkipped: a contact the
// second checkout's journal knows only by an intent its skipped outcome
// withdrew (a run stopped by Ctrl-C, or by its window closing, between
// the two) has no attempt on record: run sends it as a first attempt,
// which the call starts are checked for, and stops (exit 1) when the
// first checkout called that contact. plan skipped the check for every
// contact its journal knew, so it said all was fine (exit 0, "to call")
// where run stopped. The ledger keeps the first checkout's one call.
func TestPlanSaysRunWouldStopForAContactItsJournalSkipped(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	home := t.TempDir()
	a := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 1})
	a.env = append(a.env, "CALLRUN_HOME="+home)
	if res := a.run(60*time.Second, "run", "--limit", "1", a.path); res.code != 0 {
		t.Fatalf("run of the first checkout: %s", res)
	}
	if got := len(srv.Calls()); got != 1 {
		t.Fatalf("the first checkout placed %d calls, want 1", got)
	}
	// The first checkout's intent, as the second's journal holds it from
	// an earlier run that stopped before sending it.
	journal, err := os.ReadFile(filepath.Join(a.stateDir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var intent store.Record
	for _, line := range strings.Split(string(journal), "\n") {
		var r store.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == store.TypeIntent {
			intent = r
			break
		}
	}
	if intent.Phone == "" {
		t.Fatalf("no intent in the first checkout's journal:\n%s", journal)
	}
	at := intent.At.Add(-time.Hour)
	intent.At = at
	skipped := intent
	skipped.Type, skipped.Status, skipped.Reason, skipped.At = store.TypeOutcome, store.OutcomeSkipped, "interrupted before sending", at.Add(time.Second)
	var lines []byte
	for _, r := range []store.Record{intent, skipped} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}

	b := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 1})
	b.env = append(b.env, "CALLRUN_HOME="+home)
	if err := os.MkdirAll(b.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.stateDir, "journal.jsonl"), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	p, res := planElsewhere(t, b, "--offline")
	if res.code != 1 || p.CalledElsewhere == nil || p.CalledElsewhere.Contacts != 1 {
		t.Errorf("plan of the second checkout: exit %d, %+v, want exit 1 and 1 contact called elsewhere, as run stops: %s", res.code, p.CalledElsewhere, res)
	}
	if got := len(srv.Calls()); got != 1 {
		t.Errorf("after the plan the sandbox has %d calls, want 1", got)
	}
	res = b.run(60*time.Second, "run", b.path)
	if res.code != 1 || !strings.Contains(res.stderr, "does not record") {
		t.Errorf("run of the second checkout: %s", res)
	}
	if got := len(srv.Calls()); got != 1 {
		t.Errorf("after the second checkout's run the sandbox has %d calls, want 1", got)
	}
}
