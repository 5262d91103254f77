package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"gopkg.in/yaml.v3"
)

// DoNotCallColumns is `do_not_call:`, at the top of the campaign file or
// under a sheet (which replaces the top one for that sheet): the columns
// of a contact export that say a person is not to be called, and the
// columns that look as if they might and are not honoured on purpose.
// It is written as one column ({column: "Do Not Call"}), several
// ({columns: [DNC, DND]}), or a list of them ([{column: Labels, values:
// ["Do not call"]}, {column: DND}]), with ignore: beside column: or
// columns: in the mapping forms. The contact reader, plan and init use it.
type DoNotCallColumns struct {
	Column string `yaml:"column"`
	// Values are, with column:, what its cells say when the contact is
	// not to be called, besides the table's do-not-call phrases: the
	// column is one of labels, tags or a status rather than a flag.
	Values  []string          `yaml:"values"`
	Columns []DoNotCallColumn `yaml:"columns"`
	// Ignore lists the columns that read as a do-not-call signal and
	// that the campaign does not honour, each with the reason why.
	Ignore []IgnoredColumn `yaml:"ignore"`
	// list is set when the block was written as the list of its columns.
	list bool
}

// DoNotCallColumn is one column of do_not_call:, written as its name (a
// flag: a row whose cell says yes is not called) or with the values that
// say do not call in a column of labels, tags or a status ({column:
// Labels, values: ["Do not call"]}).
type DoNotCallColumn struct {
	Column string   `yaml:"column"`
	Values []string `yaml:"values"`
}

// IgnoredColumn is an entry of do_not_call: ignore:, a column callrun
// reads as a do-not-call signal that the campaign does not honour, or a
// tab of the sheet's workbook named like a list of people not to call
// that is not about this campaign ({worksheet: "Do Not Call"}), and the
// reason the person who wrote the campaign gave. An entry names a column
// or a worksheet, not both.
type IgnoredColumn struct {
	Column    string `yaml:"column"`
	Worksheet string `yaml:"worksheet"`
	Reason    string `yaml:"reason"`
}

// tabIgnore reports whether an entry of do_not_call: ignore: names a
// tab of the workbook rather than a column.
func tabIgnore(ig IgnoredColumn) bool { return ig.Worksheet != "" }

// listField names the key that do_not_call: written as a list stands for
// (the config loader checks the list's entries as that key's).
func (*DoNotCallColumns) listField() string { return "Columns" }

// UnmarshalYAML reads do_not_call: as a mapping or as the list of its
// columns.
func (d *DoNotCallColumns) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		d.list = true
		return n.Decode(&d.Columns)
	}
	type plain DoNotCallColumns
	return n.Decode((*plain)(d))
}

// UnmarshalYAML reads a column of do_not_call: written as its name alone.
func (c *DoNotCallColumn) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		c.Column = n.Value
		return nil
	}
	type plain DoNotCallColumn
	return n.Decode((*plain)(c))
}

// Entries returns the columns named, column: first.
func (d *DoNotCallColumns) Entries() []DoNotCallColumn {
	if d == nil {
		return nil
	}
	if d.Column != "" {
		return append([]DoNotCallColumn{{Column: d.Column, Values: d.Values}}, d.Columns...)
	}
	return d.Columns
}

// entryKey is the campaign file's key of entry k of d, which is at key.
func (d *DoNotCallColumns) entryKey(key string, k int) string {
	switch {
	case d.list:
		return fmt.Sprintf("%s[%d]", key, k)
	case d.Column != "" && k == 0:
		return key + ".column"
	case d.Column != "":
		k--
	}
	return fmt.Sprintf("%s.columns[%d]", key, k)
}

// SheetDoNotCall returns sheet i's do_not_call: block: the sheet's own,
// else the campaign's; nil when neither is written.
func (f *File) SheetDoNotCall(i int) *DoNotCallColumns {
	if d := f.Sheets[i].DoNotCall; d != nil {
		return d
	}
	return f.DoNotCall
}

// doNotCallKey is the campaign file's key of sheet i's do_not_call:
// block, or of its file when it has none.
func (f *File) doNotCallKey(i int) string {
	switch {
	case f.Sheets[i].DoNotCall != nil:
		return fmt.Sprintf("sheets[%d].do_not_call", i)
	case f.DoNotCall != nil:
		return "do_not_call"
	}
	return fmt.Sprintf("sheets[%d].file", i)
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
	if len(d.Values) > 0 && d.Column == "" {
		l.problem(key+".values", `values: goes beside the column it belongs to: do_not_call: {column: Labels, values: ["Do not call"]}, or in each column of columns: [{column: Labels, values: [...]}]`)
	}
	entries := d.Entries()
	if len(entries) == 0 && len(d.Ignore) == 0 {
		l.problem(key, `do_not_call names no column: write do_not_call: {column: "Do Not Call"} (the column of the CRM's do-not-call flag), or [{column: Labels, values: ["Do not call"]}] for a column of labels, or {ignore: [{column: X, reason: "..."}]} for a column not to honour, or remove the key`)
		return
	}
	seen := map[string]bool{}
	for k, e := range entries {
		ek := d.entryKey(key, k)
		folded := strings.ToLower(strings.TrimSpace(e.Column))
		switch {
		case folded == "":
			l.problem(ek, "do_not_call lists an empty column name")
		case seen[folded]:
			l.problem(ek, "do_not_call lists the column %q twice", e.Column)
		}
		seen[folded] = true
		for _, v := range e.Values {
			if foldString(v) == "" {
				l.problem(ek, "do_not_call: the column %q lists the value %q, which has no letter or digit to match a cell by", e.Column, v)
			}
		}
	}
	tabs := map[string]bool{}
	for k, ig := range d.Ignore {
		ik := fmt.Sprintf("%s.ignore[%d]", key, k)
		if _, written := l.lines[ik+".worksheet"]; written || ig.Worksheet != "" {
			tab := strings.ToLower(strings.TrimSpace(ig.Worksheet))
			switch {
			case ig.Column != "":
				l.problem(ik, "do_not_call: ignore: an entry names a column or a worksheet, not both: write {column: %q, reason: \"...\"} and {worksheet: %q, reason: \"...\"} apart", ig.Column, ig.Worksheet)
			case tab == "":
				l.problem(ik, `do_not_call: ignore: names an empty worksheet: {worksheet: "Do Not Call", reason: "why its people are no concern of this campaign"}`)
			case tabs[tab]:
				l.problem(ik, "do_not_call: ignore: lists the worksheet %q twice", ig.Worksheet)
			case strings.TrimSpace(ig.Reason) == "":
				l.problem(ik, `do_not_call: ignore: the worksheet %q needs the reason its people may be called, for whoever reads the campaign next: {worksheet: %q, reason: "..."}`, ig.Worksheet, ig.Worksheet)
			}
			tabs[tab] = true
			continue
		}
		folded := strings.ToLower(strings.TrimSpace(ig.Column))
		switch {
		case folded == "":
			l.problem(ik, `do_not_call: ignore: names no column: {column: "X", reason: "why its rows may be called"}`)
		case seen[folded]:
			l.problem(ik, "do_not_call: the column %q is both honoured and ignored; keep one", ig.Column)
		case strings.TrimSpace(ig.Reason) == "":
			l.problem(ik, `do_not_call: ignore: the column %q needs the reason it is not honoured, for whoever reads the campaign next: {column: %q, reason: "..."}`, ig.Column, ig.Column)
		}
		seen[folded] = true
	}
}

