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
//     dots, dashes, parentheses and slashes. An invisible text-direction
//     mark (RLM, LRM, an embedding or isolate, as numbers copied from
//     right-to-left text carry) is an error of its own: it may show the
//     digit groups in another order than they are stored. Letters are an error: the
//     service cannot dial an extension, and vanity numbers (1-800-FLOWERS)
//     are not worth the risk of a wrong call.
//  5. A leading "00" is read as '+' whatever the region: it is the
//     international prefix of most of the world and no national number
//     starts with it. Other international prefixes (011 in North America)
//     are the library's business, for the sheet's region.
//  6. A number written with '+' is international and never reinterpreted;
//     but one whose digits, grouped as the region groups its national
//     numbers ("+(479) 950-5111" in the US), are also a valid number of
//     the region is ambiguous and rejected: a '+' typed before a national
//     number, as a web form that shows one before its field gets.
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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	c, err := scanCell(raw)
	if err != nil {
		return Number{}, err
	}
	region := normRegion(rules.region)
	if len(c.digits) >= 2*minTwoDigits && splitsInTwo(c.s, region, core) {
		return Number{}, errHoldsTwo(c.s)
	}

	// "00" is the international prefix almost everywhere, but a national
	// number whose trunk 0 was typed twice starts with it too: "001512
	// 3455303" in Germany, its first group of digits longer than 00 and a
	// country code are written ("0049 151 ...", "00 44 20 ...").
	if !c.plus && len(c.digits) > 2 && c.digits[0] == '0' && c.digits[1] == '0' {
		c.doubled = true
		c.plus, c.digits = true, c.digits[2:]
	}
	if !c.plus {
		return c.readNational(rules, region, core)
	}
	r, ok := core(true, c.digits, region)
	if !ok {
		return Number{}, fmt.Errorf("%q is not a valid phone number", c.s)
	}
	if c.doubled && region != "" && !c.bare && firstGroupDigits(c.s) >= 6 {
		if typo, ok := core(false, "0"+c.digits, region); ok && typo.e164 != r.e164 {
			return Number{}, fmt.Errorf("%q is ambiguous: with 00 as the international prefix it is %s, but it is also %s of region %s if its 0 was typed twice; write it as +country number or as the national number", c.s, r.e164, typo.e164, region)
		}
	}
	if !c.doubled && region != "" {
		// A '+' typed before a national number, as a form with a '+'
		// already in its field gets: "+(479) 950-5111" is grouped as a US
		// number is written, and read with its '+' it is a mobile in
		// Norway.
		if nat, ok := core(false, c.digits, region); ok && nat.e164 != r.e164 && groupedNationally(c.s, nat.e164) {
			return Number{}, fmt.Errorf("%q is ambiguous: with its + it is %s, a number in %s, but its digits are grouped as region %s writes %s; was the + typed before a national number? if it is of %s, write it as %s, its digits together; if not, write it without the +", c.s, r.e164, CountryName(r.region), region, nat.e164, CountryName(r.region), r.e164)
		}
	}
	if err := checkLength(c.s, r); err != nil {
		return Number{}, err
	}
	if err := rules.allows(r); err != nil {
		return Number{}, fmt.Errorf("%q is %w", c.s, err)
	}
	return r.phone(c.repair(r.e164)), nil
}

// groupedNationally reports whether cell groups its digits as the
// library's NATIONAL format of the valid number e164 does, in two groups
// or more: "+(479) 950-5111" and "+479 950 5111" as "(479) 950-5111".
func groupedNationally(cell, e164 string) (grouped bool) {
	defer func() {
		if recover() != nil {
			grouped = false
		}
	}()
	n := libraryNumber(e164)
	if n == nil {
		return false
	}
	a, b := digitGroups(cell), digitGroups(phonenumbers.Format(n, phonenumbers.NATIONAL))
	return len(a) > 1 && slices.Equal(a, b)
}

// digitGroups returns the lengths of the runs of digits of s.
func digitGroups(s string) []int {
	var groups []int
	run := 0
	for _, r := range s {
		if unicode.IsDigit(r) {
			run++
			continue
		}
		if run > 0 {
			groups = append(groups, run)
		}
		run = 0
	}
	if run > 0 {
		groups = append(groups, run)
	}
	return groups
}

// scannedCell is a cell as readNumber sees it before reading it as a
// number: its text, how a spreadsheet may have changed it, and its digits.
type scannedCell struct {
	s       string // the cell trimmed, without a decimal export's fraction
	cell    string // the cell trimmed
	decimal bool   // a number exported as a decimal ("4930124603.0")
	excel   bool   // Excel's scientific notation ("1.4155550132E+10")
	plus    bool   // written with a leading '+', or "00" read as one
	doubled bool   // a leading "00" read as '+'
	// bare is a cell of bare digits, what Excel leaves of a number cell:
	// the only kind of cell whose '+' Excel can have dropped.
	bare   bool
	digits string // ASCII digits, without the '+' or the "00" read as one
}

