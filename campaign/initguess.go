package campaign

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/nyaruka/phonenumbers"
)

// sheetGuess is what callrun init makes of a sheet's header and first
// rows: which columns hold phone numbers, countries, full names and
// HighLevel contact ids, and which country the numbers are in.
type sheetGuess struct {
	phones     []string // the phone columns, the one to try first first
	country    string   // the column of each row's country
	name       string   // a full-name column, when there is no first or last name column
	id         string   // the column of HighLevel contact ids
	email      string   // a column of e-mail addresses whose name only holds the word ("Person - Email - Work")
	region     string   // "TODO" when it cannot be decided
	regionNote string
	countries  []string // the countries the sheet is meant to reach
	others     string   // the countries seen otherwise, for a comment
	notes      []string // what init tells the person

	// phoneTypes holds, for each of phones, the column that says each
	// row's kind of number ("Phone 1 - Type"), or "".
	phoneTypes []string
	// notDialled are the columns of phone numbers left out for the line
	// they name, each with what it is: "Business Fax" (a fax);
	// notDialledCols are their headers.
	notDialled, notDialledCols []string
}

// Words of column headers (folded). A phone word names a phone column; a
// column without one ("Number", "Numéro", which may be a customer number)
// is taken only when its values leave no doubt.
var (
	strongPhoneWords = []string{"phone", "mobile", "mobil", "tel", "telefon", "telephone", "handy", "cell", "portable", "movil", "celular", "fon", "gsm", "whatsapp", "landline", "festnetz", "fixe", "fijo"}
	mobileWords      = []string{"mobile", "mobil", "cell", "handy", "portable", "movil", "celular", "gsm"}
	countryWords     = []string{"country", "countrycode", "cc", "land", "pays", "pais", "nation", "countryregion", "staat", "landcode", "codepays"}
	fullNameWords    = []string{"name", "fullname", "contactname", "personname", "contact", "nomcomplet", "nombrecompleto", "vollstandigername", "customername", "clientname", "kundenname", "leadname"}
	hlContactID      = regexp.MustCompile(`^[A-Za-z0-9]{20}$`)
)

// smsNumbers reports whether a header names a column of the numbers texts
// are sent to (Brevo's SMS attribute, its contact's mobile number), not
// one about the texts: their consent, an opt-in or out, a block list
// (SMS_BLACKLISTED), a date or a status. init takes such a column for a
// mobile one when its values are numbers.
func smsNumbers(h string) bool {
	if !hasWord(h, []string{"sms"}) || hasWord(h, phoneNotLineWords) || DoNotCallHeader(h) {
		return false
	}
	consent, _ := consentHeader(h)
	return !consent
}

// headerWords splits a header into folded words: "Person - Phone - Work"
// gives person, phone, work; "MobilePhone" gives mobilephone.
func headerWords(h string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(h), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words = append(words, foldHeader(w))
	}
	return words
}

// hasWord reports whether header h holds one of words, as a word or as
// the start or end of one ("MobilePhone", "Telefonnummer").
func hasWord(h string, words []string) bool {
	for _, w := range headerWords(h) {
		for _, x := range words {
			if w == x || (len(x) >= 3 && (strings.HasPrefix(w, x) || strings.HasSuffix(w, x))) {
				return true
			}
		}
	}
	return false
}

// excelNumber is a number cell as Excel shows a long number:
// 1.4155550199E+10, or 4,42079460000E+11 with a decimal comma.
var excelNumber = regexp.MustCompile(`^[0-9][.,][0-9]+[eE]\+?[0-9]+$`)

// phoneLike reports whether a cell is written as a phone number is: digits
// (7 to 15 of them) and the punctuation numbers are written with, or a
// long number as Excel shows it.
func phoneLike(cell string) bool {
	cell = strings.TrimPrefix(strings.TrimSpace(cell), "'")
	if excelNumber.MatchString(cell) {
		return true
	}
	digits := 0
	for _, r := range cell {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune("+ ()-./\u00a0", r):
		default:
			return false
		}
	}
	return digits >= 7 && digits <= 15
}