// resolveDoNotCall finds sheet i's signal columns in its header: its
// do_not_call: columns, then the columns whose header reads as a
// do-not-call flag, as consent to be called, or as labels, tags, a status
// or lists, that the campaign neither maps nor ignores. A column the
// header lacks is a problem, which stops plan and run before any call.
// The consent column, mapped after it, joins the signal columns there.
func (f *File) resolveDoNotCall(i int, r *sheet.Reader, m *sheetMap) (problems []string) {
	header := r.Header()
	m.header, m.tracked, m.sampleRows = header, make([]bool, len(header)), signalSampleRows
	d := f.SheetDoNotCall(i)
	missing := func(err error) {
		msg := err.Error()
		if f.Sheets[i].DoNotCall == nil && len(f.Sheets) > 1 {
			msg += fmt.Sprintf("; the top-level do_not_call: applies to every sheet: give this sheet its own under sheets[%d] (do_not_call: {column: ...})", i)
		}
		problems = append(problems, msg)
	}
	for _, e := range d.Entries() {
		idx, err := r.Column(e.Column)
		if err != nil {
			missing(err)
			continue
		}
		s := &signalColumn{col: idx, name: e.Column, kind: signalFlag, mapped: true}
		if len(e.Values) > 0 {
			s.kind, s.values = signalValues, map[string]bool{}
			for _, v := range e.Values {
				s.values[foldString(v)] = true
			}
		}
		m.signals = append(m.signals, s)
		m.tracked[idx] = true
	}
	if d != nil {
		for _, ig := range d.Ignore {
			if tabIgnore(ig) {
				continue // a tab of the workbook: see workbookProblems
			}
			idx, err := r.Column(ig.Column)
			if err != nil {
				missing(err)
				continue
			}
			m.tracked[idx] = true
			m.ignored = append(m.ignored, ig)
		}
	}
	return problems
}

// watchHeaders adds sheet m's columns the campaign neither maps nor
// ignores whose header reads as a signal to its signal columns: a
// do-not-call flag, consent to be called, labels, tags, a status or
// lists, or notes. openSheet calls it once every mapped column is known:
// a column in used, mapped to a form field (or as the row's country, time
// zone or full name), is not taken for one by its header, but for notes.
func (m *sheetMap) watchHeaders(used map[int]bool) {
	for c, h := range m.header {
		if m.tracked[c] || used[c] || h == "" {
			continue
		}
		var kind signalKind
		switch {
		case DoNotCallHeader(h):
			kind = signalFlag
		case isConsentHeader(h):
			kind = signalConsent
		case isListHeader(h):
			kind = signalValues
		default:
			continue
		}
		// A list's notes ("Lead Status Notes") are free text: read as notes.
		notes := kind == signalValues && isNotesHeader(h)
		m.signals = append(m.signals, &signalColumn{col: c, name: h, kind: kind, found: "header", notes: notes})
		m.tracked[c] = true
	}
	// A column of the date or the reason of a flag ("DNC Date") is set on
	// the flagged rows only: a sheet with no flag column is read by it.
	if !slices.ContainsFunc(m.signals, func(s *signalColumn) bool { return s.kind == signalFlag }) {
		for c, h := range m.header {
			if !m.tracked[c] && !used[c] && h != "" && doNotCallAboutHeader(h) {
				m.signals = append(m.signals, &signalColumn{col: c, name: h, kind: signalFlag, found: "header"})
				m.tracked[c] = true
			}
		}
	}
	// A column of free text ("Notes") is read to the end for a phrase,
	// even one mapped to a form field: the agent would be given the note.
	// So is the column of a phone number's kind ("Phone 1 - Label", a
	// type_column or the one beside a phone column): Google Contacts'
	// label is the person's own text for that number ("Mobile (do not
	// call)"), not a kind callrun reads.
	labels := map[int]bool{}
	for _, p := range m.phones {
		if p.typeCol >= 0 {
			labels[p.typeCol] = true
		}
		if p.col >= 0 && p.col < len(m.header) {
			if t := typeColumnOf(m.header, p.col); t >= 0 {
				labels[t] = true
			}
		}
	}
	for c, h := range m.header {
		if !m.tracked[c] && h != "" && (isNotesHeader(h) || labels[c]) {
			m.signals = append(m.signals, &signalColumn{col: c, name: h, kind: signalValues, found: "header", notes: true})
			m.tracked[c] = true
		}
	}
}

// readsWhole reports whether the pass before any contact is judged must
// read sheet m to its end: it maps a signal column, or has a column
// whose header reads as a do-not-call flag, as consent, or as labels,
// tags or a status: a label "Do not call" on its last row holds its
// number on the first; or its workbook has comments on its cells, one of
// which may mention do not call on any row. A sheet with none is read so
// only when its first rows say do not call in a column
// ([sheetMap.anySaid]).
func (m *sheetMap) readsWhole() bool {
	return len(m.signals) > 0 || m.comments != nil
}

// flagDoNotCall suppresses c when one of its sheet's do-not-call columns
// says do not call, or the title of its group of rows does, whatever else
// is wrong with the row: nobody the CRM marks do not call is called, and
// a row never to be called needs no fixing. A row to call whose consent
// cell withdraws consent is suppressed too (one already invalid stays
// so), and so is one whose do-not-call cell reads neither yes nor no, or
// whose cell in a column the campaign does not map says do not call:
// callrun cannot tell what the person asked, so it does not call them.
// It reports whether c was suppressed.
func (cr *ContactReader) flagDoNotCall(c *Contact, m *sheetMap, rec sheet.Record) bool {
	fields := rec.Fields
	rs := m.signalRow(rec)
	if rs.flag != nil {
		c.Status, c.Field, c.Column = Suppressed, "", ""
		c.DoNotCallColumn = rs.flag.name
		c.Reason = fmt.Sprintf("column %q says %q: the contact is marked do not call", rs.flag.name, strings.TrimSpace(rs.flagCell))
		if rs.flag.kind == signalStatus {
			c.Reason = fmt.Sprintf("the consent's status column %q says %q: the contact %s consent to be called", rs.flag.name, strings.TrimSpace(rs.flagCell), withdrewConsent(rs.flagCell))
		}
		return true
	}
	if rs.group != nil {
		c.Status, c.Field, c.Column = Suppressed, "", ""
		c.DoNotCallGroup, c.Reason = rs.group.group.Title, rs.group.reason()
		return true
	}
	if c.Status != "" {
		return false
	}
	if cell, ok := m.consentWithdrawn(fields); ok {
		c.Status = Suppressed
		c.DoNotCallColumn = m.consentName
		c.Reason = fmt.Sprintf("consent column %q says %q: the contact %s consent to be called", m.consentName, cell, withdrewConsent(cell))
		return true
	}
	if rs.held != nil {
		c.Status, c.Reason = Suppressed, rs.heldReason()
		return true
	}
	if rs.commented {
		c.Status, c.Reason = Suppressed, commentReason(rs.comment)
		return true
	}
	if g := rs.groupHeld; g != nil {
		c.Status, c.DoNotCallGroup = Suppressed, g.group.Title
		c.Reason = fmt.Sprintf("the row is in the group %q (its title in row %d), whose title mentions do not call without saying it: no row of the group is called until the title says which (title it \"Do Not Call\" if it means it; else without the phrase)", g.group.Title, g.group.Row)
		return true
	}
	return false
}

