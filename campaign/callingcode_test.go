package campaign

import (
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// TestLibraryCode: the calling code read off an E.164 number's leading
// digits is the one the phone library's Parse gives.
func TestLibraryCode(t *testing.T) {
	for _, e164 := range []string{"+12125550199", "+12684641234", "+442079460123", "+496641234567", "+353861234567", "+8613812345678", "+97150123456", "+2348031234567", "+80012345678", "+3906123456"} {
		n, err := phonenumbers.Parse(e164, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := libraryCode(e164), int(n.GetCountryCode()); got != want {
			t.Errorf("libraryCode(%s) = %d, want %d", e164, got, want)
		}
	}
}

// TestReadCallingCode: the shapes a calling code column's cells take.
func TestReadCallingCode(t *testing.T) {
	for cell, want := range map[string]int{"44": 44, "+44": 44, "(+44)": 44, "0044": 44, "44.0": 44, "1-268": 1, "GB": 44, "United Kingdom": 44, "United Kingdom (+44)": 44, "Deutschland": 49, "": 0, "abc": 0, "4444": 0, "999": 0} {
		got, _, ok := readCallingCode(cell)
		if !ok {
			got = 0
		}
		if got != want {
			t.Errorf("readCallingCode(%q) = %d, want %d", cell, got, want)
		}
	}
}
