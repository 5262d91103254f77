package phone

import (
	"strings"
	"sync"
	"unicode"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/unicode/norm"
)

// countryLanguages are the languages whose country names a country column
// may be written in: those of the CRMs' and spreadsheets' main markets.
var countryLanguages = []language.Tag{
	language.English, language.French, language.German, language.Spanish, language.Portuguese,
	language.Italian, language.Dutch, language.Swedish, language.Danish, language.Norwegian,
	language.Polish, language.Finnish, language.Czech, language.Turkish,
}

// countryAliases are names in common use that no display name gives.
var countryAliases = map[string]string{
	"uk": "GB", "usa": "US", "us of a": "US", "united states of america": "US", "america": "US",
	"great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB", "northern ireland": "GB",
	"holland": "NL", "south korea": "KR", "korea": "KR", "russia": "RU", "czech republic": "CZ",
	"vereinigte staaten von amerika": "US", "etats unis d amerique": "US",
}

// countryNames maps folded country names and codes to ISO 3166 alpha-2
// codes: the alpha-2 and alpha-3 codes of every region the phone-number
// library knows, and their names in countryLanguages, as
// golang.org/x/text's display tables write them. A name two countries
// share in different languages is left out.
var countryNames = sync.OnceValue(func() map[string]string {
	names := map[string]string{}
	shared := map[string]bool{}
	add := func(name, code string) {
		k := foldCountry(name)
		if k == "" || shared[k] {
			return
		}
		if c, ok := names[k]; ok && c != code {
			delete(names, k)
			shared[k] = true
			return
		}
		names[k] = code
	}
	for code := range phonenumbers.GetSupportedRegions() {
		rg, err := language.ParseRegion(code)
		if err != nil {
			continue
		}
		names[strings.ToLower(code)] = code
		if iso3 := rg.ISO3(); iso3 != "" {
			names[strings.ToLower(iso3)] = code
		}
		for _, t := range countryLanguages {
			add(display.Regions(t).Name(rg), code)
		}
		add(display.Self.Name(rg), code)
	}
	for k, code := range countryAliases {
		names[k] = code
	}
	return names
})

// foldCountry lowers a country name, drops its accents and punctuation
// and keeps single spaces between words: "États-Unis" reads "etats unis",
// "U.S.A." reads "usa".
func foldCountry(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r), r == '.', r == '\'', r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// ParseCountry reads a country column's cell: an ISO 3166 alpha-2 or
// alpha-3 code ("DE", "DEU") or a country's name in one of the main
// languages ("Germany", "Allemagne", "Deutschland", "Alemania"), in any
// case, with or without accents. It returns the alpha-2 code of a country
// whose numbers the phone-number library knows, and whether the cell named
// one. The contact reader reads each row's country with it, and callrun
// init the country column of a sheet.
func ParseCountry(cell string) (string, bool) {
	code, ok := countryNames()[foldCountry(cell)]
	return code, ok
}

// InCountry returns rules like p, for a row whose own country is region:
// its numbers written without +country are read as numbers of region.
// Which countries and kinds may be called stays p's.
func (p *Rules) InCountry(region string) *Rules {
	r := *p
	r.region = normRegion(region)
	return &r
}

// AnyCountry returns rules like p that call every country: the contact
// reader reads a number with them first when its row names a country, so
// that a number of another country is told as such rather than as a
// country the campaign does not call.
func (p *Rules) AnyCountry() *Rules {
	r := *p
	r.countries = nil
	return &r
}
