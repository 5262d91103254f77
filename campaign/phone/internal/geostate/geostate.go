// Package geostate is how callrun told a US number's state before the
// table campaign/phone keeps: the phone library's geocoding of the number,
// its place's name read as a state. It is no part of callrun at run time
// (loading the geocoder costs about 31 MiB of heap): genstates makes the
// table from it, and campaign/phone's tests check the table against it.
package geostate

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"

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

// Codes returns the codes State may return, sorted.
func Codes() []string {
	codes := slices.Collect(maps.Keys(stateCodes))
	slices.Sort(codes)
	return codes
}

// State returns the two-letter code of the US state (or "DC") a number
// (E.164) is placed in by the phone library's geocoding: "KY" for
// "Kentucky", "CA" for "San Francisco, CA"; "" when the library cannot
// tell the state: a toll-free or other non-geographic number ("United
// States"), a number it does not geocode, or one that is not a US number
// (GetRegionCodeForNumber: Canada and the Caribbean share +1).
func State(e164 string) string {
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

// LibraryPath is the phone library's module path.
const LibraryPath = "github.com/nyaruka/phonenumbers"

// Library returns the directory and version of the phone library this
// module builds with, whose data files genstates and campaign/phone's
// tests read.
func Library() (dir, version string, err error) {
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", LibraryPath).Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m %s: %w", LibraryPath, err)
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok || dir == "" || version == "" {
		return "", "", fmt.Errorf("go list -m %s: %q", LibraryPath, b)
	}
	return dir, version, nil
}
