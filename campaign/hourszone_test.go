package campaign

import (
	"strings"
	"testing"
	"time"
)

// TestCampaignWindowInAStandardTimesName: hours: {timezone: EST} is
// written by people who mean New York's clock, as a timezone column's EST
// is read (summerOf); tzdata keeps EST on UTC-5 all year. A window of
// 09:00-17:00 "EST" must not call a New Yorker at 17:30 in July (16:30
// EST): callrun either refuses the name or holds the window in both.
func TestCampaignWindowInAStandardTimesName(t *testing.T) {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	for _, tc := range []struct {
		zone, e164, place, at string
	}{
		{"EST", "+12122010001", "America/New_York", "2026-07-15T21:30:00Z"}, // 17:30 EDT, 16:30 EST
		{"MST", "+13035550100", "America/Denver", "2026-07-15T23:30:00Z"},   // 17:30 MDT, 16:30 MST
		{"GMT", "+442079460123", "Europe/London", "2026-07-15T16:30:00Z"},   // 17:30 BST, 16:30 GMT
	} {
		f := &File{Hours: &Hours{Timezone: tc.zone, Days: all, Start: "09:00", End: "17:00"}}
		h, err := f.CallingHours()
		if err != nil {
			continue // refused: the file must name the zone it means
		}
		at, _ := time.Parse(time.RFC3339, tc.at)
		if c := stateContact(t, tc.e164); h.Open(c, at) {
			t.Errorf("hours: {timezone: %s, start: 09:00, end: 17:00} called %s at %s, %s in %s", tc.zone, tc.e164, tc.at, at.In(mustZone(t, tc.place)).Format("15:04"), tc.place)
		}
	}
}

// TestCampaignFileRefusesAStandardTimesName: the campaign file's check
// refuses hours: {timezone: EST} as it loads, naming the zone to write.
func TestCampaignFileRefusesAStandardTimesName(t *testing.T) {
	from := "hours: {timezone: America/New_York,"
	if !strings.Contains(goodCampaign, from) {
		t.Fatalf("goodCampaign has no %q", from)
	}
	for zone, want := range map[string]string{"EST": "America/New_York", "MST": "America/Denver", "GMT": "Europe/London"} {
		got := problems(t, strings.Replace(goodCampaign, from, "hours: {timezone: "+zone+",", 1), LoadOptions{})
		expectProblems(t, got, "hours.timezone: timezone \""+zone+"\" keeps no summer time", want)
	}
}
