package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/nyaruka/phonenumbers"
)

// hoursCase is a number with the zones it may ring in, written out by hand
// for the oracle, and whether France's rule applies.
type hoursCase struct {
	name, e164 string
	zones      []string
	france     bool
}

// usZones are the zones of the United States a number may ring in when it
// cannot be placed more precisely (a toll-free number): mainland, Alaska,
// the Aleutians and Hawaii.
var usZones = []string{"America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles", "America/Anchorage", "America/Adak", "Pacific/Honolulu"}

// auMainland are the zones of mainland Australia.
var auMainland = []string{"Australia/Perth", "Australia/Darwin", "Australia/Adelaide", "Australia/Brisbane", "Australia/Sydney", "Australia/Melbourne"}

var hoursCases = []hoursCase{
	{"New York", "+12122010001", []string{"America/New_York"}, false},
	{"Los Angeles", "+13102010002", []string{"America/Los_Angeles"}, false},
	{"Chicago", "+13125550182", []string{"America/Chicago"}, false},
	{"Denver", "+13035550100", []string{"America/Denver"}, false},
	{"Phoenix (no DST)", "+16025550100", []string{"America/Phoenix"}, false},
	{"Honolulu", "+18085550100", []string{"Pacific/Honolulu"}, false},
	{"Alaska", "+19075550100", []string{"America/Anchorage", "America/Adak"}, false},
	{"US toll-free", "+18002345678", usZones, false},
	{"Toronto", "+14165550163", []string{"America/Toronto"}, false},
	{"Vancouver", "+16045550100", []string{"America/Vancouver"}, false},
	{"St. John's (UTC-3:30)", "+17095550100", []string{"America/St_Johns"}, false},
	{"Mexico City", "+525512345678", []string{"America/Mexico_City"}, false},
	{"Tijuana", "+526641234567", []string{"America/Tijuana"}, false},
	{"São Paulo", "+551123456789", []string{"America/Sao_Paulo"}, false},
	{"Manaus", "+559232345678", []string{"America/Manaus"}, false},
	{"London landline", "+442079460123", []string{"Europe/London"}, false},
	{"UK mobile", "+447400123456", []string{"Europe/London"}, false},
	{"Berlin", "+493012345678", []string{"Europe/Berlin"}, false},
	{"Paris landline", "+33123456789", []string{"Europe/Paris"}, true},
	{"French mobile", "+33612345678", []string{"Europe/Paris"}, true},
	{"India (UTC+5:30)", "+919876543210", []string{"Asia/Kolkata"}, false},
	{"Sydney landline", "+61212345678", []string{"Australia/Sydney"}, false},
	{"Perth landline", "+61892345678", []string{"Australia/Perth"}, false},
	{"Australian mobile", "+61412345678", auMainland, false},
	{"Tokyo", "+81312345678", []string{"Asia/Tokyo"}, false},
	// Landlines the library places in a zone that keeps another clock:
	// one of another country's standing in, or of another place.
	{"Kaliningrad (library: Bucharest)", "+74012123456", []string{"Europe/Kaliningrad"}, false},
	{"Tripoli (library: Bucharest)", "+218213334444", []string{"Africa/Tripoli"}, false},
	{"Managua (library: Chicago)", "+50522223333", []string{"America/Managua"}, false},
	{"Recife (library: Noronha)", "+558121234567", []string{"America/Recife"}, false},
	{"Whitehorse (library: Vancouver)", "+18676671234", []string{"America/Whitehorse"}, false},
	{"Dawson Creek (library: Edmonton)", "+12507821234", []string{"America/Dawson_Creek"}, false},
	{"Lloydminster (library: Regina)", "+13068251234", []string{"America/Edmonton"}, false},
	{"Chihuahua (library: Mazatlan)", "+526141234567", []string{"America/Chihuahua"}, false},
	{"Gold Coast (library: Sydney)", "+61755311234", []string{"Australia/Brisbane"}, false},
	{"Punta Arenas (library: Santiago)", "+56612211234", []string{"America/Punta_Arenas"}, false},
}

// frenchHolidays2027 are France's public holidays in 2027, written out by
// hand (Easter Sunday is 28 March), with Alsace-Moselle's Good Friday and
// 26 December, which callrun keeps for every French number.
var frenchHolidays2027 = []string{"01-01", "03-26", "03-29", "05-01", "05-06", "05-08", "05-17", "07-14", "08-15", "11-01", "11-11", "12-25", "12-26"}

