package campaign

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestPlanSaysWhenThePhoneColumnIsEmptyInEveryRow: a sheet mapped to
// "Phone" whose numbers are all in "Mobile" (HubSpot's export has both)
// was planned as every row invalid, "phone number is empty", and nothing
// said that the numbers sat in another column. plan now warns, naming the
// columns of phone lines it could map (never a fax).
func TestPlanSaysWhenThePhoneColumnIsEmptyInEveryRow(t *testing.T) {
	path := writeCampaign(t, `name: empty-phones
agents: [{name: A, prompt: Hello}]
sheets:
  - {file: leads.csv, agent: A, fields: {phone_number: Phone, first_name: First Name}}
region: US
`)
	sheet := "First Name,Phone,Mobile Phone Number,Business Fax\nAda,,+1 415 555 0132,+1 415 555 0199\nGrace,,(212) 555-0199,\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "leads.csv"), []byte(sheet), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Offline: true, Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents)})
	if err != nil {
		t.Fatal(err)
	}
	want := `leads.csv: phone_number's column "Phone" is empty in every row, so nobody on it can be called; the sheet has "Mobile Phone Number": map the column that holds the numbers, phone_number: [Phone, Mobile Phone Number]`
	if plan.Totals.Invalid != 2 || !slices.Contains(plan.Warnings, want) {
		t.Errorf("invalid %d, warnings:\n%s", plan.Totals.Invalid, strings.Join(plan.Warnings, "\n"))
	}
	// One row with a number: no warning, the others are that row's problems.
	sheet = "First Name,Phone,Mobile Phone Number\nAda,+1 415 555 0132,\nGrace,,(212) 555-0199\n"
	os.WriteFile(filepath.Join(filepath.Dir(path), "leads.csv"), []byte(sheet), 0o600)
	plan, err = BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents)})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range plan.Warnings {
		if strings.Contains(w, "empty in every row") {
			t.Errorf("warning with a number in a row: %s", w)
		}
	}
}
