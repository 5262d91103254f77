package phone

import (
	"fmt"
	"slices"
	"testing"
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