// australianNoCallDays2027 are the days of 2027 on which Australia's
// telemarketing standard allows no call, written out by hand: its national
// public holidays (New Year's Day, Australia Day, Good Friday, Easter
// Monday, Anzac Day (a Sunday), Christmas Day (a Saturday) and Boxing Day
// (a Sunday)) and the days Anzac Day (Monday 26 April in Western
// Australia, the ACT, the Northern Territory, Queensland and South
// Australia), Christmas and Boxing Day are observed on.
var australianNoCallDays2027 = []string{"01-01", "01-26", "03-26", "03-29", "04-25", "04-26", "12-25", "12-26", "12-27", "12-28"}

// oracleLaws are the numbers of hoursCases in a country whose law narrows
// the floor: Canada (weekdays 09:00-21:30, weekends 10:00-18:00) and
// Australia (weekdays 09:00-20:00, Saturdays 09:00-17:00, never on a
// Sunday or a national public holiday).
var oracleLaws = map[string]string{
	"+14165550163": "CA", "+16045550100": "CA", "+17095550100": "CA", "+18676671234": "CA", "+12507821234": "CA", "+13068251234": "CA",
	"+61212345678": "AU", "+61892345678": "AU", "+61412345678": "AU", "+61755311234": "AU",
}

// oracleLawOpen is a country's narrowing of the floor at lt, its time.
func oracleLawOpen(law string, lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	weekend := lt.Weekday() == time.Saturday || lt.Weekday() == time.Sunday
	switch law {
	case "CA":
		if weekend {
			return m >= 10*60 && m < 18*60
		}
		return m >= 9*60 && m < 21*60+30
	case "AU":
		switch {
		case lt.Weekday() == time.Sunday, slices.Contains(australianNoCallDays2027, lt.Format("01-02")):
			return false
		case lt.Weekday() == time.Saturday:
			return m >= 9*60 && m < 17*60
		}
		return m >= 9*60 && m < 20*60
	}
	return true
}

// oracleStates are the US numbers of hoursCases in a state whose law
// narrows the floor, written out by hand ("" for a toll-free number, held
// to every state's hours at once); the others are in states that do not.
var oracleStates = map[string]string{"+13102010002": "CA", "+13125550182": "IL", "+18002345678": ""}

// oracleStateOpen is a US state's narrowing of the floor at lt, its time:
// California and Illinois from 09:00; every state at once (Kentucky's
// 10:00, Rhode Island's 18:00 and Saturday 10:00-17:00, Pennsylvania's
// Saturday noon, the Sundays of Alabama and others) 10:00-18:00, on
// Saturdays 10:00-12:00, never on Sundays.
func oracleStateOpen(state string, lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	switch state {
	case "CA", "IL":
		return m >= 9*60
	case "":
		switch lt.Weekday() {
		case time.Sunday:
			return false
		case time.Saturday:
			return m >= 10*60 && m < 12*60
		}
		return m >= 10*60 && m < 18*60
	}
	return true
}

// neverOpen are the numbers the called person's hours never open for: a
// US toll-free number, held to every state's hours (10:00-18:00 at most)
// in all 43 zones of +1, which span more than 11 hours.
var neverOpen = []string{"+18002345678"}

// oracleOpen is the called person's window, computed plainly from the
// hand-written zones: 08:00-20:00 local in every zone, narrowed by the
// state's hours for a US number of oracleStates, by the country's law for
// a number of oracleLaws, and in France weekdays 10:00-13:00 and
// 14:00-20:00 except public holidays.
func oracleOpen(hc hoursCase, t time.Time) bool {
	state, inState := oracleStates[hc.e164]
	for _, loc := range oracleZones(hc.zones) {
		lt := t.In(loc)
		m := lt.Hour()*60 + lt.Minute()
		if m < 8*60 || m >= 20*60 {
			return false
		}
		if inState && !oracleStateOpen(state, lt) {
			return false
		}
		if !oracleLawOpen(oracleLaws[hc.e164], lt) {
			return false
		}
		if hc.france {
			if lt.Weekday() == time.Saturday || lt.Weekday() == time.Sunday || slices.Contains(frenchHolidays2027, lt.Format("01-02")) {
				return false
			}
			if m < 10*60 || (m >= 13*60 && m < 14*60) {
				return false
			}
		}
	}
	return true
}

