package phone

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// usStates are the two-letter codes of the states and the District of
// Columbia by their names, as the phone library's geocoding gives them.
var usStates = map[string]string{
	"Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA",
	"Colorado": "CO", "Connecticut": "CT", "Delaware": "DE", "Washington D.C.": "DC",
	"District of Columbia": "DC", "Florida": "FL", "Georgia": "GA", "Hawaii": "HI",
	"Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA", "Kansas": "KS",
	"Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD",
	"Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN", "Mississippi": "MS",
	"Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV",
	"New Hampshire": "NH", "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY",
	"North Carolina": "NC", "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK",
	"Oregon": "OR", "Pennsylvania": "PA", "Rhode Island": "RI", "South Carolina": "SC",
	"South Dakota": "SD", "Tennessee": "TN", "Texas": "TX", "Utah": "UT", "Vermont": "VT",
	"Virginia": "VA", "Washington": "WA", "Washington State": "WA", "West Virginia": "WV", "Wisconsin": "WI",
	"Wyoming": "WY",
}

// stateCodes is the set of usStates' codes.
var stateCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range usStates {
		m[c] = true
	}
	return m
}()

// USStateCodes returns the codes [USState] may return, sorted.
func USStateCodes() []string {
	codes := slices.Collect(maps.Keys(stateCodes))
	slices.Sort(codes)
	return codes
}

// usStateCache keeps USState's answer by the number's first digits, +1
// and the area code and exchange (NPA-NXX, as a number), which is all the
// library's geocoding of a US number looks at: a campaign's numbers share
// a few thousand of them, and the geocoder is slow.
var usStateCache struct {
	sync.RWMutex
	m map[int]string
}

// USState returns the two-letter code of the US state (or "DC") a US
// number (E.164) is placed in by the phone library's geocoding: "KY"
// for "Kentucky", "CA" for "San Francisco, CA". It returns "" when the
// library cannot tell the state: a toll-free or other non-geographic
// number ("United States"), a number it does not geocode, or one that is
// not a US number. The caller decides what an unknown state means.
func USState(e164 string) string {
	if len(e164) < 8 || !strings.HasPrefix(e164, "+1") || !allDigits(e164[1:]) {
		return ""
	}
	key := 0
	for _, d := range e164[2:8] {
		key = key*10 + int(d-'0')
	}
	usStateCache.RLock()
	s, ok := usStateCache.m[key]
	usStateCache.RUnlock()
	if ok {
		return s
	}
	s = geocodeState(e164)
	usStateCache.Lock()
	if usStateCache.m == nil {
		usStateCache.m = map[int]string{}
	}
	usStateCache.m[key] = s
	usStateCache.Unlock()
	return s
}

// geocodeState is USState without the cache.
func geocodeState(e164 string) string {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil || phonenumbers.GetRegionCodeForNumber(num) != "US" {
		return ""
	}
	name, err := phonenumbers.GetGeocodingForNumber(num, "en")
	if err != nil {
		return ""
	}
	return stateOfPlace(name)
}

// stateOfPlace maps a place as the geocoder names it to a state's code:
// a state's name ("Kentucky"), or a place and the state's code ("San
// Francisco, CA"); "" for anything else ("United States").
func stateOfPlace(name string) string {
	if c, ok := usStates[name]; ok {
		return c
	}
	if i := strings.LastIndex(name, ", "); i >= 0 && stateCodes[name[i+2:]] {
		return name[i+2:]
	}
	return ""
}
