package campaign

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/callrun/callrun/campaign/sheet"
)

// Consent is the `consent:` block, at the top of the campaign file or in
// a sheet (where each key it sets overrides the campaign's): the column
// that holds each row's evidence of the called person's prior consent,
// and whether a row without it may be called. The contact reader reads
// the evidence ([ReadConsent]) and the report shows it.
type Consent struct {
	Column   string `yaml:"column"`
	Required bool   `yaml:"required"`
	// ChannelChecked says that a column whose name speaks of e-mail or
	// texts ("SMS Consent") does record consent to be called: without
	// it, such a column is refused, as consent to e-mails or texts is no
	// consent to be phoned.
	ChannelChecked bool `yaml:"channel_checked"`
}

// ConsentAdvice is what plan and run say, once, of a campaign that maps
// no consent: the law it answers to and how to map it.
const ConsentAdvice = `this campaign maps no consent column, so every row is called whether or not the person agreed to be: AI-voice calls need the called person's prior express consent (US TCPA, FCC 24-17; the UK's PECR for marketing calls); map the column that records it, consent: {column: "Consent Date", required: true}, and a row without a date or a yes in it is not called`

// ConsentWarnings returns the warning plan and run give of a campaign
// that maps no consent on any sheet; none when one does.
func ConsentWarnings(f *File) []string {
	for i := range f.Sheets {
		if f.SheetConsent(i).Column != "" {
			return nil
		}
	}
	return []string{ConsentAdvice}
}

// SheetConsent returns sheet i's consent settings: the campaign's, with
// the keys the sheet's own consent: block sets in their place. The
// column is empty when neither maps one.
func (f *File) SheetConsent(i int) Consent {
	var c Consent
	if f.Consent != nil {
		c = *f.Consent
	}
	if s := f.Sheets[i].Consent; s != nil {
		key := fmt.Sprintf("sheets[%d].consent.", i)
		if f.has(key+"column") || f.Consent == nil {
			c.Column = s.Column
		}
		if f.has(key+"required") || f.Consent == nil {
			c.Required = s.Required
		}
		if f.has(key+"channel_checked") || f.Consent == nil {
			c.ChannelChecked = s.ChannelChecked
		}
	}
	c.Column = strings.TrimSpace(c.Column)
	return c
}

// validateConsent checks the consent: blocks: a block that ends up with
// no column for a sheet is named where it is written, once; so is a
// column named for consent to e-mails or texts, unless channel_checked
// says it records consent to be called.
func (l *loader) validateConsent(f *File) {
	told := map[string]bool{}
	for i := range f.Sheets {
		c := f.SheetConsent(i)
		key := "consent"
		if f.Sheets[i].Consent != nil {
			key = fmt.Sprintf("sheets[%d].consent", i)
		}
		if channel := consentChannel(c.Column); channel != "" && !c.ChannelChecked && !told[key+".column"] {
			told[key+".column"] = true
			ck := key + ".column"
			if _, ok := l.lines[ck]; !ok {
				ck = "consent.column"
			}
			l.problem(ck, `consent: the column %q is named for consent to %s, which is no consent to be phoned: map the column that records consent to be called; or, if this one does record it (calls and texts together, say), write consent: {column: %q, channel_checked: true}`, c.Column, channel, c.Column)
		}
		if c.Column != "" || (f.Consent == nil && f.Sheets[i].Consent == nil) {
			continue
		}
		if !told[key] {
			told[key] = true
			l.problem(key, `consent needs the column that holds each row's consent, a date or a yes: consent: {column: "Consent Date", required: true}`)
		}
	}
	if len(f.Sheets) == 0 && f.Consent != nil && strings.TrimSpace(f.Consent.Column) == "" {
		l.problem("consent", `consent needs the column that holds each row's consent, a date or a yes: consent: {column: "Consent Date", required: true}`)
	}
}

// mapConsent finds sheet i's consent column in r's header: its index
// in m, -1 when the sheet maps none. A column the header lacks is a
// problem with the sheet, which stops a run before any call.
func (f *File) mapConsent(i int, r *sheet.Reader, m *sheetMap) error {
	m.consentCol = -1
	c := f.SheetConsent(i)
	if c.Column == "" {
		return nil
	}
	idx, err := r.Column(c.Column)
	if err != nil {
		return err
	}
	m.consentCol, m.consentRequired, m.consentName = idx, c.Required, c.Column
	return nil
}