var oracleZoneCache = map[string]*time.Location{}

// oracleZones loads zones by name (the test is single-threaded).
func oracleZones(names []string) []*time.Location {
	var locs []*time.Location
	for _, name := range names {
		loc, ok := oracleZoneCache[name]
		if !ok {
			var err error
			if loc, err = time.LoadLocation(name); err != nil {
				panic(err)
			}
			oracleZoneCache[name] = loc
		}
		locs = append(locs, loc)
	}
	return locs
}

// oracleWindow is the campaign's hours: as the test configures them.
type oracleWindow func(hc hoursCase, column string, t time.Time) bool

func hoursContacts(t *testing.T, column func(hoursCase) string) []Contact {
	t.Helper()
	var cs []Contact
	for _, hc := range hoursCases {
		ph, err := phone.Read(hc.e164, phone.Any(""))
		if err != nil {
			t.Fatalf("%s %s: %v", hc.name, hc.e164, err)
		}
		if ph.Kind == phonenumbers.UNKNOWN {
			t.Fatalf("%s: unknown kind", hc.name)
		}
		cs = append(cs, Contact{Phone: ph.E164, Country: ph.Region, Kind: ph.Kind, TZ: column(hc)})
	}
	return cs
}

// TestCalledPersonHours2027 walks all of 2027 in steps of 15 minutes (both
// US daylight-saving changes, Europe's and Australia's, France's holidays)
// for numbers across many zones, under a fixed hours.timezone and under
// timezone: contact with a column that disagrees with the number. At every
// step callrun may call a contact only when the oracle says the called
// person's window and the campaign's hours are open; where callrun's zones
// for a number are the oracle's, it must also call whenever they are.
func TestCalledPersonHours2027(t *testing.T) {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	ny, _ := time.LoadLocation("America/New_York")
	window := func(tz string, days []string, start, end string) *Window {
		f := &File{Hours: &Hours{Timezone: tz, Days: days, Start: start, End: end}}
		w, err := f.Window()
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	openIn := func(t time.Time, loc *time.Location, days []time.Weekday, start, end int) bool {
		lt := t.In(loc)
		m := lt.Hour()*60 + lt.Minute()
		return slices.Contains(days, lt.Weekday()) && m >= start && m < end
	}
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	monSat := append(slices.Clone(weekdays), time.Saturday)
	noColumn := func(hoursCase) string { return "" }
	disagreeing := func(hc hoursCase) string {
		if hc.zones[0] == "America/New_York" {
			return "Asia/Tokyo"
		}
		return "America/New_York"
	}
	configs := []struct {
		name   string
		hours  *CallingHours
		column func(hoursCase) string
		oracle oracleWindow
		exact  bool // callrun's window is the oracle's exactly, where its zones are
		// some says every number can be called at some time of the year (a
		// disagreeing column may leave no hour open in both zones).
		some bool
	}{
		{"hours: New York all day, every day (the floor alone)", &CallingHours{Window: window("America/New_York", all, "00:00", "24:00")}, noColumn,
			func(hoursCase, string, time.Time) bool { return true }, true, true},
		{"hours: New York weekdays 09:00-21:00", &CallingHours{Window: window("America/New_York", all[:5], "09:00", "21:00")}, noColumn,
			func(_ hoursCase, _ string, t time.Time) bool { return openIn(t, ny, weekdays, 9*60, 21*60) }, true, false},
		{"no hours:", &CallingHours{}, noColumn,
			func(hoursCase, string, time.Time) bool { return true }, true, true},
		{"hours: contact Mon-Sat 09:00-19:00, disagreeing column", &CallingHours{Window: window("contact", all[:6], "09:00", "19:00")}, disagreeing,
			func(hc hoursCase, column string, t time.Time) bool {
				for _, loc := range oracleZones(append(slices.Clone(hc.zones), column)) {
					if !openIn(t, loc, monSat, 9*60, 19*60) {
						return false
					}
				}
				return true
			}, false, false},
	}
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			cs := hoursContacts(t, cfg.column)
			var inexact []string
			for i, hc := range hoursCases {
				c := &cs[i]
				exact := cfg.exact && hoursZonesMatch(t, c, hc)
				if cfg.exact && !exact {
					inexact = append(inexact, hc.name)
				}
				opened, outside, missed := 0, 0, 0
				for at := start; at.Before(end); at = at.Add(15 * time.Minute) {
					got := cfg.hours.Open(c, at)
					want := oracleOpen(hc, at) && cfg.oracle(hc, c.TZ, at)
					if got {
						opened++
					}
					if got && !want {
						if outside++; outside <= 3 {
							t.Errorf("%s (%s): callrun would call at %s, outside the called person's window", hc.name, hc.e164, at.Format(time.RFC3339))
						}
					}
					if exact && want && !got {
						if missed++; missed <= 3 {
							t.Errorf("%s (%s): callrun would not call at %s, inside the window", hc.name, hc.e164, at.Format(time.RFC3339))
						}
					}
				}
				if outside > 0 || missed > 0 {
					t.Errorf("%s: %d steps outside the window called, %d inside it missed", hc.name, outside, missed)
				}
				if opened == 0 && cfg.some && !slices.Contains(neverOpen, hc.e164) {
					t.Errorf("%s (%s) could never be called in 2027", hc.name, hc.e164)
				}
			}
			// Where the library knows more zones than the oracle, callrun
			// holds the number to all of them: stricter, never looser. A US
			// toll-free number takes the library's 43 zones of +1 (Guam to
			// Newfoundland; with every state's hours, never open), +1 709 also covers
			// Labrador (the library gives Puerto Rico's clock for it),
			// +61 8 9 also Adelaide, and an Australian mobile Eucla's and
			// Broken Hill's clocks. A landline the library places in a zone
			// of another clock keeps that zone too.
			if want := []string{"US toll-free", "St. John's (UTC-3:30)", "Perth landline", "Australian mobile", "Kaliningrad (library: Bucharest)",
				"Tripoli (library: Bucharest)", "Managua (library: Chicago)", "Recife (library: Noronha)", "Whitehorse (library: Vancouver)",
				"Dawson Creek (library: Edmonton)", "Lloydminster (library: Regina)", "Chihuahua (library: Mazatlan)", "Gold Coast (library: Sydney)",
				"Punta Arenas (library: Santiago)"}; cfg.exact && !slices.Equal(inexact, want) {
				t.Errorf("numbers whose zones differ from the oracle's: %v, want %v", inexact, want)
			}
		})
	}
}

