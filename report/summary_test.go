package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testSummary() *Summary {
	s := &Summary{
		Campaign:     "spring-promo",
		StartedAt:    time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC),
		CallsThisRun: 5,
		Ending:       EndInterrupted,
	}
	for _, r := range reportRows {
		s.Add(r)
	}
	s.Add(Row{Sheet: "west.csv", Row: 5, Status: "sent", Agent: "west"})
	s.Add(Row{Sheet: "west.csv", Row: 6, Status: "suppressed", Agent: "west"})
	s.Finish(s.StartedAt.Add(100 * time.Second))
	return s
}

func TestSummary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "summary.json")
	if err := WriteSummary(path, testSummary()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, got)
	if !strings.HasSuffix(string(got), "}\n") {
		t.Errorf("no trailing newline")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("summary mode %v, want 0600", fi.Mode().Perm())
	}

	var back Summary
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.Rows != 9 || back.Counts["sent"] != 2 || back.Counts["pending"] != 1 || back.RatePerSecond != 0.05 || back.ElapsedSeconds != 100 {
		t.Errorf("read back %+v", back)
	}
}

func TestSummaryEmptyHasEveryStatus(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "summary.json")
	// An existing file of another mode is replaced by a 0644 one.
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(path, &Summary{Campaign: "c", Ending: EndComplete}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Counts map[string]int            `json:"counts"`
		Agents map[string]map[string]int `json:"agents"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Counts) != len(Statuses) {
		t.Errorf("counts %v: want every status", back.Counts)
	}
	for _, st := range Statuses {
		if n, ok := back.Counts[string(st)]; !ok || n != 0 {
			t.Errorf("counts[%s] = %d, %v", st, n, ok)
		}
	}
	if back.Agents == nil {
		t.Errorf("agents is null, want {}")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d files; temporary file left", len(ents))
	}
}

func TestSummaryText(t *testing.T) {
	t.Parallel()
	got := testSummary().Text()
	want := `Campaign spring-promo: 9 rows, interrupted.
  sent       2
  failed     1
  uncertain  1
  pending    1
  invalid    2
  duplicate  1
  suppressed 1
By agent:
  east sent 1, failed 1, invalid 2
  west sent 1, uncertain 1, pending 1, duplicate 1, suppressed 1
By sheet:
  leads.csv sent 1, failed 1, invalid 2
  west.csv  sent 1, uncertain 1, pending 1, duplicate 1, suppressed 1
This run: 5 calls started in 1m40s (0.05 calls/s).
Next: 1 uncertain: the service may have placed this call; check it in report.csv before re-sending with --retry-uncertain.
Next: 1 pending: run again to continue.
Next: 1 failed: the reason column of report.csv says why; re-send with --retry-failed once that is fixed.
Next: 2 invalid: fix those rows in the sheets (report.csv names the problem) and run again.
`
	if got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

func TestSummaryTextNextSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		s      Summary
		want   []string
		absent []string
	}{
		{
			name:   "all done",
			s:      Summary{Campaign: "c", Rows: 3, Counts: map[string]int{"sent": 2, "duplicate": 1}, Ending: EndComplete},
			want:   []string{"  sent      2\n", "  duplicate 1\n", "nothing left to do"},
			absent: []string{"failed", "uncertain", "pending"},
		},
		{
			name: "many uncertain",
			s:    Summary{Campaign: "c", Counts: map[string]int{"uncertain": 3}, Ending: EndComplete},
			want: []string{"3 uncertain: the service may have placed these calls; check them in report.csv before re-sending with --retry-uncertain."},
		},
		{
			name: "outside hours",
			s:    Summary{Campaign: "c", Counts: map[string]int{"pending": 12}, Ending: EndOutsideHours},
			want: []string{"stopped outside calling hours", "12 pending: run again inside calling hours to continue."},
		},
		{
			name:   "no rows",
			s:      Summary{Campaign: "c", Counts: map[string]int{"sent": 0, "invalid": 0}, Ending: EndComplete},
			want:   []string{"the sheets hold no contact rows, so nobody was called"},
			absent: []string{"nothing left to do"},
		},
		{
			name:   "rebuilt",
			s:      Summary{Campaign: "c", Counts: map[string]int{"sent": 1}, Ending: EndRebuilt},
			want:   []string{"rebuilt from the journal"},
			absent: []string{"This run"},
		},
	}
	for _, tt := range tests {
		got := tt.s.Text()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: Text lacks %q:\n%s", tt.name, w, got)
			}
		}
		for _, a := range tt.absent {
			if strings.Contains(got, a) {
				t.Errorf("%s: Text has %q:\n%s", tt.name, a, got)
			}
		}
	}
}

func TestSummaryTextOutcomes(t *testing.T) {
	t.Parallel()
	s := testSummary()
	if strings.Contains(s.Text(), "Outcomes") {
		t.Fatalf("a campaign that collects no outcomes got an outcomes line:\n%s", s.Text())
	}
	unmatched := 2
	s.Outcomes = map[string]int{"ended": 3, "started": 1, "none": 1}
	s.Answered = 2
	s.Unmatched = &unmatched
	want := "Outcomes of the 5 called: 3 ended, 1 started, 1 with nothing delivered yet (2 answered); 2 deliveries matched no contact.\n"
	if got := s.Text(); !strings.Contains(got, "By sheet:\n  leads.csv sent 1, failed 1, invalid 2\n  west.csv  sent 1, uncertain 1, pending 1, duplicate 1, suppressed 1\n"+want) {
		t.Errorf("Text has no outcomes line %q after the sheets:\n%s", want, got)
	}
}
