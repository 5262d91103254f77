package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestPlanStopsAtA50MBField: one 50 MB field stops its sheet, in bounded
// memory, as any broken file does: plan shows the rows before it, names the
// file, row and line, and exits 2.
func TestPlanStopsAtA50MBField(t *testing.T) {
	sheet := io.MultiReader(
		strings.NewReader("First Name,Phone\nAda,(415) 555-0100\n"),
		strings.NewReader("Bob,(415) 555-0101 "), io.LimitReader(sevens{}, 50<<20), strings.NewReader("\n"),
		strings.NewReader("Grace,(415) 555-0102\nAlan,(415) 555-0103\n"),
	)
	e := newOfflineCampaign(t, sheet)
	res := e.run(2*time.Minute, "plan", "--offline", "--format", "json", e.path)
	if res.code != 2 {
		t.Fatalf("plan: exit %d, want 2\n%s", res.code, res)
	}
	var plan struct {
		Totals map[string]int `json:"totals"`
		Sheets []struct {
			Error string `json:"error"`
		} `json:"sheets"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, res.stdout)
	}
	if plan.Totals["rows"] != 1 || plan.Totals["to_call"] != 1 {
		t.Errorf("plan totals %v; want the 1 row before the field, to call", plan.Totals)
	}
	const why = "contacts.csv row 3: the row on line 3 of the file is larger than 4 MiB, far more than a contact's row holds: check that line"
	if len(plan.Sheets) != 1 || !strings.Contains(plan.Sheets[0].Error, why) {
		t.Errorf("plan sheets %+v; want the error %q", plan.Sheets, why)
	}
	if !strings.Contains(res.stderr, why) {
		t.Errorf("plan's stderr does not say %q:\n%s", why, res.stderr)
	}
}

// sevens is an endless stream of the digit 7: a field as long as one
// likes, with no quote, delimiter or line break in it.
type sevens struct{}

func (sevens) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '7'
	}
	return len(p), nil
}
