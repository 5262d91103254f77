package campaign

import (
	"fmt"
	"regexp"
	"slices"
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
	// ChannelColumn, EndColumn and StatusColumn name the columns beside
	// Column that scope each row's consent: the channel it is for
	// (Salesforce's "Contact Point Type"), the day it ends ("Effective
	// To") and its status ("Privacy Consent Status"). callrun init writes
	// those it finds; a sheet that maps consent and names none of a kind
	// has the one its header names read all the same
	// ([consentScopeHeader]). The contact reader reads them on every row
	// ([ContactReader.judgeConsent]).
	ChannelColumn string `yaml:"channel_column"`
	EndColumn     string `yaml:"end_column"`
	StatusColumn  string `yaml:"status_column"`
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
		set := func(name string, take func()) {
			if f.has(key+name) || f.Consent == nil {
				take()
			}
		}
		set("column", func() { c.Column = s.Column })
		set("required", func() { c.Required = s.Required })
		set("channel_checked", func() { c.ChannelChecked = s.ChannelChecked })
		set("channel_column", func() { c.ChannelColumn = s.ChannelColumn })
		set("end_column", func() { c.EndColumn = s.EndColumn })
		set("status_column", func() { c.StatusColumn = s.StatusColumn })
	}
	c.Column = strings.TrimSpace(c.Column)
	c.ChannelColumn, c.EndColumn, c.StatusColumn = strings.TrimSpace(c.ChannelColumn), strings.TrimSpace(c.EndColumn), strings.TrimSpace(c.StatusColumn)
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
// problem with the sheet, which stops a run before any call. The columns
// that scope its consent are found after, by [File.mapConsentScope].
func (f *File) mapConsent(i int, r *sheet.Reader, m *sheetMap) error {
	m.consentCol, m.channelCol = -1, -1
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

// scopeKind is what a column beside the consent column says of each
// row's consent: the channel it is for, the day it ends, or its status.
type scopeKind uint8

const (
	scopeNone    scopeKind = iota
	scopeChannel           // "Contact Point Type", "Channel": Phone, Email, SMS ...
	scopeEnd               // "Effective To", "Consent Expires", "Valid Until": a date
	scopeStatus            // "Privacy Consent Status": OptIn, OptOut, Seen ...
)

func (k scopeKind) String() string {
	switch k {
	case scopeChannel:
		return "channel_column"
	case scopeEnd:
		return "end_column"
	}
	return "status_column"
}

// scopeColumn is a column that scopes a sheet's consent, as the contact
// reader reads it.
type scopeColumn struct {
	col  int
	name string
	kind scopeKind
	// found says the column was found by its header, not named.
	found bool
}

// consentScopeHeader reads a header as one of a column that scopes
// consent: the channel consent is for ("Contact Point Type", "Channel",
// "Communication Channel"), the day it ends ("Effective To", "Consent
// Expires", "Valid Until", "Expiry Date"), or its status ("Privacy
// Consent Status", "Consent Status", "Opt-In Status"); scopeNone for any
// other, and for a column about how consent was captured ("Capture
// Contact Point Type"), an id, a reason or a source, or one of the
// consent to e-mails or texts alone ("Email Consent Expires").
func consentScopeHeader(h string) scopeKind {
	w, t := words(), readHeaderWords(h)
	if t.joined == "" || t.has(w.details) || t.has(w.captured) || slices.Contains(t.words, "id") {
		return scopeNone
	}
	if (t.has(w.other) || t.has(w.texts)) && !t.has(w.calls) {
		return scopeNone
	}
	consent := t.has(w.consentHeader) || t.has(w.optIn)
	switch {
	case t.has(w.expiry) && (consent || onlyOf(t.joined, w.expiry, w.dates)):
		return scopeEnd
	case t.has(w.channel):
		return scopeChannel
	case consent && t.has(w.status):
		return scopeStatus
	}
	return scopeNone
}

// onlyOf reports whether joined, a header's letters run together, is
// made of entries of lists alone ("effectivetodate": "effective to" and
// "date").
func onlyOf(joined string, lists ...[]string) bool {
	for _, l := range lists {
		for _, e := range l {
			joined = strings.ReplaceAll(joined, e, "")
		}
	}
	return joined == ""
}

// mapConsentScope finds the columns that scope sheet i's consent: those
// its consent: block names (channel_column, end_column, status_column),
// and for each kind it names none of, the first column of the header
// that reads as one ([consentScopeHeader]) and that is not mapped, nor a
// signal column, nor ignored (used and m.tracked). A column named that
// the header lacks is a problem. The status column joins the sheet's
// signal columns: an opt-out there withdraws consent to be called, for
// the number, as a do-not-call flag does.
func (f *File) mapConsentScope(i int, r *sheet.Reader, m *sheetMap, used map[int]bool) (problems []error) {
	if m.consentCol < 0 {
		return nil
	}
	c := f.SheetConsent(i)
	named := map[scopeKind]string{scopeChannel: c.ChannelColumn, scopeEnd: c.EndColumn, scopeStatus: c.StatusColumn}
	found := map[scopeKind]bool{}
	add := func(col int, name string, kind scopeKind, byHeader bool) {
		found[kind] = true
		m.consentScope = append(m.consentScope, scopeColumn{col: col, name: name, kind: kind, found: byHeader})
		if m.tracked != nil && col < len(m.tracked) {
			m.tracked[col] = true
		}
		switch kind {
		case scopeChannel:
			// Only a channel the campaign names, or one whose header
			// says it is the consent's ("Contact Point Type", "Consent
			// Channel"), may set a withdrawal aside: another found by
			// its header may be the lead's ("Sales Channel: Web").
			if t := readHeaderWords(name); !byHeader || t.has(words().consentHeader) || strings.Contains(t.joined, "contactpoint") {
				m.channelCol = col
			}
		case scopeStatus:
			s := &signalColumn{col: col, name: name, kind: signalStatus, mapped: true}
			if byHeader {
				s.found = "header"
			}
			m.signals = append(m.signals, s)
		}
	}
	for _, kind := range []scopeKind{scopeChannel, scopeEnd, scopeStatus} {
		if named[kind] == "" {
			continue
		}
		idx, err := r.Column(named[kind])
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", kind, err))
			continue
		}
		add(idx, named[kind], kind, false)
	}
	for col, h := range r.Header() {
		if col == m.consentCol || used[col] || (col < len(m.tracked) && m.tracked[col]) {
			continue
		}
		if kind := consentScopeHeader(h); kind != scopeNone && !found[kind] {
			add(col, h, kind, true)
		}
	}
	return problems
}

