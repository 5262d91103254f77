package phone

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestZoneNames checks the zones callrun holds a number to: never fewer
// than the library's, and a whole country for a number not tied to a
// place.
func TestZoneNames(t *testing.T) {
	for _, tc := range []struct {
		e164    string
		include []string
		exclude []string
	}{
		// A US toll-free number: the library's 43 zones of +1, Guam to
		// Newfoundland, and the US's own.
		{"+18002345678", []string{"America/New_York", "Pacific/Honolulu", "America/Adak", "Pacific/Guam", "America/St_Johns", "America/Indiana/Knox"}, nil},
		// Toll-free in Réunion: the library's Mayotte and Réunion both.
		{"+262801234567", []string{"Indian/Reunion", "Indian/Mayotte"}, nil},
		// Mobiles travel: a Russian one may ring anywhere in Russia, a
		// Brazilian one anywhere in Brazil.
		{"+79141234567", []string{"Europe/Moscow", "Asia/Vladivostok", "Asia/Kamchatka", "Europe/Kaliningrad"}, nil},
		{"+5511961234567", []string{"America/Sao_Paulo", "America/Manaus", "America/Rio_Branco"}, nil},
		{"+61412345678", []string{"Australia/Perth", "Australia/Sydney", "Australia/Adelaide", "Australia/Darwin"}, []string{"Australia/Lord_Howe"}},
		{"+611800123456", []string{"Australia/Perth", "Australia/Sydney"}, nil},
		{"+551130001234", []string{"America/Sao_Paulo"}, []string{"America/Manaus"}},
		{"+555003123456", []string{"America/Sao_Paulo", "America/Manaus", "America/Rio_Branco", "America/Noronha"}, nil},
		{"+12122010001", []string{"America/New_York"}, []string{"America/Chicago"}},
	} {
		ph, err := Read(tc.e164, Any(""))
		if err != nil {
			t.Errorf("%s: %v", tc.e164, err)
			continue
		}
		names := ZoneNames(ph.E164, ph.Region, ph.Kind)
		for _, z := range tc.include {
			if !slices.Contains(names, z) {
				t.Errorf("%s (%s, %s): zones %v lack %s", tc.e164, ph.Region, kindName(ph.Kind), names, z)
			}
		}
		for _, z := range tc.exclude {
			if slices.Contains(names, z) {
				t.Errorf("%s (%s, %s): zones %v hold %s", tc.e164, ph.Region, kindName(ph.Kind), names, z)
			}
		}
	}
	if got := fmt.Sprint(len(countryZones("US")) > 20, countryZones("ZZ")); got != "true []" {
		t.Errorf("countryZones: %s", got)
	}
}

