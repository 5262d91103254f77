package campaign

import (
	"sync/atomic"
	"time"
)

// The US states whose telemarketing laws forbid calls on their legal
// holidays: Alabama, Louisiana, Mississippi, Pennsylvania, Rhode Island
// and Utah. Each state's holidays are computed for any year from the
// rules of its holiday statute (a fixed date, the nth weekday of a month,
// a day counted from Easter), and a call to a number of the state is
// refused on any of them, by the called person's own date in each of the
// number's zones. A number of no known state is held to every state's
// holidays at once, as to every state's hours.
//
// Where the sources read disagree (a statute's text against a summary,
// a state office's calendar against a court clerk's), the table takes
// the day: a wrong entry costs a day of calls, never lets one through.
// docs/whom-and-when.md names the sources and the readings that are
// callrun's own.

// holidayStates are the states whose law forbids calls on their legal
// holidays, in the order of their bits in a [holidayYear].
var holidayStates = []string{"AL", "LA", "MS", "PA", "RI", "UT"}

// observed says which days a state's law moves a fixed-date holiday to
// when it falls on a weekend; the date itself is always kept.
type observed struct {
	satFri, satMon, sunMon bool
}

// holidayDays collects one year's holidays of one state, as bits by the
// day of the year (1-366).
type holidayDays struct {
	year int
	obs  observed
	bits [6]uint64
}

func (h *holidayDays) set(t time.Time) {
	if t.Year() != h.year {
		return
	}
	d := t.YearDay()
	h.bits[d>>6] |= 1 << (d & 63)
}

func (h *holidayDays) has(yday int) bool { return h.bits[yday>>6]&(1<<(yday&63)) != 0 }

// date keeps the day m/d of year y as it is, never moved.
func (h *holidayDays) date(y int, m time.Month, d int) {
	h.set(time.Date(y, m, d, 12, 0, 0, 0, time.UTC))
}

// fixed keeps m/d of year y and, when it falls on a weekend, the days
// the state's law moves it to.
func (h *holidayDays) fixed(y int, m time.Month, d int) {
	t := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	h.set(t)
	switch t.Weekday() {
	case time.Saturday:
		if h.obs.satFri {
			h.set(t.AddDate(0, 0, -1))
		}
		if h.obs.satMon {
			h.set(t.AddDate(0, 0, 2))
		}
	case time.Sunday:
		if h.obs.sunMon {
			h.set(t.AddDate(0, 0, 1))
		}
	}
}

// nthWeekday returns the nth wd of month m of year y (n > 0), or the
// last one (n == -1).
func nthWeekday(y int, m time.Month, wd time.Weekday, n int) time.Time {
	if n < 0 {
		last := time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC)
		return last.AddDate(0, 0, -((int(last.Weekday()) - int(wd) + 7) % 7))
	}
	first := time.Date(y, m, 1, 12, 0, 0, 0, time.UTC)
	return first.AddDate(0, 0, (int(wd)-int(first.Weekday())+7)%7+7*(n-1))
}

// nth keeps the nth wd of month m of year y (the last with n == -1).
func (h *holidayDays) nth(y int, m time.Month, wd time.Weekday, n int) {
	h.set(nthWeekday(y, m, wd, n))
}

// easterDay returns Easter Sunday of year y in the Gregorian calendar
// (the anonymous algorithm of Meeus, Jones and Butcher).
func easterDay(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 12, 0, 0, 0, time.UTC)
}

// easter keeps the day offset days from Easter Sunday of year y (-47:
// Mardi Gras, -2: Good Friday).
func (h *holidayDays) easter(y, offset int) { h.set(easterDay(y).AddDate(0, 0, offset)) }

// Days of the federal calendar that each state below keeps, by its own
// name for them.
func (h *holidayDays) newYear(y int)      { h.fixed(y, time.January, 1) }
func (h *holidayDays) mlk(y int)          { h.nth(y, time.January, time.Monday, 3) }
func (h *holidayDays) washington(y int)   { h.nth(y, time.February, time.Monday, 3) }
func (h *holidayDays) memorial(y int)     { h.nth(y, time.May, time.Monday, -1) }
func (h *holidayDays) independence(y int) { h.fixed(y, time.July, 4) }
func (h *holidayDays) labor(y int)        { h.nth(y, time.September, time.Monday, 1) }
func (h *holidayDays) columbus(y int)     { h.nth(y, time.October, time.Monday, 2) }
func (h *holidayDays) thanksgiving(y int) { h.nth(y, time.November, time.Thursday, 4) }
func (h *holidayDays) christmas(y int)    { h.fixed(y, time.December, 25) }