// consentChannelSays is what a cell of a consent's channel column says.
type consentChannelSays uint8

const (
	channelUnknown consentChannelSays = iota // empty, or a word callrun does not read as a channel
	channelCalls                             // Phone, Call, Voice: consent to be called
	channelTexts                             // SMS, Text, WhatsApp
	channelOther                             // Email, MailingAddress, Post, Social, Web
)

// readChannelCell reads a cell of a consent's channel column, in any of
// the table's languages: calls when it, or one of its tags ("Email;
// Phone"), names calls, or is made of the words of a phone line alone
// ("Mobile", "Cell", "Handy": the number itself), or of one and a fax
// ("Tel/Fax", [namesLineOnly]); else
// unknown when a tag names no channel callrun knows; else texts or
// another channel.
func readChannelCell(cell string) consentChannelSays {
	w := words()
	says, any := channelTexts, false
	texts := false
	for rest := strings.TrimSpace(cell); rest != ""; {
		tag := rest
		if i, n := nextTagBreak(rest); i >= 0 {
			tag, rest = rest[:i], rest[i+n:]
		} else {
			rest = ""
		}
		t := readHeaderWords(tag)
		if t.joined == "" {
			continue
		}
		any = true
		switch {
		case t.has(w.calls), namesLineOnly(w, t):
			return channelCalls
		case t.has(w.texts):
			texts = true
		case t.has(w.other):
		default:
			says = channelUnknown
		}
	}
	switch {
	case !any:
		return channelUnknown
	case says == channelUnknown:
		return channelUnknown
	case texts:
		return channelTexts
	}
	return channelOther
}

