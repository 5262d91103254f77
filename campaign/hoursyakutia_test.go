package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestCalledPersonHoursInYakutia: a landline of the Republic of Sakha
// (area code 411, which may ring in Srednekolymsk, UTC+11), which the phone library
// places in Asia/Yakutsk (UTC+9), is not called at 20:30 its time
// (18:30 in Yakutsk): the sandbox's ledger counts no call then, and one
// at 17:30 its time.
func TestCalledPersonHoursInYakutia(t *testing.T) {
	yaml := strings.Replace(dtCampaign(1000, 1, "countries: [RU]\n"), "unsafe_ignore_called_person_hours: true\n", "", 1)
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		// Wednesday 15 July 2026.
		{"20:30 in Srednekolymsk", time.Date(2026, 7, 15, 9, 30, 0, 0, time.UTC), 0},
		{"17:30 in Srednekolymsk", time.Date(2026, 7, 15, 6, 30, 0, 0, time.UTC), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &dtClock{now: tc.at}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": "Phone,First Name\n+74115621234,Aiaal\n"})
			e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			if n := len(e.srv.Calls()); n != tc.want {
				t.Errorf("%d call(s) in the ledger at %s UTC (%s); want %d", n, tc.at.Format("15:04"), tc.name, tc.want)
			}
		})
	}
}
