package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
)

// DoNotCallColumns is `do_not_call:`, at the top of the campaign file or
// under a sheet (which replaces the top one for that sheet): the columns
// of a contact export that hold the CRM's own do-not-call flag, such as
// Salesforce's "Do Not Call" or HighLevel's "DND". A row whose cell in
// any of them says yes ([FlagYes]) is suppressed, never called; any other
// cell is called as before. The contact reader, plan and init use it.
type DoNotCallColumns struct {
	Column  string   `yaml:"column"`
	Columns []string `yaml:"columns"`
}

// Names returns the columns named, column: first.
func (d *DoNotCallColumns) Names() []string {
	if d == nil {
		return nil
	}
	if d.Column != "" {
		return append([]string{d.Column}, d.Columns...)
	}
	return d.Columns
}

// DoNotCallColumns returns the do-not-call flag columns of sheet i: the
// sheet's own do_not_call:, else the campaign's.
func (f *File) DoNotCallColumns(i int) []string {
	if d := f.Sheets[i].DoNotCall; d != nil {
		return d.Names()
	}
	return f.DoNotCall.Names()
}

// validateDoNotCall checks a do_not_call: block at key (do_not_call or
// sheets[i].do_not_call).
func (l *loader) validateDoNotCall(key string, d *DoNotCallColumns) {
	if d == nil {
		return
	}
	if d.Column != "" && len(d.Columns) > 0 {
		l.problem(key, "do_not_call has both column: and columns:; list every column under columns: [%q, ...]", d.Column)
		return
	}
	names := d.Names()
	if len(names) == 0 {
		l.problem(key, `do_not_call names no column: write do_not_call: {column: "Do Not Call"} (the column of the CRM's do-not-call flag), or columns: [...] for several, or remove the key`)
		return
	}
	seen := map[string]bool{}
	for _, c := range names {
		folded := strings.ToLower(strings.TrimSpace(c))
		switch {
		case folded == "":
			l.problem(key, "do_not_call lists an empty column name")
		case seen[folded]:
			l.problem(key, "do_not_call lists the column %q twice", c)
		}
		seen[folded] = true
	}
}

// resolveDoNotCall finds sheet i's do-not-call flag columns in its
// header, and the columns whose header reads as such a flag that the
// campaign does not map. A column the header lacks is a problem, which
// stops plan and run before any call.
func (f *File) resolveDoNotCall(i int, r *sheet.Reader, m *sheetMap) (problems []string) {
	mapped := map[int]bool{}
	for _, name := range f.DoNotCallColumns(i) {
		idx, err := r.Column(name)
		if err != nil {
			msg := err.Error()
			if f.Sheets[i].DoNotCall == nil && len(f.Sheets) > 1 {
				msg += fmt.Sprintf("; the top-level do_not_call: applies to every sheet: give this sheet its own under sheets[%d] (do_not_call: {column: ...})", i)
			}
			problems = append(problems, msg)
			continue
		}
		m.dncCols = append(m.dncCols, idx)
		m.dncNames = append(m.dncNames, name)
		mapped[idx] = true
	}
	for c, h := range r.Header() {
		if !mapped[c] && DoNotCallHeader(h) {
			m.dncUnmapped = append(m.dncUnmapped, c)
		}
	}
	if m.dncUnmapped != nil {
		m.dncUnmappedYes = make([]int, len(m.dncUnmapped))
	}
	if m.dncCols != nil {
		m.dncUnclear, m.dncUnclearExample = make([]int, len(m.dncCols)), make([]string, len(m.dncCols))
	}
	return problems
}

// FlagYes reports whether a cell of a do-not-call flag column says yes:
// 1 (or 1.0, as pandas writes a 0/1 column with blanks), true, t, on,
// yes, y, x, checked or a check mark (with or without the emoji
// variation selector a phone's keyboard adds), or Dynamics 365's "Do Not
// Allow", in any case, spaces around it aside. Anything else (empty, 0,
// false, no, allow) is no flag.
func FlagYes(cell string) bool {
	c := strings.ToLower(strings.TrimSpace(cell))
	c = strings.TrimRight(c, "\ufe0e\ufe0f")
	switch c {
	case "1", "1.0", "true", "t", "on", "yes", "y", "x", "checked", "✓", "✔", "☑", "✅", "☒", "do not allow":
		return true
	}
	return false
}

// flagNo reports whether a cell of a do-not-call flag column plainly
// says no: empty, 0, 0.0, false, no, n, f, off, unchecked or allow.
func flagNo(cell string) bool {
	switch strings.ToLower(strings.TrimSpace(cell)) {
	case "", "0", "0.0", "false", "no", "n", "f", "off", "unchecked", "allow":
		return true
	}
	return false
}