// namesLineOnly reports whether every word of a channel cell's tag is a
// word of a phone line ("Mobile", "Cell", "Tel", "Handy", "Portable"),
// or of a fax beside one ("Tel/Fax", as a letterhead gives the number and
// its fax): such a tag names the number, and so calls to it. A tag that
// names texts, another channel or anything else beside it is of that
// ("Mobile SMS" is texts, "MobilePush" another channel, "Mobile App"
// unknown, "Fax" alone another channel): a line's word is matched as a
// whole word, never inside another.
func namesLineOnly(w *signalWords, t header) bool {
	return slices.ContainsFunc(t.words, func(x string) bool { return slices.Contains(w.lines, x) }) &&
		!slices.ContainsFunc(t.words, func(x string) bool { return !slices.Contains(w.lines, x) && !slices.Contains(w.fax, x) })
}

// consentEndLeeway is how long after the start of its day (UTC) a
// consent that ends that day is taken to have ended: the day is over in
// the first time zone to end it, 14 hours ahead of UTC, at 10:00 UTC.
const consentEndLeeway = 24*time.Hour - consentFuture

// scopeCell is what a cell of a column that scopes consent says,
// whenever it is read: for a channel, which; for an end, its date and
// whether it is one; for a status, a yes (saysYes), a withdrawal
// (saysWithdrawn), a no (saysNo: no, Seen, NotSeen, empty) or a word
// callrun cannot read (saysUnclear). The contact reader keeps it for
// each distinct cell.
type scopeCell struct {
	channel consentChannelSays
	end     time.Time
	endOK   bool
	// endAt: end is an instant the cell gave with its zone, not a day.
	endAt  bool
	status cellSays
}

// endInstants are the layouts of an end of consent given as an instant
// with its zone (Salesforce's DateTime: 2026-11-29T05:00:00.000+0000).
var endInstants = []string{time.RFC3339Nano, "2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05-0700"}

// readScopeCell reads cell, trimmed, of a column of kind.
func readScopeCell(kind scopeKind, cell, region string) scopeCell {
	var r scopeCell
	switch kind {
	case scopeChannel:
		r.channel = readChannelCell(cell)
	case scopeEnd:
		for _, layout := range endInstants {
			if t, err := time.Parse(layout, cell); err == nil {
				r.end, r.endOK, r.endAt = t, true, true
				return r
			}
		}
		r.end, r.endOK = consentDate(strings.ToLower(strings.Join(strings.Fields(cell), " ")), region)
	case scopeStatus:
		switch says, ok := readConsentWord(cell); {
		case ok && says == saysYes:
			r.status = saysYes
		case ConsentRevoked(cell):
			r.status = saysWithdrawn
		case ok || cell == "":
			r.status = saysNo
		default:
			r.status = saysUnclear
		}
	}
	return r
}