// scanCell trims a cell, refuses what is no number at all (empty, a
// spreadsheet's error value, not UTF-8, two numbers), undoes a decimal
// export and Excel's scientific notation, and reduces the cell to its
// digits.
func scanCell(raw string) (scannedCell, error) {
	s := strings.TrimFunc(raw, isSpace)
	// A leading apostrophe is how a spreadsheet marks a cell as text.
	text := false
	if r, n := utf8.DecodeRuneInString(s); r == '\'' || r == '\u2019' {
		s, text = strings.TrimFunc(s[n:], isSpace), true
	}
	if s == "" {
		return scannedCell{}, errEmpty
	}
	if spreadsheetError(s) {
		return scannedCell{}, fmt.Errorf("%q is a spreadsheet error value, not a phone number: fix the formula or the value in the sheet", s)
	}
	if !utf8.ValidString(s) {
		return scannedCell{}, fmt.Errorf("%q is not a phone number: it is not valid UTF-8 text", s)
	}
	if holdsTwo(s) {
		return scannedCell{}, errHoldsTwo(s)
	}

	// A number exported as a decimal (pandas, Google Sheets, a number cell
	// with decimals in Excel): "4930124603.0", "4930124603,00". Read as
	// the number before the point or comma; any other digit after a point
	// is a digit of the number.
	c := scannedCell{s: s, cell: s}
	if t, ok := decimalExport(s); ok {
		c.s, c.decimal = t, true
	}

	var buf [maxDigits]byte
	var digits []byte
	if d, ok, msg := excelScientific(c.s, buf[:0]); ok {
		if msg != "" {
			return scannedCell{}, errors.New(msg)
		}
		digits, c.excel = d, true
	} else {
		var err error
		if digits, c.plus, err = scanDigits(c.s, buf[:0]); err != nil {
			return scannedCell{}, err
		}
	}
	c.bare = c.excel || c.decimal || (!text && allDigits(c.s))
	c.digits = string(digits)
	return c, nil
}

// note quotes the cell for a message about its value, with how it was
// read.
func (c *scannedCell) note() string {
	switch {
	case c.excel:
		return fmt.Sprintf("%q (Excel's scientific notation for %s)", c.s, c.digits)
	case c.decimal:
		return fmt.Sprintf("%q (the number %s exported as a decimal)", c.cell, c.s)
	}
	return fmt.Sprintf("%q", c.s)
}

// repair is the sentence that tells how a cell Excel or an export changed
// was read as e164; "" for a cell read as written.
func (c *scannedCell) repair(e164 string) string {
	switch {
	case c.excel:
		return fmt.Sprintf("%s was read as %s; format the phone column as Text in Excel to keep numbers intact", c.note(), e164)
	case c.decimal:
		return fmt.Sprintf("%s was read as %s; export the phone column as text", c.note(), e164)
	}
	return ""
}

// readNational reads a cell written without '+': a national number of
// region or, for a cell that may have lost its '+', an international one.
func (c *scannedCell) readNational(rules *Rules, region string, core coreFunc) (Number, error) {
	if region == "" {
		return Number{}, fmt.Errorf("%s has no country code: write it as +country number, or set the sheet's region", c.note())
	}
	if !phonenumbers.GetSupportedRegions()[region] {
		return Number{}, fmt.Errorf("%s has no country code and %q is not a known region code (such as US, GB, DE): write it as +country number, or fix the region", c.note(), region)
	}
	ds := c.digits
	national, nationalOK := core(false, ds, region)
	var intl reading
	intlOK := false
	// A cell of bare digits may have lost its '+'; a cell written with
	// separators that starts with the region's own country code ("49 151
	// 23454214" in Germany) may be an international number written
	// without it. Either reading stays a candidate only if the campaign
	// may call it; if both readings are valid and differ, the cell is
	// ambiguous.
	if ds[0] != '0' && (c.bare || strings.HasPrefix(ds, strconv.Itoa(phonenumbers.GetCountryCodeForRegion(region)))) {
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
	// A cell written exactly as the region writes its numbers (a US
	// number's ten digits) is the region's, whatever else it may read as
	// ("2025550132" is +20 25550132 too), unless the campaign names the
	// other reading's country among those it calls: a Norwegian mobile
	// whose + Excel dropped ("4792345678") is then as likely as a number
	// in Arkansas, and neither is guessed.
	switch {
	case nationalOK && intlOK && intl.e164 != national.e164 && (!writtenNationally(national.e164, ds) || rules.countries != nil):
		return Number{}, fmt.Errorf("%s is ambiguous: in region %s it is %s, but it is also %s if its leading + was lost (Excel drops it); write it as +country number", c.note(), region, national.e164, intl.e164)
	case nationalOK:
		if err := checkLength(c.s, national); err != nil {
			return Number{}, err
		}
		if err := rules.allows(national); err != nil {
			return Number{}, fmt.Errorf("%s is %w", c.note(), err)
		}
		return national.phone(c.repair(national.e164)), nil
	case intlOK:
		if err := checkLength(c.s, intl); err != nil {
			return Number{}, err
		}
		return intl.phone(fmt.Sprintf("%s is not a valid number for region %s but is valid with a leading +; read as %s (the + was probably lost: Excel drops it)", c.note(), region, intl.e164)), nil
	case intlErr != nil:
		return Number{}, fmt.Errorf("%s is not a valid phone number for region %s; with a leading + it would be %w", c.note(), region, intlErr)
	}
	return Number{}, fmt.Errorf("%s is not a valid phone number for region %s", c.note(), region)
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
	// Most cells are ASCII with fewer than two runs' worth of digits.
	digits := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			digits = -1 // a digit of another script, say: read it all
			break
		} else if c >= '0' && c <= '9' {
			digits++
		}
	}
	if digits >= 0 && digits < 12 {
		return false
	}
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

// bidiMark reports the invisible marks and controls of text direction
// (LRM, RLM, ALM, embeddings, overrides, isolates) that numbers copied
// from right-to-left text carry: around digits they may make a cell show
// its groups of digits in another order than they are stored, so which
// number is meant cannot be told.
func bidiMark(r rune) bool {
	return r == '\u200e' || r == '\u200f' || r == '\u061c' || ('\u202a' <= r && r <= '\u202e') || ('\u2066' <= r && r <= '\u2069')
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
		case bidiMark(r):
			return nil, false, fmt.Errorf("%q contains an invisible text-direction mark (U+%04X), which can show the digits in another order than they are stored: retype the number without it", orig, r)
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

// allDigits reports whether s holds only ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
