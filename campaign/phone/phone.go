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
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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

// normalizeSlow is Normalize with the plain library in place of the fast
// path: the reference the tests compare Normalize with.
func normalizeSlow(raw, region string) (e164, warn string, err error) {
	ph, err := readNumber(raw, Any(region), libraryCore)
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

// maxDigits bounds the digits Normalize looks at: E.164 allows 15,
// the library 17 after a calling code of up to 3 and a trunk prefix.
const maxDigits = 24

var errEmpty = errors.New("phone number is empty")

// readNumber applies the rules in the file comment, with core deciding each
// reading and rules deciding which readings may be called.
func readNumber(raw string, rules *Rules, core coreFunc) (Number, error) {
	s := strings.TrimFunc(raw, isSpace)
	// A leading apostrophe is how a spreadsheet marks a cell as text.
	text := false
	if r, n := utf8.DecodeRuneInString(s); r == '\'' || r == '\u2019' {
		s, text = strings.TrimFunc(s[n:], isSpace), true
	}
	if s == "" {
		return Number{}, errEmpty
	}
	if spreadsheetError(s) {
		return Number{}, fmt.Errorf("%q is a spreadsheet error value, not a phone number: fix the formula or the value in the sheet", s)
	}
	region := normRegion(rules.region)
	if !utf8.ValidString(s) {
		return Number{}, fmt.Errorf("%q is not a phone number: it is not valid UTF-8 text", s)
	}
	if holdsTwo(s) {
		return Number{}, errHoldsTwo(s)
	}

	// A number exported as a decimal (pandas, Google Sheets, a number cell
	// with decimals in Excel): "4930124603.0", "4930124603,00". Read as
	// the number before the point or comma; any other digit after a point
	// is a digit of the number.
	decimal := false
	cell := s
	if t, ok := decimalExport(s); ok {
		s, decimal = t, true
	}

	var buf [maxDigits]byte
	var digits []byte
	plus, excel := false, false
	if d, ok, msg := excelScientific(s, buf[:0]); ok {
		if msg != "" {
			return Number{}, errors.New(msg)
		}
		digits, excel = d, true
	} else {
		var perr error
		digits, plus, perr = scanDigits(s, buf[:0])
		if perr != nil {
			return Number{}, perr
		}
	}
	// A cell of bare digits is what Excel leaves of a number cell: the
	// only kind of cell whose '+' Excel can have dropped.
	bare := excel || decimal || (!text && allDigits(s))
	// excelNote prefixes a message about the value with how it was read.
	excelNote := func() string {
		switch {
		case excel:
			return fmt.Sprintf("%q (Excel's scientific notation for %s)", s, digits)
		case decimal:
			return fmt.Sprintf("%q (the number %s exported as a decimal)", cell, s)
		}
		return fmt.Sprintf("%q", s)
	}
	if len(digits) >= 2*minTwoDigits && splitsInTwo(s, region, core) {
		return Number{}, errHoldsTwo(s)
	}

	// "00" is the international prefix almost everywhere, but a national
	// number whose trunk 0 was typed twice starts with it too: "001512
	// 3455303" in Germany, its first group of digits longer than 00 and a
	// country code are written ("0049 151 ...", "00 44 20 ...").
	doubled := false
	if !plus && len(digits) > 2 && digits[0] == '0' && digits[1] == '0' {
		doubled = true
		plus, digits = true, digits[2:]
	}
	ds := string(digits)

	if plus {
		r, ok := core(true, ds, region)
		if !ok {
			return Number{}, fmt.Errorf("%q is not a valid phone number", s)
		}
		if doubled && region != "" && !bare && firstGroupDigits(s) >= 6 {
			if typo, ok := core(false, "0"+ds, region); ok && typo.e164 != r.e164 {
				return Number{}, fmt.Errorf("%q is ambiguous: with 00 as the international prefix it is %s, but it is also %s of region %s if its 0 was typed twice; write it as +country number or as the national number", s, r.e164, typo.e164, region)
			}
		}
		if err := checkLength(s, r); err != nil {
			return Number{}, err
		}
		if err := rules.allows(r); err != nil {
			return Number{}, fmt.Errorf("%q is %w", s, err)
		}
		repair := ""
		if decimal {
			repair = fmt.Sprintf("%s was read as %s; export the phone column as text", excelNote(), r.e164)
		}
		return r.phone(repair), nil
	}
	if region == "" {
		return Number{}, fmt.Errorf("%s has no country code: write it as +country number, or set the sheet's region", excelNote())
	}
	if !phonenumbers.GetSupportedRegions()[region] {
		return Number{}, fmt.Errorf("%s has no country code and %q is not a known region code (such as US, GB, DE): write it as +country number, or fix the region", excelNote(), region)
	}
	national, nationalOK := core(false, ds, region)
	var intl reading
	intlOK := false
	// A cell of bare digits may have lost its '+'; a cell written with
	// separators that starts with the region's own country code ("49 151
	// 23454214" in Germany) may be an international number written
	// without it. Either reading stays a candidate only if the campaign
	// may call it; if both readings are valid and differ, the cell is
	// ambiguous.
	if ds[0] != '0' && (bare || strings.HasPrefix(ds, strconv.Itoa(phonenumbers.GetCountryCodeForRegion(region)))) {
		intl, intlOK = core(true, ds, region)
	}
	// A lost '+' is read back only into a country and kind the campaign
	// calls: a typo must not become a number abroad.
	intlErr := error(nil)
	if intlOK {
		if intlErr = rules.allows(intl); intlErr != nil {
			intlOK = false
		}
	}
	switch {
	case nationalOK && intlOK && intl.e164 != national.e164 && !writtenNationally(national.e164, ds):
		return Number{}, fmt.Errorf("%s is ambiguous: in region %s it is %s, but it is also %s if its leading + was lost (Excel drops it); write it as +country number", excelNote(), region, national.e164, intl.e164)
	case nationalOK:
		if err := checkLength(s, national); err != nil {
			return Number{}, err
		}
		if err := rules.allows(national); err != nil {
			return Number{}, fmt.Errorf("%s is %w", excelNote(), err)
		}
		repair := ""
		switch {
		case excel:
			repair = fmt.Sprintf("%s was read as %s; format the phone column as Text in Excel to keep numbers intact", excelNote(), national.e164)
		case decimal:
			repair = fmt.Sprintf("%s was read as %s; export the phone column as text", excelNote(), national.e164)
		}
		return national.phone(repair), nil
	case intlOK:
		if err := checkLength(s, intl); err != nil {
			return Number{}, err
		}
		return intl.phone(fmt.Sprintf("%s is not a valid number for region %s but is valid with a leading +; read as %s (the + was probably lost: Excel drops it)", excelNote(), region, intl.e164)), nil
	case intlErr != nil:
		return Number{}, fmt.Errorf("%s is not a valid phone number for region %s; with a leading + it would be %w", excelNote(), region, intlErr)
	}
	return Number{}, fmt.Errorf("%s is not a valid phone number for region %s", excelNote(), region)
}

// maxE164Digits is the most digits an E.164 number has, country code
// included. The library takes some longer national numbers as valid (up
// to 17 digits in Germany); such a number is more likely two numbers run
// together than one.
const maxE164Digits = 15

// checkLength refuses a reading longer than E.164 allows.
func checkLength(cell string, r reading) error {
	if n := len(r.e164) - 1; n > maxE164Digits {
		return fmt.Errorf("%q would be %s, %d digits, more than the %d an international phone number has: two numbers run together? put one number in the cell", cell, r.e164, n, maxE164Digits)
	}
	return nil
}

// minTwoDigits is the fewest digits either of two numbers in one cell must
// have for splitsInTwo to look for them, apart by a '/' or a tab (one
// more apart by spaces or dashes): shorter runs are area codes and parts
// of one number.
const minTwoDigits = 6

// splitsInTwo reports whether a cell written with separators reads as two
// valid numbers of region (or with +country) on either side of one of its
// separators, each long enough (minTwoDigits): "030/12345 / 030/54321",
// "06882/354 / 089/591", "0301234 0897654".
func splitsInTwo(s, region string, core coreFunc) bool {
	valid := func(part string, least int) bool {
		var buf [maxDigits]byte
		d, plus, err := scanDigits(strings.TrimFunc(part, func(r rune) bool { return isSpace(r) || isPunct(r) }), buf[:0])
		if err != nil || len(d) < least {
			return false
		}
		if plus || (len(d) > 2 && d[0] == '0' && d[1] == '0') {
			if !plus {
				d = d[2:]
			}
			_, ok := core(true, string(d), region)
			return ok
		}
		_, ok := core(false, string(d), region)
		return ok && region != ""
	}
	for i, r := range s {
		if r == '+' || !isPunct(r) || i == 0 {
			continue
		}
		// Split before the first separator of a run of them.
		if prev, _ := utf8.DecodeLastRuneInString(s[:i]); isPunct(prev) {
			continue
		}
		least := minTwoDigits + 1
		for _, q := range s[i:] {
			if !isPunct(q) {
				break
			}
			if q == '/' || q == '\t' {
				least = minTwoDigits
			}
		}
		if valid(s[:i], least) && valid(s[i:], least) {
			return true
		}
	}
	return false
}

// firstGroupDigits counts the digits of a cell before its first
// separator.
func firstGroupDigits(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			n++
		case r == '+' && n == 0:
		default:
			if n > 0 {
				return n
			}
		}
	}
	return n
}

