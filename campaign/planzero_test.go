package campaign

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestPlanWithNobodyToCallIsDoneNow: with nothing to call, outside the
// calling window, plan said "0 to call: about 0s of calling; with calling
// hours, done around Mon ... (62h from now)", and its JSON an
// estimate_seconds of the wait for the window: a summary that says work
// remains where none does.
func TestPlanWithNobodyToCallIsDoneNow(t *testing.T) {
	f, sup := loadMessy(t)
	saturday := time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC) // the window opens Monday
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: saturday, Done: func(*Contact) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.ToCall != 0 {
		t.Fatalf("to call %d, want 0", plan.Totals.ToCall)
	}
	if plan.EstimateSeconds != 0 {
		t.Errorf("estimate_seconds %d, want 0 with nobody to call", plan.EstimateSeconds)
	}
	var text bytes.Buffer
	plan.WriteText(&text)
	if !strings.Contains(text.String(), "\n0 to call: about 0s of calling.\n") || strings.Contains(text.String(), "done around") {
		t.Errorf("plan:\n%s", text.String())
	}
	// With contacts to call, the wait for the window still counts.
	plan, err = BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: saturday})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.ToCall == 0 || plan.EstimateSeconds < 36*3600 {
		t.Errorf("to call %d, estimate %ds: want the wait until Monday", plan.Totals.ToCall, plan.EstimateSeconds)
	}
}
