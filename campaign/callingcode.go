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
	m.callingCol, m.placeCols, m.placeNames = -1, nil, nil
	for col, h := range header {
		if col == m.countryCol || col == m.tzCol {
			continue
		}
		phoneCol := false
		for _, p := range m.phones {
			phoneCol = phoneCol || p.col == col
		}
		switch {
		case phoneCol:
		case callingCodeHeader(h):
			if m.callingCol < 0 {
				m.callingCol, m.callingName = col, h
			}
		case m.countryCol < 0 && addressCountryHeader(h):
			m.placeCols = append(m.placeCols, col)
			m.placeNames = append(m.placeNames, h)
		}
	}
}

// addressCountryHeader reports whether a header names a country column
// the campaign may not map ("Country", "Country/Region", "Mailing
// Country", Outlook's "Business Country/Region", Mailchimp's "CC", "Land",
// "Pays", "País"): the person's, or their address's. A nationality, a
// country of birth or of origin is not where their phone is.
func addressCountryHeader(h string) bool {
	words := headerWords(h)
	country := false
	for _, w := range words {
		switch {
		case strings.Contains(w, "national"), strings.Contains(w, "birth"), strings.Contains(w, "origin"),
			strings.Contains(w, "citizen"), strings.Contains(w, "geburt"), strings.Contains(w, "staatsang"):
			return false
		case strings.HasPrefix(w, "country"), strings.HasSuffix(w, "country"),
			w == "cc", w == "land", w == "pays", w == "pais":
			country = true
		}
	}
	return country
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
	s = strings.TrimPrefix(s, "00")
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
func (m *sheetMap) callingCodeWhy(fields []string, raw, e164 string) (why, column string) {
	if why, column := m.placeWhy(fields, raw, e164); why != "" {
		return why, column
	}
	if m.callingCol < 0 || m.callingCol >= len(fields) {
		return "", ""
	}
	cell := strings.TrimSpace(fields[m.callingCol])
	cc, named, ok := readCallingCode(cell)
	if !ok || (named && writtenWithCode(raw)) {
		return "", ""
	}
	if strings.HasPrefix(e164, "+"+strconv.Itoa(cc)) {
		if n := libraryCode(e164); n == cc {
			return "", ""
		}
	}
	return fmt.Sprintf("column %q says %q (+%d), but the number reads as %s (+%d): which is meant cannot be told, and the number read in the sheet's region may be another person's; write it with +country in the phone column, or correct column %q", m.callingName, cell, cc, e164, libraryCode(e164), m.callingName), m.callingName
}

// libraryCode is the country calling code of a valid E.164 number: the
// first of its leading one to three digits that is a calling code (the
// codes are prefix-free), without the cost of the library's Parse on
// every row.
func libraryCode(e164 string) int {
	codes := phonenumbers.GetSupportedCallingCodes()
	for i := 2; i <= 4 && i <= len(e164); i++ {
		if cc, err := strconv.Atoi(e164[1:i]); err == nil && codes[cc] {
			return cc
		}
	}
	return 0
}

// placeWhy says why row fields' number e164, written without its country
// code in phone cell raw and so read in the sheet's region, is not to be
// called when the sheet's unmapped country columns name only countries
// of another calling code ("Country": Austria beside "0664 1234567" in a
// German sheet, which reads as a landline in Lauterbach): the number may
// be one of that country written nationally, another person's here. ""
// when one of them agrees, none can be read, or the number has its code.
func (m *sheetMap) placeWhy(fields []string, raw, e164 string) (why, column string) {
	if len(m.placeCols) == 0 || writtenWithCode(raw) {
		return "", ""
	}
	code := libraryCode(e164)
	first := -1
	for i, col := range m.placeCols {
		if col >= len(fields) {
			continue
		}
		region, ok := phone.ParseCountry(strings.TrimSpace(fields[col]))
		if !ok {
			continue
		}
		if phonenumbers.GetCountryCodeForRegion(region) == code {
			return "", ""
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return "", ""
	}
	cell := strings.TrimSpace(fields[m.placeCols[first]])
	region, _ := phone.ParseCountry(cell)
	return fmt.Sprintf("column %q says %q, %s, but the number, written without its country code, reads as %s (+%d) in the sheet's region: it may be a number of %s written as it is written there, another person's here; write it with +country, or map column %q as the sheet's country_column", m.placeNames[first], cell, phone.CountryName(region), e164, code, phone.CountryName(region), m.placeNames[first]), m.placeNames[first]
}
