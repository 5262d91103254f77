package campaign

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRetentionSetting: retention: reads days, weeks and Go durations of
// at least 31 days, and refuses the rest naming the key and its line.
func TestRetentionSetting(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		yaml string
		want time.Duration
		bad  string // the problem, when it is refused
	}{
		{"", 0, ""},
		{"retention: 90d\n", 90 * day, ""},
		{"retention: 13w\n", 91 * day, ""},
		{"retention: 744h\n", 31 * day, ""},
		{"retention: 30d\n", 0, "at least 31d"},
		{"retention: 0d\n", 0, `"0d" is not an age`},
		{"retention: -90d\n", 0, "is not an age"},
		{"retention: 3 months\n", 0, `"3 months" is not an age such as 90d`},
		{"retention: 1.5d\n", 0, "is not an age"},
		{"retention: 213594d\n", 0, "is not an age"}, // 585 years: no Duration holds it
		{"retention: 15250060w\n", 0, "is not an age"},
	} {
		dir := t.TempDir()
		dtWrite(t, filepath.Join(dir, "leads.csv"), ptSheet(0, 1))
		path := filepath.Join(dir, "campaign.yaml")
		dtWrite(t, path, dtCampaign(10, 1, c.yaml))
		f, err := Load(path, LoadOptions{Offline: true})
		switch {
		case c.bad != "":
			if err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), "retention") || !strings.Contains(err.Error(), "campaign.yaml") {
				t.Errorf("%q: %v; want a problem of retention saying %q", c.yaml, err, c.bad)
			}
		case err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case f.RetentionLimit() != c.want:
			t.Errorf("%q: %s, want %s", c.yaml, f.RetentionLimit(), c.want)
		}
	}
}