// hoursZonesMatch reports whether callrun's zones for c keep the same
// clocks as the oracle's all year (America/Adak and Anchorage are two
// clocks; Europe/Guernsey and London one).
func hoursZonesMatch(t *testing.T, c *Contact, hc hoursCase) bool {
	t.Helper()
	covers := func(a, b []*time.Location) bool {
		for _, x := range a {
			if !slices.ContainsFunc(b, func(y *time.Location) bool { return sameClock2027(x, y) }) {
				return false
			}
		}
		return true
	}
	got, want := ContactZones(c), oracleZones(hc.zones)
	return covers(got, want) && covers(want, got)
}

func sameClock2027(a, b *time.Location) bool {
	for at := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC); at.Year() == 2027; at = at.Add(time.Hour) {
		_, oa := at.In(a).Zone()
		_, ob := at.In(b).Zone()
		if oa != ob {
			return false
		}
	}
	return true
}

// TestRunHoldsCalledPersonHours2027 runs the campaign against the sandbox
// at moments spread over all of 2027 (every 47 h 11 min, so that each
// hour of the day and each weekday comes round), on a fake clock. The agent
// refuses every call (409), and --retry-failed sends each contact again at
// every run, so every run asks anew whom it may call. The sandbox's ledger
// then says who was phoned at each moment: every call start must fall in
// the called person's window and the campaign's hours, and every number
// must be called at some time of the year.
func TestRunHoldsCalledPersonHours2027(t *testing.T) {
	var sheet strings.Builder
	sheet.WriteString("Phone,First Name,TZ\n")
	column := map[string]string{}
	for i, hc := range hoursCases {
		tz := ""
		if i%3 == 1 { // a column that disagrees with the number, a zone west
			tz = "America/Chicago"
			if hc.zones[0] == "America/Chicago" {
				tz = "America/Denver"
			}
		}
		column[hc.e164] = tz
		fmt.Fprintf(&sheet, "%s,%s,%s\n", hc.e164, hc.name, tz)
	}
	countries := "countries: [US, CA, MX, BR, GB, DE, FR, IN, AU, JP, RU, LY, NI, CL]\n"
	for _, tc := range []struct {
		name, hours string
		window      oracleWindow
		every       bool // every number is called at some moment
	}{
		{"no hours:", "", func(hoursCase, string, time.Time) bool { return true }, true},
		{"hours: contact, column", `hours: {timezone: contact, days: [mon, tue, wed, thu, fri, sat], start: "09:00", end: "19:00"}`,
			func(hc hoursCase, col string, t time.Time) bool {
				zones := slices.Clone(hc.zones)
				if col != "" {
					zones = append(zones, col)
				}
				for _, loc := range oracleZones(zones) {
					lt := t.In(loc)
					m := lt.Hour()*60 + lt.Minute()
					if lt.Weekday() == time.Sunday || m < 9*60 || m >= 19*60 {
						return false
					}
				}
				return true
			}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := strings.Replace(dtCampaign(1000, 4, countries+tc.hours+"\n"), "fields: {phone_number: Phone, first_name: First Name}",
				"fields: {phone_number: Phone, first_name: First Name}\n    timezone_column: TZ", 1)
			if tc.hours == "" {
				// timezone_column needs timezone: contact, so the column
				// stays out; and the called person's hours stay on.
				yaml = strings.Replace(dtCampaign(1000, 4, countries), "unsafe_ignore_called_person_hours: true\n", "", 1)
			}
			e := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": sheet.String()})
			e.srv.SetAgentStatus(e.agents[0].AgentID, "pending") // 409: failed, sent again next run
			byPhone := map[string]hoursCase{}
			for _, hc := range hoursCases {
				byPhone[hc.e164] = hc
			}
			called := map[string]int{}
			runs, outside := 0, 0
			for at := time.Date(2027, 1, 1, 0, 5, 0, 0, time.UTC); at.Year() == 2027; at = at.Add(47*time.Hour + 11*time.Minute) {
				before := len(e.srv.Calls())
				e.mustRun(func(o *RunOptions) {
					o.Now = func() time.Time { return at }
					o.RetryFailed = true
					o.Calls = distinctRefusals{e.client}
				})
				runs++
				for _, c := range e.srv.Calls()[before:] {
					phone := c.Form.Get("phone_number")
					hc := byPhone[phone]
					col := ""
					if tc.hours != "" {
						col = column[phone]
					}
					called[phone]++
					if !oracleOpen(hc, at) || !tc.window(hc, col, at) {
						if outside++; outside <= 5 {
							t.Errorf("%s (%s) was called at %s, outside the window", hc.name, phone, at.Format(time.RFC3339))
						}
					}
				}
			}
			total := 0
			for _, hc := range hoursCases {
				total += called[hc.e164]
				if tc.every && called[hc.e164] == 0 && !slices.Contains(neverOpen, hc.e164) {
					t.Errorf("%s (%s) was never called in %d runs", hc.name, hc.e164, runs)
				}
			}
			if outside > 0 || total == 0 {
				t.Errorf("%d of %d call starts outside the window", outside, total)
			}
			t.Logf("%d runs, %d call starts checked", runs, total)
		})
	}
}

