package report

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := []string{"report.csv", "report.xlsx", "report.html", "summary.json", "journal.jsonl", "lock", ".other"}
	stale := []string{".report.csv2721178096441778494", ".report.xlsx.2331536739.tmp", ".summary.json998877", ".report.html.123.tmp", ".report.csv.42.tmp"}
	for _, n := range append(keep, stale...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveStale(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed", n)
		}
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s was left", n)
		}
	}
}
