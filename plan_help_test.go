package main

import (
	"strings"
	"testing"
)

// TestPlanHelpErasureKeyOffline: plan says RUN WOULD STOP for an erased
// set whose erasure key is gone offline too, with the store in files
// (e2e_planerased_test.go checks both); its help said so only online,
// in the sentence about the clock, which only an online plan can check.
func TestPlanHelpErasureKeyOffline(t *testing.T) {
	help := strings.Join(strings.Fields(appOutput(t, "plan", "--help")), " ")
	i := strings.Index(help, "erasure key is gone")
	if i < 0 {
		t.Fatalf("plan's help does not mention the erasure key:\n%s", help)
	}
	sentence := help[strings.LastIndex(help[:i], ". ")+1 : i]
	if !strings.Contains(sentence, "offline") {
		t.Errorf("plan's help says the erasure key is checked online only: %q", sentence)
	}
}
