// Package phone reads phone numbers: sheets hold them as people and
// spreadsheets write them; the service wants E.164. [Read]
// turns the one into the other with nyaruka/phonenumbers (a port of
// Google's libphonenumber), repairs the damage Excel does where that can
// be done without guessing, refuses numbers the campaign may not call
// ([Rules]: countries and kinds of number), and rejects everything else
// with a sentence a marketer can act on. It also says which time zones a
// number may ring in ([Zones]). The campaign's contact reader, plan and
// report use it; it knows nothing of campaigns.
//
// The rules, in the order Read applies them:
//
//  1. Surrounding white space (including no-break spaces) is trimmed, and
//     one leading apostrophe (a spreadsheet's mark of a text cell); an
//     empty cell is an error ("phone number is empty"), and so is a
//     spreadsheet's error value (#VALUE!, #NAME?, #N/A), with its own
//     reason: the formula or the value is to fix in the sheet.
//  2. A cell holding two numbers ("555-1234 / 555-9876", "... or ...") is
//     an error asking to split them: two runs of six or more digits apart
//     by a list separator or a word. The list a cell may hold on purpose
//     (" ::: " as Google Contacts writes it, ";" or a line break) is
//     [Split] into its numbers first, each read on its own.
//  3. Excel's scientific notation ("1.4155550132E+10", or with a decimal
//     comma as European Excel writes it) is repaired, with a warning, only
//     when the mantissa spells out every digit of the number and the
//     number has at most 15 digits, the precision Excel keeps: then the
//     expansion is exact. Otherwise ("1.55512E+10") digits may be gone and
//     the cell is rejected, asking for a re-export with the column
//     formatted as Text. A number exported as a decimal ("4930124603.0",
//     "4930124603,00" with a decimal comma) is read without its zero
//     fraction, with a warning.
//  4. A "tel:" prefix is dropped. What remains may hold digits (of any
//     script: full-width digits are read as ASCII), one leading '+', and
//     the punctuation numbers are written with: spaces, no-break spaces,
//     dots, dashes, parentheses and slashes. Letters are an error: the
//     service cannot dial an extension, and vanity numbers (1-800-FLOWERS)
//     are not worth the risk of a wrong call.
//  5. A leading "00" is read as '+' whatever the region: it is the
//     international prefix of most of the world and no national number
//     starts with it. Other international prefixes (011 in North America)
//     are the library's business, for the sheet's region.
//  6. A number written with '+' is international and never reinterpreted.
//  7. A number without '+' needs a region (the sheet's) and is read as a
//     national number of the region. A cell of bare digits (what Excel
//     leaves of a number cell, and the only kind whose '+' Excel drops:
//     "+442079460000" typed into a cell not formatted as text) is also
//     read as if a '+' preceded it, when that reading is a number the
//     campaign may call; a cell with separators was text and has no such
//     reading, so a typo ("415-823-45678") is never read as a number
//     abroad. If only the national reading is valid, or both give the same
//     number, that is the result. If only the '+' reading is valid, it is
//     the result, with a warning ("lost +"). If both are valid and differ,
//     the national reading wins only when the digits are exactly those of
//     the library's NATIONAL format of the number, that is, written as the
//     region writes its numbers ("2025550132" in the US, although +20
//     25550132 is a valid Egyptian number); otherwise the number is
//     ambiguous and rejected, asking for +country ("61138585" in Germany,
//     where numbers are written with their trunk 0: a Mainz number without
//     its 0, or an Australian one without its +).
//  8. Validity is the library's IsValidNumber; its Parse alone accepts
//     nonsense. The number's country (GetRegionCodeForNumber: +1 876 is
//     Jamaica) and kind (GetNumberType) are then checked against the
//     campaign's Rules.
//
// Why a fast path: the library's Parse, IsValidNumber and GetNumberType
// cost tens of microseconds and about 159 allocations a number (its
// regular expressions), so a plan of 100,000 rows would spend seconds on
// phone numbers alone. readNumber therefore runs on a fast path that
// computes exactly what the library computes; BenchmarkNormalize and
// BenchmarkNormalizeSlow measure the two on the same mix of numbers. The
// same rules on the plain library (normalizeSlow, libraryCore) are the
// reference that TestNormalizeDifferential and FuzzNormalize hold the fast
// path to:
//
//   - Rule 4 reduces the input to '+' and ASCII digits, so the parser's
//     extension, punctuation and RFC 3966 handling has nothing to do.
//     parseDigits replays the library's parse (parseHelper) on such a
//     string step by step, with the library's metadata and patterns:
//     calling code extraction, the region's own calling code written
//     without '+', national prefix stripping, leading zeros and length
//     checks. A branch it does not replay (an international prefix such as
//     011, national prefix transform rules, unusual lengths, unknown
//     regions) goes to the library.
//   - Validity, region and type (IsValidNumber, GetRegionCodeForNumber,
//     GetNumberType) are combinations of length checks and full or prefix
//     matches of metadata patterns. For each calling code they are compiled
//     once into a deterministic automaton over digits that classifies a
//     national number by region and type: the subset construction over the
//     programs regexp/syntax compiles from the same pattern strings
//     (dfa). Whether a pattern matches a whole string, or a prefix of
//     it, depends only on the language the pattern denotes, so the
//     automaton answers as the library does, with one table lookup per
//     digit.
//   - The E.164 form is '+', the calling code and the national
//     significant number, as Format(E164) writes it.
package phone

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Number is a phone number read from a cell: its E.164 form, the country
// the phone-number library places it in, and its kind. [Read]
// returns it; the contact reader keeps its fields on each contact.
type Number struct {
	E164   string // "+14155550132"
	Region string // ISO 3166 alpha-2 ("US", "JM"), or "001" for the international non-geographic codes (+800, +870, ...)
	Kind   phonenumbers.PhoneNumberType
	// Repair is a sentence, non-empty when the cell was not read as written
	// (Excel damage) and the person should be told.
	Repair string
}

