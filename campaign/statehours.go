package campaign

import (
	"strings"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report/store"
	"github.com/nyaruka/phonenumbers"
)

// The US states whose telemarketing laws allow fewer calling hours than
// callrun's floor (08:00-20:00 in every zone of the number): a call to a
// US number keeps to the floor and to its state's hours, in the called
// person's own zones. The state is the one the phone library's geocoding
// gives the number ([phone.USState]); a US number whose state it cannot
// tell (toll-free, non-geographic) keeps to every state's hours at once.
//
// The table is from published summaries of the states' laws, and where
// they disagree it takes the stricter reading: a wrong entry costs calling
// hours, never a call outside them. The states that forbid calls on their
// legal holidays too (Alabama, Louisiana, Mississippi, Pennsylvania,
// Rhode Island, Utah) have them kept, by the called person's own date in
// each zone, and a number of no known state keeps every state's holidays
// at once (see stateholidays.go). Wyoming's law sets no hours: its
// numbers keep the floor.

// dayHours is one day's calling window, in minutes after midnight, the
// end exclusive; the zero window forbids the day.
type dayHours struct{ start, end int }

// weekHours are a state's calling windows, by time.Weekday.
type weekHours [7]dayHours

// everyDay returns the window from start to end (hours) on every day.
func everyDay(start, end int) weekHours {
	var w weekHours
	for d := range w {
		w[d] = dayHours{start * 60, end * 60}
	}
	return w
}

// on returns w with day's window from start to end, in minutes.
func (w weekHours) on(day time.Weekday, start, end int) weekHours {
	w[day] = dayHours{start, end}
	return w
}

// noSunday returns w with Sundays forbidden.
func (w weekHours) noSunday() weekHours { return w.on(time.Sunday, 0, 0) }

// usStateHours are the states' calling windows, in the called person's
// time, each the stricter of the published summaries read; only what
// narrows the floor matters (a window past 20:00 stops at 20:00).
var usStateHours = map[string]weekHours{
	"AL": everyDay(8, 20).noSunday(),                                 // no Sundays
	"CA": everyDay(9, 20),                                            // from 09:00
	"CT": everyDay(9, 20),                                            // 09:00-20:00
	"FL": everyDay(8, 20),                                            // 08:00-20:00
	"IL": everyDay(9, 20),                                            // from 09:00
	"KY": everyDay(10, 20),                                           // from 10:00
	"LA": everyDay(8, 20).noSunday(),                                 // no Sundays
	"MA": everyDay(8, 20),                                            // 08:00-20:00
	"MD": everyDay(8, 20),                                            // 08:00-20:00
	"MI": everyDay(9, 20),                                            // from 09:00
	"MN": everyDay(9, 20),                                            // from 09:00
	"MS": everyDay(8, 20).noSunday(),                                 // no Sundays
	"NM": everyDay(9, 20),                                            // from 09:00
	"NV": everyDay(9, 20),                                            // 09:00-20:00
	"OK": everyDay(9, 20),                                            // from 09:00 (automatic dialing)
	"PA": everyDay(9, 20).on(time.Saturday, 9*60, 12*60),             // Saturdays until noon
	"RI": everyDay(9, 18).on(time.Saturday, 10*60, 17*60).noSunday(), // 09:00-18:00, Saturdays 10:00-17:00
	"TX": everyDay(9, 20).on(time.Sunday, 12*60, 20*60),              // Sundays from noon
	"UT": everyDay(8, 20).noSunday(),                                 // no Sundays
	"WA": everyDay(8, 20),                                            // 08:00-20:00
}

// open reports whether w allows a call at lt, the called person's time.
func (w weekHours) open(lt time.Time) bool {
	d := w[lt.Weekday()]
	m := lt.Hour()*60 + lt.Minute()
	return m >= d.start && m < d.end
}

