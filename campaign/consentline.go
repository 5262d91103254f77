package campaign

import (
	"fmt"
	"slices"
	"strings"
)

// consentLineWords are the words of a header that name one of a person's
// lines, by the line they name: a consent column so named ("Mobile
// Consent", "Consent Mobile Phone", "Einwilligung Handy") records consent
// to calls to that line, and a phone column so named holds it.
var consentLineWords = map[string]string{
	"mobile": "mobile", "mobil": "mobile", "cell": "mobile", "cellular": "mobile", "handy": "mobile",
	"portable": "mobile", "movil": "mobile", "celular": "mobile", "gsm": "mobile", "cep": "mobile",
	"home": "home", "private": "home", "privat": "home", "domicile": "home", "casa": "home",
	"work": "work", "business": "work", "office": "work", "geschaftlich": "work", "buro": "work", "bureau": "work", "trabajo": "work",
	"landline": "landline", "festnetz": "landline", "fixe": "landline", "fijo": "landline",
}

// headerLines returns the lines a header names ([consentLineWords]), as
// a word or as the start or end of one ("MobilePhone", "HomePhone").
func headerLines(h string) []string {
	var lines []string
	for _, w := range headerWords(h) {
		for x, line := range consentLineWords {
			if (w == x || (len(x) >= 4 && (strings.HasPrefix(w, x) || strings.HasSuffix(w, x)))) && !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// mapConsentLines finds, for a sheet with several phone columns whose
// consent column's header names a line ("Mobile Consent"), the phone
// columns of that line: consent on the row is consent to calls to them
// alone. It sets none when the header names no line, or when no phone
// column, or every one, is of its line (the consent is then the row's).
func (m *sheetMap) mapConsentLines() {
	m.consentLines, m.consentLineNames = nil, nil
	if m.consentCol < 0 || len(m.phones) < 2 {
		return
	}
	lines := headerLines(m.consentName)
	if len(lines) == 0 {
		return
	}
	var cols []int
	var names []string
	for k, p := range m.phones {
		if slices.ContainsFunc(headerLines(p.name), func(l string) bool { return slices.Contains(lines, l) }) {
			cols = append(cols, k)
			names = append(names, p.name)
		}
	}
	if len(cols) == 0 || len(cols) == len(m.phones) {
		return
	}
	m.consentLines, m.consentLineNames = cols, names
}

// consentLineWhy says why a row's consent is none for the number it is
// called at, read from phone column column: the consent column names
// another line, whose columns are not that one; "" when it is of the
// line, or the consent is the row's.
func (m *sheetMap) consentLineWhy(column string) string {
	if m.consentLines == nil || column == "" || slices.Contains(m.consentLineNames, column) {
		return ""
	}
	quoted := make([]string, len(m.consentLineNames))
	for i, n := range m.consentLineNames {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("column %q records consent to calls to the line of column %s, but the row would be called at column %q, another line: list %s first in phone_number to call the line the person consented to be called at, or map the consent of column %q", m.consentName, strings.Join(quoted, ", "), column, quoted[0], column)
}