// decimalExport recognises a number exported as a decimal: digits, with
// a leading '+' or not, then a point or a decimal comma and zeros (".0",
// ",00"). It returns the cell without the fraction.
func decimalExport(s string) (string, bool) {
	t := strings.TrimRight(s, "0")
	if len(t) == len(s) || len(t) < 2 || (t[len(t)-1] != '.' && t[len(t)-1] != ',') {
		return s, false
	}
	t = t[:len(t)-1]
	if allDigits(strings.TrimPrefix(t, "+")) && strings.TrimPrefix(t, "+") != "" {
		return t, true
	}
	return s, false
}

// spreadsheetError reports whether a cell holds a spreadsheet's error
// value, what a cell shows when its formula fails: Excel's #VALUE!,
// #NAME?, #REF!, #N/A, #DIV/0!, #NUM!, #NULL! (and the newer #SPILL!,
// #CALC!), Google Sheets' #ERROR!, and their translations (#WERT!, #NV,
// #VALEUR!, #¡VALOR!, #N/D).
func spreadsheetError(s string) bool {
	switch strings.ToUpper(s) {
	case "#N/A", "#NV", "#N/D":
		return true
	}
	if len(s) < 3 || s[0] != '#' || (s[len(s)-1] != '!' && s[len(s)-1] != '?') {
		return false
	}
	for _, r := range s[1 : len(s)-1] {
		if !unicode.IsLetter(r) && !('0' <= r && r <= '9') && !strings.ContainsRune("/_¡¿", r) {
			return false
		}
	}
	return true
}

func (r reading) phone(repair string) Number {
	return Number{E164: r.e164, Region: r.region, Kind: r.kind, Repair: repair}
}

// errHoldsTwo is the error of a cell that holds more than one number in
// a shape Split does not take apart.
func errHoldsTwo(cell string) error {
	return fmt.Errorf("%q holds more than one phone number: put one number in the cell, or list them apart by \";\" to have each tried in turn", cell)
}

