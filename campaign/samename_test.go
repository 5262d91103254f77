package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSheetNameDiffersInCaseOrAccents: a campaign written on a Mac or a
// Windows laptop names "Contacts.CSV" for contacts.csv, or types "Jürgen"
// where the file's name, written by macOS, holds "u" and a combining
// diaeresis: both systems find the file, Linux (cron, CI) does not, and
// "no such file; check the path" beside a folder that shows the file
// told nothing. The problem now names the file the folder has and how the
// two differ.
func TestSheetNameDiffersInCaseOrAccents(t *testing.T) {
	for _, c := range []struct{ onDisk, written, want string }{
		{"contacts.csv", "Contacts.CSV", `sheet ` + "%s" + `Contacts.CSV: no such file; check the path (its folder has "contacts.csv", which differs from it in case: write the name as the folder has it`},
		{"Ju\u0308rgen.csv", "J\u00fcrgen.csv", "(its folder has \"Ju\u0308rgen.csv\", which differs from it in how its accents are encoded: rename the file, typing its name anew"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "prompt.txt"), []byte("Hello"), 0o600)
		os.WriteFile(filepath.Join(dir, "dnc.csv"), []byte("Phone\n+14155550100\n"), 0o600)
		os.WriteFile(filepath.Join(dir, c.onDisk), []byte("Phone,First Name\n+14155550132,Ada\n"), 0o600)
		if _, err := os.Stat(filepath.Join(dir, c.written)); err == nil {
			continue // a file system that folds case or accents (macOS, Windows) finds the file
		}
		path := filepath.Join(dir, "campaign.yml")
		os.WriteFile(path, []byte(strings.Replace(goodCampaign, "file: leads.csv", "file: "+c.written, 1)), 0o600)
		_, err := Load(path, LoadOptions{Getenv: testEnv})
		want := strings.Replace(c.want, "%s", dir+string(filepath.Separator), 1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q for %q: %v\nwant %q", c.written, c.onDisk, err, want)
		}
	}
}
