package campaign

import (
	"time"
	_ "time/tzdata" // the called person's zones must load on any machine

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/fr"
)

// The called person's hours: whatever `hours:` says, a call starts only
// when it is between CalledPersonStart and CalledPersonEnd in every zone
// the number may ring in, and inside the stricter hours a country's law
// sets (France). `hours:` and a timezone column only narrow this.
const (
	CalledPersonStart = 8 * 60  // 08:00, in minutes after midnight
	CalledPersonEnd   = 20 * 60 // 20:00, exclusive
)

// calledPersonRule is the floor for the numbers of one country.
type calledPersonRule func(lt time.Time) bool

// defaultCalledPersonRule: 08:00 to 20:00 every day. (The US federal rule
// allows until 21:00; Florida's and several other states' laws stop at
// 20:00, so one default that is lawful across the US.)
func defaultCalledPersonRule(lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	return m >= CalledPersonStart && m < CalledPersonEnd
}

// frenchHolidays are France's public holidays, from a maintained calendar.
var frenchHolidays = func() *cal.Calendar {
	c := &cal.Calendar{}
	c.AddHoliday(fr.Holidays...)
	return c
}()

// frenchRule: France's law on unsolicited calls (décret 2022-1313): only
// on weekdays from 10:00 to 13:00 and 14:00 to 20:00, never on a Saturday,
// Sunday or public holiday.
func frenchRule(lt time.Time) bool {
	if wd := lt.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	if actual, _, _ := frenchHolidays.IsHoliday(lt); actual {
		return false
	}
	m := lt.Hour()*60 + lt.Minute()
	return (m >= 10*60 && m < 13*60) || (m >= 14*60 && m < 20*60)
}

// calledPersonRules holds the countries whose law is stricter than the
// default: France, and its overseas departments, which have their own
// country codes in the phone library.
var calledPersonRules = map[string]calledPersonRule{
	"FR": frenchRule, "GP": frenchRule, "MQ": frenchRule, "GF": frenchRule, "RE": frenchRule, "YT": frenchRule,
}

// CalledPersonOpen reports whether the called person's hours allow a call
// at t to a number of country whose zones are zones: the country's rule
// (08:00-20:00 by default) holds in every zone. With no zone it is false:
// nobody can tell the person's hours.
func CalledPersonOpen(t time.Time, country string, zones []*time.Location) bool {
	rule := calledPersonRules[country]
	if rule == nil {
		rule = defaultCalledPersonRule
	}
	for _, z := range zones {
		if !rule(t.In(z)) {
			return false
		}
	}
	return len(zones) > 0
}
