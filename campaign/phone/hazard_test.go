package phone

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// hazardRegions are the sheets' countries the hazard corpus is built for.
var hazardRegions = []string{"US", "CA", "MX", "BR", "GB", "DE", "FR", "IN", "AU"}

// hazardNumbers returns up to n valid numbers of region of the given types,
// made from the library's example numbers with their last digits changed.
func hazardNumbers(rng *rand.Rand, region string, types []phonenumbers.PhoneNumberType, n int) []*phonenumbers.PhoneNumber {
	var out []*phonenumbers.PhoneNumber
	for _, typ := range types {
		ex := phonenumbers.GetExampleNumberForType(region, typ)
		if ex == nil {
			continue
		}
		nsn := phonenumbers.GetNationalSignificantNumber(ex)
		seen := map[string]bool{}
		for tries := 0; tries < 50*n && len(seen) < n/len(types)+1; tries++ {
			d := []byte(nsn)
			for i := max(len(d)-4, 1); i < len(d); i++ {
				d[i] = byte('0' + rng.Intn(10))
			}
			num, err := phonenumbers.Parse(fmt.Sprintf("+%d%s", ex.GetCountryCode(), d), "")
			if err != nil || !phonenumbers.IsValidNumber(num) || phonenumbers.GetRegionCodeForNumber(num) != region {
				continue
			}
			got := phonenumbers.GetNumberType(num)
			personal := got == phonenumbers.FIXED_LINE_OR_MOBILE && (typ == phonenumbers.MOBILE || typ == phonenumbers.FIXED_LINE)
			if got != typ && !personal {
				continue
			}
			e := phonenumbers.Format(num, phonenumbers.E164)
			if !seen[e] {
				seen[e] = true
				out = append(out, num)
			}
		}
	}
	return out
}

// hazardTypo changes one digit of s as a person's typing does: a digit
// added, dropped or doubled, at a random place among the digits.
func hazardTypo(rng *rand.Rand, s string) string {
	var idx []int
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			idx = append(idx, i)
		}
	}
	i := idx[rng.Intn(len(idx))]
	switch rng.Intn(3) {
	case 0: // added
		return s[:i] + string(byte('0'+rng.Intn(10))) + s[i:]
	case 1: // dropped
		return s[:i] + s[i+1:]
	default: // doubled
		return s[:i] + s[i:i+1] + s[i:]
	}
}

// digitsOf keeps the digits of s.
func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fullWidth writes the ASCII digits of s in full width, as some East Asian
// input methods do.
func fullWidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r - '0' + '\uff10'
		}
		return r
	}, s)
}

