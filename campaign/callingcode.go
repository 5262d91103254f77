package campaign

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/nyaruka/phonenumbers"
)

// callingCodeHeader reports whether a header names a column of the
// phone's country calling code, kept apart from the number as some
// sheets and forms keep it ("Country Code", "Phone Country Code", "Dial
// Code", "Calling Code", "ISD Code"): such a sheet's numbers are written
// without it, and a national reading of them in the sheet's region may
// be another person's number ("20 7946 0123" beside "44" reads as a
// number in Maine in a US sheet). A mobile network's country code (MCC)
// is no calling code.
func callingCodeHeader(h string) bool {
	j := foldHeader(h)
	if strings.Contains(j, "mobilecountrycode") || strings.Contains(j, "mcc") {
		return false
	}
	for _, w := range []string{"countrycode", "dialcode", "dialingcode", "diallingcode", "callingcode", "isdcode", "phonecode", "phoneprefix", "countryprefix", "countrydialcode", "countrycallingcode"} {
		if strings.Contains(j, w) {
			return true
		}
	}
	return false
}

// mapCallingCode finds the first column of r's header, other than the
// country column and the phone columns, whose header names a calling
// code ([callingCodeHeader]); -1 when there is none.
func (m *sheetMap) mapCallingCode(header []string) {
	m.callingCol = -1
	for col, h := range header {
		if col == m.countryCol || col == m.tzCol {
			continue
		}
		phoneCol := false
		for _, p := range m.phones {
			phoneCol = phoneCol || p.col == col
		}
		if !phoneCol && callingCodeHeader(h) {
			m.callingCol, m.callingName = col, h
			return
		}
	}
}

// readCallingCode reads a cell of a calling code column: "44", "+44",
// "(+44)", "0044", "44.0" (a number cell exported as a decimal), "1-268",
// an ISO code or a country's name ("GB", "United Kingdom"), or a label
// with the code in it ("United Kingdom (+44)"). It returns the calling
// code, and false for a cell it cannot read; named is true when the
// cell names a country rather than a code.
func readCallingCode(cell string) (cc int, named, ok bool) {
	cell = strings.TrimSpace(cell)
	if cell == "" {
		return 0, false, false
	}
	if region, ok := phone.ParseCountry(cell); ok {
		return phonenumbers.GetCountryCodeForRegion(region), true, true
	}
	s := strings.TrimSuffix(strings.TrimSuffix(cell, ".0"), ",0")
	if i := strings.LastIndex(s, "+"); i > 0 {
		s = s[i:] // "United Kingdom (+44)"
	}
	s = strings.Trim(s, "()+ \u00a0")
	s = strings.TrimSuffix(s, ")")
	if strings.HasPrefix(s, "00") {
		s = s[2:]
	}
	if i := strings.IndexAny(s, "- "); i > 0 {
		s = s[:i] // "1-268", "1 876": the code is the part before
	}
	if len(s) == 0 || len(s) > 3 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false, false
	}
	cc, err := strconv.Atoi(s)
	if err != nil || !phonenumbers.GetSupportedCallingCodes()[cc] {
		return 0, false, false
	}
	return cc, false, true
}

// writtenWithCode reports whether a phone cell is written with its
// country code: after a '+' or "00" (or "tel:+", or a text cell's
// apostrophe before them).
func writtenWithCode(raw string) bool {
	s := strings.TrimLeft(strings.TrimSpace(raw), "'\u2019 \u00a0")
	if len(s) >= 4 && strings.EqualFold(s[:4], "tel:") {
		s = strings.TrimSpace(s[4:])
	}
	s = strings.TrimLeft(s, "( ")
	return strings.HasPrefix(s, "+") || strings.HasPrefix(s, "\uff0b") || strings.HasPrefix(s, "00")
}

// callingCodeWhy says why row fields' number e164, read from phone cell
// raw, is not to be called when the sheet's calling code column gives
// another code than the number's; "" when it agrees, is empty or cannot
// be read. A column that names a country ("GB") rather than a code may be
// the person's address's: it is held against a number written without
// its country code only, which the sheet's region may have misread.
func (m *sheetMap) callingCodeWhy(fields []string, raw, e164 string) string {
	if m.callingCol < 0 || m.callingCol >= len(fields) {
		return ""
	}
	cell := strings.TrimSpace(fields[m.callingCol])
	cc, named, ok := readCallingCode(cell)
	if !ok || (named && writtenWithCode(raw)) {
		return ""
	}
	if strings.HasPrefix(e164, "+"+strconv.Itoa(cc)) {
		if n := libraryCode(e164); n == cc {
			return ""
		}
	}
	return fmt.Sprintf("column %q says %q (+%d), but the number reads as %s (+%d): which is meant cannot be told, and the number read in the sheet's region may be another person's; write it with +country in the phone column, or correct column %q", m.callingName, cell, cc, e164, libraryCode(e164), m.callingName)
}

// libraryCode is the country calling code of a valid E.164 number.
func libraryCode(e164 string) int {
	n, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return 0
	}
	return int(n.GetCountryCode())
}