// scopeWhy reads row fields' cells of the columns that scope its consent
// (m.consentScope) at now, and says why the row's consent is not consent
// to be called today, naming the column; "" when none says so. A channel
// other than calls, an end date past, a status other than a yes (an
// opt-out, Seen, empty) are no consent; so is a cell callrun cannot read
// (a channel it does not know, an end that is no date). s, the worker's,
// keeps what each distinct cell says.
func (m *sheetMap) scopeWhy(s *rowScratch, fields []string, region string, now time.Time) (why, column string) {
	for _, sc := range m.consentScope {
		cell := ""
		if sc.col < len(fields) {
			cell = strings.TrimSpace(fields[sc.col])
		}
		if sc.kind == scopeEnd && cell == "" {
			continue // consent without an end
		}
		r, ok := s.scope[sc.kind][cell]
		if !ok {
			r = readScopeCell(sc.kind, cell, region)
			if s.scope[sc.kind] == nil {
				s.scope[sc.kind] = map[string]scopeCell{}
			}
			if len(s.scope[sc.kind]) < 1000 { // a sheet has a few channels, statuses and ends; more are read each time
				s.scope[sc.kind][strings.Clone(cell)] = r
			}
		}
		switch sc.kind {
		case scopeChannel:
			switch r.channel {
			case channelCalls:
				continue
			case channelTexts:
				return fmt.Sprintf("column %q says %q: the consent is to texts, which is no consent to be phoned", sc.name, cell), sc.name
			case channelOther:
				return fmt.Sprintf("column %q says %q: the consent is to another channel than calls, which is no consent to be phoned", sc.name, cell), sc.name
			}
			return fmt.Sprintf("column %q says %q, which callrun cannot read as the channel the consent is for (Phone, Call, Mobile, Email, SMS, ...): it is no consent to be phoned until the cell says Phone", sc.name, cell), sc.name
		case scopeEnd:
			if !r.endOK {
				return fmt.Sprintf("column %q says %q, which callrun cannot read as the date the consent ends: it is no consent until the cell holds a date, or nothing for consent without an end", sc.name, cell), sc.name
			}
			if r.endAt && !now.Before(r.end) || !r.endAt && !now.Before(r.end.Add(consentEndLeeway)) {
				return fmt.Sprintf("column %q says %q: the consent ended on %s", sc.name, cell, r.end.Format("2006-01-02")), sc.name
			}
		case scopeStatus:
			switch r.status {
			case saysYes:
				continue
			case saysWithdrawn:
				return fmt.Sprintf("column %q says %q: the consent was %s", sc.name, cell, consentWithdrawnWord(cell)), sc.name
			case saysNo:
				if cell == "" {
					return fmt.Sprintf("column %q, the consent's status, is empty", sc.name), sc.name
				}
				return fmt.Sprintf("column %q says %q: the person has not opted in", sc.name, cell), sc.name
			}
			return fmt.Sprintf("column %q says %q, which callrun cannot read as a status of consent (OptIn, OptOut, ...): it is no consent until the cell says opted in", sc.name, cell), sc.name
		}
	}
	return "", ""
}

// withdrawalCounts reports whether a withdrawal on the row of fields (its
// consent cell's, or its status column's opt-out) is one of consent to be
// called: it is, unless the row's channel column, named by the campaign
// (consent.channel_column) or by its header as the consent's, names
// e-mail, post or another channel that is not the number's. An opt-out of texts stops
// calls too, as texts go to the same number; so does one whose channel
// callrun cannot read.
func (m *sheetMap) withdrawalCounts(fields []string) bool {
	if m.channelCol < 0 || m.channelCol >= len(fields) {
		return true
	}
	return readChannelCell(fields[m.channelCol]) != channelOther
}

// consentWithdrawn reports whether the row of fields withdraws consent
// to be called in its consent column ([ConsentRevoked],
// [sheetMap.withdrawalCounts]), with the cell.
func (m *sheetMap) consentWithdrawn(fields []string) (string, bool) {
	if m.consentCol < 0 || m.consentCol >= len(fields) || !ConsentRevoked(fields[m.consentCol]) || !m.withdrawalCounts(fields) {
		return "", false
	}
	return strings.TrimSpace(fields[m.consentCol]), true
}

// judgeConsent reads a row's consent cell into c.Consent and, when the
// sheet requires consent, makes a row without it invalid. Consent that
// the columns scoping it say is not consent to be called today
// ([sheetMap.scopeWhy]) is none.
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
	t := now()
	evidence, why := read.at(cell, t)
	column := m.consentName
	if evidence != "" {
		if w, col := m.scopeWhy(s, fields, spec.Region, t); w != "" {
			evidence, why, column = "", w, col
		} else if w := m.consentLineWhy(c.PhoneColumn); w != "" {
			evidence, why = "", w
		}
	}
	c.Consent, c.ConsentCell = evidence, cell
	if evidence == "" && m.consentRequired && c.Status == "" {
		c.Status, c.Field, c.Column = Invalid, "consent", column
		c.Reason = "no consent on record: " + why + "; a row is called only with a date of consent or a yes in this column (consent.required)"
		if column != m.consentName {
			c.Reason = "no consent to be called on record: " + why + "; a row is called only with consent to calls, not ended, and opted in, beside its date or yes in column " + strconv.Quote(m.consentName) + " (consent.required)"
		}
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

// excelSerialDate reports whether v looks like a date as Excel stores it
// and writes it to a CSV when the cell's format is General: the days since
// 1899-12-30, 32874 (1990) to 73051 (2099), possibly with a fraction of a
// day for the time. It is never read as a date (45678 may be a count of
// anything), only named as what it may be.
func excelSerialDate(v string) bool {
	whole, frac, _ := strings.Cut(v, ".")
	if len(whole) != 5 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return false
	}
	return whole >= "32874" && whole <= "73051"
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
		if excelSerialDate(v) {
			return consentCell{why: fmt.Sprintf("%q is neither a date nor a yes (it may be a date as Excel stores it, a count of days: in Excel format the column as a date, then save the sheet again)", cell)}
		}
		return consentCell{why: fmt.Sprintf("%q is neither a date nor a yes", cell)}
	}
	if what, ok := emptyDates[t.Format("2006-01-02")]; ok {
		return consentCell{why: fmt.Sprintf("%q is %s, which a system writes for a date it does not have, so no date of consent", cell, what)}
	}
	return consentCell{evidence: t.Format("2006-01-02"), date: t}
}

