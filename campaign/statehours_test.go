package campaign

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/phone"
)

// stateContact reads e164 as the contact reader does.
func stateContact(t *testing.T, e164 string) *Contact {
	t.Helper()
	ph, err := phone.Read(e164, phone.Any(""))
	if err != nil {
		t.Fatalf("%s: %v", e164, err)
	}
	return &Contact{Phone: ph.E164, Country: ph.Region, Kind: ph.Kind}
}

// span is a window in minutes after midnight, end exclusive; nil forbids
// the day.
type span *[2]int

func hm(from, to string) span {
	m := func(s string) int {
		var h, mi int
		fmt.Sscanf(s, "%d:%d", &h, &mi)
		return h*60 + mi
	}
	return &[2]int{m(from), m(to)}
}

// TestStateHours: for a number of each state of the table, the called
// person's hours open and close where the state's law (within the floor,
// 08:00-20:00) says, in the number's own zone, on a Wednesday, a Saturday
// and a Sunday: a minute before the start closed, at the start open, a
// minute before the end open, at the end closed; a forbidden Sunday
// closed all day. The windows are written out by hand.
func TestStateHours(t *testing.T) {
	floor := hm("08:00", "20:00")
	for _, tc := range []struct {
		state, e164    string
		week, sat, sun span
	}{
		{"AL", "+12052010123", floor, floor, nil},
		{"CA", "+14152010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"CT", "+12032010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"FL", "+13052010123", floor, floor, floor},
		{"IL", "+13122010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"KY", "+15022010123", hm("10:00", "20:00"), hm("10:00", "20:00"), hm("10:00", "20:00")},
		{"LA", "+15042010123", floor, floor, nil},
		{"MA", "+16172010123", floor, floor, floor},
		{"MD", "+14102010123", floor, floor, floor},
		{"MI", "+13132010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"MN", "+16122010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"MS", "+16012010123", floor, floor, nil},
		{"NM", "+15052010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"NV", "+17022010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"OK", "+14052010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("09:00", "20:00")},
		{"PA", "+12152010123", hm("09:00", "20:00"), hm("09:00", "12:00"), hm("09:00", "20:00")},
		{"RI", "+14012010123", hm("09:00", "18:00"), hm("10:00", "17:00"), nil},
		{"TX", "+15122010123", hm("09:00", "20:00"), hm("09:00", "20:00"), hm("12:00", "20:00")},
		{"UT", "+18012010123", floor, floor, nil},
		{"WA", "+12062010123", floor, floor, floor},
		{"NY", "+12122010123", floor, floor, floor}, // no rule of its own: the floor
	} {
		c := stateContact(t, tc.e164)
		if got := ContactState(c); got != tc.state {
			t.Errorf("%s: state %q, want %q", tc.e164, got, tc.state)
			continue
		}
		zones := ContactZones(c)
		if len(zones) != 1 {
			t.Fatalf("%s: zones %v, want one", tc.e164, zones)
		}
		hours := &CallingHours{}
		for _, d := range []struct {
			day  int // March 2027: Wednesday 3, Saturday 6, Sunday 7
			span span
		}{{3, tc.week}, {6, tc.sat}, {7, tc.sun}} {
			at := func(m int) time.Time { return time.Date(2027, 3, d.day, 0, m, 0, 0, zones[0]) }
			if d.span == nil {
				for m := 0; m < 24*60; m += 15 {
					if hours.Open(c, at(m)) {
						t.Errorf("%s (%s): open at %s, a day its law forbids", tc.state, tc.e164, at(m).Format("Mon 15:04 MST"))
					}
				}
				continue
			}
			for _, p := range []struct {
				m    int
				want bool
			}{{d.span[0] - 1, false}, {d.span[0], true}, {d.span[1] - 1, true}, {d.span[1], false}} {
				if got := hours.Open(c, at(p.m)); got != p.want {
					t.Errorf("%s (%s): open at %s is %v, want %v", tc.state, tc.e164, at(p.m).Format("Mon 15:04 MST"), got, p.want)
				}
			}
		}
	}
}

// TestStateUnknownHeldToEveryState: a US number whose state the library
// cannot tell keeps every state's hours at once (10:00-18:00, Saturdays
// 10:00-12:00, never on Sundays) in each of its zones; a toll-free
// number, which may ring in all 43 zones of +1, is then never called.
// Canada's numbers keep the floor alone.
func TestStateUnknownHeldToEveryState(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	for _, p := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2027, 3, 3, 9, 59, 0, 0, ny), false},
		{time.Date(2027, 3, 3, 10, 0, 0, 0, ny), true},
		{time.Date(2027, 3, 3, 17, 59, 0, 0, ny), true},
		{time.Date(2027, 3, 3, 18, 0, 0, 0, ny), false},
		{time.Date(2027, 3, 6, 11, 59, 0, 0, ny), true},
		{time.Date(2027, 3, 6, 12, 0, 0, 0, ny), false},
		{time.Date(2027, 3, 7, 12, 0, 0, 0, ny), false},
	} {
		if got := CalledPersonOpen(p.at, "US", "", []*time.Location{ny}); got != p.want {
			t.Errorf("a US number of no known state in New York's zone at %s: open %v, want %v", p.at.Format("Mon 15:04"), got, p.want)
		}
		if !CalledPersonOpen(p.at, "US", "NY", []*time.Location{ny}) {
			t.Errorf("a New York number at %s: closed, want the floor alone", p.at.Format("Mon 15:04"))
		}
	}
	tollFree := stateContact(t, "+18002345678")
	if s := ContactState(tollFree); s != "" {
		t.Fatalf("toll-free: state %q, want none", s)
	}
	hours := &CallingHours{}
	for at := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC); at.Before(time.Date(2027, 3, 15, 0, 0, 0, 0, time.UTC)); at = at.Add(15 * time.Minute) {
		if hours.Open(tollFree, at) {
			t.Fatalf("toll-free: open at %s", at.Format(time.RFC3339))
		}
	}
	toronto := stateContact(t, "+14165550163")
	// Sunday 10:00 in Toronto: Canada's law allows weekends from 10:00,
	// and a US number of no known state is never called on a Sunday.
	if at := time.Date(2027, 3, 7, 10, 0, 0, 0, ny); !hours.Open(toronto, at) {
		t.Errorf("Toronto: closed at %s, want Canada's hours alone", at)
	}
}

