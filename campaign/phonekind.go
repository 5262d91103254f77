package campaign

import (
	"slices"
	"strings"
)

// lineKind is the kind of phone line a phone column's header ("Mobile
// Phone", "Business Fax") or a row's type cell beside a number ("Phone 1 -
// Type": "Work Fax", "* Mobile") names. init orders the phone columns it
// maps by it and leaves out those not dialled; the contact reader never
// dials a number whose column or type cell names a line not dialled.
// The kinds are in the order init tries them: the person's mobile, their
// other own lines, their work line, their company's switchboard.
type lineKind int8

const (
	lineMobile      lineKind = iota
	lineHome                 // home, private, personal
	linePrimary              // primary or main, or a phone column that says nothing more ("Phone")
	lineOther                // other, car, radio, Google Voice
	lineWork                 // business, work, office
	lineCompanyMain          // a company's main line, its switchboard
	lineNotDialled           // another person's line, or a device no person answers
)

// Words (folded, as headerWords gives them) that name a kind of line, in
// the languages phone columns come in. A word matches as hasWord matches:
// the whole word, or the start or end of one ("Autotelefon", "Telefax").
var (
	// notDialledWords name lines callrun never dials, each with what it
	// says the line is; a device's words name a line by themselves
	// ("Pager"), a person's need a phone word ("Assistant's Phone").
	notDialledWords = []notDialledLine{
		{[]string{"assistant", "asst", "assistent", "asistente", "assistente", "secretary", "secretaire", "secretariat", "sekretariat", "sekretarin", "secretaria", "segreteria"}, "an assistant's line", false},
		{[]string{"manager", "supervisor", "boss", "vorgesetzter", "spouse", "husband", "wife", "ehepartner", "ehemann", "ehefrau", "lebenspartner", "conjoint", "esposo", "esposa",
			"emergency", "notfall", "urgence", "emergencia", "reference", "referenz", "relative", "verwandte", "kin", "parent", "eltern", "guardian", "vormund",
			"mother", "mom", "mutter", "father", "dad", "child", "kid", "neighbor", "neighbour", "nachbar", "friend", "freund",
			"employer", "arbeitgeber", "employeur", "empleador", "landlord", "vermieter", "guarantor", "attorney", "lawyer", "anwalt", "avocat", "abogado",
			"caregiver", "nanny"}, "another person's line", false},
		{[]string{"fax", "telecopie", "telecopieur", "facsimile"}, "a fax", true},
		{[]string{"pager", "beeper", "piepser", "funkruf", "radiomessagerie", "buscapersonas", "cercapersone"}, "a pager", true},
		{[]string{"tty", "tdd", "textphone", "texttelefon"}, "a TTY/TDD text phone", true},
		{[]string{"telex"}, "a telex", true},
		{[]string{"callback", "ruckruf", "ruckmeldung", "rappel"}, "a callback number, whose owner the sheet does not say", true},
		{[]string{"isdn", "rnis", "rdsi", "modem"}, "an ISDN line, a data line for a fax, a modem or a video call", true},
		{[]string{"voicemail", "mailbox", "sprachbox"}, "a voicemail box", true},
	}
	lineMobileWords   = append(slices.Clone(mobileWords), "whatsapp", "natel", "mobiel", "sms")
	lineHomeWords     = []string{"home", "private", "privat", "prive", "personal", "domicile", "casa", "particulier", "residence", "landline", "festnetz", "fixe", "fijo"}
	linePrimaryWords  = []string{"primary", "main", "principal", "haupt"}
	lineOtherWords    = []string{"other", "andere", "weitere", "weiteres", "autre", "otro", "car", "auto", "radio", "voice", "alternate", "alternative", "alt", "secondary", "second", "additional", "backup"}
	lineWorkWords     = []string{"work", "business", "office", "bureau", "buro", "geschaftlich", "dienstlich", "arbeit", "travail", "trabajo", "oficina", "professionnel", "direct", "durchwahl"}
	lineCompanyWords  = []string{"company", "firma", "firmen", "societe", "empresa", "corporate", "office", "business"}
	lineSwitchboard   = []string{"switchboard", "zentrale"}
	phoneFillerWords  = []string{"number", "no", "nr", "num", "nummer", "numero", "value", "person", "contact", "s"}
	phoneNotLineWords = []string{"type", "label", "kind", "art", "typ", "ext", "extension", "durchwahlnummer", "verified", "valid", "status", "country", "code", "prefix", "prefixe", "prefijo", "opt", "optin", "optout", "consent", "call", "calls", "date"}
)