// Read reads the phone number in a sheet's cell under rules: the
// sheet's region for numbers written without +country, and the countries
// and kinds of number the campaign may call. A cell that is not a usable
// phone number, or holds one the rules refuse, gives an error whose text
// names the value and says what to do. Read and [Normalize] are safe for
// concurrent use: the library's metadata and the fast path's tables are
// built on first use and shared.
func Read(raw string, rules *Rules) (Number, error) {
	return readNumber(raw, rules, fastCore)
}

// Normalize returns the E.164 form of raw ("+14155550132") under rules that
// refuse no country or kind (suppression files). region is the ISO 3166
// alpha-2 code ("US", "DE"; any case) that numbers written without a
// +country code belong to; it may be empty when every number carries its
// country code. warn is a sentence, non-empty when the input was repaired
// (Excel damage) and the caller should tell the user. err is a sentence
// naming the value when raw is not a usable phone number.
func Normalize(raw, region string) (e164, warn string, err error) {
	ph, err := readNumber(raw, Any(region), fastCore)
	return ph.E164, ph.Repair, err
}

// reading is one valid reading of a number.
type reading struct {
	e164   string
	region string // the library's GetRegionCodeForNumber
	kind   phonenumbers.PhoneNumberType
}

// coreFunc decides one reading of a number: digits (ASCII, non-empty)
// with or without a '+' in front, for region (upper case, possibly not a
// known region). It returns the reading and whether the number is valid.
type coreFunc func(plus bool, digits, region string) (reading, bool)

// libraryCore is the reference reading: the library's Parse,
// IsValidNumber, Format(E164), GetRegionCodeForNumber and GetNumberType. A
// panic in the library (none is known) makes the number invalid rather
// than ending the run.
func libraryCore(plus bool, digits, region string) (r reading, valid bool) {
	defer func() {
		if recover() != nil {
			r, valid = reading{}, false
		}
	}()
	s := digits
	if plus {
		s = "+" + digits
	}
	n, err := phonenumbers.Parse(s, region)
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return reading{}, false
	}
	return reading{
		e164:   phonenumbers.Format(n, phonenumbers.E164),
		region: phonenumbers.GetRegionCodeForNumber(n),
		kind:   phonenumbers.GetNumberType(n),
	}, true
}

// fastCore gives the same answers as libraryCore, using the
// replayed parse and the validity automata where they apply.
func fastCore(plus bool, digits, region string) (reading, bool) {
	t := loadTables()
	if t == nil {
		return libraryCore(plus, digits, region)
	}
	p, st := t.parseDigits(plus, digits, region)
	switch st {
	case notParse:
		return reading{}, false
	case fallback:
		return libraryCore(plus, digits, region)
	}
	v := t.validatorFor(p.cc)
	if v == nil {
		return libraryCore(plus, digits, region)
	}
	reg, kind, valid, ok := v.read(p.nsn)
	if !ok {
		return libraryCore(plus, digits, region)
	}
	if !valid {
		return reading{}, false
	}
	return reading{e164: "+" + t.ccStrings[p.cc] + p.nsn, region: reg, kind: kind}, true
}

// ValidRegion reports whether region (any case) is an ISO 3166 alpha-2
// code the phone-number library has numbering data for.
// The campaign file's loader and callrun init check regions with it.
func ValidRegion(region string) bool {
	return phonenumbers.GetSupportedRegions()[normRegion(region)]
}

// normRegion returns region trimmed and in upper case, without allocating
// for the usual "US".
func normRegion(region string) string {
	if len(region) == 2 && region[0] >= 'A' && region[0] <= 'Z' && region[1] >= 'A' && region[1] <= 'Z' {
		return region
	}
	return strings.ToUpper(strings.TrimSpace(region))
}