// electionDay keeps the Tuesday after the first Monday of November.
func (h *holidayDays) electionDay(y int) {
	h.set(nthWeekday(y, time.November, time.Monday, 1).AddDate(0, 0, 1))
}

// stateHolidayRules are the states' legal holidays, one func a state that
// keeps year y's holidays (it is called for the year before and after
// too, so that a holiday moved across New Year is kept). The sources and
// readings are in docs/whom-and-when.md.
var stateHolidayRules = map[string]struct {
	obs   observed
	rules func(h *holidayDays, y int)
}{
	// Ala. Code § 1-3-8; a holiday on a Saturday is kept the Friday
	// before, on a Sunday the Monday after.
	"AL": {observed{satFri: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.mlk(y)        // Robert E. Lee's and Martin Luther King's birthdays
		h.washington(y) // George Washington's and Thomas Jefferson's
		h.easter(y, -47)
		h.nth(y, time.April, time.Monday, 4) // Confederate Memorial Day
		h.memorial(y)
		h.nth(y, time.June, time.Monday, 1) // Jefferson Davis's birthday
		h.fixed(y, time.June, 19)           // Juneteenth
		h.independence(y)
		h.labor(y)
		h.columbus(y) // and Fraternal Day, American Indian Heritage Day
		h.fixed(y, time.November, 11)
		h.thanksgiving(y)
		h.set(nthWeekday(y, time.November, time.Thursday, 4).AddDate(0, 0, 1))
		h.fixed(y, time.December, 1) // Mrs. Rosa L. Parks Day
		h.christmas(y)
	}},
	// La. R.S. 1:55; only New Year's Day, Independence Day and
	// Christmas move off a weekend (to the Friday before a Saturday, the
	// Monday after a Sunday).
	"LA": {observed{satFri: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.date(y, time.January, 8) // Battle of New Orleans
		h.mlk(y)
		h.date(y, time.January, 19) // Robert E. Lee Day
		h.washington(y)
		h.easter(y, -47) // Mardi Gras
		h.easter(y, -2)  // Good Friday
		h.memorial(y)
		h.date(y, time.June, 3)  // Confederate Memorial Day
		h.date(y, time.June, 19) // Juneteenth
		h.independence(y)
		h.date(y, time.August, 30) // Huey P. Long Day
		h.labor(y)
		h.columbus(y)
		h.date(y, time.November, 1) // All Saints' Day
		if y%2 == 0 {
			h.electionDay(y) // general election day, in even years
		}
		h.date(y, time.November, 11)
		h.thanksgiving(y)
		h.set(nthWeekday(y, time.November, time.Thursday, 4).AddDate(0, 0, 1))
		h.christmas(y)
	}},
	// Miss. Code § 3-3-7 moves a Sunday holiday to the Monday; other
	// texts move a Saturday one to the Friday before or the Monday after.
	"MS": {observed{satFri: true, satMon: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.mlk(y) // and Robert E. Lee's birthday
		h.washington(y)
		h.easter(y, -47)                      // Mardi Gras, a county's or town's choice
		h.nth(y, time.April, time.Monday, -1) // Confederate Memorial Day
		h.memorial(y)                         // and Jefferson Davis's birthday
		h.independence(y)
		h.labor(y)
		h.fixed(y, time.November, 11)
		h.thanksgiving(y)
		h.christmas(y)
	}},
	// 44 P.S. § 11, which the Telemarketer Registration Act's ban on
	// calls on legal holidays (73 P.S. § 2245(a)(10)) reads; a Sunday
	// holiday moves to the Monday, a Saturday one by other texts to the
	// Monday or the Friday.
	"PA": {observed{satFri: true, satMon: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.mlk(y)
		h.washington(y)
		h.easter(y, -2) // Good Friday
		h.memorial(y)
		h.fixed(y, time.June, 14) // Flag Day
		h.independence(y)
		h.labor(y)
		h.columbus(y)
		h.electionDay(y)
		h.fixed(y, time.November, 11)
		h.thanksgiving(y)
		h.date(y, time.December, 15) // Bill of Rights Day, in one summary's list
		h.christmas(y)
	}},
	// R.I. Gen. Laws § 25-1-1 moves a weekend holiday to the Monday;
	// the state's calendars keep a Saturday one on the Friday.
	"RI": {observed{satFri: true, satMon: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.mlk(y)
		h.washington(y)
		h.fixed(y, time.May, 4) // Rhode Island Independence Day
		h.memorial(y)
		h.fixed(y, time.June, 19) // Juneteenth
		h.independence(y)
		h.nth(y, time.August, time.Monday, 2) // Victory Day
		h.labor(y)
		h.columbus(y)
		if y%2 == 0 {
			h.electionDay(y) // in the years of a general election
		}
		h.fixed(y, time.November, 11)
		h.thanksgiving(y)
		h.christmas(y)
	}},
	// Utah Code § 63G-1-301: its fixed dates move to the Friday before a
	// Saturday and the Monday after a Sunday; Juneteenth to a Monday.
	"UT": {observed{satFri: true, sunMon: true}, func(h *holidayDays, y int) {
		h.newYear(y)
		h.mlk(y)
		h.washington(y)
		h.easter(y, -2) // Good Friday
		h.easter(y, 0)  // Easter Sunday
		h.memorial(y)
		// June 19, and the Monday the statute keeps for it: the one after a
		// weekend, else the one before.
		june19 := time.Date(y, time.June, 19, 12, 0, 0, 0, time.UTC)
		h.set(june19)
		switch wd := june19.Weekday(); wd {
		case time.Saturday:
			h.set(june19.AddDate(0, 0, 2))
		case time.Sunday:
			h.set(june19.AddDate(0, 0, 1))
		default:
			h.set(june19.AddDate(0, 0, 1-int(wd)))
		}
		h.independence(y)
		h.fixed(y, time.July, 24) // Pioneer Day
		h.labor(y)
		h.columbus(y)
		h.fixed(y, time.November, 11)
		h.thanksgiving(y)
		h.christmas(y)
	}},
}