// sheetRead keeps, once sheet i is read, what its signal columns said,
// for plan, and tells cr.SheetNote of the cells of its do-not-call
// columns that read neither yes nor no and of the cells that mention a
// do-not-call phrase without saying it.
func (cr *ContactReader) sheetRead(i int, m *sheetMap) {
	signals := m.planSignals()
	cr.signals[i] = signals
	if cr.SheetNote == nil {
		return
	}
	file := cr.f.Sheets[i].File
	for _, s := range signals {
		if s.Kind == "consent_status" && s.Unclear > 0 {
			cr.SheetNote(i, fmt.Sprintf("sheet %s: %d cell(s) of the consent's status column %q read neither as opted in, opted out nor neither (%s), and their rows are not called, nor any row with their number; write OptIn where the person consented to be called, OptOut where they opted out",
				file, s.Unclear, s.Column, s.UnclearAt))
		} else if s.Use == "mapped" && s.Unclear > 0 {
			cr.SheetNote(i, fmt.Sprintf("sheet %s: %d cell(s) of the do-not-call column %q say neither yes nor no (%s), and their rows are not called; write 1 or yes where the contact is not to be called, 0 or no where they may be",
				file, s.Unclear, s.Column, s.UnclearAt))
		}
		switch {
		case s.Kind == "comments":
			cr.SheetNote(i, fmt.Sprintf("sheet %s: %d comment(s) on the cells of its rows mention do not call (%s), and their rows are not called, nor any row with their number, until a person reads them: where the person may be called, delete the comment or write it without the phrase",
				file, s.Mentions, s.MentionAt))
		case s.Kind == "group" && s.Use == "held":
			cr.SheetNote(i, fmt.Sprintf("sheet %s: the title of a group of rows mentions a do-not-call phrase without being one (%s), and its %d row(s) are not called until it says which: where it means do not call, title the group so (\"Do Not Call\"); else title it without the phrase",
				file, s.MentionAt, s.Mentions))
		case s.Mentions > 0 && s.Use != "ignored":
			cr.SheetNote(i, fmt.Sprintf("sheet %s: %d cell(s) of column %q mention a do-not-call phrase without being one (%s), and their rows are not called until each says which: where one means do not call, name it under do_not_call: values:; else write the cell without the phrase",
				file, s.Mentions, s.Column, s.MentionAt))
		}
	}
}

// Signals returns what the contact reader read of sheet i's signal
// columns, once it has read the sheet: plan shows them.
func (cr *ContactReader) Signals(i int) []PlanSignal { return cr.signals[i] }

// DoNotCallHeader reports whether a column's header says it flags a
// contact not to be called, in any of the table's languages: do not call,
// DNC, DND, Nicht anrufen, Do Not Text, a block list (SMS_BLACKLISTED), an
// opt-out of calls or texts (texts go to the same number), or consent to
// be called withdrawn or refused ("Consent Revoked", "Call Consent
// Refused", "Revoked"). A flag of another channel alone (Salesforce's
// "Email Opt Out", "DND Email", Brevo's EMAIL_BLACKLISTED) is not one, nor
// a column about the flag ("Do Not Call Reason", "DNC Date": see
// [doNotCallAboutHeader]). init maps such columns, and plan and run stop
// on those a campaign neither maps nor ignores.
func DoNotCallHeader(h string) bool {
	w, t := words(), readHeaderWords(h)
	return !t.has(w.details) && !t.has(w.dates) && headerSaysDoNotCall(w, t)
}

// doNotCallAboutHeader reports whether a column's header names the date
// or the reason of a do-not-call flag or of consent withdrawn ("DNC
// Date", "Do Not Call Reason", "Consent Withdrawal Date", "Call Opt-Out
// Date"): a cell is set there only on a row that is flagged, so a sheet
// with no flag column of its own is read by it (init maps it, and plan
// and run stop on it until the campaign maps or ignores it).
func doNotCallAboutHeader(h string) bool {
	w, t := words(), readHeaderWords(h)
	return (t.has(w.details) || t.has(w.dates)) && headerSaysDoNotCall(w, t)
}

// headerSaysDoNotCall reports whether header t names a do-not-call flag,
// its date or reason aside ([DoNotCallHeader]).
func headerSaysDoNotCall(w *signalWords, t header) bool {
	if t.joined == "" {
		return false
	}
	calls := t.has(w.calls) || t.has(w.texts)
	switch {
	case t.has(w.dnc) || t.has(w.blocked):
		return calls || !t.has(w.other)
	case t.has(w.optOut) || t.has(w.notAllowed):
		return calls
	case t.has(w.withdrawnHeader) || t.has(w.deniedHeader):
		if t.has(w.other) && !calls {
			return false // "Email Consent Withdrawn"
		}
		alone := !slices.ContainsFunc(t.words, func(x string) bool { return !slices.Contains(w.withdrawnHeader, x) })
		return calls || alone || t.has(w.consentHeader) || t.has(w.optIn)
	}
	return false
}

// guessDoNotCall returns the columns of header, not in used, that init
// maps under do_not_call:: those whose header reads as a do-not-call flag
// (or, when none does, as its date or reason), and those whose cells in
// rows say do not call (Google's "Labels", a status or a tag "Do not
// call"), each with the values that said it.
func guessDoNotCall(header []string, rows [][]string, used map[string]bool) []DoNotCallColumn {
	var cols, about []DoNotCallColumn
	flag := false
	for c, h := range header {
		if h == "" || used[h] {
			continue
		}
		if DoNotCallHeader(h) {
			cols, flag = append(cols, DoNotCallColumn{Column: h}), true
			continue
		}
		if doNotCallAboutHeader(h) {
			about = append(about, DoNotCallColumn{Column: h})
			continue
		}
		s := &signalColumn{col: c, name: h, kind: signalValues}
		for k, r := range rows {
			if c < len(r) {
				says, tag := s.read(r[c])
				s.note(k+2, says, r[c], tag)
			}
		}
		if s.yes > 0 {
			cols = append(cols, DoNotCallColumn{Column: h, Values: s.matched})
		}
	}
	if !flag {
		cols = append(cols, about...) // as watchHeaders reads them
	}
	return cols
}