// guessSheet reads a sheet's header and first rows as callrun init does.
// region, when not "", is the one the person gave.
func guessSheet(header []string, rows [][]string, region string) sheetGuess {
	var g sheetGuess
	chosen, named, kinds := g.phoneColumns(header, rows)
	g.notePhones(header, orderPhoneColumns(chosen, named, kinds))
	countryCol := g.countryColumn(header, rows)
	g.nameIDEmailColumns(header, rows)
	seen := readCountries(header, rows, countryCol, g.phones)
	g.guessRegion(region, seen)
	g.meantCountries(seen)
	return g
}

// columnCells are the cells of column c in rows that are not empty, trimmed.
func columnCells(rows [][]string, c int) (nonEmpty []string) {
	for _, r := range rows {
		if c < len(r) && strings.TrimSpace(r[c]) != "" {
			nonEmpty = append(nonEmpty, strings.TrimSpace(r[c]))
		}
	}
	return nonEmpty
}

// share is the fraction of vals for which ok holds, 0 when there are none.
func share(vals []string, ok func(string) bool) float64 {
	if len(vals) == 0 {
		return 0
	}
	n := 0
	for _, v := range vals {
		if ok(v) {
			n++
		}
	}
	return float64(n) / float64(len(vals))
}

// phoneColumns finds the phone columns: a phone word and values written
// as numbers, or failing that, a weak word or no word and values that
// leave no doubt (chosen); then the columns whose header names a phone
// line and nothing else and whose first rows are empty, as a later row
// may hold a contact's only number there (named). A column named for
// texts (Brevo's SMS, its mobile number) is one when its values are
// numbers, never for its header alone, nor when its header is about the
// texts (their consent, an opt-in or out, a block list). A column of
// another person's line, or of a device no person answers, is never
// called: it goes to g's notDialled, told, not mapped. kinds holds each
// column's kind of line.
func (g *sheetGuess) phoneColumns(header []string, rows [][]string) (chosen, named []int, kinds map[int]lineKind) {
	var strong, weak []int
	kinds = map[int]lineKind{}
	for c, h := range header {
		if h == "" || DoNotCallHeader(h) || isConsentHeader(h) {
			continue // a column of do-not-call flags or of consent ("Einwilligung Telefon") holds no number to call
		}
		vals := columnCells(rows, c)
		s := share(vals, phoneLike)
		valued := s >= 0.5 && len(vals) > 0
		headerOnly := len(vals) == 0 && (len(rows) == 0 || phoneLineHeader(h))
		kind, what := phoneLineKind(h)
		kinds[c] = kind
		switch {
		case kind == lineNotDialled && (headerOnly || valued):
			g.notDialled = append(g.notDialled, fmt.Sprintf("%q (%s)", h, what))
			g.notDialledCols = append(g.notDialledCols, h)
		case kind == lineNotDialled:
		case hasWord(h, strongPhoneWords) && valued, smsNumbers(h) && valued:
			strong = append(strong, c)
		case hasWord(h, strongPhoneWords) && headerOnly:
			named = append(named, c)
		case s >= 0.8 && len(vals) > 0:
			weak = append(weak, c)
		}
	}
	chosen = strong
	if len(chosen) == 0 {
		chosen = weak
	}
	return chosen, named, kinds
}

// orderPhoneColumns puts the phone columns in the order init maps them:
// the columns whose values are numbers (chosen) first, then those of a
// header alone (named), each in the order of their kind: the mobile
// first, the number that reaches the person, then their other own lines,
// then work; a company's switchboard after every line of the person's
// own.
func orderPhoneColumns(chosen, named []int, kinds map[int]lineKind) []int {
	headerOnly := map[int]bool{}
	for _, c := range named {
		headerOnly[c] = true
	}
	chosen = append(chosen, named...)
	sort.SliceStable(chosen, func(i, j int) bool {
		a, b := chosen[i], chosen[j]
		if sa, sb := kinds[a] == lineCompanyMain, kinds[b] == lineCompanyMain; sa != sb {
			return sb
		}
		if headerOnly[a] != headerOnly[b] {
			return headerOnly[b]
		}
		return kinds[a] < kinds[b]
	})
	return chosen
}

