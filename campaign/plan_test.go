package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// TestPlanGolden plans the messy fixture sheets (a HighLevel export with a
// BOM and CRLF, a German semicolon export with quoted newlines, Excel
// damage, tabs) offline at a fixed time, and pins the text and JSON plans.
// Regenerate with: go test ./campaign -run TestPlanGolden -update
func TestPlanGolden(t *testing.T) {
	f, sup := loadMessy(t)
	friday := time.Date(2026, 11, 20, 19, 59, 0, 0, time.UTC) // 14:59 in New York
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: friday})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("plan", "messy.txt.golden"), text.Bytes())
	js, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("plan", "messy.json.golden"), append(js, '\n'))

	// Every row is counted in exactly one bucket.
	for _, s := range append(plan.Sheets, PlanSheet{File: "totals", Counts: plan.Totals}) {
		c := s.Counts
		if c.Invalid+c.Duplicate+c.Suppressed+c.Done+c.ToCall+c.Held != c.Rows {
			t.Errorf("%s: %+v does not add up", s.File, c)
		}
	}
	if len(plan.Problems) != plan.Totals.Invalid {
		t.Errorf("%d problems listed for %d invalid rows", len(plan.Problems), plan.Totals.Invalid)
	}
}

// loadMessy loads the campaign of the messy fixture sheets, offline, and
// its suppression files.
func loadMessy(t *testing.T) (*File, *Suppression) {
	t.Helper()
	f, err := Load(filepath.Join("..", "testdata", "campaigns", "messy", "campaign.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f, sup
}