// usStrictestHours are every state's hours at once: each day's latest
// start and earliest end, forbidden where any state forbids the day.
var usStrictestHours = func() weekHours {
	w := everyDay(0, 24)
	for _, s := range usStateHours {
		for d := range w {
			w[d].start = max(w[d].start, s[d].start)
			w[d].end = min(w[d].end, s[d].end)
			if w[d].start >= w[d].end {
				w[d] = dayHours{}
			}
		}
	}
	return w
}()

// usStateRules are the rules of usStateHours' states, each with the
// floor and the state's legal holidays, and under "" the rule of every
// state at once (hours and holidays), for a US number whose state is not
// known.
var usStateRules = func() map[string]calledPersonRule {
	m := map[string]calledPersonRule{}
	for s, w := range usStateHours {
		m[s] = w.withFloor(holidayIndex(s))
	}
	m[""] = usStrictestHours.withFloor(holidayIndex(""))
	return m
}()

// withFloor returns the rule that allows a call where both w and the
// floor ([defaultCalledPersonRule]) do, on a day that is none of the
// holidays at index holidays of a [holidayYear] (-1: none).
func (w weekHours) withFloor(holidays int) calledPersonRule {
	return func(lt time.Time) bool {
		return defaultCalledPersonRule(lt) && w.open(lt) && !onHoliday(holidays, lt)
	}
}

// usStateRule returns the rule for a US number of state (its
// [phone.USState]): the floor and the state's hours and holidays; every
// state's hours and holidays at once when state is "" (not known).
func usStateRule(state string) calledPersonRule {
	if r := usStateRules[state]; r != nil {
		return r
	}
	return defaultCalledPersonRule
}

// stateAttemptCaps are the US states whose law caps the calls to one
// person in 24 hours: at most three on the same subject (Florida's
// Telephone Solicitation Act, Fla. Stat. § 501.616(6)(b), 2021;
// Oklahoma's Telephone Solicitation Act, 2022; Maryland's Stop the Spam
// Calls Act, 2023; as
// https://www.dnc.com/news/compliance-refresher-calling-florida-and-oklahoma
// and https://legalclarity.org/florida-telemarketing-laws-and-regulations
// summarise them). Every campaign on a store is taken to be on the same
// subject: stricter, never looser.
var stateAttemptCaps = map[string][]store.PressureLimit{
	"FL": {{Within: 24 * time.Hour, Max: stateAttemptMax, Law: "Florida's law on calls to one person"}},
	"OK": {{Within: 24 * time.Hour, Max: stateAttemptMax, Law: "Oklahoma's law on calls to one person"}},
	"MD": {{Within: 24 * time.Hour, Max: stateAttemptMax, Law: "Maryland's law on calls to one person"}},
}

// stateAttemptMax is the calls in 24 hours every cap of stateAttemptCaps
// allows: a number called fewer times is held by none of them.
const stateAttemptMax = 3

// stateAttemptLimit is those states' cap for a US number of no known
// state.
var stateAttemptLimit = []store.PressureLimit{{Within: 24 * time.Hour, Max: stateAttemptMax, Law: "Florida's, Oklahoma's and Maryland's laws on calls to one person (the number's state is not known)"}}

// StateAttemptLimits returns the limits a number is held to besides the
// campaign's pressure: for a US number of a state in stateAttemptCaps,
// or whose state is not known (it may be one of them), at most three
// call starts in 24 hours. It only matters when pressure: per_day is
// above 3.
func StateAttemptLimits(number string) []store.PressureLimit {
	if !strings.HasPrefix(number, "+1") {
		return nil
	}
	if s := phone.USState(number); s != "" {
		return stateAttemptCaps[s]
	}
	n, err := phonenumbers.Parse(number, "US")
	if err != nil || phonenumbers.GetRegionCodeForNumber(n) == "US" || phonenumbers.GetRegionCodeForNumber(n) == "" {
		return stateAttemptLimit // a US number of no known state, or one not read
	}
	return nil
}