// flagDoNotCall suppresses c when one of its sheet's do-not-call flag
// columns says yes, whatever else is wrong with the row: nobody the CRM
// marks do not call is called, and a row never to be called needs no
// fixing. A row to call whose consent cell withdraws consent is
// suppressed too; one already invalid stays so. It also counts the yes cells of columns that read as such a
// flag but are not mapped. It reports whether c was suppressed.
func (cr *ContactReader) flagDoNotCall(c *Contact, m *sheetMap, fields []string) bool {
	for k, col := range m.dncUnmapped {
		if col < len(fields) && FlagYes(fields[col]) {
			m.dncUnmappedYes[k]++
		}
	}
	for k, col := range m.dncCols {
		if col < len(fields) && !FlagYes(fields[col]) && !flagNo(fields[col]) {
			if m.dncUnclear[k]++; m.dncUnclearExample[k] == "" {
				m.dncUnclearExample[k] = fmt.Sprintf("row %d: %q", c.Row, strings.TrimSpace(fields[col]))
			}
		}
	}
	for k, col := range m.dncCols {
		if col < len(fields) && FlagYes(fields[col]) {
			c.Status, c.Field, c.Column = Suppressed, "", ""
			c.DoNotCallColumn = m.dncNames[k]
			c.Reason = fmt.Sprintf("column %q says %q: the contact is marked do not call", m.dncNames[k], strings.TrimSpace(fields[col]))
			return true
		}
	}
	if c.Status == "" && m.consentCol >= 0 && m.consentCol < len(fields) && ConsentRevoked(fields[m.consentCol]) {
		c.Status = Suppressed
		c.DoNotCallColumn = m.consentName
		c.Reason = fmt.Sprintf("consent column %q says %q: the contact withdrew consent to be called", m.consentName, strings.TrimSpace(fields[m.consentCol]))
		return true
	}
	return false
}

// unmappedDoNotCall tells cr.SheetNote, once sheet i is read, of the
// cells of its do-not-call columns that say neither yes nor no, and of
// each column of it that reads as a do-not-call flag and is not mapped,
// whose yes cells it adds to cr.unmappedYes.
func (cr *ContactReader) unmappedDoNotCall(i int, r *sheet.Reader, m *sheetMap) {
	header := r.Header()
	for k, n := range m.dncUnclear {
		cr.unclearDNC += n
		if n > 0 && cr.SheetNote != nil {
			cr.SheetNote(i, fmt.Sprintf("sheet %s: %d cell(s) of the do-not-call column %q say neither yes nor no (%s), and their rows are called; write 1 or yes where the contact is not to be called",
				cr.f.Sheets[i].File, n, m.dncNames[k], m.dncUnclearExample[k]))
		}
	}
	for k, col := range m.dncUnmapped {
		yes := m.dncUnmappedYes[k]
		cr.unmappedYes += yes
		if cr.SheetNote == nil {
			continue
		}
		cr.SheetNote(i, fmt.Sprintf("sheet %s has a column %q that reads as a do-not-call flag, and the campaign does not map it: its %d row(s) that say yes are called like any other; map it under the sheet with do_not_call: {column: %q}",
			cr.f.Sheets[i].File, header[col], yes, header[col]))
	}
}

// UnmappedDoNotCall counts, over the sheets read so far, the rows whose
// cell says yes in a column that reads as a do-not-call flag the campaign
// does not map: rows the CRM may mark do not call that are called
// anyway. plan --strict fails on them.
func (cr *ContactReader) UnmappedDoNotCall() int { return cr.unmappedYes }

// UnclearDoNotCall counts, over the sheets read so far, the cells of the
// campaign's do_not_call: columns that say neither yes nor no ("Pending",
// "see notes"): rows called though no one can tell whether the CRM marks
// them do not call. plan --strict fails on them.
func (cr *ContactReader) UnclearDoNotCall() int { return cr.unclearDNC }

