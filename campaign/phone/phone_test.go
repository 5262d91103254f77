package phone

import (
	"fmt"
	"math/rand"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"
)

// normalizeSlow is Normalize with the plain library in place of the fast
// path: the reference the tests compare Normalize with.
func normalizeSlow(raw, region string) (e164, warn string, err error) {
	ph, err := readNumber(raw, Any(region), libraryCore)
	return ph.E164, ph.Repair, err
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		raw, region string
		want        string // E.164; "" when an error is expected
		warn        string // substring of the warning; "" for none
		err         string // substring of the error
	}{
		// Plain shapes.
		{raw: "+1 415-555-0100", region: "US", want: "+14155550100"},
		{raw: "(415) 555-0123", region: "US", want: "+14155550123"},
		{raw: "415.555.0142", region: "us", want: "+14155550142"},
		{raw: "415/555/0199", region: "US", want: "+14155550199"},
		{raw: "1-212-555-0147", region: "US", want: "+12125550147"},
		{raw: "12125550147", region: "US", want: "+12125550147"},
		{raw: "  +1 212 555 0188\u00a0", region: "US", want: "+12125550188"},
		{raw: "+1\u00a0212\u00a0555\u00a00188", region: "", want: "+12125550188"},
		{raw: "(416) 555-0163", region: "CA", want: "+14165550163"},
		{raw: "416-555-0163", region: "US", want: "+14165550163"}, // a Canadian number is valid in a US sheet
		{raw: "tel:+1-415-555-0100", region: "", want: "+14155550100"},
		{raw: "TEL:+44 20 7946 0000", region: "", want: "+442079460000"},
		{raw: "020 7946 0123", region: "GB", want: "+442079460123"},
		{raw: "+44 (0)20 7946 0123", region: "US", want: "+442079460123"},
		{raw: "(+44) 161 496 0321", region: "", want: "+441614960321"},
		{raw: "030 12345678", region: "DE", want: "+493012345678"},
		{raw: "+49 30 12345678", region: "ZZ", want: "+493012345678"}, // '+' needs no region
		{raw: "0151 12345678", region: "DE", want: "+4915112345678"},
		{raw: "01 99 00 12 34", region: "FR", want: "+33199001234"},
		{raw: "0491 570 156", region: "AU", want: "+61491570156"},
		{raw: "98765 43210", region: "IN", want: "+919876543210"},
		{raw: "(11) 91234-5678", region: "BR", want: "+5511912345678"},
		{raw: "55 1234 5678", region: "MX", want: "+525512345678"},
		{raw: "\uff0b1 415 555 0100", region: "", want: "+14155550100"}, // full-width plus

		// International prefixes.
		{raw: "0049 30 12345678", region: "US", want: "+493012345678"},
		{raw: "00 44 20 7946 0000", region: "DE", want: "+442079460000"},
		{raw: "011 44 20 7946 0000", region: "US", want: "+442079460000"},

		// Excel's scientific notation.
		{raw: "1.4155550142E+10", region: "US", want: "+14155550142", warn: `"1.4155550142E+10" (Excel's scientific notation for 14155550142) was read as +14155550142`},
		{raw: "1,4155550100E+10", region: "US", want: "+14155550100", warn: "scientific notation"},
		{raw: "1.4155550142e10", region: "US", want: "+14155550142", warn: "scientific notation"},
		{raw: "4.41614960000E+11", region: "US", want: "+441614960000", warn: "leading +"},
		{raw: "1.55512E+10", region: "US", err: `"1.55512E+10" was damaged by Excel`},
		{raw: "4.4161496E+11", region: "US", err: "re-export the sheet with the phone column formatted as Text"},
		{raw: "1.23456789012345E+15", region: "US", err: "damaged by Excel"}, // 16 digits: more than Excel keeps
		{raw: "1.2E-3", region: "US", err: "damaged by Excel"},
		{raw: "1.5551234567E+10", region: "US", err: `"1.5551234567E+10" (Excel's scientific notation for 15551234567) is not a valid phone number for region US`},

		// A lost '+'.
		{raw: "442079460123", region: "US", want: "+442079460123", warn: `"442079460123" is not a valid number for region US but is valid with a leading +; read as +442079460123`},
		{raw: "14155550132", region: "DE", want: "+14155550132", warn: "leading +"},
		{raw: "4930901820", region: "US", want: "+4930901820", warn: "leading +"},
		{raw: "4930123456", region: "DE", want: "+4930123456"},  // both readings give the same number
		{raw: "2025550132", region: "US", want: "+12025550132"}, // +20 25550132 is valid too, but this is how the US writes numbers
		{raw: "61138585", region: "DE", err: `"61138585" is ambiguous: in region DE it is +4961138585, but it is also +61138585`},

		// Errors.
		{raw: "", region: "US", err: "phone number is empty"},
		{raw: " \t\u00a0", region: "US", err: "phone number is empty"},
		{raw: "0161 496 0000", region: "US", err: `"0161 496 0000" is not a valid phone number for region US`},
		{raw: "555-1234", region: "US", err: "is not a valid phone number for region US"},
		{raw: "12345", region: "DE", err: "is not a valid phone number for region DE"},
		{raw: "+1 555 123 4567", region: "US", err: `"+1 555 123 4567" is not a valid phone number`},
		{raw: "+999 1234567", region: "US", err: "is not a valid phone number"},
		{raw: "4155550100", region: "", err: "has no country code"},
		{raw: "4155550100", region: "XX", err: `"XX" is not a known region code`},
		{raw: "415 555 0100 x12", region: "US", err: "extension"},
		{raw: "415 555 0100 ext. 12", region: "US", err: "extension"},
		{raw: "415 555 0100#12", region: "US", err: "extension"},
		// Numbers copied from right-to-left text (a CRM in Arabic or
		// Hebrew, a WhatsApp export) carry invisible direction marks, which
		// may show the digit groups in another order than stored.
		{raw: "\u200f+44 20 7946 0123", region: "GB", err: "invisible text-direction mark (U+200F)"},
		{raw: "+1 415 555 0132\u200e", region: "US", err: "invisible text-direction mark (U+200E)"},
		{raw: "\u2067020 7946 0123\u2069", region: "GB", err: "invisible text-direction mark (U+2067)"},
		// Iceland's number as the library's INTERNATIONAL format writes it
		// ("+354 611 1234") is grouped as a US number is written: refused as
		// ambiguous, and the reason says the one way to write it that is
		// not, its digits together, rather than "+country number", which
		// it is already.
		{raw: "+354 611 1234", region: "US", err: "write it as +3546111234, its digits together"},
		{raw: "+3546111234", region: "US", want: "+3546111234"},
		{raw: "1-800-FLOWERS", region: "US", err: `contains 'F'`},
		{raw: "N/A", region: "US", err: `"N/A" is not a phone number`},
		{raw: "()-", region: "US", err: "has no digits"},
		{raw: "415+555+0100", region: "US", err: "a + may only start"},
		{raw: "++1 415 555 0100", region: "US", err: "a + may only start"},
		{raw: "1234567890123456789012345", region: "US", err: "too many digits"},
		{raw: "415\xff5550100", region: "US", err: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, warn, err := Normalize(tt.raw, tt.region)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Normalize(%q, %q) = %q, %v; want error containing %q", tt.raw, tt.region, got, err, tt.err)
				}
				if got != "" || warn != "" {
					t.Errorf("Normalize(%q, %q) returned %q, %q with its error", tt.raw, tt.region, got, warn)
				}
			} else {
				if err != nil || got != tt.want {
					t.Fatalf("Normalize(%q, %q) = %q, %v; want %q", tt.raw, tt.region, got, err, tt.want)
				}
				if (tt.warn == "") != (warn == "") || !strings.Contains(warn, tt.warn) {
					t.Errorf("Normalize(%q, %q) warning = %q; want one containing %q", tt.raw, tt.region, warn, tt.warn)
				}
			}
			// The reference agrees on every case.
			sg, sw, serr := normalizeSlow(tt.raw, tt.region)
			if sg != got || sw != warn || fmt.Sprint(serr) != fmt.Sprint(err) {
				t.Errorf("normalizeSlow(%q, %q) = %q, %q, %v; Normalize gave %q, %q, %v", tt.raw, tt.region, sg, sw, serr, got, warn, err)
			}
		})
	}
}

