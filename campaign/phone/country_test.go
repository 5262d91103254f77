package phone

import "testing"

// TestParseCountry reads the country cells CRM exports and hand-kept
// lists hold: codes, and names in the main languages.
func TestParseCountry(t *testing.T) {
	for cell, want := range map[string]string{
		"US": "US", "usa": "US", "United States": "US", "U.S.A.": "US", "États-Unis": "US", "Vereinigte Staaten": "US",
		"Estados Unidos": "US", "DE": "DE", "DEU": "DE", "Germany": "DE", "Deutschland": "DE", "Allemagne": "DE",
		"Alemania": "DE", "France": "FR", "Frankreich": "FR", "fra": "FR", "India": "IN", "Indien": "IN", "Inde": "IN",
		"Mexico": "MX", "México": "MX", "Mexique": "MX", " uk ": "GB", "United Kingdom": "GB", "Royaume-Uni": "GB",
		"España": "ES", "Espagne": "ES", "Schweiz": "CH", "Suisse": "CH", "Österreich": "AT", "Canada": "CA", "Kanada": "CA",
	} {
		if got, ok := ParseCountry(cell); !ok || got != want {
			t.Errorf("ParseCountry(%q) = %q, %v; want %q", cell, got, ok, want)
		}
	}
	for _, cell := range []string{"", "Narnia", "XX", "Europe", "n/a", "12"} {
		if got, ok := ParseCountry(cell); ok {
			t.Errorf("ParseCountry(%q) = %q; want no country", cell, got)
		}
	}
}