// emptyDates are the dates that programs write for an empty date: a
// consent cell holding one records no consent. Unix time 0 is 1970-01-01
// in UTC and 1969-12-31 in the Americas; SQL Server's datetime 0 (what an
// empty string becomes in it) is 1900-01-01, as Excel's day 1 is; Excel
// for Mac's day 0 is 1904-01-01.
var emptyDates = map[string]string{
	"1970-01-01": "the first day of Unix time",
	"1969-12-31": "the first moment of Unix time in the Americas",
	"1900-01-01": "the first day of SQL Server's and Excel's dates",
	"1904-01-01": "the first day of Excel for Mac's dates",
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
// case) or refused it (denied, declined, refused, abgelehnt, refusé,
// rechazado, non acconsento, Zoho's "Consent - Denied"), rather than only
// that none is on record (no, false, not given, pending, empty): the
// person said not to be called, so the contact reader suppresses their
// number in every row of the campaign, as a do_not_call: flag, and run
// puts it on the store's do-not-call list, consent required or not. A
// cell of text that holds such a word or phrase among others ("withdrawn
// 2024-06-01", "Revoked: 2024-06-01", "Yes - do not call", "Declined by
// phone") withdraws it too.
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

// consentRefused reports whether a consent cell that withdraws consent
// ([ConsentRevoked]) does so as a refusal ("Denied", "Consent -
// Declined", "abgelehnt"), holding no word of a withdrawal: the reasons
// say the person refused consent rather than withdrew it.
func consentRefused(cell string) bool {
	c := strings.TrimSpace(cell)
	return hasLetter(c) && words().refuses(c)
}

// withdrewConsent is what a cell that withdraws consent says the person
// did, for the reasons: "refused" or "withdrew".
func withdrewConsent(cell string) string {
	if consentRefused(cell) {
		return "refused"
	}
	return "withdrew"
}

// consentWithdrawnWord is the participle of [withdrewConsent]: "refused"
// or "withdrawn".
func consentWithdrawnWord(cell string) string {
	if consentRefused(cell) {
		return "refused"
	}
	return "withdrawn"
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
	var first, status string
	for i, h := range header {
		if h == "" || used[h] || !isConsentHeader(h) {
			continue
		}
		if consentScopeHeader(h) == scopeStatus {
			if status == "" {
				status = h // the evidence only when no other column holds it
			}
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
	if first == "" {
		first = status
	}
	return first, optIn
}

// ScopeGuess is a key of the consent: block that init writes: a column
// that scopes consent ([consentScopeHeader]) and its key.
type ScopeGuess struct{ Key, Column string }

// guessConsentScope returns the columns of header, not in used nor the
// consent column, that init maps as the scope of consent: the first that
// reads as its channel, its end and its status, in that order.
func guessConsentScope(header []string, consent string, used map[string]bool) []ScopeGuess {
	if consent == "" {
		return nil
	}
	var out []ScopeGuess
	found := map[scopeKind]bool{}
	for _, kind := range []scopeKind{scopeChannel, scopeEnd, scopeStatus} {
		for _, h := range header {
			if h == "" || h == consent || used[h] || found[kind] || consentScopeHeader(h) != kind {
				continue
			}
			found[kind] = true
			out = append(out, ScopeGuess{Key: kind.String(), Column: h})
		}
	}
	return out
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
