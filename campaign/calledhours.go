package campaign

import (
	"slices"
	"time"
	_ "time/tzdata" // the called person's zones must load on any machine

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/aa"
	"github.com/rickar/cal/v2/au"
	"github.com/rickar/cal/v2/fr"
)

// The called person's hours: whatever `hours:` says, a call starts only
// when it is between CalledPersonStart and CalledPersonEnd in every zone
// the number may ring in, and inside the stricter hours a country's law
// sets (France, Canada, Australia). `hours:` and a timezone column only
// narrow this.
const (
	CalledPersonStart = 8 * 60  // 08:00, in minutes after midnight
	CalledPersonEnd   = 20 * 60 // 20:00, exclusive
)

// calledPersonRule is the floor for the numbers of one country.
type calledPersonRule func(lt time.Time) bool

// defaultCalledPersonRule: 08:00 to 20:00 every day. (The US federal rule
// allows until 21:00; Florida's and several other states' laws stop at
// 20:00. The states that start later, stop earlier or forbid Sundays
// narrow it further: see usStateHours.)
func defaultCalledPersonRule(lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	return m >= CalledPersonStart && m < CalledPersonEnd
}

// frenchHolidays are France's public holidays, from a maintained
// calendar, with Alsace-Moselle's Good Friday and 26 December for every
// French number (stricter, never looser: a number does not say whether it
// rings in Strasbourg).
var frenchHolidays = func() []*cal.Holiday {
	return append(slices.Clone(fr.Holidays), aa.GoodFriday, aa.ChristmasDay2)
}()

// overseasHolidays are the days on which the overseas departments and
// collectivities mark the abolition of slavery, besides France's.
var overseasHolidays = map[string]*cal.Holiday{
	"GP": abolition(time.May, 27), "MQ": abolition(time.May, 22), "GF": abolition(time.June, 10),
	"RE": abolition(time.December, 20), "YT": abolition(time.April, 27),
	"BL": abolition(time.October, 9), "MF": abolition(time.May, 28),
}

func abolition(m time.Month, d int) *cal.Holiday {
	return &cal.Holiday{Name: "Abolition de l'esclavage", Type: cal.ObservancePublic, Month: m, Day: d, Func: cal.CalcDayOfMonth}
}

// frenchRule returns France's law on unsolicited calls (décret 2022-1313)
// for a country of its: only on weekdays from 10:00 to 13:00 and 14:00 to
// 20:00, never on a Saturday, Sunday or public holiday (France's, and the
// territory's own).
func frenchRule(region string) calledPersonRule {
	c := &cal.Calendar{}
	c.AddHoliday(frenchHolidays...)
	if h := overseasHolidays[region]; h != nil {
		c.AddHoliday(h)
	}
	if region == "GP" || region == "BL" || region == "MF" {
		// +590 is shared by Guadeloupe, Saint-Barthélemy and Saint-Martin,
		// and the library's choice of island is a guess: all three days.
		c.AddHoliday(overseasHolidays["GP"], overseasHolidays["BL"], overseasHolidays["MF"])
	}
	return func(lt time.Time) bool {
		if wd := lt.Weekday(); wd == time.Saturday || wd == time.Sunday {
			return false
		}
		if actual, _, _ := c.IsHoliday(lt); actual {
			return false
		}
		m := lt.Hour()*60 + lt.Minute()
		return (m >= 10*60 && m < 13*60) || (m >= 14*60 && m < 20*60)
	}
}

// canadianRule is Canada's law on telemarketing calls, which the CRTC's
// rules on automatic dialing-announcing devices apply to such calls too:
// weekdays from 09:00 to 21:30, weekends from 10:00 to 18:00; with the
// default's 20:00, weekdays 09:00 to 20:00.
func canadianRule(lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	if wd := lt.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return m >= 10*60 && m < 18*60
	}
	return m >= 9*60 && m < 20*60
}

// australianHolidays are the national public holidays of Australia's
// telemarketing standard: New Year's Day, Australia Day, Good Friday,
// Easter Monday, Anzac Day, Christmas Day and Boxing Day, from a
// maintained calendar. australianRule keeps the days they are observed
// on too (Christmas on a Saturday is a holiday on the Monday after), as
// the states do: Anzac Day on a weekend too, whose Monday Western
// Australia and the ACT keep for a Saturday or a Sunday, and the Northern
// Territory, Queensland and South Australia for a Sunday (au.AnzacDay has
// no observed day; au.AnzacDayActWa, beside it, gives the Monday of
// either, and a number does not say its state).
var australianHolidays = func() *cal.Calendar {
	c := &cal.Calendar{}
	c.AddHoliday(au.NewYear, au.AustraliaDay, au.GoodFriday, au.EasterMonday, au.AnzacDay, au.AnzacDayActWa, au.ChristmasDay, au.BoxingDay)
	return c
}()

// australianRule is Australia's telemarketing standard (Telecommunications
// (Telemarketing and Research Calls) Industry Standard 2017): weekdays
// from 09:00 to 20:00, Saturdays from 09:00 to 17:00, never on a Sunday or
// a national public holiday.
func australianRule(lt time.Time) bool {
	m := lt.Hour()*60 + lt.Minute()
	switch lt.Weekday() {
	case time.Sunday:
		return false
	case time.Saturday:
		if m >= 17*60 {
			return false
		}
	}
	if actual, observed, _ := australianHolidays.IsHoliday(lt); actual || observed {
		return false
	}
	return m >= 9*60 && m < 20*60
}

// calledPersonRules holds the countries whose law is stricter than the
// default: France, and its overseas departments and collectivities, which
// have country codes of their own in the phone library (Guadeloupe,
// Martinique, French Guiana, Réunion, Mayotte, Saint-Barthélemy,
// Saint-Martin, Saint-Pierre-et-Miquelon); Canada; Australia, and the
// territories on its numbering plan (Christmas Island, the Cocos
// Islands).
var calledPersonRules = func() map[string]calledPersonRule {
	m := map[string]calledPersonRule{"CA": canadianRule, "AU": australianRule, "CX": australianRule, "CC": australianRule}
	for _, r := range []string{"FR", "GP", "MQ", "GF", "RE", "YT", "BL", "MF", "PM"} {
		m[r] = frenchRule(r)
	}
	return m
}()

// CalledPersonOpen reports whether the called person's hours allow a call
// at t to a number of country, and for a US number of state (its
// [phone.USState], "" when unknown), whose zones are zones: the
// country's rule (08:00-20:00 by default, narrowed by the state's for a
// US number) holds in every zone. With no zone it is false: nobody can
// tell the person's hours.
func CalledPersonOpen(t time.Time, country, state string, zones []*time.Location) bool {
	rule := calledPersonRuleFor(country, state)
	for _, z := range zones {
		if !rule(t.In(z)) {
			return false
		}
	}
	return len(zones) > 0
}

// calledPersonRuleFor returns the rule for a number of country (and, in
// the US, of state).
func calledPersonRuleFor(country, state string) calledPersonRule {
	if rule := calledPersonRules[country]; rule != nil {
		return rule
	}
	if country == "US" {
		return usStateRule(state)
	}
	return defaultCalledPersonRule
}