// notePhones sets g's phones, in order, and their type columns, and notes them.
func (g *sheetGuess) notePhones(header []string, chosen []int) {
	var typed []string
	for _, c := range chosen {
		g.phones = append(g.phones, header[c])
		typeCol := ""
		if t := typeColumnOf(header, c); t >= 0 {
			typeCol = header[t]
			typed = append(typed, fmt.Sprintf("%q for %q", typeCol, header[c]))
		}
		g.phoneTypes = append(g.phoneTypes, typeCol)
	}
	if len(g.phones) == 0 {
		g.notes = append(g.notes, "No column of phone numbers was found (by its name and its values): the file's phone_number is TODO, and plan refuses it until you write the column's name there.")
	} else if len(g.phones) > 1 {
		g.notes = append(g.notes, fmt.Sprintf("Phone columns: %s; each row is called at the first of them that holds a number it can call.", strings.Join(g.phones, ", ")))
	}
	if len(typed) > 0 {
		g.notes = append(g.notes, fmt.Sprintf("Type columns: %s; a number whose type names a fax, a pager or an assistant is not called.", strings.Join(typed, ", ")))
	}
	if len(g.notDialled) > 0 {
		g.notes = append(g.notes, fmt.Sprintf("Not called, as no person answers them or they are another person's: %s.", strings.Join(g.notDialled, ", ")))
	}
}

// countryColumn finds g's country column (its word and values) and returns its index, or -1.
func (g *sheetGuess) countryColumn(header []string, rows [][]string) int {
	for c, h := range header {
		if h != "" && hasWord(h, countryWords) && share(columnCells(rows, c), func(v string) bool { _, ok := phone.ParseCountry(v); return ok }) >= 0.5 {
			g.country = h
			return c
		}
	}
	return -1
}

// nameIDEmailColumns finds the first full-name, id and e-mail columns.
func (g *sheetGuess) nameIDEmailColumns(header []string, rows [][]string) {
	for c, h := range header {
		if g.email == "" && hasWord(h, []string{"email", "mail", "courriel", "correo"}) {
			if vals := columnCells(rows, c); len(vals) > 0 && share(vals, plausibleEmail) >= 0.8 {
				g.email = h
			}
		}
		if g.name == "" && slices.Contains(fullNameWords, strings.Join(headerWords(h), "")) && len(columnCells(rows, c)) > 0 {
			g.name = h
		}
		if g.id == "" && slices.Contains(columnAliases["ghl_contact_id"], foldHeader(h)) {
			if vals := columnCells(rows, c); len(vals) > 0 && share(vals, hlContactID.MatchString) >= 0.8 {
				g.id = h
			}
		}
	}
}

// sheetCountries are the countries a sheet's first rows say: those of
// its country column and those of its numbers written with +country.
type sheetCountries struct {
	rows       map[string]int // rows by the country their country cell names
	rowsWith   int            // rows whose country cell names a country
	plus       map[string]int // numbers written with +country, by country
	phoneCells int            // numbers in the phone columns
	plusCells  int            // of them, those written with +country
	national   []string       // numbers written without +country
}

// readCountries counts the countries of column countryCol (-1: none) and of the phones' numbers.
func readCountries(header []string, rows [][]string, countryCol int, phones []string) sheetCountries {
	seen := sheetCountries{rows: map[string]int{}, plus: map[string]int{}}
	if countryCol >= 0 {
		for _, v := range columnCells(rows, countryCol) {
			if code, ok := phone.ParseCountry(v); ok {
				seen.rows[code]++
				seen.rowsWith++
			}
		}
	}
	for _, name := range phones {
		c := slices.Index(header, name)
		var vals []string
		for _, v := range columnCells(rows, c) {
			if parts := phone.Split(v); parts != nil {
				vals = append(vals, parts...)
			} else {
				vals = append(vals, v)
			}
		}
		for _, v := range vals {
			seen.phoneCells++
			s := strings.TrimPrefix(v, "'")
			if rest, ok := strings.CutPrefix(s, "00"); ok {
				s = "+" + rest
			}
			if !strings.HasPrefix(s, "+") {
				if phoneLike(s) {
					seen.national = append(seen.national, s)
				}
				continue
			}
			seen.plusCells++
			if num, err := phonenumbers.Parse(s, "ZZ"); err == nil && phonenumbers.IsValidNumber(num) {
				if r := phonenumbers.GetRegionCodeForNumber(num); r != "" && r != "001" {
					seen.plus[r]++
				}
			}
		}
	}
	return seen
}