// notDialledLine is a kind of line callrun never dials: the words that
// name it, and what it is, for the person.
type notDialledLine struct {
	words  []string
	what   string
	device bool // its words name a line by themselves ("Pager"), a person's need a phone word
}

// phoneLineKind returns the kind of line text names (a phone column's
// header or a type cell), and, for a line not dialled, what it is ("a
// fax"). A name that says nothing of its kind ("Phone", an empty type
// cell, a label of the person's own) is linePrimary.
func phoneLineKind(text string) (lineKind, string) {
	for _, nd := range notDialledWords {
		if hasWord(text, nd.words) {
			return lineNotDialled, nd.what
		}
	}
	switch {
	case hasWord(text, lineMobileWords):
		return lineMobile, ""
	case hasWord(text, lineSwitchboard) || (hasWord(text, lineCompanyWords) && hasWord(text, linePrimaryWords)):
		return lineCompanyMain, ""
	case hasWord(text, lineWorkWords) || hasWord(text, lineCompanyWords):
		return lineWork, ""
	case hasWord(text, lineHomeWords):
		return lineHome, ""
	case hasWord(text, lineOtherWords):
		return lineOther, ""
	}
	return linePrimary, ""
}

// phoneLineHeader reports whether a header names a phone line and
// nothing else: a phone word or a device's ("Pager", "Business Fax"), and
// only words of kinds of lines, numbers and the like ("Home Phone 2",
// "Assistant's Phone", "Phone 1 - Value", "Person - Phone - Work"), not
// "Phone Type", "Do Not Phone", "Phone Opt In" or "Assistant's Name".
// init maps such a column even when its first rows are empty, a later
// row may hold a contact's only number there, and tells those it does
// not call.
func phoneLineHeader(h string) bool {
	device := slices.ContainsFunc(notDialledWords, func(nd notDialledLine) bool { return nd.device && hasWord(h, nd.words) })
	if !(device || hasWord(h, strongPhoneWords)) || hasWord(h, phoneNotLineWords) {
		return false
	}
	known := [][]string{strongPhoneWords, lineMobileWords, lineHomeWords, linePrimaryWords, lineOtherWords, lineWorkWords, lineCompanyWords, lineSwitchboard, phoneFillerWords}
	for _, nd := range notDialledWords {
		known = append(known, nd.words)
	}
	for _, w := range headerWords(h) {
		if strings.Trim(w, "0123456789") == "" {
			continue // "Phone 2"
		}
		if !slices.ContainsFunc(known, func(words []string) bool { return hasWord(w, words) }) {
			return false
		}
	}
	return true
}

// typeColumnOf returns the index of the column of header that holds the
// kind of each row's number in column c, or -1: the same header with
// "Type" or "Label" in place of "Value" ("Phone 1 - Type" for "Phone 1 -
// Value", as Google Contacts exports them; "Phone 1 - Label" in its 2024
// format), or with "Type" or "Label" added ("Phone Type" for "Phone").
func typeColumnOf(header []string, c int) int {
	words := headerWords(header[c])
	if n := len(words); n > 0 && words[n-1] == "value" {
		words = words[:n-1]
	}
	stem := strings.Join(words, "")
	if stem == "" {
		return -1
	}
	for i, h := range header {
		if i == c {
			continue
		}
		if k := foldHeader(h); k == stem+"type" || k == stem+"label" {
			return i
		}
	}
	return -1
}