// Header words (folded) of a do-not-call flag column.
var (
	// dncHeaderParts, anywhere in a folded header, name a do-not-call flag.
	dncHeaderParts = []string{"donotcall", "dontcall", "nocall", "donotphone", "donotcontact", "donotdisturb", "donotallowphone"}
	// dncHeaderWords are words, or the start or end of one, that do.
	dncHeaderWords = []string{"dnc", "dnd"}
	// optOutParts name an opt-out, which is of calls only with a call word.
	optOutParts = []string{"optout", "optedout", "unsubscribe"}
	// callParts name calls.
	callParts = []string{"call", "phone", "voice", "tele", "dial"}
	// otherChannelParts name channels other than calls: a flag of one of
	// them alone ("Email Opt Out", "DND SMS") does not stop a call.
	otherChannelParts = []string{"mail", "sms", "text", "fax", "newsletter", "whatsapp", "push", "letter", "post"}
	// detailWords name a column about the flag rather than the flag
	// ("Do Not Call Reason", "DNC Date").
	detailWords = []string{"reason", "date", "time", "timestamp", "source", "note", "notes", "comment", "updated", "changed", "modified", "by"}
)

// DoNotCallHeader reports whether a column's header says it flags a
// contact not to be called: do not call, DNC, DND, or opted out or
// unsubscribed from calls. A flag of another channel alone (Salesforce's
// "Email Opt Out", "DND SMS") is not one. init maps such columns, and
// plan warns of those a campaign does not map.
func DoNotCallHeader(h string) bool {
	k := foldHeader(h)
	if k == "" || hasWord(h, detailWords) {
		return false
	}
	has := func(parts []string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(k, p) })
	}
	calls := has(callParts)
	switch {
	case has(dncHeaderParts) || hasWord(h, dncHeaderWords):
		return calls || !has(otherChannelParts)
	case has(optOutParts):
		return calls
	}
	return false
}

// guessDoNotCall returns the columns of header, not in used, that init
// maps under do_not_call:.
func guessDoNotCall(header []string, used map[string]bool) []string {
	var cols []string
	for _, h := range header {
		if h != "" && !used[h] && DoNotCallHeader(h) {
			cols = append(cols, h)
		}
	}
	return cols
}

