package campaign

import (
	"slices"
	"testing"
	"time"
)

// TestEaster: Easter Sunday by the algorithm, against the dates the
// churches' tables give, the earliest (22 March) and latest (25 April)
// possible among them.
func TestEaster(t *testing.T) {
	for y, want := range map[int]string{
		1818: "03-22", 1943: "04-25", 2000: "04-23", 2008: "03-23", 2011: "04-24",
		2019: "04-21", 2024: "03-31", 2025: "04-20", 2026: "04-05", 2027: "03-28",
		2028: "04-16", 2038: "04-25", 2285: "03-22",
	} {
		if got := easterDay(y).Format("01-02"); got != want {
			t.Errorf("Easter %d: %s, want %s", y, got, want)
		}
	}
}

// stateHolidayDates are each state's legal holidays on which callrun
// refuses calls, in 2026 and 2027, written out by hand from the sources
// docs/whom-and-when.md names (a weekend holiday with the weekday its
// state keeps for it; both when the sources disagree).
var stateHolidayDates = map[string]map[int][]string{
	"AL": {
		2026: {"01-01", "01-19", "02-16", "02-17", "04-27", "05-25", "06-01", "06-19", "07-03", "07-04", "09-07", "10-12", "11-11", "11-26", "11-27", "12-01", "12-25"},
		2027: {"01-01", "01-18", "02-09", "02-15", "04-26", "05-31", "06-07", "06-18", "06-19", "07-04", "07-05", "09-06", "10-11", "11-11", "11-25", "11-26", "12-01", "12-24", "12-25", "12-31"},
	},
	"LA": {
		2026: {"01-01", "01-08", "01-19", "02-16", "02-17", "04-03", "05-25", "06-03", "06-19", "07-03", "07-04", "08-30", "09-07", "10-12", "11-01", "11-03", "11-11", "11-26", "11-27", "12-25"},
		2027: {"01-01", "01-08", "01-18", "01-19", "02-09", "02-15", "03-26", "05-31", "06-03", "06-19", "07-04", "07-05", "08-30", "09-06", "10-11", "11-01", "11-11", "11-25", "11-26", "12-24", "12-25", "12-31"},
	},
	"MS": {
		2026: {"01-01", "01-19", "02-16", "02-17", "04-27", "05-25", "07-03", "07-04", "07-06", "09-07", "11-11", "11-26", "12-25"},
		2027: {"01-01", "01-18", "02-09", "02-15", "04-26", "05-31", "07-04", "07-05", "09-06", "11-11", "11-25", "12-24", "12-25", "12-27", "12-31"},
	},
	"PA": {
		2026: {"01-01", "01-19", "02-16", "04-03", "05-25", "06-14", "06-15", "07-03", "07-04", "07-06", "09-07", "10-12", "11-03", "11-11", "11-26", "12-15", "12-25"},
		2027: {"01-01", "01-18", "02-15", "03-26", "05-31", "06-14", "07-04", "07-05", "09-06", "10-11", "11-02", "11-11", "11-25", "12-15", "12-24", "12-25", "12-27", "12-31"},
	},
	"RI": {
		2026: {"01-01", "01-19", "02-16", "05-04", "05-25", "06-19", "07-03", "07-04", "07-06", "08-10", "09-07", "10-12", "11-03", "11-11", "11-26", "12-25"},
		2027: {"01-01", "01-18", "02-15", "05-04", "05-31", "06-18", "06-19", "06-21", "07-04", "07-05", "08-09", "09-06", "10-11", "11-11", "11-25", "12-24", "12-25", "12-27", "12-31"},
	},
	"UT": {
		2026: {"01-01", "01-19", "02-16", "04-03", "04-05", "05-25", "06-15", "06-19", "07-03", "07-04", "07-24", "09-07", "10-12", "11-11", "11-26", "12-25"},
		2027: {"01-01", "01-18", "02-15", "03-26", "03-28", "05-31", "06-19", "06-21", "07-04", "07-05", "07-23", "07-24", "09-06", "10-11", "11-11", "11-25", "12-24", "12-25", "12-31"},
	},
}

