package run

import (
	"strings"
	"testing"
	"time"
)

// TestUntilDateAndTimeIsNotAZone: cron lines and people write a date and
// a time, "2026-11-30 17:00". --until took the date for the time of day
// and the time for a zone, and answered `"17:00" is not a time zone`.
// It now says which forms it takes, with an RFC 3339 example.
func TestUntilDateAndTimeIsNotAZone(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"2026-11-30 17:00", "30/11/2026 17:00", "5pm Europe/London"} {
		_, _, err := ParseUntil(s, now, nil)
		if err == nil || strings.Contains(err.Error(), "is not a time zone") || !strings.Contains(err.Error(), "an RFC 3339 time (2026-11-30T19:30:00-05:00)") {
			t.Errorf("ParseUntil(%q): %v", s, err)
		}
	}
	// A time of day in a zone that is none is still named so.
	if _, _, err := ParseUntil("17:00 Europe/Londn", now, nil); err == nil || !strings.Contains(err.Error(), `"Europe/Londn" is not a time zone`) {
		t.Errorf("bad zone: %v", err)
	}
	if at, _, err := ParseUntil("17:00 Europe/London", now, nil); err != nil || !at.Equal(time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)) {
		t.Errorf("17:00 Europe/London = %v, %v", at, err)
	}
}

// TestUntilInBothReadingsOfTheCampaignZone: where this machine's tzdata
// and callrun's own keep the campaign's hours.timezone on different
// clocks (Asia/Almaty on UTC+6 and UTC+5 after tzdata 2024a), a bare
// --until 19:00 is the earlier of its two readings: the run does not
// call on for an hour past it on a machine with old tzdata.
func TestUntilInBothReadingsOfTheCampaignZone(t *testing.T) {
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	old, cur := time.FixedZone("+06", 6*3600), time.FixedZone("+05", 5*3600)
	for _, zones := range [][]*time.Location{{old, cur}, {cur, old}} {
		at, which, err := ParseUntil("19:00", now, zones)
		if want := time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC); err != nil || !at.Equal(want) || which != "the campaign's hours.timezone" {
			t.Errorf("ParseUntil(19:00, %v) = %v, %q, %v; want %v", zones, at.UTC(), which, err, want)
		}
	}
}
