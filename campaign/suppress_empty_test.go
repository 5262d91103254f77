package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanWarnsOfAnEmptySuppressionFile: a suppression file that holds a
// header and no numbers (a CRM's do-not-call export that came out empty)
// suppressed nobody without a word: plan counted everyone to call and
// said nothing of the file. It now warns, naming the file.
func TestPlanWarnsOfAnEmptySuppressionFile(t *testing.T) {
	path := writeCampaign(t, goodCampaign)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "dnc.csv"), []byte("phone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Getenv: testEnv, Offline: true})
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
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Suppress: sup})
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, w := range plan.Warnings {
		if strings.Contains(w, "dnc.csv") && strings.Contains(w, "no numbers") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning names the empty suppression file dnc.csv: %q", plan.Warnings)
	}
}
