package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlanReadsPastA50MBField: one 50 MB field without any quote is that
// row's problem, in plan (file, row, column, what was found) and in the
// report; the rows after it are read and counted. It used to stop plan
// with exit 1 and "probably a quote that is never closed".
func TestPlanReadsPastA50MBField(t *testing.T) {
	sheet := io.MultiReader(
		strings.NewReader("First Name,Phone\nAda,(415) 555-0100\n"),
		strings.NewReader("Bob,(415) 555-0101 "), io.LimitReader(sevens{}, 50<<20), strings.NewReader("\n"),
		strings.NewReader("Grace,(415) 555-0102\nAlan,(415) 555-0103\n"),
	)
	e := newOfflineCampaign(t, sheet)
	res := e.run(2*time.Minute, "plan", "--offline", "--format", "json", e.path)
	if res.code != 0 {
		t.Fatalf("plan: %s", res)
	}
	var plan struct {
		Totals   map[string]int `json:"totals"`
		Problems []struct {
			File    string `json:"file"`
			Row     int    `json:"row"`
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, res.stdout)
	}
	if plan.Totals["rows"] != 4 || plan.Totals["to_call"] != 3 || plan.Totals["invalid"] != 1 {
		t.Errorf("plan totals %v; want 4 rows, 3 to call, 1 invalid", plan.Totals)
	}
	const why = `column "Phone": the row is 50.0 MiB long, on line 3 of the file, and a row may hold at most 4 MiB (this field takes it past the limit): it is not read`
	if len(plan.Problems) != 1 || plan.Problems[0].File != "contacts.csv" || plan.Problems[0].Row != 3 || plan.Problems[0].Message != why {
		t.Errorf("plan problems %+v; want contacts.csv row 3: %s", plan.Problems, why)
	}
	if res := e.run(2*time.Minute, "plan", "--offline", "--strict", e.path); res.code != 4 {
		t.Errorf("plan --strict: exit %d, want 4\n%s", res.code, res)
	}

	if res := e.run(2*time.Minute, "report", e.path); res.code != 0 {
		t.Fatalf("report: %s", res)
	}
	f, err := os.Open(filepath.Join(e.stateDir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if len(recs) != 5 {
		t.Fatalf("report.csv has %d records, want a header and 4 rows", len(recs))
	}
	if r := recs[2]; r[col["row"]] != "3" || r[col["status"]] != "invalid" || r[col["reason"]] != why {
		t.Errorf("report.csv row 3: %q; want invalid: %s", r, why)
	}
	if r := recs[4]; r[col["row"]] != "5" || r[col["status"]] != "pending" || r[col["phone_number"]] != "+14155550103" {
		t.Errorf("report.csv row 5: %q; want +14155550103 pending", r)
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
