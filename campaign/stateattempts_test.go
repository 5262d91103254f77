package campaign

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestPlanCountsTheStatesCapOnCalls: with pressure: {per_day: 5}, a
// Florida number called three times in the last hours is held (Florida's
// law allows three calls to one person in 24 hours: see
// stateAttemptCaps), as the run holds it; a New York number called three
// times is not.
func TestPlanCountsTheStatesCapOnCalls(t *testing.T) {
	dir := t.TempDir()
	const miami, newYork = "+13052010001", "+12122010001"
	dtWrite(t, filepath.Join(dir, "leads.csv"), "Phone,First Name\n"+miami+",Ada\n"+newYork+",Grace\n")
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, dtCampaign(10, 1, "pressure: {per_day: 5}\n"))
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)
	three := []time.Time{now.Add(-3 * time.Hour), now.Add(-2 * time.Hour), now.Add(-time.Hour)}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Agents: OfflineAgents(f.Agents), Now: now,
		Pressure: &PlanPressure{Limits: f.PressureLimits(), Starts: map[string][]time.Time{miami: three, newYork: three}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Totals; c.ToCall != 1 || c.Held != 1 {
		t.Errorf("totals %+v; want the Miami number held, New York's to call", c)
	}
	pp := &PlanPressure{Limits: f.PressureLimits(), Starts: map[string][]time.Time{miami: three}}
	if h := pp.hold(miami, now); h == nil || !strings.Contains(h.Error(), "(Florida's law on calls to one person: at most 3 in 24 hours)") {
		t.Errorf("the hold does not name Florida's law: %v", h)
	}
	if want := now.Add(21 * time.Hour).Format(time.RFC3339); plan.HeldUntil != want {
		t.Errorf("held_until %q, want %q (a day after the first of the three)", plan.HeldUntil, want)
	}
}

// TestPlanHoldStateCapCheap: plan asks contact pressure of every row it
// would call; a Canadian or Caribbean number (+1, no US state) called
// fewer times than the states' cap of three allows must not cost the
// phone library's Parse per row (22 µs and 120 allocations: 22 s more
// for a plan of a million Canadian rows), since no cap of three can hold
// it.
func TestPlanHoldStateCapCheap(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	p := &PlanPressure{Limits: []store.PressureLimit{{Within: 24 * time.Hour, Max: 5}, {Within: 14 * 24 * time.Hour, Max: 14}},
		Starts: map[string][]time.Time{"+14165550133": {now.Add(-time.Hour)}}}
	for _, n := range []string{"+14165550132", "+14165550133", "+18765550100"} {
		if allocs := testing.AllocsPerRun(20, func() { p.hold(n, now) }); allocs > 5 {
			t.Errorf("hold(%s) with fewer than 3 starts: %v allocations a row, want the states' cap not read", n, allocs)
		}
	}
	// Three starts of an unknown state's number in 24 hours still hold it.
	p.Starts["+18005550100"] = []time.Time{now.Add(-3 * time.Hour), now.Add(-2 * time.Hour), now.Add(-time.Hour)}
	if h := p.hold("+18005550100", now); h == nil || h.Limit.Law == "" {
		t.Errorf("hold of a toll-free number called 3 times in 24 h = %v, want the states' cap", h)
	}
}