// TestRehearsalCountsWhoWouldHaveWaited: a run against the sandbox
// (Rehearsal) at 03:00 in New York calls everyone, as nobody is phoned,
// and counts the contacts a real run would have left pending; a real run
// at the same moment calls nobody.
func TestRehearsalCountsWhoWouldHaveWaited(t *testing.T) {
	const n = 5
	yaml := strings.Replace(dtCampaign(1000, 2, ""), "unsafe_ignore_called_person_hours: true\n", "", 1)
	night := func() time.Time { return time.Date(2027, 3, 3, 8, 0, 0, 0, time.UTC) } // 03:00 in New York
	live := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": dtSheet(n)})
	res := live.mustRun(func(o *RunOptions) { o.Now = night })
	if res.Started != 0 || res.Deferred != n || len(live.srv.Calls()) != 0 {
		t.Errorf("real run at night: %+v, %d calls", res, len(live.srv.Calls()))
	}
	rehearsal := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": dtSheet(n)})
	res = rehearsal.mustRun(func(o *RunOptions) { o.Now, o.Rehearsal = night, true })
	if res.Sent != n || res.WouldHaveWaited != n || len(rehearsal.srv.Placed()) != n {
		t.Errorf("rehearsal at night: %+v, %d placed", res, len(rehearsal.srv.Placed()))
	}
}