// TestFictionalNumbersAreValid checks, with the library alone, that the
// numbers the fixtures and tests rely on as valid are valid, and those
// they rely on as invalid are not.
func TestFictionalNumbersAreValid(t *testing.T) {
	valid := []string{
		"+14155550100", "+14155550123", "+14155550142", "+14155550199", "+12125550147", "+12125550188",
		"+13125550111", "+16175550134", "+14165550163", "+12025550132",
		"+442079460000", "+442079460123", "+441614960000", "+441614960321",
		"+493012345678", "+4930901820", "+498912345678", "+4915112345678", "+491701234567", "+4940123456",
		"+33199001234", "+61491570156", "+919876543210", "+5511912345678", "+525512345678",
	}
	for _, s := range valid {
		n, err := phonenumbers.Parse(s, "")
		if err != nil || !phonenumbers.IsValidNumber(n) {
			t.Errorf("%s is not valid per the library (err %v)", s, err)
		}
	}
	for _, s := range []string{"+15551234567", "+447700900123"} {
		n, err := phonenumbers.Parse(s, "")
		if err == nil && phonenumbers.IsValidNumber(n) {
			t.Errorf("%s is valid per the library; the tests expect it not to be", s)
		}
	}
}

func TestLibraryZones(t *testing.T) {
	if got := libraryZones("+14155550100"); len(got) != 1 || got[0] != "America/Los_Angeles" {
		t.Errorf("libraryZones(+14155550100) = %v", got)
	}
	if got := libraryZones("+442079460000"); len(got) != 1 || got[0] != "Europe/London" {
		t.Errorf("libraryZones(+442079460000) = %v", got)
	}
	tollFree := libraryZones("+18005550100")
	if len(tollFree) < 10 {
		t.Errorf("libraryZones(+18005550100) = %v; want all NANP zones", tollFree)
	}
	tollFree[0] = "changed" // the caller's copy
	if libraryZones("+18005550100")[0] == "changed" {
		t.Error("libraryZones returns the library's slice")
	}
	for _, s := range []string{"", "+", "14155550100", "+1 415", "+999"} {
		if got := libraryZones(s); got != nil {
			t.Errorf("libraryZones(%q) = %v; want nil", s, got)
		}
	}
}

