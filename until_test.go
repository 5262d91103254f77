package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/run"
)

func TestParseUntilZones(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC) // 13:00 in New York
	for _, tc := range []struct {
		in    string
		zone  *time.Location
		want  time.Time
		which string
	}{
		{"19:45", ny, time.Date(2026, 11, 23, 19, 45, 0, 0, ny), "the campaign's hours.timezone"},
		{"12:00", ny, time.Date(2026, 11, 24, 12, 0, 0, 0, ny), "the campaign's hours.timezone"}, // passed there: tomorrow
		{"19:45", nil, time.Date(2026, 11, 23, 19, 45, 0, 0, time.UTC), "this machine's local time"},
		{"19:45 Europe/Berlin", ny, time.Date(2026, 11, 23, 18, 45, 0, 0, time.UTC), "the zone given"},
		{"17:00 Europe/Berlin", nil, time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC), "the zone given"},
		{"2h", ny, now.Add(2 * time.Hour), "from now"},
		{"2026-11-24T09:00:00-05:00", nil, time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC), "as given"},
	} {
		got, which, err := parseUntil(tc.in, now, zonesOf(tc.zone))
		if err != nil || !got.Equal(tc.want) || which != tc.which {
			t.Errorf("parseUntil(%q, %v) = %v, %q, %v; want %v, %q", tc.in, tc.zone, got, which, err, tc.want, tc.which)
		}
	}
	for in, want := range map[string]string{
		"7pm":                `--until "7pm": give a time of day (19:30, or "19:30 Europe/Berlin")`,
		"19:45 Mars/Olympus": `--until "19:45 Mars/Olympus": "Mars/Olympus" is not a time zone`,
	} {
		if _, _, err := parseUntil(in, now, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseUntil(%q) = %v, want %q", in, err, want)
		}
	}
}

// TestUntilOutsideHoursSaysWhenTheyOpen: a run outside the campaign's hours
// with --until reached exits 75 and says, in the campaign's words, when
// calling resumes. The campaign's only day is the day after tomorrow, so
// its hours are closed at whatever hour the test runs.
func TestUntilOutsideHoursSaysWhenTheyOpen(t *testing.T) {
	day := time.Now().UTC().AddDate(0, 0, 2).Weekday()
	dir := offlineCampaign(t, fmt.Sprintf(`hours: {timezone: UTC, days: [%s], start: "09:00", end: "20:00"}`, strings.ToLower(day.String()[:3])))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	var out bytes.Buffer
	err := runCampaign(context.Background(), nolog, runOptions{Path: filepath.Join(dir, "campaign.yaml"), Sandbox: true, Until: "1m"}, &out)
	if code := exitCode(context.Background(), err); code != run.ExitTryLater {
		t.Fatalf("exit %d (%v), want 75\n%s", code, err, out.String())
	}
	want := "calling hours open " + day.String()[:3] + " 09:00 UTC, in "
	if !strings.Contains(err.Error(), want) {
		t.Errorf("message %q lacks %q", err.Error(), want)
	}
}

// zonesOf is loc as ParseUntil takes the campaign's zone: its readings.
func zonesOf(loc *time.Location) []*time.Location {
	if loc == nil {
		return nil
	}
	return []*time.Location{loc}
}