// judgeConsent reads a row's consent cell into c.Consent and, when the
// sheet requires consent, makes a row without it invalid.
func (cr *ContactReader) judgeConsent(c *Contact, spec *SheetSpec, m *sheetMap, s *rowScratch, fields []string) {
	if m.consentCol < 0 {
		return
	}
	now := time.Now
	if cr.Now != nil {
		now = cr.Now
	}
	cell := ""
	if m.consentCol < len(fields) { // a row shorter than the header has no consent cell
		cell = strings.TrimSpace(fields[m.consentCol])
	}
	read, ok := s.consent[cell]
	if !ok {
		read = readConsentCell(cell, spec.Region)
		if s.consent == nil {
			s.consent = map[string]consentCell{}
		}
		if len(s.consent) < 1000 { // a sheet has a few dates and words; more are read each time
			s.consent[strings.Clone(cell)] = read
		}
	}
	evidence, why := read.at(cell, now())
	c.Consent, c.ConsentCell = evidence, cell
	if evidence == "" && m.consentRequired && c.Status == "" {
		c.Status, c.Field, c.Column = Invalid, "consent", m.consentName
		c.Reason = "no consent on record: " + why + "; a row is called only with a date of consent or a yes in this column (consent.required)"
	}
}

// consentFuture is how far past now a date of consent may lie and still
// be today somewhere: the earliest time zone is 14 hours ahead of UTC.
const consentFuture = 14 * time.Hour

// ReadConsent reads a consent cell as a CRM export writes it. Evidence is
// a date, returned as YYYY-MM-DD (ISO dates and datetimes, m/d/yyyy,
// d.m.yyyy and d/m/yyyy, with a time or without; a day and month that
// could be either are read as region writes them), or a yes in any of the
// languages of signalwords.yaml ("yes", "true", "1", "x", "opted in",
// "ja", "oui", "sí", "erteilt", any case), returned as "yes". Anything
// else is no evidence: evidence is empty and why says what the cell held.
// A date later than today everywhere on earth is no evidence either, nor
// a word the table reads as yes in one language and as no in another.
func ReadConsent(cell, region string, now time.Time) (evidence, why string) {
	return readConsentCell(cell, region).at(cell, now)
}

// consentCell is what a consent cell says whenever it is read: evidence
// or why not, and for a date, the date. The contact reader keeps it for
// each distinct cell.
type consentCell struct {
	evidence, why string
	date          time.Time
}

// readConsentCell is [ReadConsent] without the clock: a date is returned
// whether or not it is in the future.
func readConsentCell(cell, region string) consentCell {
	c := strings.TrimSpace(cell)
	if c == "" {
		return consentCell{why: "the cell is empty"}
	}
	if c[0] < '0' || c[0] > '9' || c == "1" || c == "0" {
		switch says, ok := readConsentWord(c); {
		case ok && says == saysYes:
			return consentCell{evidence: "yes"}
		case ok:
			return consentCell{why: fmt.Sprintf("the cell says %q", cell)}
		}
		if k := conflict(c); k != "" {
			return consentCell{why: fmt.Sprintf("%q is read one way in one language and the other in another (%s)", cell, k)}
		}
	}
	v := strings.ToLower(strings.Join(strings.Fields(c), " "))
	t, ok := consentDate(v, region)
	if !ok {
		return consentCell{why: fmt.Sprintf("%q is neither a date nor a yes", cell)}
	}
	return consentCell{evidence: t.Format("2006-01-02"), date: t}
}

// at is what consent cell cell, read as r, says at now: a date later
// than today everywhere on earth is no evidence.
func (r consentCell) at(cell string, now time.Time) (evidence, why string) {
	if !r.date.IsZero() && r.date.After(now.UTC().Add(consentFuture)) {
		return "", fmt.Sprintf("%q is a date in the future", cell)
	}
	return r.evidence, r.why
}

// ConsentRevoked reports whether a consent cell says the person withdrew
// their consent (revoked, withdrawn, opted out, unsubscribed, widerrufen,
// révoqué, a do-not-call phrase, in any of the table's languages and any
// case), rather than only that none is on record (no, false, empty): the
// person asked not to be called, so the contact reader suppresses their
// number in every row of the campaign, as a do_not_call: flag, and run
// puts it on the store's do-not-call list. A cell of text that holds such
// a word or phrase among others ("withdrawn 2024-06-01", "Revoked:
// 2024-06-01", "Yes - do not call") withdraws it too.
func ConsentRevoked(cell string) bool {
	c := strings.TrimSpace(cell)
	if !hasLetter(c) {
		return false // a date, the commonest cell, 1 or 0, or empty
	}
	if says, ok := readConsentWord(c); ok {
		return says == saysWithdrawn
	}
	return words().withdraws(c)
}

// hasLetter reports whether s holds a letter (any rune beyond ASCII is
// taken for one).
func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; ('a' <= c && c <= 'z') || s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// consentDateRE splits a date cell: three numbers separated by -, / or .
// (year first or last), then an optional time.
var consentDateRE = regexp.MustCompile(`^(\d{1,4})([-/.])(\d{1,2})([-/.])(\d{1,4})\.?(?:(?:[t ]|, ?)(.*))?$`)

// consentTimeRE is the time of day after a date: 14:30, 14:30:05.123,
// 2:30 pm, with a zone (z, +01:00, +0100, utc, est) or none.
var consentTimeRE = regexp.MustCompile(`^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?: ?([ap]\.?m\.?))?(?: ?(?:z|[a-z]{3,4}|[+-]\d{2}(?::?\d{2})?))?$`)