// TestRehearsalKeepsNoCampaignHours: outside the campaign's own hours:,
// a real run waits (here, with --until passed, it stops), and a rehearsal
// calls everyone at once, never sleeping for the window, and counts them;
// its log says the hours are closed.
func TestRehearsalKeepsNoCampaignHours(t *testing.T) {
	const n = 4
	hours := "hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: \"09:00\", end: \"17:00\"}\n"
	// Wednesday 22:00 UTC: 17:00 in New York, the window just closed, and
	// inside the called person's hours (08:00-20:00).
	evening := func() time.Time { return time.Date(2027, 3, 3, 22, 0, 0, 0, time.UTC) }
	live := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, hours), map[string]string{"leads.csv": dtSheet(n)})
	if _, err := live.run(context.Background(), func(o *RunOptions) { o.Now, o.Until = evening, evening() }); !errors.Is(err, ErrOutsideHours) {
		t.Errorf("real run after hours with --until passed: %v, want ErrOutsideHours", err)
	}
	rehearsal := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, hours), map[string]string{"leads.csv": dtSheet(n)})
	res := rehearsal.mustRun(func(o *RunOptions) {
		o.Now, o.Rehearsal = evening, true
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			if d > time.Minute {
				t.Errorf("the rehearsal slept %s", d)
			}
			return nil
		}
	})
	if res.Sent != n || res.WouldHaveWaited != n || len(rehearsal.srv.Placed()) != n {
		t.Errorf("rehearsal after hours: %+v, %d placed", res, len(rehearsal.srv.Placed()))
	}
}

// TestFrenchTerritoriesHolidays: the overseas departments and
// collectivities keep France's rule and their own abolition day;
// Saint-Barthélemy and Saint-Pierre-et-Miquelon keep France's rule too.
func TestFrenchTerritoriesHolidays(t *testing.T) {
	for _, tc := range []struct {
		country, zone string
		day           string // a Thursday or Wednesday in 2027 that is a holiday there
	}{
		{"GP", "America/Guadeloupe", "2027-05-27"},
		{"GF", "America/Cayenne", "2027-06-10"},
		{"RE", "Indian/Reunion", "2027-12-20"},
		{"YT", "Indian/Mayotte", "2027-04-27"},
		{"FR", "Europe/Paris", "2027-03-26"}, // Good Friday (Alsace-Moselle)
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		day, _ := time.ParseInLocation("2006-01-02 15:04", tc.day+" 10:30", loc)
		if CalledPersonOpen(day, tc.country, "", []*time.Location{loc}) {
			t.Errorf("%s: open at %s, a public holiday there", tc.country, day)
		}
		if !CalledPersonOpen(day.AddDate(0, 0, 7), tc.country, "", []*time.Location{loc}) {
			t.Errorf("%s: closed at %s, a working day", tc.country, day.AddDate(0, 0, 7))
		}
	}
	loc, _ := time.LoadLocation("America/St_Barthelemy")
	saturday := time.Date(2027, 1, 9, 11, 0, 0, 0, loc)
	for _, country := range []string{"BL", "MF", "PM"} {
		if CalledPersonOpen(saturday, country, "", []*time.Location{loc}) {
			t.Errorf("%s: open on a Saturday", country)
		}
	}
}

// TestTimezoneColumnWithAFixedZone: a timezone column narrows the called
// person's hours whatever hours: says: with a fixed hours.timezone (or
// none), a New York number whose column says Los Angeles waits until
// 08:00 in Los Angeles too.
func TestTimezoneColumnWithAFixedZone(t *testing.T) {
	for _, hours := range []string{"hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: \"09:00\", end: \"20:00\"}\n", ""} {
		yaml := strings.Replace(dtCampaign(1000, 1, hours+"\n"), "fields: {phone_number: Phone, first_name: First Name}",
			"fields: {phone_number: Phone, first_name: First Name}\n    timezone_column: TZ", 1)
		yaml = strings.Replace(yaml, "unsafe_ignore_called_person_hours: true\n", "", 1)
		e := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": "Phone,First Name,TZ\n+12122010001,NY in LA,America/Los_Angeles\n+12122010002,NY,\n"})
		// Wednesday 14:30 UTC: 09:30 in New York, 06:30 in Los Angeles.
		res := e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return time.Date(2027, 1, 6, 14, 30, 0, 0, time.UTC) } })
		if placed := dtPlaced(e.srv); res.Sent != 1 || res.Deferred != 1 || placed["+12122010001"] != 0 || placed["+12122010002"] != 1 {
			t.Errorf("hours %q: %+v, placed %v; want the New York number alone called", hours, res, placed)
		}
	}
}

