package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestTimezoneColumnStandardTimeNames: a timezone column that says "EST"
// or "MST", as CRMs write a contact's US zone, or "GMT" for a person in
// the UK, is not kept to that standard time alone all year: in July a
// person in New York is on UTC-4, and tzdata's EST (UTC-5 all year) would
// let a call start at 20:30 their time. A Honolulu number whose column
// says the person is in the East (or the Mountain zone) is not called at
// 20:30 there, which is inside Honolulu's hours and "EST"'s (or "MST"'s),
// and is called at 19:30 there; so is a New York number whose column
// says GMT, at 20:30 in London. The sandbox's ledger counts the calls.
func TestTimezoneColumnStandardTimeNames(t *testing.T) {
	for _, tc := range []struct {
		tz, phone    string
		closed, open time.Time
	}{
		// Wednesday 14 July 2027 00:30 UTC: 20:30 EDT, 19:30 EST, 14:30 in Honolulu.
		{"EST", "+18089560123", time.Date(2027, 7, 14, 0, 30, 0, 0, time.UTC), time.Date(2027, 7, 13, 23, 30, 0, 0, time.UTC)},
		// 02:30 UTC: 20:30 MDT, 19:30 MST, 16:30 in Honolulu.
		{"MST", "+18089560123", time.Date(2027, 7, 14, 2, 30, 0, 0, time.UTC), time.Date(2027, 7, 14, 1, 30, 0, 0, time.UTC)},
		// A New York number of a person in London: 19:30 UTC is 20:30 BST,
		// 19:30 GMT, 15:30 in New York; 18:30 UTC is 19:30 BST.
		{"GMT", "+12122010001", time.Date(2027, 7, 14, 19, 30, 0, 0, time.UTC), time.Date(2027, 7, 14, 18, 30, 0, 0, time.UTC)},
	} {
		t.Run(tc.tz, func(t *testing.T) {
			yaml := strings.Replace(dtCampaign(1000, 1, "countries: [US]\n"), "fields: {phone_number: Phone, first_name: First Name}",
				"fields: {phone_number: Phone, first_name: First Name}\n    timezone_column: TZ", 1)
			yaml = strings.Replace(yaml, "unsafe_ignore_called_person_hours: true\n", "", 1)
			e := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": "Phone,First Name,TZ\n" + tc.phone + ",Number of a person elsewhere," + tc.tz + "\n"})
			res := e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return tc.closed } })
			if n := len(e.srv.Calls()); n != 0 || res.Sent != 0 {
				t.Fatalf("at %s (20:30 in the column's zone in summer): %d call(s) in the ledger, %+v; want none", tc.closed.Format(time.RFC3339), n, res)
			}
			res = e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return tc.open } })
			if placed := dtPlaced(e.srv); placed[tc.phone] != 1 || res.Sent != 1 {
				t.Errorf("at %s (19:30 in the column's zone): placed %v, %+v; want it called once", tc.open.Format(time.RFC3339), placed, res)
			}
		})
	}
}
