package campaign

import (
	"strings"
	"testing"
)

// TestHoursTimezoneLocalRefused: Go reads "Local" as the zone of the
// machine that runs it, so hours: {timezone: Local} was taken, and the
// window moved with the machine: 09:00-20:00 on a New York laptop became
// 09:00-20:00 UTC (04:00-15:00 in New York) on the server cron runs it on.
func TestHoursTimezoneLocalRefused(t *testing.T) {
	bad := strings.Replace(goodCampaign, "timezone: America/New_York", "timezone: Local", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), `hours.timezone: timezone "Local" is not a time zone but the zone of whichever machine runs callrun`, "name the zone, such as America/New_York")
	if _, err := loadZone("Local"); err == nil {
		t.Error(`loadZone("Local") = nil error; a timezone column's "Local" would be read as this machine's zone`)
	}
}

// TestHoursTimezoneNameAsWritten: a zone name in the wrong case is found
// by a Mac's file system and not by a Linux server's, so a campaign
// checked on a laptop failed under cron; it is refused everywhere,
// naming the zone as written. A misspelt one is offered the nearest.
func TestHoursTimezoneNameAsWritten(t *testing.T) {
	bad := strings.Replace(goodCampaign, "timezone: America/New_York", "timezone: america/new_york", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), `"america/new_york" is not an IANA time zone name: zone names are written in their own case, America/New_York`)
	typo := strings.Replace(goodCampaign, "timezone: America/New_York", "timezone: Europe/Londn", 1)
	expectProblems(t, problems(t, typo, LoadOptions{}), `"Europe/Londn" is not an IANA time zone name such as America/New_York; did you mean Europe/London?`)
	if _, err := loadZone("europe/london"); err == nil {
		t.Error(`loadZone("europe/london") = nil error; a timezone column's cell so written would be read on a Mac only`)
	}
	if _, err := loadZone("Europe/London"); err != nil {
		t.Errorf(`loadZone("Europe/London"): %v`, err)
	}
}

// TestTimezoneColumnSaysWhatIsWrong: a timezone_column's cell that is
// no zone made its row invalid with `"Europe/Londn" is not an IANA time
// zone such as America/Chicago` whatever was wrong, where hours.timezone
// says more: the name in its own case, the nearest name, and why Local
// is none. The row's reason now says the same.
func TestTimezoneColumnSaysWhatIsWrong(t *testing.T) {
	files := map[string]string{
		"c.yaml": "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}, timezone_column: TZ}]\nhours: {timezone: contact, days: [mon], start: \"09:00\", end: \"20:00\"}\n",
		"s.csv":  "Phone,TZ\n+14155550132,Europe/Londn\n+14155550133,america/new_york\n+14155550134,Local\n+14155550135,America/Los_Angeles\n",
	}
	want := map[int]string{
		2: `"Europe/Londn" is not an IANA time zone name such as America/New_York; did you mean Europe/London?`,
		3: `"america/new_york" is not an IANA time zone name: zone names are written in their own case, America/New_York`,
		4: `"Local" is not a time zone but the zone of whichever machine runs callrun`,
	}
	for _, c := range judgeFiles(t, files) {
		w, bad := want[c.Row]
		switch {
		case !bad && c.Status == Invalid:
			t.Errorf("row %d invalid: %s", c.Row, c.Reason)
		case bad && (c.Status != Invalid || c.Field != "timezone" || c.Column != "TZ" || !strings.HasPrefix(c.Reason, w)):
			t.Errorf("row %d: %s %s (column %q) %q; want invalid, timezone column \"TZ\": %q", c.Row, c.Status, c.Field, c.Column, c.Reason, w)
		}
	}
}