func TestValidRegion(t *testing.T) {
	for _, r := range []string{"US", "us", " de ", "GB", "CA", "BR"} {
		if !ValidRegion(r) {
			t.Errorf("ValidRegion(%q) = false", r)
		}
	}
	for _, r := range []string{"", "XX", "ZZ", "001", "USA", "U"} {
		if ValidRegion(r) {
			t.Errorf("ValidRegion(%q) = true", r)
		}
	}
}

// phoneDiffRegions are the regions the generated differential inputs use.
var phoneDiffRegions = []string{"US", "CA", "GB", "DE", "FR", "AU", "IN", "BR", "MX"}

// phoneTestInputs generates n cell values with their regions: numbers of
// the regions above (from the library's example numbers, then mutated),
// written with and without +, national prefixes, 00, punctuation, Excel
// notation, random digits and junk.
func phoneTestInputs(rng *rand.Rand, n int) [][2]string {
	type example struct{ cc, nsn string }
	var examples []example
	for _, r := range phoneDiffRegions {
		for _, typ := range []phonenumbers.PhoneNumberType{phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE, phonenumbers.PREMIUM_RATE, phonenumbers.VOIP} {
			if ex := phonenumbers.GetExampleNumberForType(r, typ); ex != nil {
				examples = append(examples, example{fmt.Sprint(ex.GetCountryCode()), phonenumbers.GetNationalSignificantNumber(ex)})
			}
		}
	}
	digits := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + rng.Intn(10))
		}
		return string(b)
	}
	punctuate := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteByte(s[i])
			if i < len(s)-1 && rng.Intn(4) == 0 {
				b.WriteString([]string{" ", "-", ".", "/", "\u00a0", ") ", " ("}[rng.Intn(7)])
			}
		}
		return b.String()
	}
	out := make([][2]string, n)
	for i := range out {
		region := phoneDiffRegions[rng.Intn(len(phoneDiffRegions))]
		var s string
		switch rng.Intn(10) {
		case 0, 1, 2, 3: // an example number, possibly mutated
			ex := examples[rng.Intn(len(examples))]
			nsn := []byte(ex.nsn)
			for k := rng.Intn(3); k > 0; k-- {
				nsn[rng.Intn(len(nsn))] = byte('0' + rng.Intn(10))
			}
			switch rng.Intn(6) {
			case 0:
				nsn = nsn[:len(nsn)-1]
			case 1:
				nsn = append(nsn, byte('0'+rng.Intn(10)))
			}
			switch rng.Intn(5) {
			case 0:
				s = "+" + ex.cc + string(nsn)
			case 1:
				s = "+" + ex.cc + " " + punctuate(string(nsn))
			case 2:
				s = "0" + string(nsn) // trunk prefix
			case 3:
				s = "00" + ex.cc + string(nsn)
			default:
				s = punctuate(ex.cc + string(nsn)) // '+' lost
			}
			if rng.Intn(2) == 0 {
				s = punctuate(strings.ReplaceAll(s, " ", ""))
			}
		case 4, 5: // random digits of phone-like lengths
			s = digits(3 + rng.Intn(13))
			if rng.Intn(3) == 0 {
				s = "+" + s
			}
		case 6: // NANP shapes
			s = fmt.Sprintf("(%d%s) %s-%s", 2+rng.Intn(8), digits(2), digits(3), digits(4))
			if rng.Intn(2) == 0 {
				s = "1 " + s
			}
		case 7: // Excel's scientific notation
			d := digits(1 + rng.Intn(14))
			s = fmt.Sprintf("%d.%sE+%d", 1+rng.Intn(9), d, len(d)+rng.Intn(3)-1)
		case 8: // national numbers with a trunk prefix
			s = "0" + punctuate(digits(6+rng.Intn(6)))
		default: // junk
			s = []string{"", " ", "N/A", "tel:", "+", "00", "x12", "123 ext 4", "==", "0", "1", "+1", "1e5"}[rng.Intn(13)]
		}
		out[i] = [2]string{s, region}
	}
	return out
}