// doNotCallYAML writes init's do_not_call: value for cols: the list form
// when a column has values, else {column: X} or {columns: [...]}.
func doNotCallYAML(cols []DoNotCallColumn) string {
	quote := func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = fmt.Sprintf("%q", s)
		}
		return strings.Join(q, ", ")
	}
	if slices.ContainsFunc(cols, func(c DoNotCallColumn) bool { return len(c.Values) > 0 }) {
		items := make([]string, len(cols))
		for i, c := range cols {
			items[i] = fmt.Sprintf("{column: %q}", c.Column)
			if len(c.Values) > 0 {
				items[i] = fmt.Sprintf("{column: %q, values: [%s]}", c.Column, quote(c.Values))
			}
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	if len(cols) == 1 {
		return fmt.Sprintf("{column: %q}", cols[0].Column)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Column
	}
	return "{columns: [" + quote(names) + "]}"
}

// FlaggedNumber is a number a do_not_call: column of the campaign's
// sheets marks do not call, or the title of its row's group does, or
// whose consent cell says consent was withdrawn ([ConsentRevoked]), in
// the row's phone_number or in another of its columns of numbers
// ([otherPhones]): the first row that does, in sheet order.
// Every row with the number is suppressed, and a run puts it on the
// store's do-not-call list. With Unclear, the row's do-not-call cell
// reads neither yes nor no: every row with the number is suppressed, but
// it goes on no list.
type FlaggedNumber struct {
	Number  string // E.164
	Sheet   int    // index in File.Sheets
	Row     int
	Column  string // the do_not_call: column, or the consent column
	Cell    string // its cell, as written
	Consent bool   // Column is the consent column: the cell withdraws consent
	Unclear bool   // the cell reads neither yes nor no
	// Group is, for a row of a group of rows whose title says do not
	// call, the title (Column and Cell are empty), and GroupRow the
	// title's row.
	Group    string
	GroupRow int
	// Phone is, for a number of the row's other columns of numbers than
	// its phone_number ("Mobile"), that column's header; empty for a
	// number of its phone_number.
	Phone string

	// Comment is, for a row held for a comment on one of its cells that
	// mentions do not call ([sheetMap.commentRow]), the cell ("B3"), and
	// Cell the comment's text (Column is empty; Unclear is set).
	Comment string
	// Unaligned is, for a number held because a row of a sheet with
	// do-not-call columns holds it and cannot be lined up with the
	// header ([ContactReader.holdUnaligned]), why ("has 5 fields but the
	// header has 4 ..."); Unclear is set.
	Unaligned string
}

// rowFlag returns the first cell of a row that asks not to call its
// number, as rs and the row's fields say: a do_not_call: column that
// says do not call, else the title of the row's group that says it, else
// a consent cell that withdraws consent, else a do_not_call: cell that
// reads neither yes nor no, a note that mentions do not call or a comment
// on a cell of the row that does (Unclear).
// ok is false when there is none.
func rowFlag(m *sheetMap, rs rowSignal, fields []string) (fl FlaggedNumber, ok bool) {
	withdrawn, revoked := "", false
	if rs.flag == nil && rs.group == nil {
		withdrawn, revoked = m.consentWithdrawn(fields)
	}
	switch {
	case rs.flag != nil:
		return FlaggedNumber{Column: rs.flag.name, Cell: strings.TrimSpace(rs.flagCell), Consent: rs.flag.kind == signalStatus}, true
	case rs.group != nil:
		return FlaggedNumber{Group: rs.group.group.Title, GroupRow: rs.group.group.Row}, true
	case revoked:
		return FlaggedNumber{Column: m.consentName, Cell: withdrawn, Consent: true}, true
	case rs.held != nil && rs.held.holdsNumber(rs.heldSays):
		return FlaggedNumber{Column: rs.held.name, Cell: strings.TrimSpace(rs.heldCell), Unclear: true}, true
	case rs.commented:
		return FlaggedNumber{Comment: rs.comment.Cell, Cell: commentSaid(rs.comment.Text), Unclear: true}, true
	case rs.groupHeld != nil:
		return FlaggedNumber{Group: rs.groupHeld.group.Title, GroupRow: rs.groupHeld.group.Row, Unclear: true}, true
	}
	return FlaggedNumber{}, false
}

// FlagPass is what the pass over the campaign's sheets before any
// contact is judged ([File.ReadFlagged]) found.
type FlagPass struct {
	// Flagged are the numbers flagged, by phoneKey (the entries' Number
	// left empty).
	Flagged map[uint64]FlaggedNumber
	// Unread is the first error that kept a sheet the pass reads to its
	// end from being read so: the flags after it are not known.
	Unread *sheet.Error
	// Signals are, by sheet, the signal columns the pass read and what
	// they said.
	Signals [][]PlanSignal
	// Unnumbered are the first [maxUnnumbered] phone cells of flagged
	// rows that read as no number at all though they hold a number's
	// digits ([unnumbered]), in sheet order; UnnumberedCells counts them
	// all, by sheet. Whom such a row asks not to call is unknown, so run
	// stops ([Suppression.SignalProblems]).
	Unnumbered      []UnnumberedFlag
	UnnumberedCells []int
	// spools are, by sheet, the records of each sheet the pass read to
	// its end, for the contact reader; nil for another.
	spools []*rowSpool
}

// ReadFlagged reads, before any contact is judged, every sheet's signal
// columns ([sheetMap.signalRow]): the numbers of the rows whose
// do_not_call: column says do not call (or reads neither yes nor no), or
// whose consent column says consent was withdrawn, each number in the
// row's phone columns that reads, as the row's call would read it, as a
// number the campaign calls, and every number the cells of its other
// columns of numbers may mean ([otherPhones]); and what each signal column the campaign
// does not map says; and the phone cells of those rows that hold five
// digits or more and read as no number at all (FlagPass.Unnumbered),
// whose person callrun cannot keep from being called on another row. It
// reads a sheet whole when it maps a signal column
// or has one found by its header ([sheetMap.readsWhole]) or its first
// rows say do not call in one; else only its first rows. It reads every
// sheet whole, shard or not, but reads the number of flagged rows only. A
// sheet that cannot be read to its end (not UTF-8, a row that never ends)
// gives the numbers of the rows before it. It keeps the records of a
// sheet it reads to its end (FlagPass' rowSpool), which the contact
// readers read rather than parse the sheet again. LoadSuppression calls
// it.
func (f *File) ReadFlagged(ctx context.Context) (*FlagPass, error) {
	fp := &FlagPass{Flagged: map[uint64]FlaggedNumber{}, Signals: make([][]PlanSignal, len(f.Sheets)), UnnumberedCells: make([]int, len(f.Sheets)), spools: make([]*rowSpool, len(f.Sheets))}
	cr := f.NewContactReader(nil)
	for i := range f.Sheets {
		se, err := cr.readFlagged(ctx, i, fp)
		if err != nil {
			return nil, fmt.Errorf("sheet %s: %w", f.Sheets[i].File, err)
		}
		if fp.Unread == nil {
			fp.Unread = se
		}
	}
	return fp, nil
}

// errSampled stops the pass over a sheet whose first rows showed no
// signal column to read on.
var errSampled = errors.New("the first rows say nothing of do not call")

// readFlagged adds the flagged numbers and the signal columns of sheet i
// to fp, and returns the error that kept it from reading the sheet to its
// end, if any.
func (cr *ContactReader) readFlagged(ctx context.Context, i int, fp *FlagPass) (*sheet.Error, error) {
	spec := &cr.f.Sheets[i]
	// The records are kept for the contact reader as they are read, once
	// they are known to be read to the end of the sheet or the first rows
	// read on: the workers encode them, and they are kept with the stamp
	// of the bytes the reader parsed.
	spool := &spoolWriter{}
	r, m, err := cr.f.openSheet(i)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sheetReadings.Add(1)
	whole := m.readsWhole()
	others := &otherPhones{}
	split := &splitRow{}
	encode := func(b *rowBatch, _ *rowScratch) {
		b.spooled, b.spoolable = encodeRecords(b.spooled[:0], b.recs)
	}
	// The sheet is read on one goroutine while its rows are read here.
	err = cr.judgeInOrder(ctx, r, len(m.phones), encode, func(b *rowBatch) error {
		for _, rec := range b.recs {
			if err := cr.flagRow(i, spec, m, rec, fp, &whole, others, split); err != nil {
				return err
			}
		}
		spool.write(b.spooled, b.spoolable)
		return nil
	})
	// The flagged rows among a sheet's first rows, when it has fewer
	// than a sample's, or the pass stopped among them.
	cr.choosePhones(i, spec, m, fp, others)
	fp.Signals[i] = m.planSignals()
	if err == nil {
		fp.spools[i] = spool.finish(r)
	} else {
		spool.discard()
	}
	if errors.Is(err, errSampled) {
		return nil, nil
	}
	var se *sheet.Error
	if errors.As(err, &se) {
		if !whole && !m.anySaid() {
			return nil, nil // a sheet read for its first rows only: the contact reader tells of it
		}
		return se, nil
	}
	return nil, err
}

// flagRow adds to fp the numbers of record rec of sheet i when its
// signal columns or its group flag it, those of its other columns of
// numbers too (once others has chosen them), reading the sheet whole from then
// on when they do; it returns errSampled when the sheet's first rows
// showed no signal column to read on.
func (cr *ContactReader) flagRow(i int, spec *SheetSpec, m *sheetMap, rec sheet.Record, fp *FlagPass, whole *bool, others *otherPhones, split *splitRow) error {
	flagged := false
	defer func() { split.keep(m, rec, flagged) }()
	if rec.Err == nil {
		cr.holdSplit(i, spec, m, split, rec, fp)
	}
	if rec.Err != nil {
		if rec.Refused == nil {
			return nil
		}
		if len(rec.Refused) != len(m.header) {
			// More fields than the header: which cell is the flag's
			// is unknown, so every number the row holds is held.
			if len(m.signals) > 0 {
				cr.holdUnaligned(i, spec, rec, fp)
			}
			return nil
		}
		// A row invalid for a NUL byte in a cell, its fields read: it is
		// not called, but what it says against calling its number holds
		// for the number's other rows.
		rec.Fields, rec.Err = rec.Refused, nil
	}
	if !others.chosen {
		others.sample = append(others.sample, sheet.Record{Row: rec.Row, Fields: padFields(slices.Clone(rec.Fields), len(m.header))})
		if len(others.sample) == suppressionSample {
			defer cr.choosePhones(i, spec, m, fp, others) // once this row is read, flagged or not
		}
	}
	rs := m.signalRow(rec)
	// A sheet whose rows are in groups is read whole: a group's
	// title may say do not call at any row.
	*whole = *whole || rec.Group != nil
	if !*whole && m.sampleRows == 0 {
		if !m.anySaid() {
			return errSampled
		}
		*whole = true
	}
	fl, ok := rowFlag(m, rs, rec.Fields)
	if !ok {
		return nil
	}
	flagged = true
	rules, anyCountry, country, _ := cr.rowRules(i, m, rec.Fields)
	// Every phone column, those a call passes over (a fax, a type
	// cell's pager) too.
	for _, p := range m.phones {
		raw := strings.TrimSpace(rec.Fields[p.col])
		if raw == "" {
			continue
		}
		read := false
		ph, err := cr.readPhone(raw, spec, rules, anyCountry, country)
		numbers := []string{ph.E164}
		if err != nil {
			// A cell its own call cannot use whole (several numbers,
			// an extension) still names whom not to call: every
			// number it may mean, each of a list included, as a
			// suppression file's entry does.
			regions := cr.flagRegions(spec, country)
			numbers = phone.Readings(raw, regions)
		}
		for _, e164 := range numbers {
			read = fp.flag(phoneKey(e164), i, rec.Row, fl) || read
		}
		if !read && unnumbered(raw) {
			fp.addUnnumbered(i, rec.Row, fl, p.name, raw)
		}
	}
	if !others.chosen {
		others.pending = append(others.pending, pendingFlag{at: len(others.sample) - 1, fl: fl})
		return nil
	}
	cr.flagOtherPhones(i, spec, m, rec, fl, fp, others)
	return nil
}

// splitRow is the row before the one the pass over a sheet reads, when
// it may be the first part of a row that line breaks inside a field not
// in quotes split (an export that does not quote a note written on two
// lines, or in paragraphs): it ends before the header's last column, and
// its own signal cells flag nothing. The lines read after it that may be
// the rest of it are joined to it, up to maxSplitLines, until they reach
// the header's last column or a signal column says something.
type splitRow struct {
	ok    bool
	row   int // the first part's
	last  int // the row of the last line joined to it, row when none is
	group *sheet.Group
	// fields are the first part's up to its last field that is not
	// empty, with the lines joined to it so far.
	fields []string
	// lastCol is the first part's last column: the field the line
	// breaks are in.
	lastCol int
	lines   int
	// joined: the row read now was joined to fields (holdSplit), and
	// may go on in the next.
	joined bool
}

// maxSplitLines bounds the lines a split row is read over: a note of
// that many paragraphs.
const maxSplitLines = 10

// keep remembers rec for the row after it, when rec may be the first part
// of a split row: it is not flagged (a flagged row holds its numbers
// already), and it has no field past some column of the header, a signal
// column among those (a row that reaches every signal column cannot lose
// its flag to a split). When rec was joined to the split row before it,
// that row is kept instead, while it still may go on.
func (sp *splitRow) keep(m *sheetMap, rec sheet.Record, flagged bool) {
	joined := sp.joined
	sp.joined = false
	if joined {
		n := len(sp.fields)
		sp.ok = sp.lines < maxSplitLines && slices.ContainsFunc(m.signals, func(s *signalColumn) bool { return s.col >= n-1 })
		return
	}
	sp.ok = false
	if rec.Err != nil || flagged {
		return
	}
	n := filledFields(rec.Fields)
	if n == 0 || !slices.ContainsFunc(m.signals, func(s *signalColumn) bool { return s.col >= n-1 }) {
		return
	}
	sp.ok, sp.row, sp.last, sp.group, sp.lastCol, sp.lines = true, rec.Row, rec.Row, rec.Group, n-1, 1
	sp.fields = append(sp.fields[:0], rec.Fields[:n]...)
}

// filledFields is how many of fields there are up to the last that is
// not empty.
func filledFields(fields []string) int {
	n := len(fields)
	for n > 0 && strings.TrimSpace(fields[n-1]) == "" {
		n--
	}
	return n
}

// holdSplit holds the numbers of the row before rec (sp) when the two
// read as one row split by a line break inside a field that is not in
// quotes, and read so they say do not call: the first part ends before
// the header does, rec (the next row read: blank lines between are a
// paragraph break, which the CSV reader skips) is no contact of its own
// (no phone cell of it reads as a number) and its fields fit in the
// columns the first part lacks, and lined up there, after the first
// part's last field and the line break, a signal column says do not
// call, reads neither yes nor no or mentions it. The CSV reader takes
// such a line break for the end of a row, so the first part was read
// with its do-not-call cell empty, a no: its person was called. Whether
// the two are one row cannot be known, so the first part's numbers are
// held, as those of a row whose cells do not line up with the header,
// and the reason says which rows to fix. When the two say nothing yet
// and still end before the header does, rec is joined to sp, and the
// next row is read as its rest in turn (a note of several lines).
func (cr *ContactReader) holdSplit(i int, spec *SheetSpec, m *sheetMap, sp *splitRow, rec sheet.Record, fp *FlagPass) {
	if !sp.ok || rec.Row <= sp.last || rec.Group != sp.group {
		return
	}
	first, rest := sp.fields, rec.Fields[:filledFields(rec.Fields)]
	w := len(m.header)
	if len(rest) == 0 || len(first)-1+len(rest) > w {
		return
	}
	rules, anyCountry, country, _ := cr.rowRules(i, m, rec.Fields)
	for _, p := range m.phones {
		if raw := strings.TrimSpace(rec.Fields[p.col]); raw != "" {
			if _, err := cr.readPhone(raw, spec, rules, anyCountry, country); err == nil {
				return // a row of its own
			}
		}
	}
	joined := make([]string, w)
	copy(joined, first)
	joined[len(first)-1] += strings.Repeat("\n", rec.Row-sp.last) + rest[0]
	copy(joined[len(first):], rest[1:])
	for _, s := range m.signals {
		if s.col < len(first)-1 {
			continue // read in the first part already
		}
		says, _ := s.read(joined[s.col])
		if says == saysNothing {
			continue
		}
		rows := fmt.Sprintf("row %d", rec.Row)
		if rec.Row > sp.row+1 {
			rows = fmt.Sprintf("rows %d-%d", sp.row+1, rec.Row)
		}
		why := fmt.Sprintf("may go on in %s, split from it by a line break inside column %q, which is not in quotes (put the field in quotes, or remove the line break), and read as one row, column %q says %q",
			rows, m.header[sp.lastCol], s.name, strings.TrimSpace(joined[s.col]))
		fl := FlaggedNumber{Unclear: true, Unaligned: why}
		_, _, firstCountry, _ := cr.rowRules(i, m, padFields(slices.Clone(first), w))
		regions := cr.flagRegions(spec, firstCountry)
		for _, p := range m.phones {
			if p.col > sp.lastCol {
				continue // past the first part: lines joined to it
			}
			if raw := strings.TrimSpace(first[p.col]); raw != "" {
				for _, e164 := range phone.Readings(raw, regions) {
					fp.flag(phoneKey(e164), i, sp.row, fl)
				}
			}
		}
		return
	}
	// Nothing said yet: the next row may be more of it.
	sp.fields = append(sp.fields[:0], joined[:filledFields(joined)]...)
	sp.last, sp.joined = rec.Row, true
	sp.lines++
}

// holdUnaligned holds every number a cell of rec holds, rec a row of
// sheet i (whose columns say do not call) with more fields than its
// header: whether its flag says do not call cannot be read, since its
// cells do not line up with the columns, and the row is not called
// itself; the number's other rows wait until it is fixed.
func (cr *ContactReader) holdUnaligned(i int, spec *SheetSpec, rec sheet.Record, fp *FlagPass) {
	why := "cannot be lined up with the header"
	var se *sheet.Error
	if errors.As(rec.Err, &se) {
		why = se.Msg
	}
	regions := cr.flagRegions(spec, "")
	for _, cell := range rec.Refused {
		if cell = strings.TrimSpace(cell); cell == "" {
			continue
		}
		for _, e164 := range phone.Readings(cell, regions) {
			fp.flag(phoneKey(e164), i, rec.Row, FlaggedNumber{Unclear: true, Unaligned: why})
		}
	}
}

// flagRegions are the regions a flagged row's number is read in, as a
// suppression file's entry is: the row's country (country, "" when the
// row names none), else the sheet's region, else the campaign's, then
// those of the campaign's suppression files.
func (cr *ContactReader) flagRegions(spec *SheetSpec, country string) []string {
	return append([]string{cmp.Or(country, spec.Region, cr.f.Region)}, cr.f.suppressionRegions()...)
}

// otherPhones are, for the pass over a sheet before any contact is
// judged ([ContactReader.readFlagged]), the sheet's columns of numbers
// beside its phone_number columns ("Mobile", "Home Phone", "Other
// Phone"), chosen as a suppression file's are ([numberColumns]: by their
// header and their first rows): a flagged row holds the numbers of those
// too, since they are the same person's. Until the sheet's first rows
// are read the columns are not known, so those rows are kept (sample),
// with the flagged ones among them (pending); both are dropped once the
// columns are chosen. Nothing of another row is kept.
type otherPhones struct {
	chosen  bool
	sample  []sheet.Record
	pending []pendingFlag
	srcs    []*numberSource
}

// pendingFlag is a flagged row among a sheet's first rows: its index in
// otherPhones.sample and its flag.
type pendingFlag struct {
	at int
	fl FlaggedNumber
}

// padFields returns fields with empty cells added up to n: a row shorter
// than the header has nothing in the columns it lacks.
func padFields(fields []string, n int) []string {
	for len(fields) < n {
		fields = append(fields, "")
	}
	return fields
}

// choosePhones chooses sheet i's other columns of numbers from the first
// rows others kept, once, and holds the numbers of the flagged rows
// among them.
func (cr *ContactReader) choosePhones(i int, spec *SheetSpec, m *sheetMap, fp *FlagPass, others *otherPhones) {
	if others.chosen {
		return
	}
	others.chosen = true
	srcs := numberColumns(m.header, false, others.sample, cr.f.suppressionRegions())
	// A column the first rows leave empty is read when its header names
	// a line of the person's own ("Work Number", Brevo's SMS): a later
	// row may hold a number there.
	for c, h := range m.header {
		if !slices.ContainsFunc(srcs, func(s *numberSource) bool { return s.col == c }) && emptyIn(others.sample, c) && personsLineHeader(h) {
			srcs = append(srcs, newNumberSource(m.header, false, c, false))
		}
	}
	for _, src := range srcs {
		phoneCol := func(p phoneCol) bool { return p.col == src.col || p.typeCol == src.col }
		if m.tracked[src.col] || slices.ContainsFunc(m.phones, phoneCol) {
			continue // a signal column, or a phone_number column: read above
		}
		if !personsLineHeader(m.header[src.col]) {
			continue // a company's, a fax's, an assistant's, or an id's: maybe another's number
		}
		others.srcs = append(others.srcs, src)
	}
	for _, p := range others.pending {
		cr.flagOtherPhones(i, spec, m, others.sample[p.at], p.fl, fp, others)
	}
	others.sample, others.pending = nil, nil
}

// emptyIn reports whether column c is empty in every record of sample.
func emptyIn(sample []sheet.Record, c int) bool {
	for _, rec := range sample {
		if rec.Err == nil && c < len(rec.Fields) && strings.TrimSpace(rec.Fields[c]) != "" {
			return false
		}
	}
	return true
}

// personsLineHeader reports whether a column's header names a phone line
// of the person's own (Mobile, Home Phone, Other Phone, Work Phone, and
// Business Phone or Office Phone, Outlook's, Dynamics 365's and Close's
// names for the person's work line; the number texts are sent to,
// Brevo's SMS: [smsLineHeader]): not a company's (Company Phone,
// Company Main Phone, Main Phone), a fax, a pager or an assistant's,
// whose number may be another person's, nor a column whose header names
// no phone line (an id whose values read as numbers). Only those columns'
// numbers a flagged row holds beside its phone_number's.
func personsLineHeader(h string) bool {
	if !(phoneLineHeader(h) || ownNumberHeader(h) || smsLineHeader(h)) || hasWord(h, lineCompanyOnlyWords) {
		return false
	}
	switch kind, _ := phoneLineKind(h); kind {
	case lineNotDialled, lineCompanyMain:
		return false
	}
	return true
}

// smsLineHeader reports whether a header names the number texts are
// sent to, and nothing else: Brevo's SMS attribute, its contact's mobile
// number ("To import the phone number of a contact you want to send SMS
// to, use the SMS attribute",
// https://help.brevo.com/hc/en-us/articles/208729849), an "SMS Number":
// the person's own mobile, whose header has no phone word. Not a column
// about the texts ([smsNumbers]: "SMS Consent", SMS_BLACKLISTED, "SMS
// Opt In") nor one with another word ("SMS Sender ID", "Last SMS").
func smsLineHeader(h string) bool {
	if !smsNumbers(h) {
		return false
	}
	for _, w := range headerWords(h) {
		if strings.Trim(w, "0123456789") != "" && !slices.Contains(lineMobileWords, w) && !slices.Contains(strongPhoneWords, w) && !slices.Contains(phoneFillerWords, w) {
			return false
		}
	}
	return true
}

// ownNumberHeader reports whether a header names a number of the
// person's own line without a phone word: "Work Number", "Home Number",
// "Mobile No.", "Other Number" (Freshsales' and phone systems' exports).
// Every word is a number's or such a line's, and there is one of each: a
// "Business Number" (a company's registration) or a "Car Number" is not.
func ownNumberHeader(h string) bool {
	number, line := false, false
	for _, w := range headerWords(h) {
		switch {
		case slices.Contains([]string{"number", "no", "nr", "num", "nummer", "numero"}, w):
			number = true
		case slices.Contains([]string{"home", "private", "privat", "personal", "work", "other", "alternate", "secondary", "additional"}, w) ||
			slices.Contains(lineMobileWords, w):
			line = true
		case strings.Trim(w, "0123456789") == "":
		default:
			return false
		}
	}
	return number && line
}

// lineCompanyOnlyWords are the words of lineCompanyWords that name the
// company and not the person's desk: "business" and "office" name either
// ("Business Phone" is the person's own in Outlook and Dynamics 365, a
// "Business Main Phone" the company's, which phoneLineKind tells).
var lineCompanyOnlyWords = slices.DeleteFunc(slices.Clone(lineCompanyWords), func(w string) bool { return w == "business" || w == "office" })

// flagOtherPhones adds to fp every number the cells of record rec's
// other columns of numbers ([otherPhones]) may mean, read as a
// suppression file's entry is ([numberSource.readings]), flagged by fl
// as its phone_number's numbers are. A cell of such a column whose header
// names a phone line ([phoneLineHeader]) that holds five digits or more
// and reads as no number is unnumbered ([FlagPass.Unnumbered]), as a
// phone_number cell is; one of a column chosen by its values alone is
// passed over.
func (cr *ContactReader) flagOtherPhones(i int, spec *SheetSpec, m *sheetMap, rec sheet.Record, fl FlaggedNumber, fp *FlagPass, others *otherPhones) {
	if len(others.srcs) == 0 {
		return
	}
	fields := padFields(rec.Fields, len(m.header))
	_, _, country, _ := cr.rowRules(i, m, fields)
	regions := cr.flagRegions(spec, country)
	for _, src := range others.srcs {
		cell, numbers, empty := src.readings(fields, regions)
		if empty {
			continue
		}
		fl.Phone = m.header[src.col]
		for _, e164 := range numbers {
			fp.flag(phoneKey(e164), i, rec.Row, fl)
		}
		if len(numbers) == 0 && unnumbered(cell) && phoneLineHeader(m.header[src.col]) {
			fp.addUnnumbered(i, rec.Row, fl, m.header[src.col], cell)
		}
	}
}

// flag records that sheet i's row flags the number whose phoneKey is key,
// as fl says: the first row that flags it, but a yes over a cell that
// reads neither.
func (fp *FlagPass) flag(key uint64, i, row int, fl FlaggedNumber) bool {
	if key == 0 {
		return false
	}
	if was, ok := fp.Flagged[key]; !ok || (was.Unclear && !fl.Unclear) {
		fl.Sheet, fl.Row, fl.Cell = i, row, strings.Clone(fl.Cell)
		fp.Flagged[key] = fl
	}
	return true
}

// maxUnnumbered bounds the cells [FlagPass.Unnumbered] keeps: a sheet of
// millions of rows may hold thousands.
const maxUnnumbered = 5

// UnnumberedFlag is a phone cell of a row that asks not to call its
// number ([rowFlag]: a do_not_call: yes, a group's title, a consent
// withdrawn, a do-not-call cell that reads neither yes nor no) which
// holds a number's digits and reads as no number at all, neither as the
// row's call would read it nor as a suppression file's entry is
// ([phone.Readings]). Nothing of the person's number is kept, so another
// row with it could be called.
type UnnumberedFlag struct {
	Flag  FlaggedNumber // the row's flag: Sheet, Row, and Column and Cell or Group
	Phone string        // the phone column
	Cell  string        // its cell, as written
}

// unnumbered reports whether a phone cell that reads as no number holds
// enough digits, five or more, to be a mistyped number ("(212) 555-01O0",
// a letter O for a zero) rather than none ("N/A", "123", "none").
func unnumbered(cell string) bool {
	digits := 0
	for _, r := range cell {
		if unicode.IsDigit(r) {
			if digits++; digits >= 5 {
				return true
			}
		}
	}
	return false
}

// addUnnumbered counts the phone cell of sheet i's row, flagged by fl,
// that reads as no number, and keeps it when it is among the first.
func (fp *FlagPass) addUnnumbered(i, row int, fl FlaggedNumber, column, cell string) {
	fp.UnnumberedCells[i]++
	if len(fp.Unnumbered) < maxUnnumbered {
		fl.Sheet, fl.Row, fl.Cell = i, row, strings.Clone(fl.Cell)
		fp.Unnumbered = append(fp.Unnumbered, UnnumberedFlag{Flag: fl, Phone: column, Cell: strings.Clone(cell)})
	}
}

// flaggedElsewhere suppresses c when its number is one a do_not_call:
// column flags, or a consent cell withdraws consent for, in a row of the
// campaign's sheets ([File.ReadFlagged]): the person asked not to be
// called, whichever row holds them. A row that withdrew consent itself
// and is not called anyway (invalid, when consent is required) is left
// as it is: a withdrawal, its own or another row's, changes nothing for
// it. A number whose do-not-call cell reads neither yes nor no holds the
// rows to call that have it. It reports whether c was suppressed; a nil
// s suppresses nothing.
func (s *Suppression) flaggedElsewhere(c *Contact, f *File) bool {
	if s == nil || c.Phone == "" {
		return false
	}
	fl, ok := s.flagged[phoneKey(c.Phone)]
	if !ok || (fl.Consent && c.Status != "" && ConsentRevoked(c.ConsentCell)) || (fl.Unclear && c.Status != "") {
		return false
	}
	c.Status, c.Field, c.Column = Suppressed, "", ""
	switch {
	case fl.Unaligned != "":
		c.Reason = fmt.Sprintf("the number is in sheet %s, row %d, which %s: whether that row marks it do not call cannot be read, so it is not called until the row is fixed", f.Sheets[fl.Sheet].File, fl.Row, fl.Unaligned)
	case fl.Comment != "":
		c.Reason = fmt.Sprintf("the number's row in sheet %s, row %d, has a comment on cell %s that mentions do not call (%q): it is not called until a person reads the comment", f.Sheets[fl.Sheet].File, fl.Row, fl.Comment, fl.Cell)
	case fl.Unclear:
		c.Reason = fmt.Sprintf("the number's do-not-call cell in sheet %s, row %d (column %q says %q) reads neither yes nor no: it is not called until that cell says yes or no", f.Sheets[fl.Sheet].File, fl.Row, fl.Column, fl.Cell)
	case fl.Consent:
		c.DoNotCallColumn = fl.Column
		c.Reason = fmt.Sprintf("consent to be called was %s in sheet %s, row %d (consent column %q says %q)", consentWithdrawnWord(fl.Cell), f.Sheets[fl.Sheet].File, fl.Row, fl.Column, fl.Cell)
	case fl.Group != "":
		c.DoNotCallGroup = fl.Group
		c.Reason = fmt.Sprintf("the number is in a group of rows whose title says do not call: sheet %s, row %d (in the group %q, its title in row %d)", f.Sheets[fl.Sheet].File, fl.Row, fl.Group, fl.GroupRow)
	default:
		c.DoNotCallColumn = fl.Column
		c.Reason = fmt.Sprintf("the number is marked do not call in sheet %s, row %d (column %q says %q)", f.Sheets[fl.Sheet].File, fl.Row, fl.Column, fl.Cell)
	}
	if fl.Phone != "" {
		c.Reason += fmt.Sprintf(", where it is in the column %q, another number of the person the row flags", fl.Phone)
	}
	return true
}

// flagFilter has a bit for each of a power of two of hashes of phone
// keys, set for the hash of each number the campaign's sheets flag
// ([Suppression.flaggedElsewhere]): a clear bit says, without a look in
// the map of the flagged numbers (far larger than a cache, and asked of
// every row), that a number is not flagged. nil when none is.
type flagFilter struct {
	bits  []uint64
	shift uint
}

// newFlagFilter returns the filter of the numbers of flagged.
func newFlagFilter(flagged map[uint64]FlaggedNumber) *flagFilter {
	if len(flagged) == 0 {
		return nil
	}
	logBits := uint(12)
	for 1<<logBits < 16*len(flagged) && logBits < 32 {
		logBits++
	}
	ff := &flagFilter{bits: make([]uint64, 1<<logBits/64), shift: 64 - logBits}
	for key := range flagged {
		h := ff.hash(key)
		ff.bits[h/64] |= 1 << (h % 64)
	}
	return ff
}

func (ff *flagFilter) hash(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 >> ff.shift }

// mayHave reports whether the E.164 number may be flagged: false when it
// is not.
func (ff *flagFilter) mayHave(e164 string) bool {
	if ff == nil {
		return false
	}
	h := ff.hash(phoneKey(e164))
	return ff.bits[h/64]&(1<<(h%64)) != 0
}

// FlagsUnread returns, when a sheet the pass before any contact is judged
// reads to its end could not be read so, why (a *sheet.Error naming the
// file and row): the flags and withdrawals of the rows after it are not
// known, so any row may hold a number the CRM marks do not call. run
// refuses to call then; plan, status and the report, which call nobody,
// report the sheet's problem as before.
func (s *Suppression) FlagsUnread() error {
	if s.flagsUnread == nil {
		return nil
	}
	return s.flagsUnread
}

// SignalProblems returns the problems of the signal columns the pass
// before any contact is judged found and the campaign neither maps nor
// ignores, though some of their rows say do not call, and of the phone
// cells of flagged rows that read as no number ([FlagPass.Unnumbered]):
// a *FileError, on which run stops before any call, or nil.
func (s *Suppression) SignalProblems(f *File) error {
	var problems []Problem
	for i, signals := range s.signals {
		problems = append(problems, f.signalProblems(i, signals)...)
	}
	problems = append(problems, s.unnumberedProblems(f)...)
	if len(problems) == 0 {
		return nil
	}
	return &FileError{Problems: problems}
}

// unnumberedProblems returns the problems of the phone cells of flagged
// rows that read as no number ([FlagPass.Unnumbered]), which stop plan
// and run; none for a nil s.
func (s *Suppression) unnumberedProblems(f *File) []Problem {
	if s == nil {
		return nil
	}
	return f.unnumberedProblems(s.unnumbered, s.unnumberedCells)
}

// Flagged returns the numbers the sheets' do_not_call: columns flag, and
// those whose consent is withdrawn, in sheet and row order: what a run
// puts on the store's do-not-call list. The numbers held for a cell that
// reads neither yes nor no are not among them.
func (s *Suppression) Flagged() []FlaggedNumber {
	out := make([]FlaggedNumber, 0, len(s.flagged))
	for key, fl := range s.flagged {
		if fl.Unclear {
			continue
		}
		fl.Number = "+" + strconv.FormatUint(key, 10)
		out = append(out, fl)
	}
	slices.SortFunc(out, func(a, b FlaggedNumber) int {
		return cmp.Or(cmp.Compare(a.Sheet, b.Sheet), cmp.Compare(a.Row, b.Row), strings.Compare(a.Number, b.Number))
	})
	return out
}