// Split returns the numbers of a cell that lists several on purpose, in
// order: apart by " ::: " (as Google Contacts writes a field's values), by
// ";" or by line breaks. Each part is trimmed; empty ones are dropped. It
// returns nil when the cell is not such a list: it has none of these
// separators, or one of its parts has fewer than six digits (an extension
// or a dialling suffix after ";", a note on a second line), so that the
// cell is read whole and refused as it would be otherwise. Other shapes of
// two numbers ("555-1234 / 555-9876", "..., ...", "... or ...") are not
// split: which number is meant there is less sure. A '/' inside one
// number ("030/1234567") stays part of it. The contact reader offers each
// number of a list in turn, as it offers the next phone column.
func Split(cell string) []string {
	if !strings.ContainsAny(cell, ":;\n\r") {
		return nil
	}
	parts := strings.FieldsFunc(strings.ReplaceAll(cell, ":::", ";"), func(r rune) bool { return r == ';' || r == '\n' || r == '\r' })
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimFunc(p, isSpace); p == "" {
			continue
		}
		digits := 0
		for _, r := range p {
			if unicode.IsDigit(r) {
				digits++
			}
		}
		if digits < minTwoDigits {
			return nil
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// holdsTwo reports whether a cell holds more than one number: two
// runs of at least six digits apart by a list separator (",", ";", "/",
// "|", "&", ":", a line break) or by a word ("or", "oder", ...). A '/'
// between an area code and the rest ("030/1234567", as German numbers are
// often written) leaves one run shorter than six.
func holdsTwo(s string) bool {
	long, run := 0, 0
	end := func() {
		if run >= 6 {
			long++
		}
		run = 0
	}
	var word strings.Builder
	endWord := func() {
		// An extension marker or "tel:" is part of one number, any other
		// word separates two.
		if w := strings.ToLower(word.String()); w != "" && w != "x" && w != "tel" && !strings.HasPrefix(w, "ext") {
			end()
		}
		word.Reset()
	}
	for _, r := range s {
		if unicode.IsLetter(r) {
			word.WriteRune(r)
			continue
		}
		endWord()
		switch {
		case unicode.IsDigit(r):
			run++
		case r == ',' || r == ';' || r == '/' || r == '|' || r == '&' || r == ':' || r == '\n' || r == '\r':
			end()
		}
	}
	endWord()
	end()
	return long >= 2
}

// writtenNationally reports whether digits are exactly the digits of
// the library's NATIONAL format of the valid number e164.
func writtenNationally(e164, digits string) (written bool) {
	defer func() {
		if recover() != nil {
			written = false // a library panic: treat as ambiguous
		}
	}()
	n := libraryNumber(e164)
	if n == nil {
		return false
	}
	f := phonenumbers.Format(n, phonenumbers.NATIONAL)
	i := 0
	for j := 0; j < len(f); j++ {
		c := f[j]
		if c < '0' || c > '9' {
			continue
		}
		if i >= len(digits) || digits[i] != c {
			return false
		}
		i++
	}
	return i == len(digits)
}

// libraryNumber returns the library's PhoneNumber for a valid E.164
// number, as Parse would give it, or nil.
func libraryNumber(e164 string) *phonenumbers.PhoneNumber {
	for i := 2; i <= 4 && i < len(e164); i++ {
		cc, err := strconv.Atoi(e164[1:i])
		if err != nil || !phonenumbers.GetSupportedCallingCodes()[cc] {
			continue
		}
		nsn := e164[i:]
		if nsn[0] == '0' {
			break // leading zeros: let Parse set its fields
		}
		v, err := strconv.ParseUint(nsn, 10, 64)
		if err != nil {
			return nil
		}
		c := int32(cc)
		return &phonenumbers.PhoneNumber{CountryCode: &c, NationalNumber: &v}
	}
	n, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return nil
	}
	return n
}

// isSpace reports the white space trimmed around a number: Unicode
// spaces (including the no-break space spreadsheets like), zero-width
// spaces and a stray byte order mark.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\u200b' || r == '\u2060' || r == '\ufeff'
}

// isPunct reports the separators accepted between digits.
func isPunct(r rune) bool {
	switch r {
	case ' ', '\t', '.', '-', '(', ')', '/',
		'\u00a0', '\u2007', '\u2009', '\u202f', '\u200b', '\u2060', // spaces
		'\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212': // dashes
		return true
	}
	return false
}

// scanDigits reduces s to its digits and whether it starts with '+'.
func scanDigits(s string, buf []byte) (digits []byte, plus bool, err error) {
	orig := s
	if len(s) >= 4 && strings.EqualFold(s[:4], "tel:") {
		s = strings.TrimLeftFunc(s[4:], isSpace)
	}
	for i, r := range s {
		switch {
		case unicode.IsDigit(r):
			if len(buf) == maxDigits {
				return nil, false, fmt.Errorf("%q has too many digits to be a phone number", orig)
			}
			buf = append(buf, asciiDigit(r))
		case r == '+' || r == '\uff0b':
			if plus || len(buf) > 0 {
				return nil, false, fmt.Errorf("%q has a + in the middle: a + may only start a phone number", orig)
			}
			plus = true
		case isPunct(r):
		default:
			rest := strings.ToLower(s[i:])
			if r == '#' || r == ';' || r == ',' || strings.HasPrefix(rest, "x") || strings.HasPrefix(rest, "ext") {
				return nil, false, fmt.Errorf("%q has an extension or dialling suffix: only the main number can be called, remove it", orig)
			}
			if len(buf) == 0 {
				return nil, false, fmt.Errorf("%q is not a phone number", orig)
			}
			return nil, false, fmt.Errorf("%q contains %q, which is not part of a phone number", orig, r)
		}
	}
	if len(buf) == 0 {
		return nil, false, fmt.Errorf("%q is not a phone number: it has no digits", orig)
	}
	return buf, plus, nil
}

// asciiDigit returns the ASCII digit of a decimal digit in any script
// (full-width "\uff14" is '4'): Unicode lays out each script's digits as
// a run of ten from zero, so the value is the offset in its run.
func asciiDigit(r rune) byte {
	if r < utf8.RuneSelf {
		return byte(r)
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte('0' + (r-rune(rg.Lo))%10)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte('0' + (r-rune(rg.Lo))%10)
		}
	}
	return '0' // unreachable for a rune unicode.IsDigit accepts
}

// excelMaxDigits is the number of significant digits Excel keeps.
const excelMaxDigits = 15

