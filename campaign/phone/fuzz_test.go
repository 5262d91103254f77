package phone

// The normaliser's fuzz target. Run it with:
//
//	go test ./campaign/phone -run '^$' -fuzz FuzzNormalize -fuzztime 30s
//
// Inputs that failed once are kept in testdata/fuzz/FuzzNormalize/ and run
// as ordinary tests by go test.

import (
	"fmt"
	"testing"
)

// FuzzNormalize normalises arbitrary text: it must not panic, the fast
// path must agree with the plain library (normalizeSlow) exactly, and any
// result must be E.164 that normalises to itself.
func FuzzNormalize(f *testing.F) {
	for _, s := range []struct{ raw, region string }{
		{"+1 415-555-0100", "US"}, {"(415) 555-0123", "US"}, {"1.4155550142E+10", "US"}, {"1.55512E+10", "US"},
		{"442079460123", "US"}, {"4930123456", "DE"}, {"61138585", "DE"}, {"030 12345678", "DE"}, {"0049 30 12345678", "US"},
		{"011 44 20 7946 0000", "US"}, {"tel:+44 20 7946 0000", ""}, {"+44 (0)20 7946 0123", "GB"}, {"", "US"},
		{"415 555 0100 x12", "US"}, {"N/A", "US"}, {"+7 912 345 67 89", "RU"}, {"0810 1234 5678", "AR"},
		{"+39 06 1234 5678", "IT"}, {"06 1234 5678", "IT"}, {"+262 262 12 34 56", "RE"}, {"+800 1234 5678", ""},
		{"8005550100", "US"}, {"+1 268 460 1234", "AG"}, {"4601234", "AG"}, {"1 268 460 1234", "US"}, {"98765 43210", "in"},
	} {
		f.Add(s.raw, s.region)
	}
	f.Fuzz(func(t *testing.T, raw, region string) {
		got, warn, err := Normalize(raw, region)
		sg, sw, serr := normalizeSlow(raw, region)
		if got != sg || warn != sw || fmt.Sprint(err) != fmt.Sprint(serr) {
			t.Fatalf("Normalize(%q, %q) = %q, %q, %v; normalizeSlow = %q, %q, %v", raw, region, got, warn, err, sg, sw, serr)
		}
		if err != nil {
			if got != "" || warn != "" {
				t.Fatalf("Normalize(%q, %q) returned %q, %q with error %v", raw, region, got, warn, err)
			}
			return
		}
		if len(got) < 3 || got[0] != '+' || got[1] == '0' || !allDigits(got[1:]) {
			t.Fatalf("Normalize(%q, %q) = %q: not E.164", raw, region, got)
		}
		for _, r := range []string{"", region} {
			again, w, err := Normalize(got, r)
			if err != nil || again != got || w != "" {
				t.Fatalf("Normalize(%q, %q) = %q, %q, %v; want %q unchanged", got, r, again, w, err, got)
			}
		}
		// The digit-level readings agree too, for the digits of the input.
		if d := digitsOnly(raw); d != "" {
			reg := normRegion(region)
			for _, plus := range []bool{false, true} {
				fe, fok := fastCore(plus, d, reg)
				le, lok := libraryCore(plus, d, reg)
				if fe != le || fok != lok {
					t.Fatalf("plus=%v %s region %q: fast %+v %v, library %+v %v", plus, d, reg, fe, fok, le, lok)
				}
			}
		}
	})
}

// digitsOnly returns the ASCII digits of s, or "" when there are more than
// maxDigits.
func digitsOnly(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	if len(b) > maxDigits {
		return ""
	}
	return string(b)
}