// doNotCallYAML writes init's do_not_call: value for cols.
func doNotCallYAML(cols []string) string {
	if len(cols) == 1 {
		return fmt.Sprintf("{column: %q}", cols[0])
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return "{columns: [" + strings.Join(quoted, ", ") + "]}"
}

// FlaggedNumber is a number a do_not_call: column of the campaign's
// sheets marks do not call, or whose consent cell says consent was
// withdrawn ([ConsentRevoked]): the first row that does, in sheet order.
// Every row with the number is suppressed, and a run puts it on the
// store's do-not-call list.
type FlaggedNumber struct {
	Number  string // E.164
	Sheet   int    // index in File.Sheets
	Row     int
	Column  string // the do_not_call: column, or the consent column
	Cell    string // its cell, as written
	Consent bool   // Column is the consent column: the cell withdraws consent
}

// rowFlag returns the first cell of a row that asks not to call its
// number: a yes in a do_not_call: column, else a consent cell that
// withdraws consent. ok is false when there is none.
func rowFlag(m *sheetMap, fields []string) (fl FlaggedNumber, ok bool) {
	if k := slices.IndexFunc(m.dncCols, func(col int) bool { return col < len(fields) && FlagYes(fields[col]) }); k >= 0 {
		return FlaggedNumber{Column: m.dncNames[k], Cell: strings.TrimSpace(fields[m.dncCols[k]])}, true
	}
	if m.consentCol >= 0 && m.consentCol < len(fields) && ConsentRevoked(fields[m.consentCol]) {
		return FlaggedNumber{Column: m.consentName, Cell: strings.TrimSpace(fields[m.consentCol]), Consent: true}, true
	}
	return FlaggedNumber{}, false
}

// ReadFlagged reads, before any contact is judged, the numbers of the
// rows of the campaign's sheets whose do_not_call: column says yes or
// whose consent column says consent was withdrawn, by phoneKey (the
// entries' Number left empty): each number in the row's phone columns
// that reads, as the row's call would read it, as a number the campaign
// calls. It reads every sheet that maps either column whole, shard or
// not, but reads the
// number of flagged rows only. A sheet that cannot be read to its end
// (not UTF-8, a row that never ends) gives the numbers of the rows before
// it, and unread is the first such error: the flags after it are not
// known. LoadSuppression calls it.
func (f *File) ReadFlagged(ctx context.Context, norm *phone.Normalizer) (_ map[uint64]FlaggedNumber, unread *sheet.Error, _ error) {
	flagged := map[uint64]FlaggedNumber{}
	var cr *ContactReader
	for i := range f.Sheets {
		if len(f.DoNotCallColumns(i)) == 0 && f.SheetConsent(i).Column == "" {
			continue
		}
		if cr == nil {
			cr = f.NewContactReader(norm, nil)
		}
		se, err := cr.readFlagged(ctx, i, flagged)
		if err != nil {
			return nil, nil, fmt.Errorf("sheet %s: %w", f.Sheets[i].File, err)
		}
		if unread == nil {
			unread = se
		}
	}
	return flagged, unread, nil
}

// readFlagged adds the flagged numbers of sheet i to flagged, and returns
// the error that kept it from reading the sheet to its end, if any.
func (cr *ContactReader) readFlagged(ctx context.Context, i int, flagged map[uint64]FlaggedNumber) (*sheet.Error, error) {
	spec := &cr.f.Sheets[i]
	r, m, err := cr.f.openSheet(i)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	err = eachRecord(ctx, r, func(rec sheet.Record) error {
		if rec.Err != nil {
			return nil
		}
		fl, ok := rowFlag(m, rec.Fields)
		if !ok {
			return nil
		}
		rules, anyCountry, country, _ := cr.rowRules(i, m, rec.Fields)
		// Every phone column, those a call passes over (a fax, a type
		// cell's pager) too.
		for _, p := range m.phones {
			raw := strings.TrimSpace(rec.Fields[p.col])
			if raw == "" {
				continue
			}
			ph, err := cr.readPhone(raw, spec, rules, anyCountry, country)
			numbers := []string{ph.E164}
			if err != nil {
				// A cell its own call cannot use whole (several numbers,
				// an extension) still names whom not to call: every
				// number it may mean, each of a list included, as a
				// suppression file's entry does.
				regions := append([]string{cmp.Or(country, spec.Region, cr.f.Region)}, cr.f.suppressionRegions()...)
				numbers = cr.norm.Readings(raw, regions)
			}
			for _, e164 := range numbers {
				if key := phoneKey(e164); key != 0 {
					if _, ok := flagged[key]; !ok {
						fl.Sheet, fl.Row, fl.Cell = i, rec.Row, strings.Clone(fl.Cell)
						flagged[key] = fl
					}
				}
			}
		}
		return nil
	})
	var se *sheet.Error
	if errors.As(err, &se) {
		return se, nil
	}
	return nil, err
}

// flaggedElsewhere suppresses c when its number is one a do_not_call:
// column flags, or a consent cell withdraws consent for, in a row of the
// campaign's sheets ([File.ReadFlagged]): the person asked not to be
// called, whichever row holds them. A row that withdrew consent itself
// and is not called anyway (invalid, when consent is required) is left
// as it is: a withdrawal, its own or another row's, changes nothing for
// it. It reports whether c was suppressed; a nil s suppresses nothing.
func (s *Suppression) flaggedElsewhere(c *Contact, f *File) bool {
	if s == nil || c.Phone == "" {
		return false
	}
	fl, ok := s.flagged[phoneKey(c.Phone)]
	if !ok || (fl.Consent && c.Status != "" && ConsentRevoked(c.ConsentCell)) {
		return false
	}
	c.Status, c.Field, c.Column = Suppressed, "", ""
	c.DoNotCallColumn = fl.Column
	c.Reason = fmt.Sprintf("the number is marked do not call in sheet %s, row %d (column %q says %q)", f.Sheets[fl.Sheet].File, fl.Row, fl.Column, fl.Cell)
	if fl.Consent {
		c.Reason = fmt.Sprintf("consent to be called was withdrawn in sheet %s, row %d (consent column %q says %q)", f.Sheets[fl.Sheet].File, fl.Row, fl.Column, fl.Cell)
	}
	return true
}

// FlagsUnread returns, when a sheet that maps do_not_call: or consent:
// could not be read to its end, why (a *sheet.Error naming the file and
// row): the flags and withdrawals of the rows after it are not known, so
// any row may hold a number the CRM marks do not call. run refuses to call then; plan, status and
// the report, which call nobody, report the sheet's problem as before.
func (s *Suppression) FlagsUnread() error {
	if s.flagsUnread == nil {
		return nil
	}
	return s.flagsUnread
}

// Flagged returns the numbers the sheets' do_not_call: columns flag, in
// sheet and row order: what a run puts on the store's do-not-call list.
func (s *Suppression) Flagged() []FlaggedNumber {
	out := make([]FlaggedNumber, 0, len(s.flagged))
	for key, fl := range s.flagged {
		fl.Number = "+" + strconv.FormatUint(key, 10)
		out = append(out, fl)
	}
	slices.SortFunc(out, func(a, b FlaggedNumber) int {
		return cmp.Or(cmp.Compare(a.Sheet, b.Sheet), cmp.Compare(a.Row, b.Row), strings.Compare(a.Number, b.Number))
	})
	return out
}