// TestZonesKeepThePlacesHours checks landlines the library places in a
// zone whose clock is not the place's: at each time given it is before
// 08:00 or from 20:00 where the number rings, and the library's zone
// alone would allow the call, so one of the number's zones must not.
func TestZonesKeepThePlacesHours(t *testing.T) {
	for _, tc := range []struct {
		e164, place, at string
	}{
		// Zones of another country, standing in for the number's own.
		{"+74012123456", "Europe/Kaliningrad", "2026-07-15T05:30:00Z"}, // Europe/Bucharest in summer
		{"+218213334444", "Africa/Tripoli", "2026-07-15T05:30:00Z"},    // Europe/Bucharest in summer
		{"+21321123456", "Africa/Algiers", "2026-07-15T06:30:00Z"},     // Europe/Paris in summer
		{"+212522123456", "Africa/Casablanca", "2026-01-15T19:30:00Z"}, // Atlantic/Canary in winter
		{"+50522223333", "America/Managua", "2026-07-15T13:30:00Z"},    // America/Chicago in summer
		{"+211181234567", "Africa/Juba", "2026-01-15T05:30:00Z"},       // Africa/Nairobi all year
		// Zones of the right country that are not the place's.
		{"+558121234567", "America/Recife", "2026-07-15T10:30:00Z"},      // America/Noronha
		{"+18676671234", "America/Whitehorse", "2026-01-15T03:30:00Z"},   // America/Vancouver in winter
		{"+12507821234", "America/Dawson_Creek", "2026-07-15T14:30:00Z"}, // America/Edmonton in summer
		{"+12504281234", "America/Creston", "2026-07-15T14:30:00Z"},      // America/Edmonton in summer
		{"+18075971234", "America/Atikokan", "2026-07-15T12:30:00Z"},     // America/Toronto in summer
		{"+13068251234", "America/Edmonton", "2026-01-15T14:30:00Z"},     // America/Regina in winter
		{"+18502291234", "America/New_York", "2026-01-15T01:30:00Z"},     // America/Chicago
		{"+18506481234", "America/Chicago", "2026-01-15T13:30:00Z"},      // America/New_York
		{"+528681234567", "America/Matamoros", "2026-07-15T01:30:00Z"},   // America/Mexico_City in summer
		{"+526141234567", "America/Chihuahua", "2026-01-15T02:30:00Z"},   // America/Mazatlan
		{"+61755311234", "Australia/Brisbane", "2026-01-15T21:30:00Z"},   // Australia/Sydney in summer
		{"+61740511234", "Australia/Brisbane", "2026-01-15T21:30:00Z"},   // Australia/Sydney in summer
		{"+56612211234", "America/Punta_Arenas", "2026-07-15T23:30:00Z"}, // America/Santiago in winter
		{"+56961234567", "America/Punta_Arenas", "2026-07-15T23:30:00Z"}, // a mobile: America/Santiago in winter
		{"+56322100234", "Pacific/Easter", "2026-07-15T13:30:00Z"},       // America/Santiago
		{"+559734811234", "America/Eirunepe", "2026-07-15T12:30:00Z"},    // America/Manaus
		{"+18679251234", "America/Atikokan", "2026-01-15T01:30:00Z"},     // Coral Harbour: America/Fort_Nelson
		{"+14184611234", "America/Blanc-Sablon", "2026-01-15T00:30:00Z"}, // America/Toronto in winter
		{"+78452123456", "Europe/Saratov", "2026-07-15T16:30:00Z"},       // Europe/Moscow
	} {
		ph, err := Read(tc.e164, Any(""))
		if err != nil {
			t.Errorf("%s: %v", tc.e164, err)
			continue
		}
		at, _ := time.Parse(time.RFC3339, tc.at)
		inHours := func(l *time.Location) bool {
			lt := at.In(l)
			m := lt.Hour()*60 + lt.Minute()
			return m >= 8*60 && m < 20*60
		}
		place, _ := time.LoadLocation(tc.place)
		if inHours(place) {
			t.Fatalf("%s: %s is in hours in %s: a wrong case", tc.e164, tc.at, tc.place)
		}
		zones := Zones(ph.E164, ph.Region, ph.Kind)
		if !slices.ContainsFunc(zones, func(l *time.Location) bool { return !inHours(l) }) {
			t.Errorf("%s (%s): at %s its zones %v all allow a call, but it is %s in %s", tc.e164, ph.Region, tc.at, zones, at.In(place).Format("15:04"), tc.place)
		}
	}
	// A zone under another name whose clock the country keeps adds nothing.
	for e164, want := range map[string]string{
		"+912221234567": "[Asia/Calcutta]",
		"+35312345678":  "[Europe/Guernsey Europe/Isle_of_Man Europe/London]",
		"+12122010001":  "[America/New_York]",
		"+61265632123":  "[Australia/Lord_Howe]", // an island of its country's
	} {
		ph, _ := Read(e164, Any(""))
		if got := fmt.Sprint(ZoneNames(ph.E164, ph.Region, ph.Kind)); got != want {
			t.Errorf("%s: zones %s, want %s", e164, got, want)
		}
	}
}