// excelScientific recognises a number Excel wrote in scientific
// notation: a digit, optionally a decimal point or comma and more digits,
// 'E', an optional sign and an exponent ("1.4155550132E+10",
// "4,41614960000E+11").
// ok is false when s is not in that form. Otherwise either digits holds
// the exact expansion, or msg says why it cannot be trusted.
func excelScientific(s string, buf []byte) (digits []byte, ok bool, msg string) {
	e := strings.IndexAny(s, "eE")
	if e < 1 || e == len(s)-1 {
		return nil, false, ""
	}
	mant, exp := s[:e], s[e+1:]
	neg := false
	if exp[0] == '+' || exp[0] == '-' {
		neg = exp[0] == '-'
		exp = exp[1:]
	}
	if len(exp) == 0 || len(exp) > 3 || !allDigits(exp) {
		return nil, false, ""
	}
	if mant[0] < '0' || mant[0] > '9' {
		return nil, false, ""
	}
	frac := ""
	if len(mant) > 1 {
		if mant[1] != '.' && mant[1] != ',' {
			return nil, false, ""
		}
		frac = mant[2:]
		if !allDigits(frac) {
			return nil, false, ""
		}
	}
	n, _ := strconv.Atoi(exp)
	sig := 1 + len(frac) // the digits the mantissa spells out
	if neg || mant[0] == '0' || n+1 != sig || sig > excelMaxDigits {
		// Fewer digits written than the number has (lost), not a whole
		// number, or more digits than Excel keeps.
		return nil, true, fmt.Sprintf("%q was damaged by Excel: it shows the number in scientific notation, which may have lost digits; re-export the sheet with the phone column formatted as Text", s)
	}
	buf = append(buf, mant[0])
	buf = append(buf, frac...)
	return buf, true, ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// The fast path's view of the library metadata.

// meta is what the fast path needs of one PhoneMetadata: the patterns
// the parser evaluates, compiled from the very strings the library
// compiles, and the general description's possible lengths.
type meta struct {
	md        *phonenumbers.PhoneMetadata
	cc        int
	ccStr     string
	idd       *dfa           // prefix match of the international prefix
	npfp      *regexp.Regexp // "^(?:" + national prefix for parsing + ")", nil when empty
	npfpDFA   *dfa           // prefix match of the same, to skip npfp cheaply; may be nil
	transform string         // national prefix transform rule
	general   *dfa           // full match of the general description's pattern
	// general description's possible lengths, for testNumberLength(UNKNOWN)
	possible  []int32
	localOnly []int32
}

// tables indexes the library's embedded metadata the way the library
// does (see newMetadataContainer in nyaruka/phonenumbers): regions by id,
// non-geographical entities by calling code, the last entry winning.
type tables struct {
	regions map[string]*meta
	nonGeo  map[int]*meta
	// callingCodes[cc] is true for every calling code the library knows
	// (the keys of its countryCodeToRegion map).
	callingCodes [1000]bool
	// supported mirrors phonenumbers.GetSupportedRegions.
	supported map[string]bool
	ccStrings [1000]string

	validators [1000]struct {
		once sync.Once
		v    *validator
	}
}

var (
	tablesOnce sync.Once
	tablesPtr  *tables
)

// loadTables returns the shared metadata tables, building them on
// first use. A nil result (metadata the fast path cannot model) makes every
// caller use the library.
func loadTables() *tables {
	tablesOnce.Do(func() {
		coll, err := phonenumbers.MetadataCollection()
		if err != nil {
			return
		}
		t := &tables{regions: map[string]*meta{}, nonGeo: map[int]*meta{}}
		t.supported = maps.Clone(phonenumbers.GetSupportedRegions())
		for cc := range phonenumbers.GetSupportedCallingCodes() {
			if cc > 0 && cc < 1000 {
				t.callingCodes[cc] = true
			}
		}
		for cc := range t.ccStrings {
			t.ccStrings[cc] = strconv.Itoa(cc)
		}
		for _, md := range coll.GetMetadata() {
			m := newMeta(md)
			if m == nil {
				continue // the fast path falls back when it finds no entry
			}
			if md.GetId() == "001" {
				t.nonGeo[int(md.GetCountryCode())] = m
			} else {
				t.regions[md.GetId()] = m
			}
		}
		tablesPtr = t
	})
	return tablesPtr
}

func newMeta(md *phonenumbers.PhoneMetadata) *meta {
	gd := md.GetGeneralDesc()
	if gd == nil {
		return nil
	}
	m := &meta{
		md:        md,
		cc:        int(md.GetCountryCode()),
		transform: md.GetNationalPrefixTransformRule(),
		possible:  gd.GetPossibleLength(),
		localOnly: gd.GetPossibleLengthLocalOnly(),
	}
	m.ccStr = strconv.Itoa(m.cc)
	var err error
	if m.idd, err = singlePatternDFA(md.GetInternationalPrefix(), true); err != nil {
		return nil
	}
	if p := md.GetNationalPrefixForParsing(); p != "" {
		if m.npfp, err = regexp.Compile("^(?:" + p + ")"); err != nil {
			return nil
		}
		// Patterns with anchors ("([2-9]\d{6})$|1" in the Caribbean)
		// get no automaton: npfp alone decides for them.
		m.npfpDFA, _ = singlePatternDFA(p, true)
	}
	if m.general, err = singlePatternDFA(gd.GetNationalNumberPattern(), false); err != nil {
		return nil
	}
	return m
}

// singlePatternDFA compiles one pattern for a prefix or a full match.
func singlePatternDFA(pattern string, prefix bool) (*dfa, error) {
	b := newDFABuilder()
	c := b.add(pattern, prefix)
	return b.build(func(matched []bool, _ int) bool { return matched[c] }, 1<<16)
}

// metaForCallingCode mirrors getMetadataForRegionOrCallingCode(cc,
// GetRegionCodeForCountryCode(cc)): the metadata the library's parser uses
// for a number with calling code cc.
func (t *tables) metaForCallingCode(cc int) *meta {
	main := phonenumbers.GetRegionCodeForCountryCode(cc)
	if main == "001" {
		return t.nonGeo[cc]
	}
	return t.regions[main]
}

// testNumberLength mirrors the library's testNumberLength(number,
// metadata, UNKNOWN).
func (m *meta) testNumberLength(n int) phonenumbers.ValidationResult {
	possible := m.possible
	if len(possible) == 0 || possible[0] == -1 {
		return phonenumbers.INVALID_LENGTH
	}
	for _, l := range m.localOnly {
		if int(l) == n {
			return phonenumbers.IS_POSSIBLE_LOCAL_ONLY
		}
	}
	if int(possible[0]) == n {
		return phonenumbers.IS_POSSIBLE
	} else if int(possible[0]) > n {
		return phonenumbers.TOO_SHORT
	} else if int(possible[len(possible)-1]) < n {
		return phonenumbers.TOO_LONG
	}
	for _, l := range possible[1:] {
		if int(l) == n {
			return phonenumbers.IS_POSSIBLE
		}
	}
	return phonenumbers.INVALID_LENGTH
}

// stripNationalPrefix mirrors the library's
// maybeStripNationalPrefixAndCarrierCode for a digit string. It returns
// the number with the prefix removed (or unchanged) and ok=false where the
// library would apply a transform rule, which the fast path leaves to the
// library.
func (m *meta) stripNationalPrefix(number string) (string, bool) {
	if len(number) == 0 || m.npfp == nil {
		return number, true
	}
	if m.npfpDFA != nil {
		if found, ok := m.npfpDFA.match(number); ok && !found {
			return number, true
		}
	}
	groups := m.npfp.FindStringSubmatchIndex(number)
	if groups == nil {
		return number, true
	}
	numOfGroups := len(groups)/2 - 1
	if m.transform != "" && groups[numOfGroups*2] >= 0 {
		return number, false
	}
	viableOriginal, ok1 := m.general.match(number)
	stripped := number[groups[1]:]
	viableStripped, ok2 := m.general.match(stripped)
	if !ok1 || !ok2 {
		return number, false
	}
	if viableOriginal && !viableStripped {
		return number, true
	}
	return stripped, true
}

// parsed is the fast path's parse of a digit string: the calling code
// and national significant number (leading zeros included) the library's
// Parse would produce.
type parsed struct {
	cc  int
	nsn string
}

// parseStatus says how far parseDigits got.
type parseStatus int

const (
	parsedOK parseStatus = iota // cc and nsn are the library's
	notParse                    // the library's Parse returns an error
	fallback                    // not modelled: ask the library
)

// parseDigits mirrors phonenumbers.Parse (parseHelper) for an input that is
// an optional '+' followed by ASCII digits, region being the default
// region. Where the fast path does not model the library's behaviour
// (international prefixes, national prefix transform rules, unusual
// lengths, unknown regions) it returns fallback.
func (t *tables) parseDigits(plus bool, digits, region string) (parsed, parseStatus) {
	// buildNationalNumberForParsing, isViablePhoneNumber and
	// maybeStripExtension leave a string of 3 or more digits, with or
	// without a '+', as it is. Shorter and very long inputs, which end in
	// the library's errors, are left to it.
	if len(digits) < 3 || len(digits) > 17+3 {
		return parsed{}, fallback
	}
	def := t.regions[region]
	if def == nil || !t.supported[region] {
		// checkRegionForParsing and the nil metadata paths.
		return parsed{}, fallback
	}
	var (
		cc       int
		national string
		st       parseStatus
	)
	if plus {
		// maybeExtractCountryCode strips the '+' and takes the first
		// known calling code of one to three digits.
		if digits[0] != '0' {
			for i := 1; i <= 3; i++ {
				c, _ := strconv.Atoi(digits[:i])
				if t.callingCodes[c] {
					cc, national = c, digits[i:]
					break
				}
			}
		}
		if cc == 0 {
			// ErrInvalidCountryCode: parseHelper strips the '+' and
			// tries again as if it had not been there; no calling code
			// then is ErrInvalidCountryCode.
			cc, national, st = t.extractWithoutPlus(digits, def)
			if st != parsedOK {
				return parsed{}, st
			}
			if cc == 0 {
				return parsed{}, notParse
			}
		}
	} else {
		cc, national, st = t.extractWithoutPlus(digits, def)
		if st != parsedOK {
			return parsed{}, st
		}
	}
	meta := def
	if cc != 0 {
		if phonenumbers.GetRegionCodeForCountryCode(cc) != region {
			meta = t.metaForCallingCode(cc)
			if meta == nil {
				// The library would skip national prefix stripping.
				return parsed{}, fallback
			}
		}
	} else {
		cc, national = def.cc, digits
	}
	if len(national) < 2 {
		return parsed{}, notParse // ErrTooShortNSN
	}
	potential, ok := meta.stripNationalPrefix(national)
	if !ok {
		return parsed{}, fallback
	}
	switch meta.testNumberLength(len(potential)) {
	case phonenumbers.TOO_SHORT, phonenumbers.IS_POSSIBLE_LOCAL_ONLY, phonenumbers.INVALID_LENGTH:
	default:
		national = potential
	}
	if len(national) < 2 || len(national) > 17 {
		return parsed{}, notParse // ErrTooShortNSN, ErrNumTooLong
	}
	// The library keeps leading zeros as ItalianLeadingZero and
	// NumberOfLeadingZeros beside the integer NationalNumber;
	// GetNationalSignificantNumber, which validation and formatting use,
	// gives back exactly the digits of national.
	return parsed{cc: cc, nsn: national}, parsedOK
}

// extractWithoutPlus mirrors maybeExtractCountryCode for digits that do not
// start with '+': cc is 0 when the number has no calling code, in which
// case national is digits.
func (t *tables) extractWithoutPlus(digits string, def *meta) (cc int, national string, st parseStatus) {
	// An international dialling prefix of the region (011 in the US, 00
	// in most of Europe) is the library's business.
	if m, ok := def.idd.match(digits); !ok || m {
		return 0, "", fallback
	}
	if len(digits) >= len(def.ccStr) && digits[:len(def.ccStr)] == def.ccStr {
		// The number starts with the region's own calling code: it is
		// taken as a calling code when the number is only valid without
		// it, or too long with it.
		potential, ok := def.stripNationalPrefix(digits[len(def.ccStr):])
		if !ok {
			return 0, "", fallback
		}
		fullValid, ok1 := def.general.match(digits)
		nationalValid, ok2 := def.general.match(potential)
		if !ok1 || !ok2 {
			return 0, "", fallback
		}
		if (!fullValid && nationalValid) || def.testNumberLength(len(digits)) == phonenumbers.TOO_LONG {
			return def.cc, potential, parsedOK
		}
	}
	return 0, digits, parsedOK
}

// validator decides, for the numbers of one calling code, given the
// national significant number, what phonenumbers.IsValidNumber,
// GetRegionCodeForNumber and GetNumberType decide, in one automaton walk.
type validator struct {
	dfa     *dfa
	regions []string // the calling code's regions, in the library's order
}

// typedDescs lists the descriptions getNumberTypeHelper tries after
// the general one and before fixed line and mobile, in its order, with the
// type each one gives.
var typedDescs = []struct {
	get func(*phonenumbers.PhoneMetadata) *phonenumbers.PhoneNumberDesc
	typ phonenumbers.PhoneNumberType
}{
	{(*phonenumbers.PhoneMetadata).GetPremiumRate, phonenumbers.PREMIUM_RATE},
	{(*phonenumbers.PhoneMetadata).GetTollFree, phonenumbers.TOLL_FREE},
	{(*phonenumbers.PhoneMetadata).GetSharedCost, phonenumbers.SHARED_COST},
	{(*phonenumbers.PhoneMetadata).GetVoip, phonenumbers.VOIP},
	{(*phonenumbers.PhoneMetadata).GetPersonalNumber, phonenumbers.PERSONAL_NUMBER},
	{(*phonenumbers.PhoneMetadata).GetPager, phonenumbers.PAGER},
	{(*phonenumbers.PhoneMetadata).GetUan, phonenumbers.UAN},
	{(*phonenumbers.PhoneMetadata).GetVoicemail, phonenumbers.VOICEMAIL},
}

// descMatcher is isNumberMatchingDesc for one description: the
// length is one of the possible lengths (when any are listed) and the
// pattern matches fully.
type descMatcher struct {
	comp    int
	lengths []int32
}

func (d descMatcher) eval(matched []bool, n int) bool {
	if len(d.lengths) > 0 && !slices.Contains(d.lengths, int32(n)) {
		return false
	}
	return matched[d.comp]
}

// typeMatcher is getNumberTypeHelper(nsn, metadata) for one region.
type typeMatcher struct {
	general descMatcher
	typed   []descMatcher // typedDescs, in order
	fixed   descMatcher
	mobile  *descMatcher // nil when mobile and fixed line share a pattern
}

// typeOf returns the number type getNumberTypeHelper gives, UNKNOWN when
// the number is not valid for the region.
func (m *typeMatcher) typeOf(matched []bool, n int) phonenumbers.PhoneNumberType {
	if !m.general.eval(matched, n) {
		return phonenumbers.UNKNOWN
	}
	for i, d := range m.typed {
		if d.eval(matched, n) {
			return typedDescs[i].typ
		}
	}
	if m.fixed.eval(matched, n) {
		if m.mobile == nil || m.mobile.eval(matched, n) {
			return phonenumbers.FIXED_LINE_OR_MOBILE
		}
		return phonenumbers.FIXED_LINE
	}
	if m.mobile != nil && m.mobile.eval(matched, n) {
		return phonenumbers.MOBILE
	}
	return phonenumbers.UNKNOWN
}

func newTypeMatcher(b *dfaBuilder, md *phonenumbers.PhoneMetadata) (*typeMatcher, bool) {
	desc := func(d *phonenumbers.PhoneNumberDesc) (descMatcher, bool) {
		if d == nil {
			// The library would dereference a nil description.
			return descMatcher{}, false
		}
		return descMatcher{comp: b.full(d.GetNationalNumberPattern()), lengths: d.GetPossibleLength()}, true
	}
	m := &typeMatcher{}
	var ok bool
	if m.general, ok = desc(md.GetGeneralDesc()); !ok {
		return nil, false
	}
	for _, td := range typedDescs {
		d, ok := desc(td.get(md))
		if !ok {
			return nil, false
		}
		m.typed = append(m.typed, d)
	}
	if m.fixed, ok = desc(md.GetFixedLine()); !ok {
		return nil, false
	}
	if !md.GetSameMobileAndFixedLinePattern() {
		d, ok := desc(md.GetMobile())
		if !ok {
			return nil, false
		}
		m.mobile = &d
	}
	return m, true
}

// validatorFor returns the automaton for calling code cc, building it on
// first use; nil means the fast path cannot model cc and the caller asks
// the library.
func (t *tables) validatorFor(cc int) *validator {
	if cc <= 0 || cc >= len(t.validators) {
		return nil
	}
	slot := &t.validators[cc]
	slot.once.Do(func() { slot.v = t.buildValidator(cc) })
	return slot.v
}

// validatorMaxStates bounds an automaton's size; the largest (NANP,
// calling code 1) has about 1,400 states.
const validatorMaxStates = 200_000

// buildValidator compiles, for calling code cc:
//
//	region := GetRegionCodeForNumber(number)  // first region of cc whose
//	    // leading digits match (prefix) or, without leading digits, whose
//	    // getNumberTypeHelper is not UNKNOWN; the only region if just one
//	IsValidNumberForRegion(number, region)     // the region's calling code
//	    // is cc and getNumberTypeHelper(nsn, metadata) != UNKNOWN
//	GetNumberType(number)                      // getNumberTypeHelper for region
//
// The class of a valid number is (index of its region + 1) << 4 | its type.
func (t *tables) buildValidator(cc int) *validator {
	regions := phonenumbers.GetRegionCodesForCountryCode(cc)
	if len(regions) == 0 || len(regions) >= 1<<11 {
		return nil
	}
	type candidate struct {
		typ      *typeMatcher
		leading  int // prefix component, -1 without leading digits
		sameCode bool
	}
	b := newDFABuilder()
	var cands []candidate
	for _, region := range regions {
		var m *meta
		if region == "001" {
			m = t.nonGeo[cc]
		} else {
			m = t.regions[region]
		}
		if m == nil {
			return nil
		}
		typ, ok := newTypeMatcher(b, m.md)
		if !ok {
			return nil
		}
		c := candidate{typ: typ, leading: -1, sameCode: region == "001" || m.cc == cc}
		if ld := m.md.GetLeadingDigits(); ld != "" && len(regions) > 1 {
			c.leading = b.prefix(ld)
		}
		cands = append(cands, c)
	}
	class := func(i int, typ phonenumbers.PhoneNumberType) uint16 {
		if !cands[i].sameCode || typ == phonenumbers.UNKNOWN {
			return 0
		}
		return uint16(i+1)<<4 | uint16(typ)
	}
	classify := func(matched []bool, n int) uint16 {
		if len(cands) == 1 {
			return class(0, cands[0].typ.typeOf(matched, n))
		}
		for i, c := range cands {
			if c.leading >= 0 {
				if matched[c.leading] {
					return class(i, c.typ.typeOf(matched, n))
				}
				continue
			}
			if typ := c.typ.typeOf(matched, n); typ != phonenumbers.UNKNOWN {
				return class(i, typ)
			}
		}
		return 0
	}
	dfa, err := b.buildClasses(classify, validatorMaxStates, true)
	if err != nil {
		return nil
	}
	return &validator{dfa: dfa, regions: regions}
}

// read returns whether the number of national significant number nsn is
// valid and, if so, its region and type; ok is false when the automaton
// cannot answer.
func (v *validator) read(nsn string) (region string, typ phonenumbers.PhoneNumberType, valid, ok bool) {
	c, ok := v.dfa.classify(nsn)
	if !ok || c == 0 {
		return "", phonenumbers.UNKNOWN, false, ok
	}
	return v.regions[int(c>>4)-1], phonenumbers.PhoneNumberType(c & 15), true, true
}

// dfa is a deterministic automaton over the ASCII digits '0'..'9',
// compiled from libphonenumber metadata patterns by dfaBuilder.
//
// The metadata patterns are regular expressions that the library matches
// with Go's regexp package, either anchored at both ends ("^(?:P)$", a full
// match) or at the start only ("^(?:P)", a prefix match). Whether such a
// match exists depends only on the language the pattern denotes, not on
// Go's leftmost-first preference rules, so an automaton that accepts the
// same language answers exactly as the library does. The automaton is
// built by the textbook subset construction over the very programs Go's
// regexp compiles (regexp/syntax), so it does not re-interpret the
// pattern syntax itself.
type dfa struct {
	// next[state*10+digit] is the state after reading digit.
	next []int32
	// acc[state] has bit n set when a digit string of length n that ends in
	// state is accepted.
	acc []uint32
	// class[state*(dfaMaxLen+1)+n], when the automaton was built with
	// a classifier (buildClasses), is the class of a digit string of
	// length n that ends in state; 0 means not accepted.
	class []uint16
	// stay[state] is true when every digit leads from state back to it
	// (no thread left, or a prefix match settled): the rest of the input
	// cannot change the state, so match stops reading.
	stay []bool
}

// dfaMaxLen is the longest input dfa answers for: acc is a
// 32-bit mask indexed by length.
const dfaMaxLen = 31

// match reports whether the digit string s is accepted and whether the
// automaton could answer at all (ok is false for inputs longer than
// dfaMaxLen or holding a byte that is not an ASCII digit).
func (d *dfa) match(s string) (accepted, ok bool) {
	if len(s) > dfaMaxLen || !allDigits(s) {
		return false, false
	}
	st := int32(0)
	for i := 0; i < len(s) && !d.stay[st]; i++ {
		st = d.next[int(st)*10+int(s[i]-'0')]
	}
	return d.acc[st]&(1<<uint(len(s))) != 0, true
}

// classify is match for an automaton built with buildClasses: the class of
// s, 0 when s is not accepted.
func (d *dfa) classify(s string) (class uint16, ok bool) {
	if len(s) > dfaMaxLen || !allDigits(s) || d.class == nil {
		return 0, false
	}
	st := int32(0)
	for i := 0; i < len(s) && !d.stay[st]; i++ {
		st = d.next[int(st)*10+int(s[i]-'0')]
	}
	return d.class[int(st)*(dfaMaxLen+1)+len(s)], true
}

// dfaComponent is one pattern taking part in an automaton.
type dfaComponent struct {
	prog   *syntax.Prog
	prefix bool // a prefix match ("^(?:P)") rather than a full match
}

// dfaBuilder collects the patterns an automaton decides on. Each
// distinct (pattern, kind) pair becomes one component; accept functions
// refer to components by the index full or prefix returned.
type dfaBuilder struct {
	comps []dfaComponent
	index map[string]int
	err   error
}

// newDFABuilder returns an empty builder.
func newDFABuilder() *dfaBuilder {
	return &dfaBuilder{index: map[string]int{}}
}

// full registers pattern for a full match and returns its component index.
func (b *dfaBuilder) full(pattern string) int { return b.add(pattern, false) }

// prefix registers pattern for a prefix match and returns its component index.
func (b *dfaBuilder) prefix(pattern string) int { return b.add(pattern, true) }

func (b *dfaBuilder) add(pattern string, prefix bool) int {
	key := "F" + pattern
	if prefix {
		key = "P" + pattern
	}
	if i, ok := b.index[key]; ok {
		return i
	}
	// regexp.MustCompile, which the library uses, parses with syntax.Perl.
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		b.err = fmt.Errorf("pattern %q: %w", pattern, err)
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		b.err = fmt.Errorf("pattern %q: %w", pattern, err)
		return 0
	}
	for _, inst := range prog.Inst {
		if inst.Op == syntax.InstEmptyWidth {
			// Anchors or word boundaries inside a metadata pattern: not
			// modelled here. The caller falls back to the library.
			b.err = fmt.Errorf("pattern %q has an empty-width assertion", pattern)
			return 0
		}
	}
	if len(prog.Inst) >= 1<<16 || len(b.comps) >= 1<<15 {
		b.err = fmt.Errorf("pattern %q is too large", pattern)
		return 0
	}
	b.comps = append(b.comps, dfaComponent{prog: prog, prefix: prefix})
	b.index[key] = len(b.comps) - 1
	return len(b.comps) - 1
}

