package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestRetentionErasesUnmatchedDeliveries: a delivery of a person no
// campaign on the store called (an inbound call to the agent, say),
// stored 95 days ago, is past a retention of 90 days: the run's
// retention erases it, as it erases those of the people last called
// before the limit.
func TestRetentionErasesUnmatchedDeliveries(t *testing.T) {
	const d = "+14155550196"
	spring, addr, write, stop := listenWithAAndB(t)
	postEnded(t, addr, d, "Person D", "call_d")
	stop()
	path := filepath.Join(stateDirOf(t, spring), store.DeliveriesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every delivery received 95 days ago.
	old := time.Now().Add(-95 * 24 * time.Hour).UTC().Format(time.RFC3339Nano)
	b = regexp.MustCompile(`"at":"[^"]*"`).ReplaceAll(b, []byte(`"at":"`+old+`"`))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(stateDirOf(t, spring), store.DeliveryKeysFile))
	write(true)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run with retention: exit %d\n%s", code, out)
	}
	after, _ := os.ReadFile(path)
	if bytes.Contains(after, []byte("Person A")) {
		t.Error("A's delivery is kept; want it erased (the control)")
	}
	for _, dir := range []string{stateDirOf(t, spring), os.Getenv("CALLRUN_HOME")} {
		for p, form := range findForms(t, dir, personForms(d, "Person D")) {
			t.Errorf("%s still holds D, whose one delivery is past the limit (as a %d-byte form)", p, len(form))
		}
	}
}