// consentDate reads a date, with or without a time of day, in the forms
// CRM exports write. Its time of day is dropped: the date is the evidence.
func consentDate(v, region string) (time.Time, bool) {
	m := consentDateRE.FindStringSubmatch(v)
	if m == nil {
		// Not numbers: a month by its name, as some exports write it.
		for _, layout := range []string{"Jan 2, 2006", "January 2, 2006", "2 Jan 2006", "2 January 2006", "2-Jan-2006"} {
			if t, err := time.Parse(layout, v); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	if m[2] != m[4] {
		return time.Time{}, false
	}
	if m[6] != "" && !validTime(m[6]) {
		return time.Time{}, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[3])
	c, _ := strconv.Atoi(m[5])
	var y, mo, d int
	switch {
	case len(m[1]) == 4: // 2024-03-05, 2024/03/05, 2024.03.05
		y, mo, d = a, b, c
	case len(m[1]) > 2 || (len(m[5]) != 4 && len(m[5]) != 2):
		return time.Time{}, false
	case m[2] == ".", a > 12: // 05.03.2024 (dots are day first), 25/12/2023
		y, mo, d = c, b, a
	case b > 12, monthFirst[region]: // 12/31/2023; 3/5/2024 in the US
		y, mo, d = c, a, b
	default:
		y, mo, d = c, b, a
	}
	if len(m[1]) != 4 && len(m[5]) == 2 { // 12/31/23, as Excel writes a short date
		y += 2000
	}
	if mo < 1 || mo > 12 || d < 1 || y < 1900 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // February 30th
		return time.Time{}, false
	}
	return t, true
}

// validTime reports whether s is a time of day as consentTimeRE writes it.
func validTime(s string) bool {
	m := consentTimeRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	if m[4] != "" {
		return h >= 1 && h <= 12 && mi < 60 && sec < 60
	}
	return h < 24 && mi < 60 && sec < 60
}

// monthFirst are the regions that write a date month first (3/5/2024 is
// March 5th): the United States and its territories, and the
// Philippines. Elsewhere 3/5/2024 is the 3rd of May.
var monthFirst = map[string]bool{"US": true, "PR": true, "GU": true, "VI": true, "AS": true, "MP": true, "UM": true, "PH": true, "FM": true, "MH": true, "PW": true}

// consentColumn is the column callrun init maps as consent: the first of
// the header's consent columns (see isConsentHeader) whose first rows hold
// evidence callrun reads, else the first of them; "" when none. A column
// that says opt-in and nothing of consent or of calls ("Opt-In",
// Mailchimp's OPTIN_TIME) may be an opt-in to e-mails: it is not mapped,
// and optIn names the first such, for init to suggest in a comment.
// Columns in used are passed over.
func consentColumn(header []string, rows [][]string, region string, used map[string]bool) (column, optIn string) {
	w := words()
	var first string
	for i, h := range header {
		if h == "" || used[h] || !isConsentHeader(h) {
			continue
		}
		if t := readHeaderWords(h); !t.has(w.consentHeader) && !t.has(w.calls) {
			if optIn == "" {
				optIn = h
			}
			continue
		}
		for _, r := range rows {
			if i < len(r) {
				if ev, _ := ReadConsent(r[i], region, time.Now()); ev != "" {
					return h, optIn
				}
			}
		}
		if first == "" {
			first = h
		}
	}
	return first, optIn
}

// isConsentHeader reports whether a header names a column of consent to
// be called, in any of the table's languages: "Consent Date", "Opt-In",
// "TCPA Consent", "OK to Call", "Einwilligung Telefon", not "Opt Out",
// "Consent Revoked", "Consent Withdrawal Date", "Call Consent Refused",
// "Consent Expires", "Consent Source", "No Consent", nor consent to
// e-mails or texts alone ("Email Opt In", "SMS Consent", Brevo's
// "DOUBLE_OPT-IN").
func isConsentHeader(h string) bool {
	consent, channel := consentHeader(h)
	return consent && channel == ""
}

// consentChannel returns, for a column named for consent to e-mails or to
// texts and not to calls, which ("e-mails", "texts"); "" otherwise. A
// consent: column so named is refused unless channel_checked says
// otherwise.
func consentChannel(column string) string {
	if consent, channel := consentHeader(column); consent {
		return channel
	}
	return ""
}

// consentHeader reads a header as one of consent: whether it is one, and
// when it names e-mails or texts and not calls, which.
func consentHeader(h string) (consent bool, channel string) {
	w, t := words(), readHeaderWords(h)
	if !(t.has(w.consentHeader) || t.has(w.optIn)) || t.has(w.negations) || t.has(w.optOut) || t.has(w.withdrawnHeader) ||
		t.has(w.deniedHeader) || t.has(w.expiry) || t.has(w.dnc) || t.has(w.blocked) || t.has(w.details) {
		return false, ""
	}
	switch {
	case t.has(w.calls):
		return true, ""
	case t.has(w.texts):
		return true, "texts"
	case t.has(w.other):
		return true, "e-mails"
	}
	return true, ""
}