// distinctRefusals is a CallStarter that makes each refusal's message name
// the number it refused: a test that uses a refusal to count call starts
// without placing them (a pending agent's 409) would otherwise stop at the
// breaker for refusals that repeat.
type distinctRefusals struct{ CallStarter }

func (d distinctRefusals) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	resp, err := d.CallStarter.StartCallForm(ctx, ep, form)
	var e *apiclient.Error
	if errors.As(err, &e) {
		e.Message += " (" + form + ")"
	}
	return resp, err
}

// TestAustralianRuleAnzacDayObserved: Anzac Day on a weekend is
// observed on the Monday after in the states (Western Australia and the
// ACT for a Saturday or a Sunday; the Northern Territory, Queensland and
// South Australia for a Sunday), as Christmas, Boxing Day, New Year's
// Day and Australia Day are: the docs say a national public holiday's
// observed day is kept, and a number does not say its state.
func TestAustralianRuleAnzacDayObserved(t *testing.T) {
	for _, tc := range []struct {
		zone string
		at   time.Time
	}{
		{"Australia/Perth", time.Date(2027, 4, 26, 10, 0, 0, 0, time.UTC)},    // 25 April 2027 is a Sunday
		{"Australia/Brisbane", time.Date(2027, 4, 26, 10, 0, 0, 0, time.UTC)}, // so is it there
		{"Australia/Perth", time.Date(2026, 4, 27, 10, 0, 0, 0, time.UTC)},    // 25 April 2026 is a Saturday
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		lt := time.Date(tc.at.Year(), tc.at.Month(), tc.at.Day(), 10, 0, 0, 0, loc)
		if australianRule(lt) {
			t.Errorf("%s: open on %s, the Monday Anzac Day is observed on", tc.zone, lt.Format("Mon 2 Jan 2006 15:04"))
		}
	}
	// A plain Monday stays open.
	if lt := time.Date(2027, 5, 3, 10, 0, 0, 0, time.UTC); !australianRule(lt) {
		t.Errorf("closed on %s, a plain Monday", lt.Format("Mon 2 Jan 2006"))
	}
}

// TestRehearsalUntilCountsOnlyWhomItCalled: a rehearsal with --until
// keeps the campaign's hours:, so with timezone: contact and every
// contact's window closed it calls nobody and leaves them pending. It
// used to count them all as called outside their hours, and the run
// said "Rehearsal: 4 contact(s) were called outside calling hours"
// beside "0 calls started".
func TestRehearsalUntilCountsOnlyWhomItCalled(t *testing.T) {
	const n = 4
	hours := "hours: {timezone: contact, days: [mon, tue, wed, thu, fri, sat, sun], start: \"09:00\", end: \"10:00\"}\n"
	evening := func() time.Time { return time.Date(2027, 3, 3, 22, 0, 0, 0, time.UTC) } // 17:00 in New York
	rehearsal := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, hours), map[string]string{"leads.csv": dtSheet(n)})
	res, err := rehearsal.run(context.Background(), func(o *RunOptions) {
		o.Now, o.Until, o.Rehearsal = evening, evening().Add(time.Hour), true
	})
	if err != nil && !errors.Is(err, ErrOutsideHours) {
		t.Fatal(err)
	}
	if placed := len(rehearsal.srv.Placed()); placed != 0 || res.Sent != 0 {
		t.Fatalf("test bug: the rehearsal placed %d calls (%+v)", placed, res)
	}
	if res.WouldHaveWaited != 0 {
		t.Errorf("the rehearsal called nobody and counts %d called outside their hours: %+v", res.WouldHaveWaited, res)
	}
}
