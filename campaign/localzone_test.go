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

// TestZoneOffsetOrAbbreviationIsNotOfferedANearName: a zone written as
// an offset or an abbreviation, as CRMs export a contact's time zone, was
// offered the nearest zone name by spelling, which was hours away: "UTC+2"
// did you mean UTC?, "GMT-5" GMT-0?, "IST" (India) EST?, "PST" EST?, "CST"
// (Chicago) CET? Such a name is now told for what it is, with the zone to
// write (and tzdata's Etc zone, whose sign is reversed, for a whole hour).
func TestZoneOffsetOrAbbreviationIsNotOfferedANearName(t *testing.T) {
	for name, want := range map[string]string{
		"UTC+2":     `"UTC+2" is a UTC offset, not an IANA time zone name: name the zone of the place, such as Europe/Berlin, which keeps the place's summer time, or Etc/GMT-2 for UTC+2 all year (tzdata writes its sign reversed)`,
		"GMT-05:00": `or Etc/GMT+5 for UTC-5 all year`,
		"+05:30":    `"+05:30" is a UTC offset, not an IANA time zone name: name the zone of the place, such as Europe/Berlin, which keeps the place's summer time`,
		"IST":       `"IST" is an abbreviation, not an IANA time zone name: name the zone of the place, such as Asia/Kolkata`,
		"PST":       `such as America/Los_Angeles`,
		"CST":       `such as America/Chicago`,
		"XYZT":      `"XYZT" is not an IANA time zone name: name the zone of the place as tzdata does`,
	} {
		_, err := loadZone(name)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("loadZone(%q): %v; want an error holding %q and no nearest name", name, err, want)
		}
	}
	if _, err := loadZone("Europe/Londn"); err == nil || !strings.Contains(err.Error(), "did you mean Europe/London?") {
		t.Errorf("loadZone(Europe/Londn): %v; want the nearest name still offered", err)
	}
	if _, err := loadZone("CET"); err != nil {
		t.Errorf("loadZone(CET), a zone of tzdata: %v", err)
	}
}