// stateNumbers are a number of each holiday state, in one zone each.
var stateNumbers = map[string]string{
	"AL": "+12052010123", "LA": "+15042010123", "MS": "+16012010123",
	"PA": "+12152010123", "RI": "+14012010123", "UT": "+18012010123",
}

// TestStateHolidays: each state's holidays in 2026 and 2027 are the
// days written out above, and no others; and through the calling hours
// a number of the state, at 11:00 its own time (inside every state's
// window, Saturdays included), is refused on exactly those days and on
// the Sundays its law forbids, every day of both years.
func TestStateHolidays(t *testing.T) {
	if len(stateHolidayDates) != len(holidayStates) {
		t.Fatalf("%d states written out, %d kept", len(stateHolidayDates), len(holidayStates))
	}
	hours := &CallingHours{}
	for state, years := range stateHolidayDates {
		i := holidayIndex(state)
		if i < 0 {
			t.Fatalf("%s: no holidays kept", state)
		}
		c := stateContact(t, stateNumbers[state])
		if got := ContactState(c); got != state {
			t.Fatalf("%s: state %q, want %q", stateNumbers[state], got, state)
		}
		zones := ContactZones(c)
		for y, want := range years {
			var got []string
			for d := time.Date(y, 1, 1, 12, 0, 0, 0, time.UTC); d.Year() == y; d = d.AddDate(0, 0, 1) {
				if holidaysOf(y)[i].has(d.YearDay()) {
					got = append(got, d.Format("01-02"))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %d: holidays\n%v\nwant\n%v", state, y, got, want)
			}
			for d := time.Date(y, 1, 1, 11, 0, 0, 0, zones[0]); d.Year() == y; d = d.AddDate(0, 0, 1) {
				closed := slices.Contains(want, d.Format("01-02")) || usStateHours[state][d.Weekday()] == (dayHours{})
				if open := hours.Open(c, d); open == closed {
					t.Errorf("%s (%s): open %v at %s, want %v", state, c.Phone, open, d.Format("Mon 2006-01-02 15:04 MST"), !closed)
				}
			}
		}
	}
}

// TestStateHolidaysUnknownState: a US number of no known state keeps
// every state's holidays at once: its rule refuses each day any state
// lists, at 11:00 in New York's zone, and allows a weekday none lists;
// a state with no holiday law (New York, Wyoming) keeps none of them.
func TestStateHolidaysUnknownState(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	denver, _ := time.LoadLocation("America/Denver")
	for y := 2026; y <= 2027; y++ {
		any := map[string]bool{}
		for _, years := range stateHolidayDates {
			for _, d := range years[y] {
				any[d] = true
			}
		}
		for d := time.Date(y, 1, 1, 11, 0, 0, 0, ny); d.Year() == y; d = d.AddDate(0, 0, 1) {
			// Every state's hours at once: 10:00-18:00, Saturdays until noon, never on Sundays.
			closed := any[d.Format("01-02")] || d.Weekday() == time.Sunday
			if open := CalledPersonOpen(d, "US", "", []*time.Location{ny}); open == closed {
				t.Errorf("no known state at %s: open %v, want %v", d.Format("Mon 2006-01-02 15:04"), open, !closed)
			}
		}
	}
	victory := time.Date(2027, 8, 9, 11, 0, 0, 0, ny) // Rhode Island's alone
	if CalledPersonOpen(victory, "US", "", []*time.Location{ny}) {
		t.Errorf("no known state: open on Victory Day 2027")
	}
	if !CalledPersonOpen(victory, "US", "NY", []*time.Location{ny}) {
		t.Errorf("New York: closed on Rhode Island's Victory Day")
	}
	if at := time.Date(2027, 7, 23, 11, 0, 0, 0, denver); !CalledPersonOpen(at, "US", "WY", []*time.Location{denver}) ||
		CalledPersonOpen(at, "US", "UT", []*time.Location{denver}) {
		t.Errorf("23 July 2027 (Pioneer Day kept): Wyoming must keep the floor alone, Utah must refuse")
	}
}

// TestStateHolidayByLocalDate: the day is the called person's: a Utah
// number at 17:30 in Denver on Pioneer Day's eve (23:30 UTC) is open, and
// on the day closed; one instant is on the holiday in one zone and not in
// another (CalledPersonOpen refuses when any zone's rule does).
func TestStateHolidayByLocalDate(t *testing.T) {
	denver, _ := time.LoadLocation("America/Denver")
	ny, _ := time.LoadLocation("America/New_York")
	hnl, _ := time.LoadLocation("Pacific/Honolulu")
	eve := time.Date(2026, 7, 23, 17, 30, 0, 0, denver) // Thursday, Utah's Pioneer Day is Friday the 24th
	if !CalledPersonOpen(eve, "US", "UT", []*time.Location{denver}) {
		t.Errorf("Utah at %s: closed, the eve of Pioneer Day", eve)
	}
	if CalledPersonOpen(eve.AddDate(0, 0, 1), "US", "UT", []*time.Location{denver}) {
		t.Errorf("Utah at %s: open on Pioneer Day", eve.AddDate(0, 0, 1))
	}
	// 18:30 on Wednesday 23 July 2025 in Honolulu is 00:30 on Thursday
	// the 24th, Pioneer Day, in New York: for a number of no known state
	// the day is a holiday in one of its zones and not in the other.
	at := time.Date(2025, 7, 23, 18, 30, 0, 0, hnl)
	if i := holidayIndex(""); !onHoliday(i, at.In(ny)) || onHoliday(i, at.In(hnl)) {
		t.Errorf("%s: on the holiday in New York %v, in Honolulu %v; want true, false", at, onHoliday(i, at.In(ny)), onHoliday(i, at.In(hnl)))
	}
}

// TestStateHolidayLeapYears: the day of the year onHoliday reads is
// time's own in leap years and others (Pioneer Day, 24 July, is day 206
// in 2028 and 205 in 2027), for every state and every day.
func TestStateHolidayLeapYears(t *testing.T) {
	for _, y := range []int{2000, 2024, 2027, 2028, 2100} {
		for d := time.Date(y, 1, 1, 12, 0, 0, 0, time.UTC); d.Year() == y; d = d.AddDate(0, 0, 1) {
			for i := range len(holidayYear{}) {
				if got, want := onHoliday(i, d), holidaysOf(y)[i].has(d.YearDay()); got != want {
					t.Fatalf("%s, holidays %d: onHoliday %v, want %v", d.Format("2006-01-02"), i, got, want)
				}
			}
		}
	}
	ut := holidayIndex("UT")
	for _, d := range []time.Time{time.Date(2028, 7, 24, 12, 0, 0, 0, time.UTC), time.Date(2027, 7, 24, 12, 0, 0, 0, time.UTC)} {
		if !onHoliday(ut, d) || onHoliday(ut, d.AddDate(0, 0, 1)) {
			t.Errorf("Utah: %s must be a holiday and the day after not", d.Format("2006-01-02"))
		}
	}
}

// TestRunKeepsRhodeIslandsHolidays runs against the sandbox, on a fake
// clock, with no hours: and a Rhode Island number (Providence, Eastern
// time): on Victory Day 2027 (Monday 9 August) at 11:00 its time, inside
// Rhode Island's weekday hours, the ledger holds no call and the contact
// waits until the next day; on Tuesday the 10th at 11:00 it holds one.
func TestRunKeepsRhodeIslandsHolidays(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	holiday := time.Date(2027, 8, 9, 11, 0, 0, 0, ny)
	c := stateContact(t, "+14012010123")
	if wt := newWaits(&File{}, &CallingHours{}).hoursWait(c, holiday); wt == nil || !wt.Until.Equal(time.Date(2027, 8, 10, 9, 0, 0, 0, ny)) {
		t.Errorf("on Victory Day at 11:00: waits %+v, want until Tuesday 09:00", wt)
	}
	runOneStateNumber(t, "+14012010123", "Providence", holiday, time.Date(2027, 8, 10, 11, 0, 0, 0, ny))
}

// TestPlanCountsStateHolidays: the plan at 11:00 on Utah's Pioneer Day
// 2026 counts the Utah number outside its hours, with its next opening
// the next working day (Saturday 25 July, 08:00), and the Wyoming one
// (same zone, no holiday law) inside them.
func TestPlanCountsStateHolidays(t *testing.T) {
	denver, _ := time.LoadLocation("America/Denver")
	w := newPlanWhen(&CallingHours{}, time.Date(2026, 7, 24, 11, 0, 0, 0, denver))
	w.add(stateContact(t, "+18012010123")) // Salt Lake City
	w.add(stateContact(t, "+13072010123")) // Cheyenne
	res, next := w.result()
	if res.OutsideNow != 1 || res.Never != 0 || !next.Equal(time.Date(2026, 7, 25, 8, 0, 0, 0, denver)) {
		t.Errorf("plan on Pioneer Day: %+v, next %s; want the Utah number alone outside, next Saturday 08:00", res, next)
	}
}

// BenchmarkStateRuleHoliday is the cost of one called person's rule for
// a number of a holiday state, hours and holidays, per call.
func BenchmarkStateRuleHoliday(b *testing.B) {
	ny, _ := time.LoadLocation("America/New_York")
	at := time.Date(2027, 3, 3, 11, 0, 0, 0, ny)
	zones := []*time.Location{ny}
	for _, s := range []string{"RI", "", "NY"} {
		b.Run("state="+s, func(b *testing.B) {
			for b.Loop() {
				CalledPersonOpen(at, "US", s, zones)
			}
		})
	}
	b.Run("holiday-only", func(b *testing.B) {
		lt := at.In(ny)
		for b.Loop() {
			onHoliday(4, lt)
		}
	})
}

// TestNextOpenAcrossHolidayWeeks: a campaign whose hours: keep one
// weekday, whose state keeps that weekday a holiday two weeks running
// (Christmas and New Year's Day on the Sundays of 2022, kept on the
// Mondays after; on the Saturdays of 2021, kept on the Fridays before),
// is called the week after, not counted as never to be called.
func TestNextOpenAcrossHolidayWeeks(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		day  time.Weekday
		now  time.Time
		want time.Time
	}{
		{time.Monday, time.Date(2022, 12, 26, 11, 0, 0, 0, ny), time.Date(2023, 1, 9, 10, 0, 0, 0, ny)},
		{time.Friday, time.Date(2021, 12, 24, 11, 0, 0, 0, ny), time.Date(2022, 1, 7, 10, 0, 0, 0, ny)},
	} {
		var days [7]bool
		days[tc.day] = true
		h := &CallingHours{Window: &Window{Loc: ny, days: days, start: 10 * 60, end: 17 * 60}}
		for _, number := range []string{stateNumbers["PA"], "+12015550123"} { // PA, and New Jersey's when every day is open
			c := stateContact(t, number)
			got := h.NextOpen(c, tc.now)
			if number == stateNumbers["PA"] && !got.Equal(tc.want) {
				t.Errorf("%s, hours on %s only, from %s: next open %v, want %v", number, tc.day, tc.now, got, tc.want)
			}
			if got.IsZero() {
				t.Errorf("%s, hours on %s only, from %s: never", number, tc.day, tc.now)
			}
		}
	}
}