// TestHazardCorpus reads, with default settings (each sheet's own country,
// the default kinds), a corpus made from the phone library's numbers as
// CRM and Excel exports hold them: well-written mobile and landline numbers
// in several forms, the same with one digit added, dropped or doubled,
// numbers of other countries with and without +, premium-rate and other
// refused kinds, international non-geographic numbers, and two numbers in
// one cell. It asserts the counts: nothing accepted outside the sheet's
// country or of a refused kind, no two-number cell accepted, and at least
// 99% of the well-written numbers accepted as the number meant.
func TestHazardCorpus(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	refusedKinds := []phonenumbers.PhoneNumberType{phonenumbers.PREMIUM_RATE, phonenumbers.SHARED_COST, phonenumbers.PERSONAL_NUMBER, phonenumbers.PAGER, phonenumbers.VOICEMAIL}
	personTypes := []phonenumbers.PhoneNumberType{phonenumbers.MOBILE, phonenumbers.FIXED_LINE}
	good := map[string][]*phonenumbers.PhoneNumber{}
	for _, r := range hazardRegions {
		good[r] = hazardNumbers(rng, r, personTypes, 120)
		if len(good[r]) < 60 {
			t.Fatalf("%s: only %d good numbers generated", r, len(good[r]))
		}
	}

	var (
		wellWritten, meant                         int
		accepted, abroad, refusedKind, twoAccepted int
		typos, foreign, refused, twos              int
	)
	// read reads a cell for a sheet of region and checks what must never
	// be accepted; it returns the number read, or "".
	read := func(region, cell, what string) Number {
		rules := NewRules(region, nil, nil, "")
		ph, err := Read(cell, rules)
		if err != nil {
			return Number{}
		}
		accepted++
		if ph.Region != region {
			if abroad++; abroad <= 10 {
				t.Errorf("%s sheet, %s %q: accepted as %s in %s", region, what, cell, ph.E164, ph.Region)
			}
		}
		switch ph.Kind {
		case phonenumbers.PREMIUM_RATE, phonenumbers.SHARED_COST, phonenumbers.PERSONAL_NUMBER, phonenumbers.PAGER, phonenumbers.VOICEMAIL:
			if refusedKind++; refusedKind <= 10 {
				t.Errorf("%s sheet, %s %q: accepted as %s, a %s number", region, what, cell, ph.E164, kindName(ph.Kind))
			}
		}
		return ph
	}

	for _, region := range hazardRegions {
		for _, num := range good[region] {
			e164 := phonenumbers.Format(num, phonenumbers.E164)
			national := phonenumbers.Format(num, phonenumbers.NATIONAL)
			intl := phonenumbers.Format(num, phonenumbers.INTERNATIONAL)
			cells := []string{
				national, digitsOf(national), e164, intl,
				"'" + national, "'" + e164,
				strings.ReplaceAll(national, " ", "\u00a0"),
				fullWidth(national),
				"  " + national + " ",
			}
			// Well written: accepted as the number meant.
			for _, cell := range cells {
				wellWritten++
				if ph := read(region, cell, "well-written"); ph.E164 == e164 {
					meant++
				} else if wellWritten-meant <= 10 {
					t.Logf("%s sheet: well-written %q not accepted as %s (got %q)", region, cell, e164, ph.E164)
				}
			}
			// Typos, formatted and bare.
			for _, cell := range []string{hazardTypo(rng, national), hazardTypo(rng, digitsOf(national)), hazardTypo(rng, intl), hazardTypo(rng, digitsOf(e164))} {
				typos++
				read(region, cell, "typo")
			}
			// This number in every other country's sheet: with and without
			// +, with 00, and as its own country writes it.
			for _, other := range hazardRegions {
				if other == region {
					continue
				}
				for _, cell := range []string{e164, intl, digitsOf(e164), "00" + digitsOf(e164), national} {
					foreign++
					read(other, cell, "foreign "+region+" number")
				}
			}
		}
		// Refused kinds, written nationally, bare and with +.
		for _, num := range hazardNumbers(rng, region, refusedKinds, 60) {
			kind := phonenumbers.GetNumberType(num)
			if kind != phonenumbers.PREMIUM_RATE && kind != phonenumbers.SHARED_COST && kind != phonenumbers.PERSONAL_NUMBER && kind != phonenumbers.PAGER && kind != phonenumbers.VOICEMAIL {
				continue
			}
			for _, cell := range []string{phonenumbers.Format(num, phonenumbers.NATIONAL), digitsOf(phonenumbers.Format(num, phonenumbers.NATIONAL)), phonenumbers.Format(num, phonenumbers.E164)} {
				refused++
				read(region, cell, "refused-kind")
			}
		}
		// Two numbers in one cell.
		g := good[region]
		for i := 0; i+1 < len(g); i += 2 {
			a, b := phonenumbers.Format(g[i], phonenumbers.NATIONAL), phonenumbers.Format(g[i+1], phonenumbers.NATIONAL)
			for _, sep := range []string{" / ", "/", ", ", "; ", " or ", " & ", "\n", " | ", " oder ", " ou "} {
				twos++
				if ph := read(region, a+sep+b, "two-number"); ph.E164 != "" {
					if twoAccepted++; twoAccepted <= 10 {
						t.Errorf("%s sheet: %q (two numbers) accepted as %s", region, a+sep+b, ph.E164)
					}
				}
			}
		}
	}
	// International non-geographic numbers, in every sheet.
	for cc := range phonenumbers.GetSupportedGlobalNetworkCallingCodes() {
		ex := phonenumbers.GetExampleNumberForNonGeoEntity(cc)
		if ex == nil {
			continue
		}
		for _, region := range hazardRegions {
			for _, cell := range []string{phonenumbers.Format(ex, phonenumbers.E164), phonenumbers.Format(ex, phonenumbers.INTERNATIONAL), digitsOf(phonenumbers.Format(ex, phonenumbers.E164))} {
				refused++
				if ph := read(region, cell, "non-geographic"); ph.Region == "001" {
					t.Errorf("%s sheet: non-geographic %q accepted as %s", region, cell, ph.E164)
				}
			}
		}
	}

	t.Logf("well-written %d (%d as meant), typos %d, foreign %d, refused kinds %d, two-number cells %d; accepted %d",
		wellWritten, meant, typos, foreign, refused, twos, accepted)
	if abroad != 0 || refusedKind != 0 || twoAccepted != 0 {
		t.Errorf("accepted: %d outside the sheet's country, %d of a refused kind, %d two-number cells; want 0 each", abroad, refusedKind, twoAccepted)
	}
	if meant*100 < wellWritten*99 {
		t.Errorf("%d of %d well-written numbers accepted as meant (%.2f%%), want at least 99%%", meant, wellWritten, 100*float64(meant)/float64(wellWritten))
	}
	if typos < 1000 || foreign < 10000 || refused < 100 || twos < 1000 {
		t.Errorf("corpus too small: %d typos, %d foreign, %d refused, %d two-number cells", typos, foreign, refused, twos)
	}
}