// TestUSState: a US number's state from the library's geocoding, by a
// state's name or a place's ", ST"; none for a toll-free or a
// non-geographic US number, Canada's, Puerto Rico's or France's.
func TestUSState(t *testing.T) {
	for e164, want := range map[string]string{
		"+15025550123": "KY", "+14155550123": "CA", "+12125550123": "NY", "+12025550123": "DC",
		"+18005550123": "", "+15002345678": "", "+14165550163": "", "+17875550123": "", "+33123456789": "",
	} {
		if got := phone.USState(e164); got != want {
			t.Errorf("USState(%s) = %q, want %q", e164, got, want)
		}
	}
}

// TestRunKeepsKentuckysHours runs against the sandbox, on a fake clock,
// with no hours: and a Kentucky number (Louisville, Eastern time): at
// 09:30 its time, inside the floor but before Kentucky's 10:00, the
// ledger holds no call; at 10:00 it holds one.
func TestRunKeepsKentuckysHours(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	runOneStateNumber(t, "+15022010123", "Louisville", time.Date(2027, 3, 3, 9, 30, 0, 0, ny), time.Date(2027, 3, 3, 10, 0, 0, 0, ny))
}

// runOneStateNumber runs a campaign of the one number e164, with no
// hours:, against the sandbox on a fake clock: at closed, a time its
// state's law forbids, the ledger must hold no call and the contact be
// deferred; at open, run again, it must hold one.
func runOneStateNumber(t *testing.T, e164, name string, closed, open time.Time) {
	t.Helper()
	yaml := strings.Replace(dtCampaign(1000, 1, ""), "unsafe_ignore_called_person_hours: true\n", "", 1)
	e := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": "Phone,First Name\n" + e164 + "," + name + "\n"})
	res := e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return closed } })
	if n := len(e.srv.Calls()); n != 0 || res.Deferred != 1 {
		t.Fatalf("%s at %s: %d calls in the ledger, %+v; want none, deferred", e164, closed.Format("Mon 2006-01-02 15:04 MST"), n, res)
	}
	res = e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return open } })
	if n := len(e.srv.Calls()); n != 1 || res.Sent != 1 {
		t.Errorf("%s at %s: %d calls in the ledger, %+v; want one", e164, open.Format("Mon 2006-01-02 15:04 MST"), n, res)
	}
}

// TestStatesNotSharedInPlanAndWaits: the plan and the waits share one
// answer between contacts of one country and zones; a Kentucky and a New
// York number, both on Eastern time, must not share theirs. At 09:30
// the plan counts the Kentucky one alone outside its hours; at 07:30 each
// waits until its own opening, 10:00 and 08:00.
func TestStatesNotSharedInPlanAndWaits(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	hours := &CallingHours{}
	for _, order := range [][]string{{"+15022010123", "+12122010123"}, {"+12122010123", "+15022010123"}} {
		w := newPlanWhen(hours, time.Date(2027, 3, 3, 9, 30, 0, 0, ny))
		for _, e164 := range order {
			w.add(stateContact(t, e164))
		}
		if res, _ := w.result(); res.OutsideNow != 1 {
			t.Errorf("plan at 09:30, %v: %d outside their hours, want 1 (Kentucky's)", order, res.OutsideNow)
		}
		waits := newWaits(&File{}, hours)
		for _, e164 := range order {
			want := map[string]int{"+15022010123": 10, "+12122010123": 8}[e164]
			wt := waits.hoursWait(stateContact(t, e164), time.Date(2027, 3, 3, 7, 30, 0, 0, ny))
			if wt == nil || !wt.Until.Equal(time.Date(2027, 3, 3, want, 0, 0, 0, ny)) {
				t.Errorf("%s at 07:30, %v: waits %+v, want until %02d:00", e164, order, wt, want)
			}
		}
	}
}
