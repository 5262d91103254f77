package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestRetentionErasesUnmatchedDeliveries, files and PostgreSQL: a
// delivery of a person no campaign on the store called (an inbound call
// to the agent, say), received 95 days ago, is past a retention of 90
// days: the run's retention erases it, as it erases those of the people
// last called before the limit (A, the control), and keeps B's.
func TestRetentionErasesUnmatchedDeliveries(t *testing.T) {
	for _, kind := range []string{"files", "postgres"} {
		t.Run(kind, func(t *testing.T) { testRetentionErasesUnmatchedDeliveries(t, kind) })
	}
}

func testRetentionErasesUnmatchedDeliveries(t *testing.T, kind string) {
	const d = "+14155550196"
	db := e2eDatabase(t, kind)
	srv, spring, _ := retentionStore(t, db)
	addr := freePort(t)
	write := withOutcomes(t, spring, addr, false)
	stop := listenOn(t, spring, addr)
	// A's and B's name spring's calls, 95 days ago; D's says it came in
	// (a call id no journal holds and no direction would be the service's
	// own call to D, today, counted as a call start).
	postEnded(t, addr, retainedA, "Person A", firstCallIDTo(srv, retainedA))
	postEnded(t, addr, retainedB, "Person B", firstCallIDTo(srv, retainedB))
	postEndedWith(t, addr, d, "Person D", "call_d", `"direction":"inbound",`)
	stop()
	// Every delivery received 95 days ago.
	old := time.Now().Add(-95 * 24 * time.Hour).UTC()
	deliveries := func() string {
		if db != "" {
			return pgText(t, db, `SELECT coalesce(string_agg(delivery::text, E'\n'), '') FROM callrun_deliveries`)
		}
		b, _ := os.ReadFile(filepath.Join(stateDirOf(t, spring), store.DeliveriesFile))
		return string(b)
	}
	if db != "" {
		pgText(t, db, `UPDATE callrun_deliveries SET received_at = '`+old.Format(time.RFC3339Nano)+`', delivery = jsonb_set(delivery::jsonb, '{at}', to_jsonb('`+old.Format(time.RFC3339Nano)+`'::text))::`+pgText(t, db, `SELECT data_type FROM information_schema.columns WHERE table_name = 'callrun_deliveries' AND column_name = 'delivery'`)+` RETURNING 1`)
	} else {
		path := filepath.Join(stateDirOf(t, spring), store.DeliveriesFile)
		b := regexp.MustCompile(`"at":"[^"]*"`).ReplaceAll([]byte(deliveries()), []byte(`"at":"`+old.Format(time.RFC3339Nano)+`"`))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(stateDirOf(t, spring), store.DeliveryKeysFile))
	}
	if got := deliveries(); !strings.Contains(got, old.Format("2006-01-02")) || !strings.Contains(got, "Person D") {
		t.Fatalf("the deliveries were not made old, or D's is missing")
	}
	write(true)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run with retention: exit %d\n%s", code, out)
	}
	after := deliveries()
	if strings.Contains(after, "Person A") {
		t.Error("A's delivery is kept; want it erased (the control)")
	}
	if !strings.Contains(after, "Person B") {
		t.Error("B's delivery is erased; B was called 20 days ago")
	}
	for _, form := range personForms(d, "Person D") {
		if strings.Contains(after, form) {
			t.Errorf("the deliveries still hold D, whose one delivery is past the limit (as a %d-byte form)", len(form))
		}
	}
	if db == "" {
		for _, dir := range []string{stateDirOf(t, spring), os.Getenv("CALLRUN_HOME")} {
			for p, form := range findForms(t, dir, personForms(d, "Person D")) {
				t.Errorf("%s still holds D (as a %d-byte form)", p, len(form))
			}
		}
	}
}