// phoneDiffBudget bounds the wall time of a differential test beyond its
// guaranteed minimum: the library is slow under the race detector (about
// 15 times), and the generated inputs are checked in a fixed order, so a
// slow run checks a prefix of the same inputs. A normal run checks them
// all in a few seconds.
const phoneDiffBudget = 15 * time.Second

// TestNormalizeDifferential holds Normalize (fast path) to normalizeSlow
// (plain library) on 200,000 generated inputs (at least 20,000 when time
// is short): same number, same warning, same error.
func TestNormalizeDifferential(t *testing.T) {
	n, minimum := 200_000, 20_000
	if testing.Short() {
		n = minimum
	}
	deadline := time.Now().Add(phoneDiffBudget)
	inputs := phoneTestInputs(rand.New(rand.NewSource(1)), n)
	var (
		mu      sync.Mutex
		fails   int
		valid   int
		checked int
		wg      sync.WaitGroup
	)
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, done := 0, 0
			for i := w; i < len(inputs); i += workers {
				if i >= minimum && i%256 == w && time.Now().After(deadline) {
					break
				}
				done++
				raw, region := inputs[i][0], inputs[i][1]
				got, warn, err := Normalize(raw, region)
				sg, sw, serr := normalizeSlow(raw, region)
				if err == nil {
					ok++
				}
				if got != sg || warn != sw || fmt.Sprint(err) != fmt.Sprint(serr) {
					mu.Lock()
					if fails++; fails <= 20 {
						t.Errorf("Normalize(%q, %q) = %q, %q, %v; normalizeSlow = %q, %q, %v", raw, region, got, warn, err, sg, sw, serr)
					}
					mu.Unlock()
				}
			}
			mu.Lock()
			valid += ok
			checked += done
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d of %d inputs checked, %d valid, %d disagreements", checked, n, valid, fails)
	if valid < checked/5 || valid > checked*9/10 {
		t.Errorf("%d of %d inputs valid: the generator no longer mixes valid and invalid numbers", valid, checked)
	}
}

// TestPhoneCoreDifferential holds the fast core to the library for every
// supported region and calling code: the library's example number of each
// type, mutated, read with and without '+' for a random default region.
func TestPhoneCoreDifferential(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var regions []string
	for r := range phonenumbers.GetSupportedRegions() {
		regions = append(regions, r)
	}
	var samples []string
	for r := range phonenumbers.GetSupportedRegions() {
		for typ := phonenumbers.FIXED_LINE; typ <= phonenumbers.VOICEMAIL; typ++ {
			if ex := phonenumbers.GetExampleNumberForType(r, typ); ex != nil {
				samples = append(samples, fmt.Sprint(ex.GetCountryCode())+phonenumbers.GetNationalSignificantNumber(ex))
			}
		}
	}
	for cc := range phonenumbers.GetSupportedGlobalNetworkCallingCodes() {
		if ex := phonenumbers.GetExampleNumberForNonGeoEntity(cc); ex != nil {
			samples = append(samples, fmt.Sprint(cc)+phonenumbers.GetNationalSignificantNumber(ex))
		}
	}
	rounds := 12
	if testing.Short() {
		rounds = 2
	}
	deadline := time.Now().Add(phoneDiffBudget / 2)
	checked, fails := 0, 0
	for round := range rounds {
		if round >= 2 && time.Now().After(deadline) {
			break // see phoneDiffBudget
		}
		for _, s := range samples {
			d := []byte(s)
			switch rng.Intn(4) {
			case 0: // as is
			case 1:
				d[rng.Intn(len(d))] = byte('0' + rng.Intn(10))
			case 2:
				d = d[:len(d)-1]
			case 3:
				d = append(d, byte('0'+rng.Intn(10)))
			}
			ds := string(d)
			region := regions[rng.Intn(len(regions))]
			for _, c := range []struct {
				plus   bool
				digits string
			}{{true, ds}, {false, ds}, {false, ds[min(3, len(ds)-1):]}, {false, "0" + ds[min(2, len(ds)-1):]}} {
				if len(c.digits) == 0 {
					continue
				}
				checked++
				fe, fok := fastCore(c.plus, c.digits, region)
				le, lok := libraryCore(c.plus, c.digits, region)
				if fe != le || fok != lok {
					if fails++; fails <= 20 {
						t.Errorf("plus=%v %s region %s: fast %+v %v, library %+v %v", c.plus, c.digits, region, fe, fok, le, lok)
					}
				}
			}
		}
	}
	t.Logf("%d readings checked, %d disagreements", checked, fails)
}