// State items: a thread of component c at instruction pc is c<<16|pc; a
// prefix component that has matched is marked by dfaSticky|c and
// drops its threads.
const dfaSticky = 1 << 31

// build runs the subset construction. accept is called once per state and
// length n (0..dfaMaxLen) with matched[c] telling whether component c
// matched the whole input (full) or some prefix of it (prefix).
func (b *dfaBuilder) build(accept func(matched []bool, n int) bool, maxStates int) (*dfa, error) {
	return b.buildClasses(func(matched []bool, n int) uint16 {
		if accept(matched, n) {
			return 1
		}
		return 0
	}, maxStates, false)
}

// buildClasses is build with a classifier in place of accept: a string is
// accepted when its class is not 0. With keep, the automaton keeps every
// class for [dfa.classify].
func (b *dfaBuilder) buildClasses(classify func(matched []bool, n int) uint16, maxStates int, keep bool) (*dfa, error) {
	if b.err != nil {
		return nil, b.err
	}
	var (
		states  [][]uint32
		ids     = map[string]int32{}
		d       = &dfa{}
		keyBuf  []byte
		matched = make([]bool, len(b.comps))
		seen    = make([][]uint32, len(b.comps)) // closure visit marks, by generation
		gen     uint32
		stack   []uint32
	)
	for c := range b.comps {
		seen[c] = make([]uint32, len(b.comps[c].prog.Inst))
	}
	// closure adds to items every Rune and Match instruction reachable from
	// pc of component c without consuming input.
	closure := func(items []uint32, c int, pc uint32) []uint32 {
		prog := b.comps[c].prog
		stack = append(stack[:0], pc)
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[c][pc] == gen {
				continue
			}
			seen[c][pc] = gen
			inst := &prog.Inst[pc]
			switch inst.Op {
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, inst.Arg, inst.Out)
			case syntax.InstCapture, syntax.InstNop:
				stack = append(stack, inst.Out)
			case syntax.InstMatch, syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				items = append(items, uint32(c)<<16|pc)
			case syntax.InstFail:
			default:
				panic("dfa: unexpected instruction")
			}
		}
		return items
	}
	// finish turns prefix components that reached Match into sticky marks,
	// sorts the items and interns the state.
	finish := func(items []uint32) int32 {
		for _, it := range items {
			if it&dfaSticky != 0 {
				continue
			}
			c := int(it >> 16)
			if b.comps[c].prefix && b.comps[c].prog.Inst[it&0xffff].Op == syntax.InstMatch {
				items = append(items, dfaSticky|uint32(c))
			}
		}
		// Drop the threads of prefix components that are already marked.
		var marked map[uint32]bool
		for _, it := range items {
			if it&dfaSticky != 0 {
				if marked == nil {
					marked = map[uint32]bool{}
				}
				marked[it&^dfaSticky] = true
			}
		}
		if marked != nil {
			items = slices.DeleteFunc(items, func(it uint32) bool {
				return it&dfaSticky == 0 && marked[it>>16]
			})
		}
		slices.Sort(items)
		items = slices.Compact(items)
		keyBuf = keyBuf[:0]
		for _, it := range items {
			keyBuf = binary.LittleEndian.AppendUint32(keyBuf, it)
		}
		if id, ok := ids[string(keyBuf)]; ok {
			return id
		}
		id := int32(len(states))
		ids[string(keyBuf)] = id
		states = append(states, slices.Clone(items))
		return id
	}

	var start []uint32
	for c := range b.comps {
		gen++
		start = closure(start, c, uint32(b.comps[c].prog.Start))
	}
	finish(start)
	var items []uint32
	for s := 0; s < len(states); s++ {
		if len(states) > maxStates {
			return nil, fmt.Errorf("automaton exceeds %d states", maxStates)
		}
		cur := states[s]
		for digit := range 10 {
			items = items[:0]
			gen++
			for _, it := range cur {
				if it&dfaSticky != 0 {
					items = append(items, it)
					continue
				}
				c := int(it >> 16)
				inst := &b.comps[c].prog.Inst[it&0xffff]
				if inst.Op == syntax.InstMatch {
					continue
				}
				if inst.MatchRune(rune('0' + digit)) {
					items = closure(items, c, inst.Out)
				}
			}
			d.next = append(d.next, finish(items))
		}
		// The accept mask of state s.
		clear(matched)
		for _, it := range cur {
			if it&dfaSticky != 0 {
				matched[it&^dfaSticky] = true
				continue
			}
			c := int(it >> 16)
			if !b.comps[c].prefix && b.comps[c].prog.Inst[it&0xffff].Op == syntax.InstMatch {
				matched[c] = true
			}
		}
		var mask uint32
		for n := 0; n <= dfaMaxLen; n++ {
			c := classify(matched, n)
			if c != 0 {
				mask |= 1 << uint(n)
			}
			if keep {
				d.class = append(d.class, c)
			}
		}
		d.acc = append(d.acc, mask)
	}
	d.stay = make([]bool, len(d.acc))
	for s := range d.stay {
		d.stay[s] = !slices.ContainsFunc(d.next[s*10:s*10+10], func(n int32) bool { return n != int32(s) })
	}
	return d, nil
}
