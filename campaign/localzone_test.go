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