// TestPhoneDFAMatchesRegexp checks the automaton construction itself: for
// every pattern in the metadata, the automaton and Go's regexp (as the
// library anchors it) agree on random digit strings and on the example
// numbers.
func TestPhoneDFAMatchesRegexp(t *testing.T) {
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var patterns []string
	var samples []string
	for _, md := range coll.GetMetadata() {
		for _, d := range []*phonenumbers.PhoneNumberDesc{md.GetGeneralDesc(), md.GetFixedLine(), md.GetMobile(), md.GetTollFree(),
			md.GetPremiumRate(), md.GetSharedCost(), md.GetVoip(), md.GetPersonalNumber(), md.GetPager(), md.GetUan(), md.GetVoicemail()} {
			if d == nil {
				continue
			}
			if p := d.GetNationalNumberPattern(); !seen[p] {
				seen[p] = true
				patterns = append(patterns, p)
			}
			if ex := d.GetExampleNumber(); ex != "" {
				samples = append(samples, ex)
			}
		}
		if p := md.GetLeadingDigits(); p != "" && !seen[p] {
			seen[p] = true
			patterns = append(patterns, p)
		}
	}
	rng := rand.New(rand.NewSource(3))
	perPattern := 60
	if testing.Short() {
		perPattern = 10
	}
	for _, p := range patterns {
		full, err1 := singlePatternDFA(p, false)
		prefix, err2 := singlePatternDFA(p, true)
		if err1 != nil || err2 != nil {
			t.Errorf("pattern %q: %v %v", p, err1, err2)
			continue
		}
		fullRE := regexp.MustCompile("^(?:" + p + ")$")
		prefixRE := regexp.MustCompile("^(?:" + p + ")")
		check := func(s string) {
			if got, ok := full.match(s); !ok || got != fullRE.MatchString(s) {
				t.Errorf("pattern %q, %q: full automaton %v (ok %v), regexp %v", p, s, got, ok, fullRE.MatchString(s))
			}
			if got, ok := prefix.match(s); !ok || got != prefixRE.MatchString(s) {
				t.Errorf("pattern %q, %q: prefix automaton %v (ok %v), regexp %v", p, s, got, ok, prefixRE.MatchString(s))
			}
		}
		for _, s := range samples[:min(len(samples), 40)] {
			check(s)
		}
		for range perPattern {
			// Start from a sample so that matches are not only chance.
			s := []byte(samples[rng.Intn(len(samples))])
			s[rng.Intn(len(s))] = byte('0' + rng.Intn(10))
			if rng.Intn(3) == 0 {
				s = s[:rng.Intn(len(s)+1)]
			}
			check(string(s))
			var b strings.Builder
			for k := rng.Intn(18); k > 0; k-- {
				b.WriteByte(byte('0' + rng.Intn(10)))
			}
			check(b.String())
		}
	}
	if _, ok := (&dfa{next: []int32{0}, acc: []uint32{0}, stay: []bool{true}}).match("12a"); ok {
		t.Error("match accepted a non-digit")
	}
}

// TestNormalizeConcurrent runs Normalize from several goroutines while the
// automata are still being built (run it with -race).
func TestNormalizeConcurrent(t *testing.T) {
	inputs := [][2]string{{"+1 415 555 0100", "US"}, {"030 12345678", "DE"}, {"+61 491 570 156", ""}, {"020 7946 0000", "GB"}, {"+81 3 1234 5678", ""}, {"+7 912 345 67 89", ""}}
	want := make([]string, len(inputs))
	for i, in := range inputs {
		want[i], _, _ = normalizeSlow(in[0], in[1])
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (g + i) % len(inputs)
				if got, _, _ := Normalize(inputs[k][0], inputs[k][1]); got != want[k] {
					t.Errorf("Normalize(%q) = %q; want %q", inputs[k][0], got, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
}