// holidayYear is one year's holidays of every state of holidayStates, and
// under index len(holidayStates) of all of them at once.
type holidayYear [7]holidayDays

// holidayCacheFrom and holidayCacheYears bound the years whose holidays
// are kept once computed; a year outside them is computed on each ask.
const (
	holidayCacheFrom  = 2000
	holidayCacheYears = 200
)

var holidayCache [holidayCacheYears]atomic.Pointer[holidayYear]

// holidaysOf returns year y's holidays, computed once a year.
func holidaysOf(y int) *holidayYear {
	i := y - holidayCacheFrom
	if i < 0 || i >= holidayCacheYears {
		return computeHolidays(y)
	}
	if hy := holidayCache[i].Load(); hy != nil {
		return hy
	}
	hy := computeHolidays(y)
	holidayCache[i].Store(hy)
	return hy
}

func computeHolidays(y int) *holidayYear {
	var hy holidayYear
	all := &hy[len(holidayStates)]
	all.year = y
	for i, s := range holidayStates {
		r := stateHolidayRules[s]
		h := &hy[i]
		h.year, h.obs = y, r.obs
		for _, yy := range []int{y - 1, y, y + 1} {
			r.rules(h, yy)
		}
		for w := range all.bits {
			all.bits[w] |= h.bits[w]
		}
	}
	return &hy
}

// holidayIndex returns the index of state's holidays in a [holidayYear]:
// every state's at once for "" (a state not known), -1 for a state whose
// law keeps no holidays.
func holidayIndex(state string) int {
	if state == "" {
		return len(holidayStates)
	}
	for i, s := range holidayStates {
		if s == state {
			return i
		}
	}
	return -1
}

// onHoliday reports whether lt, the called person's time, is on a legal
// holiday of the holidays at index i (see [holidayIndex]).
func onHoliday(i int, lt time.Time) bool {
	if i < 0 {
		return false
	}
	y, m, d := lt.Date() // one reading of the date, not Year's and YearDay's two
	yday := daysBefore[m-1] + d
	if m > time.February && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		yday++
	}
	return holidaysOf(y)[i].has(yday)
}

// daysBefore are the days of a common year before each month.
var daysBefore = [12]int{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}
