package campaign

import (
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the called person's zones must load on any machine

	"github.com/nyaruka/phonenumbers"
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

// zoneTab is tzdata's zone.tab (public domain): the zones of each country.
//
//go:embed zone.tab
var zoneTab string

var (
	countryZonesOnce sync.Once
	countryZonesMap  map[string][]string
)

// CountryZones returns the IANA zones of a country (ISO 3166 alpha-2) as
// tzdata's zone.tab lists them, or nil. For Australia it gives the
// mainland's zones (and Tasmania's, which keeps Melbourne's time).
func CountryZones(region string) []string {
	countryZonesOnce.Do(func() {
		m := map[string][]string{}
		for line := range strings.Lines(zoneTab) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(strings.TrimSpace(line), "\t")
			if len(f) < 3 {
				continue
			}
			if f[0] == "AU" && (f[2] == "Australia/Lord_Howe" || f[2] == "Antarctica/Macquarie") {
				continue // islands off the mainland
			}
			m[f[0]] = append(m[f[0]], f[2])
		}
		countryZonesMap = m
	})
	return countryZonesMap[region]
}

// numberZoneNames returns the zones a number may ring in, by name:
//   - the phone library's zones for the number;
//   - all its country's zones when the library knows none, or only the
//     whole calling code's (+1 spans 25 countries from Guam to
//     Newfoundland, but a US toll-free number rings in the US);
//   - all its country's zones for numbers not tied to a place: toll-free,
//     premium, shared-cost, VoIP, personal, pager, UAN and voicemail
//     numbers anywhere, and Australian mobiles.
func numberZoneNames(e164, country string, kind phonenumbers.PhoneNumberType) []string {
	lib := PhoneTimezones(e164)
	country = strings.ToUpper(country)
	placeless := false
	switch kind {
	case phonenumbers.FIXED_LINE, phonenumbers.FIXED_LINE_OR_MOBILE:
	case phonenumbers.MOBILE:
		placeless = country == "AU"
	default:
		placeless = true
	}
	if cz := CountryZones(country); len(cz) > 0 && (placeless || len(lib) == 0 || callingCodeWide(e164, lib)) {
		return cz
	}
	return lib
}

// callingCodeWide reports whether zones are all the zones of the number's
// calling code, as the library gives them when it cannot place a number.
func callingCodeWide(e164 string, zones []string) bool {
	if len(zones) < 2 {
		return false
	}
	n := phoneNumberOf(e164)
	if n == nil {
		return false
	}
	all, err := phonenumbers.GetTimezonesForPrefix("+" + strconv.Itoa(int(n.GetCountryCode())))
	return err == nil && slices.Equal(all, zones)
}

// zoneSetCache keeps the loaded zones of each number's zone names: a
// campaign's numbers share a few hundred sets at most.
var zoneSetCache sync.Map // joined names -> []*time.Location

// NumberZones returns the zones a number may ring in (see numberZoneNames),
// loaded; nil when none is known.
func NumberZones(e164, country string, kind phonenumbers.PhoneNumberType) []*time.Location {
	names := numberZoneNames(e164, country, kind)
	if len(names) == 0 {
		return nil
	}
	key := strings.Join(names, " ")
	if z, ok := zoneSetCache.Load(key); ok {
		return z.([]*time.Location)
	}
	var zones []*time.Location
	for _, name := range names {
		if l, err := loadZone(name); err == nil {
			zones = append(zones, l)
		}
	}
	zoneSetCache.Store(key, zones)
	return zones
}

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
