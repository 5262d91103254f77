package report

import (
	"os"
	"path/filepath"
	"strings"
)

// RemoveStale deletes the temporary files that a report write killed
// half-way leaves in dir (".report.csv.123.tmp", ".report.xlsx.123.tmp",
// ".report.html.123.tmp", ".summary.json.123.tmp", and the names of
// older versions, such as ".report.csv123"). Call it only while holding dir's lock: no
// other run can be writing them then.
func RemoveStale(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		for _, prefix := range []string{".report.csv", ".report.xlsx", ".report.html", ".summary.json"} {
			if strings.HasPrefix(name, prefix) && !e.IsDir() {
				if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
		}
	}
	return nil
}