// mostCounted returns the key counted most, the first among equals, and its count.
func mostCounted(counts map[string]int) (string, int) {
	best, n := "", 0
	for k, v := range counts {
		if v > n || (v == n && k < best) {
			best, n = k, v
		}
	}
	return best, n
}

// countsText lists counts for a person: "DE 3, FR 1".
func countsText(counts map[string]int) string {
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// guessRegion sets g's region and the note that says where it comes
// from: the one given (region), else a clear majority of the country
// column, else of the numbers written with +country; else TODO, noted.
func (g *sheetGuess) guessRegion(region string, seen sheetCountries) {
	switch {
	case region != "":
		g.region, g.regionNote = strings.ToUpper(region), "given with --region"
	case seen.rowsWith > 0:
		if best, n := mostCounted(seen.rows); 3*n > 2*seen.rowsWith {
			g.region, g.regionNote = best, fmt.Sprintf("from column %q: %d of %d rows say %s", g.country, n, seen.rowsWith, best)
		} else {
			g.region = "TODO"
			g.regionNote = fmt.Sprintf("column %q names no clear majority (%s): write the country most numbers without +country belong to", g.country, countsText(seen.rows))
		}
	default:
		// A clear majority: three numbers at least, two thirds of those
		// written with +country, and the numbers written without it read
		// as that country's.
		best, n := mostCounted(seen.plus)
		if n >= 3 && 3*n > 2*seen.plusCells && nationalValid(seen.national, best) {
			g.region, g.regionNote = best, fmt.Sprintf("guessed from the sheet: %d of its %d numbers written with +country are +%d, and those without read as %s numbers", n, seen.plusCells, phonenumbers.GetCountryCodeForRegion(best), best)
		} else {
			g.region = "TODO"
			g.regionNote = "the sheet does not say which country its numbers without +country are in"
			if seen.plusCells > 0 {
				g.regionNote += fmt.Sprintf(" (%d of %d are written with +country: %s)", seen.plusCells, seen.phoneCells, plusSeen(countsText(seen.plus), seen.plusCells, seen.plus))
			}
			g.regionNote += ": write its two-letter code (US, GB, DE, ...)"
		}
	}
	if g.region == "TODO" {
		g.notes = append(g.notes, "region is TODO: "+g.regionNote+". plan refuses the file until you set it.")
	}
}

// meantCountries sets g's countries: the region and the country column's; the others
// of numbers written with +country go in a comment: a person decides if they are meant.
func (g *sheetGuess) meantCountries(seen sheetCountries) {
	meant := map[string]bool{}
	if g.region != "TODO" {
		meant[g.region] = true
	}
	for c := range seen.rows {
		meant[c] = true
	}
	g.countries = slices.Sorted(maps.Keys(meant))
	other := map[string]int{}
	for c, n := range seen.plus {
		if !meant[c] {
			other[c] = n
		}
	}
	if len(other) > 0 {
		g.others = countsText(other)
	}
}

// plusSeen is what init says of the cells written with +country, by
// country (seen, as counted in byCountry), adding those that are no valid
// number of one country (a typo, +800), so that the counts add up to all
// of them.
func plusSeen(seen string, all int, byCountry map[string]int) string {
	rest := all
	for _, n := range byCountry {
		rest -= n
	}
	switch {
	case rest == 0:
		return seen
	case seen == "":
		return fmt.Sprintf("%d that read as no country's number", rest)
	}
	return fmt.Sprintf("%s, and %d that read as no country's number", seen, rest)
}

// nationalValid reports whether at least half of the cells, numbers
// written without +country, are valid numbers of region.
func nationalValid(cells []string, region string) bool {
	valid := 0
	for _, c := range cells {
		if num, err := phonenumbers.Parse(c, region); err == nil && phonenumbers.IsValidNumber(num) {
			valid++
		}
	}
	return 2*valid >= len(cells)
}
