package phone

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// Rules says how a sheet's numbers are read and which of them the
// campaign may call: the sheet's region for numbers written without
// +country, the countries that may be called, and the kinds of number.
// The contact reader builds one per sheet from the campaign file.
type Rules struct {
	region string // ISO 3166 alpha-2 of numbers written without +country
	// countries lists the regions that may be called; nil allows any.
	countries []string
	// allowed[kind] is true for the kinds of number that may be called;
	// nil allows every kind.
	allowed map[phonenumbers.PhoneNumberType]bool
	// nonGeo allows the international non-geographic codes (+800, ...).
	nonGeo bool
	// setting names the campaign key that widens countries, for messages.
	setting string
}

// kindNonGeographic is the allow_number_kinds value that allows the
// international non-geographic codes (+800 freephone, +808 shared cost,
// +870 Inmarsat, +881 to +883 satellite and networks, +888, +979), which
// belong to no country.
const kindNonGeographic = "international_non_geographic"

// numberKind is a library number type as allow_number_kinds names it,
// with the words messages use.
type numberKind struct {
	name, words string
	typ         phonenumbers.PhoneNumberType
	refused     bool // refused unless allowed
}

var numberKinds = []numberKind{
	{"fixed_line", "landline", phonenumbers.FIXED_LINE, false},
	{"mobile", "mobile", phonenumbers.MOBILE, false},
	{"fixed_line_or_mobile", "landline or mobile", phonenumbers.FIXED_LINE_OR_MOBILE, false},
	{"toll_free", "toll-free", phonenumbers.TOLL_FREE, false},
	{"voip", "VoIP", phonenumbers.VOIP, false},
	{"uan", "universal access (company)", phonenumbers.UAN, false},
	{"premium_rate", "premium-rate", phonenumbers.PREMIUM_RATE, true},
	{"shared_cost", "shared-cost", phonenumbers.SHARED_COST, true},
	{"personal_number", "personal (forwarding)", phonenumbers.PERSONAL_NUMBER, true},
	{"pager", "pager", phonenumbers.PAGER, true},
	{"voicemail", "voicemail access", phonenumbers.VOICEMAIL, true},
}

// RefusedKinds lists the allow_number_kinds values refused unless
// allowed: what costs the caller extra or reaches no person. The campaign
// file's loader names them when a value is not a kind ([ValidKind]).
func RefusedKinds() []string {
	var names []string
	for _, k := range numberKinds {
		if k.refused {
			names = append(names, k.name)
		}
	}
	return append(names, kindNonGeographic)
}

// ValidKind reports whether name (any case) is an allow_number_kinds value.
func ValidKind(name string) bool {
	name = strings.ToLower(name)
	return name == kindNonGeographic || slices.ContainsFunc(numberKinds, func(k numberKind) bool { return k.name == name })
}

// NewRules returns the rules for a sheet: numbers written without
// +country are in region; countries (default: region alone) may be
// called; the kinds refused by default are refused unless allowKinds
// names them. setting names the key that lists the countries, for the
// messages ("countries" or "sheets[1].countries"). The campaign file's
// PhoneRules builds a sheet's rules with it.
func NewRules(region string, countries, allowKinds []string, setting string) *Rules {
	r := &Rules{region: normRegion(region), setting: setting, allowed: map[phonenumbers.PhoneNumberType]bool{}}
	if len(countries) == 0 {
		r.countries = []string{r.region}
	} else {
		for _, c := range countries {
			r.countries = append(r.countries, normRegion(c))
		}
	}
	for _, k := range numberKinds {
		r.allowed[k.typ] = !k.refused
	}
	for _, name := range allowKinds {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == kindNonGeographic {
			r.nonGeo = true
		}
		for _, k := range numberKinds {
			if k.name == name {
				r.allowed[k.typ] = true
			}
		}
	}
	return r
}

// Any returns rules that read numbers for region and refuse no
// country or kind: for suppression files, where a number read too widely
// only keeps someone from being called.
func Any(region string) *Rules {
	return &Rules{region: region, nonGeo: true}
}

// allows returns nil when the campaign may call r, else the rest of a
// sentence that starts with the number ("… is ") and says which setting
// would allow it.
func (p *Rules) allows(r reading) error {
	if r.region == "001" {
		if !p.nonGeo {
			return fmt.Errorf("%s, an international non-geographic number (such as +800 freephone or +870 satellite), which callrun does not call: add %s to allow_number_kinds to call such numbers", r.e164, kindNonGeographic)
		}
	} else if p.countries != nil && !slices.Contains(p.countries, r.region) {
		return fmt.Errorf("%s, a number in %s, which this campaign does not call: add %s to %s (now %s) to call it", r.e164, CountryName(r.region), r.region, p.countriesKey(), strings.Join(p.countries, ", "))
	}
	if p.allowed != nil && !p.allowed[r.kind] {
		for _, k := range numberKinds {
			if k.typ == r.kind {
				return fmt.Errorf("%s, a %s number, which callrun does not call: add %s to allow_number_kinds to call such numbers", r.e164, k.words, k.name)
			}
		}
		return fmt.Errorf("%s, a number of a kind callrun does not call", r.e164)
	}
	return nil
}

func (p *Rules) countriesKey() string {
	if p.setting == "" {
		return "countries"
	}
	return p.setting
}

// CountryName returns a region code with its English name, "Switzerland
// (CH)", for messages.
func CountryName(region string) string {
	if region == "001" {
		return "no country (international non-geographic, 001)"
	}
	if rg, err := language.ParseRegion(region); err == nil {
		if name := display.English.Regions().Name(rg); name != "" {
			return fmt.Sprintf("%s (%s)", name, region)
		}
	}
	return region
}
