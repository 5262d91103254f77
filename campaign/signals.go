package campaign

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/callrun/callrun/campaign/sheet"
)

// signalKind is how a column's cells say that a person is not to be
// called.
type signalKind uint8

const (
	signalFlag    signalKind = iota // yes or no: "Do Not Call", DND, SMS_BLACKLISTED
	signalValues                    // labels, tags, a status: a do-not-call phrase among them
	signalConsent                   // a consent column: a withdrawal
	signalStatus                    // the status of consent (consent.status_column): an opt-out
)

func (k signalKind) String() string {
	switch k {
	case signalValues:
		return "values"
	case signalConsent:
		return "consent"
	case signalStatus:
		return "consent_status"
	}
	return "flag"
}

// signalSampleRows is how many rows of a sheet the contact reader reads
// every cell of for a do-not-call phrase: a column that holds one there
// is read to the end as a column of labels ([signalValues]).
const signalSampleRows = 1000

// signalColumn is a column of a sheet that says, or may say, that a
// person is not to be called, as one pass over the sheet reads it: a
// do_not_call: column, the consent column, or a column the campaign does
// not map that its header or its cells show to be one. The contact
// reader holds one for each, in the sheet's sheetMap.
type signalColumn struct {
	col    int
	name   string
	kind   signalKind
	mapped bool
	// notes: a column of free text found by its header ("Notes"), where
	// a mention of do not call holds its number as a mapped column's
	// does: "customer asked: do not call" is what such a column says.
	notes bool
	// found says how a column the campaign does not map was found: by
	// its header, or by a cell of its first rows.
	found string
	// values are do_not_call: values:, folded: what the column's cells
	// say besides the table's phrases.
	values map[string]bool
	// What the pass read: the rows whose cell says do not call (or
	// withdraws consent), with the first two; the cells that read
	// neither yes nor no, with the first; the cells of free text that
	// mention a do-not-call phrase, with the first; and the values (or
	// tags) that said do not call, as written, for the mapping plan
	// suggests.
	yes, unclear, mentions int
	examples               []string
	unclearAt, mentionAt   string
	matched                []string
	// mentioned are the first cells that mention do not call, as
	// written: in a column of labels the campaign does not map, the
	// values plan proposes to map under do_not_call: values:.
	mentioned []string
	// readCells is what read said of the first maxReadCells distinct cells
	// (each of at most maxReadCellBytes) of a column of labels or notes:
	// an export's tags repeat from row to row, and reading one for its
	// phrases costs more than looking it up.
	readCells map[string]cellRead
}

// cellRead is what [signalColumn.read] said of a cell.
type cellRead struct {
	says cellSays
	tag  string
}

// maxReadCells bounds the cells a signal column keeps what it read of,
// and maxReadCellBytes the length of a cell kept: labels and tags are
// short and repeat; a note (a call's notes, a transcript) does not
// repeat and may run to the sheet reader's bound of megabytes.
const (
	maxReadCells     = 4096
	maxReadCellBytes = 256
)

// read reads a cell of the column: what it says, and for a column of
// labels the tag that said it. A mention of do not call is told in every
// column of labels: one the campaign maps holds its row, as does a
// column of notes; one it does not map (a CRM's "Lead Status" that says
// "Closed - Do not call") holds its row and refuses the campaign until
// it is mapped or ignored, as a flag that reads neither yes nor no does.
// In a column the campaign does not map, as in notes, a word that free
// text uses for other things ("Robinson", "stop") mentions nothing alone.
func (s *signalColumn) read(cell string) (cellSays, string) {
	switch s.kind {
	case signalFlag:
		return readFlagCell(cell), ""
	case signalConsent:
		if ConsentRevoked(cell) {
			return saysYes, ""
		}
		return saysNothing, ""
	case signalStatus:
		return readStatusCell(cell), ""
	}
	if r, ok := s.readCells[cell]; ok {
		return r.says, r.tag
	}
	says, tag := readValueCell(cell, s.values)
	if says == saysNothing && mentionsIn(cell, s.values, s.notes || !s.mapped) {
		says = saysMention
	}
	if len(s.readCells) < maxReadCells && len(cell) <= maxReadCellBytes {
		if s.readCells == nil {
			s.readCells = map[string]cellRead{}
		}
		// A copy: the cell shares its memory with the rest of its row.
		s.readCells[strings.Clone(cell)] = cellRead{says, tag}
	}
	return says, tag
}

// holdsNumber reports whether a row that s holds for what its cell says
// holds its number on every row ([rowFlag]): a mapped column's, and a
// note's mention of do not call. An unmapped column that says do not call
// holds its row, and refuses the campaign.
func (s *signalColumn) holdsNumber(says cellSays) bool {
	return s.mapped || s.notes && says == saysMention
}

// readStatusCell reads a cell of the status of consent as a signal: an
// opt-out or a withdrawal says do not call (saysYes); a yes, a no, a
// status that says consent is neither given nor refused (Seen, NotSeen),
// or an empty cell say nothing; any other word cannot be read
// (saysUnclear), and its row is held.
func readStatusCell(cell string) cellSays {
	c := strings.TrimSpace(cell)
	if c == "" {
		return saysNothing
	}
	if ConsentRevoked(c) {
		return saysYes
	}
	if _, ok := readConsentWord(c); ok {
		return saysNothing
	}
	return saysUnclear
}

// note counts what row's cell says.
func (s *signalColumn) note(row int, says cellSays, cell, tag string) {
	at := func() string { return fmt.Sprintf("row %d: %q", row, strings.TrimSpace(cell)) }
	switch says {
	case saysYes:
		if s.yes++; len(s.examples) < 2 {
			s.examples = append(s.examples, at())
		}
		if tag = strings.TrimSpace(tag); tag != "" && len(s.matched) < 5 && !slices.ContainsFunc(s.matched, func(m string) bool { return strings.EqualFold(m, tag) }) {
			s.matched = append(s.matched, tag)
		}
	case saysUnclear:
		if s.unclear++; s.unclearAt == "" {
			s.unclearAt = at()
		}
	case saysMention:
		if s.mentions++; s.mentionAt == "" {
			s.mentionAt = at()
		}
		if c := strings.TrimSpace(cell); len(s.mentioned) < 5 && !slices.ContainsFunc(s.mentioned, func(m string) bool { return strings.EqualFold(m, c) }) {
			s.mentioned = append(s.mentioned, c)
		}
	}
}

// groupSignal is a group of a sheet's rows under a title of its own
// ([sheet.Group], monday.com's groups) as one pass over the sheet reads
// it: whether its title is a do-not-call phrase of the table (saysYes:
// none of its rows is called, and no mapping is needed, as the title says
// it whole) or mentions one without being one (saysMention: its rows are
// held, not called, until the title says which), and how many rows it
// holds.
type groupSignal struct {
	group    *sheet.Group
	says     cellSays
	rows     int
	examples []string
}

// readGroupTitle reads a group's title as a cell of a column of labels
// is read, but whole: a title is a name, not a list of tags.
func readGroupTitle(title string) cellSays {
	switch {
	case words().phrases[foldString(title)]:
		return saysYes
	case mentionsPhrase(title, nil):
		return saysMention
	}
	return saysNothing
}

// groupOf returns the groupSignal of g, read once for each group: a
// sheet's rows come group after group.
func (m *sheetMap) groupOf(g *sheet.Group) *groupSignal {
	if m.group != nil && m.group.group == g {
		return m.group
	}
	gs := &groupSignal{group: g, says: readGroupTitle(g.Title)}
	m.group = gs
	if gs.says != saysNothing {
		m.groups = append(m.groups, gs)
	}
	return gs
}

// reason is the reason of a row of gs, whose title says do not call.
func (gs *groupSignal) reason() string {
	return fmt.Sprintf("the row is in the group %q (its title in row %d), whose title says do not call: no row of the group is called", gs.group.Title, gs.group.Row)
}

// rowSignal is what a row's signal columns say of it: flag, the first
// do_not_call: column whose cell says do not call, with the cell; group,
// the row's group when its title says do not call; held, else the first
// column whose cell cannot be read (a flag that says neither yes nor no,
// a mapped column of labels whose cell mentions do not call without
// saying it) or that the campaign does not map and that says do not call,
// with the cell; groupHeld, the row's group when its title mentions do
// not call without saying it. All are nil when the row may be called as
// far as its signal columns and its group go.
type rowSignal struct {
	flag, held         *signalColumn
	flagCell, heldCell string
	heldSays           cellSays
	group, groupHeld   *groupSignal
	// comment is the first comment on a cell of the row that says or
	// mentions do not call, when commented.
	comment   sheet.Comment
	commented bool
}

// signalRow reads a record's group and signal columns, counting what each
// says, and returns what they say of the row. While the sheet's first
// rows are read, every other cell is read too, and a column with a cell
// that is a do-not-call phrase becomes a signal column of the sheet, not
// mapped.
func (m *sheetMap) signalRow(rec sheet.Record) rowSignal {
	var rs rowSignal
	row, fields := rec.Row, rec.Fields
	if rec.Group != nil {
		gs := m.groupOf(rec.Group)
		switch gs.rows++; gs.says {
		case saysYes:
			rs.group = gs
			if len(gs.examples) < 2 {
				gs.examples = append(gs.examples, "row "+strconv.Itoa(row))
			}
		case saysMention:
			rs.groupHeld = gs
		}
	}
	for _, s := range m.signals {
		if s.col >= len(fields) {
			continue // a row shorter than the header
		}
		cell := fields[s.col]
		says, tag := s.read(cell)
		if says == saysNothing || ((s.kind == signalStatus || s.kind == signalConsent) && !m.withdrawalCounts(fields)) {
			continue // a status of consent to e-mails says nothing of calls
		}
		s.note(row, says, cell, tag)
		switch {
		case s.mapped && s.kind == signalConsent:
			// The consent column's withdrawal is judged with consent.
		case s.mapped && says == saysYes && rs.flag == nil:
			rs.flag, rs.flagCell = s, cell
		case (says == saysUnclear || says == saysMention || (!s.mapped && says == saysYes)) &&
			(rs.held == nil || !rs.held.holdsNumber(rs.heldSays) && s.holdsNumber(says)):
			rs.held, rs.heldCell, rs.heldSays = s, cell, says
		}
	}
	rs.comment, rs.commented = m.commentRow(row)
	if m.sampleRows > 0 {
		m.sampleRows--
		for c, cell := range fields {
			if c >= len(m.tracked) {
				break // a field past the header's last
			}
			if m.tracked[c] || cell == "" {
				continue
			}
			if says, tag := readValueCell(cell, nil); says == saysYes {
				s := &signalColumn{col: c, name: m.header[c], kind: signalValues, found: "cells"}
				s.note(row, says, cell, tag)
				m.signals = append(m.signals, s)
				m.tracked[c] = true
				if rs.held == nil {
					rs.held, rs.heldCell, rs.heldSays = s, cell, says
				}
			}
		}
	}
	return rs
}

// commentRow returns the first comment on a cell of row that says do
// not call (its whole text a do-not-call phrase) or mentions it, as a
// note does, counting it; ok is false when there is none. A person who
// asked not to be called is often noted so, in a comment on their row.
func (m *sheetMap) commentRow(row int) (c sheet.Comment, ok bool) {
	for _, c := range m.comments.RowComments(row) {
		if says, _ := readValueCell(c.Text, nil); says != saysYes && !mentionsIn(c.Text, nil, true) {
			continue
		}
		if m.commentMentions++; m.commentAt == "" {
			m.commentAt = fmt.Sprintf("row %d, cell %s: %q", row, c.Cell, commentSaid(c.Text))
		}
		return c, true
	}
	return sheet.Comment{}, false
}

// maxCommentSaid bounds the characters of a comment a reason quotes.
const maxCommentSaid = 200

// commentSaid is a comment's text as a reason quotes it: its spaces and
// line breaks run together, at most [maxCommentSaid] characters.
func commentSaid(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > maxCommentSaid {
		text = string(r[:maxCommentSaid]) + "..."
	}
	return text
}

// commentReason is the reason of a row that a comment on one of its
// cells holds.
func commentReason(c sheet.Comment) string {
	return fmt.Sprintf("the comment on cell %s says %q, which mentions do not call: the row and its number are not called until a person reads the comment: if the person may be called, delete the comment or write it without the phrase", c.Cell, commentSaid(c.Text))
}

// usedColumns returns the columns m maps to form fields, and as the
// row's country, time zone or full name, and its phone columns' types.
func (m *sheetMap) usedColumns() map[int]bool {
	used := map[int]bool{m.tzCol: true, m.countryCol: true, m.nameCol: true}
	for _, c := range m.cols {
		used[c] = true
	}
	for _, p := range m.phones {
		used[p.col] = true
		if p.typeCol >= 0 {
			used[p.typeCol] = true
		}
	}
	for _, x := range m.extra {
		used[x.col] = true
	}
	return used
}

// anySaid reports whether a signal column or a group's title of the
// sheet has said, so far, that a row is not to be called, or could not
// be read.
func (m *sheetMap) anySaid() bool {
	return m.commentMentions > 0 || slices.ContainsFunc(m.signals, func(s *signalColumn) bool { return s.yes > 0 || s.unclear > 0 }) ||
		slices.ContainsFunc(m.groups, func(g *groupSignal) bool { return g.says == saysYes })
}

// heldReason is the reason of a row that rs holds.
func (rs rowSignal) heldReason() string {
	s, cell := rs.held, strings.TrimSpace(rs.heldCell)
	if s.kind == signalStatus {
		return fmt.Sprintf("the consent's status column %q says %q, which callrun cannot read as opted in, opted out or neither: the row is not called, nor any row with its number, until it says which (OptIn, OptOut, NotSeen, ...)", s.name, cell)
	}
	if s.notes && !s.mapped && rs.heldSays == saysMention {
		return fmt.Sprintf("column %q says %q, which mentions do not call: the row and its number are not called until a person reads the note: if the person may be called, write the note without the phrase (ignoring the column under do_not_call: would release every note of it, those that do ask not to be called too)", s.name, cell)
	}
	if s.mapped && rs.heldSays == saysMention {
		return fmt.Sprintf("do-not-call column %q says %q, which mentions do not call without being one of the column's values: the row is not called until the cell says which (name the value under do_not_call: values: if it means do not call; else write the cell without the phrase)", s.name, cell)
	}
	if !s.mapped && rs.heldSays == saysMention {
		return fmt.Sprintf("column %q says %q, which mentions do not call without saying it whole, and the campaign does not map the column: the row is not called; map the column under do_not_call: with the values that mean do not call, or ignore it there with a reason", s.name, cell)
	}
	if s.mapped {
		why := "which reads neither as yes nor as no"
		if c := conflict(cell); c != "" {
			why = fmt.Sprintf("which is read one way in one language and the other in another (%s)", c)
		}
		return fmt.Sprintf("do-not-call column %q says %q, %s: the row is not called until it says yes or no (1 or yes: not to be called; 0, no or empty: may be)", s.name, cell, why)
	}
	if rs.heldSays == saysUnclear {
		return fmt.Sprintf("column %q reads as a do-not-call flag and says %q, neither yes nor no, and the campaign does not map it: the row is not called; map the column under do_not_call:, or ignore it there with a reason", s.name, cell)
	}
	what := "says do not call"
	if s.kind == signalConsent {
		what = "withdraws consent"
	}
	if strings.TrimSpace(s.name) == "" {
		return fmt.Sprintf("column %s, which has no header, %s (%q): the row is not called; give the column a header in the sheet, then map it under do_not_call:, or ignore it there with a reason", columnLetter(s.col), what, cell)
	}
	return fmt.Sprintf("column %q %s (%q), and the campaign does not map it: the row is not called; map the column under do_not_call:, or ignore it there with a reason", s.name, what, cell)
}

// columnLetter is the letter a spreadsheet shows for the column at index
// i of a row, from 0: A, B, ..., Z, AA.
func columnLetter(i int) string {
	name, _ := excelize.ColumnNumberToName(i + 1)
	return name
}

// PlanSignal is a column of a sheet that says, or may say, that a person
// is not to be called, and what the campaign does with it: plan shows
// each, per sheet, in its text and its JSON.
type PlanSignal struct {
	// Column is the column's name; empty for a group.
	Column string `json:"column,omitempty"`
	// Index is the column's place in the header, from 0: the problem of
	// a column with no header names it by its letter.
	Index int `json:"-"`
	// Group is, for a group of rows under a title of its own
	// (monday.com's groups), its title, and TitleRow the title's row.
	Group    string `json:"group,omitempty"`
	TitleRow int    `json:"title_row,omitempty"`
	// Kind is how its cells say it: "flag" (yes or no), "values"
	// (labels, tags or a status holding a do-not-call phrase),
	// "consent" (a withdrawal), "consent_status" (the status of consent
	// beside the consent column: an opt-out), or "group" (the title of a
	// group of rows); or, for a column that scopes consent and says
	// nothing of do not call, "consent_channel" (the channel consent is
	// for) or "consent_end" (the day it ends); or "comments", the
	// comments on the cells of a workbook's rows that mention do not
	// call (Use "held", Mentions and MentionAt).
	Kind string `json:"kind"`
	// Use is what the campaign does with it: "mapped" (do_not_call: or
	// consent:), "read" (a column that scopes consent, found by its
	// header beside the consent column and read as if named), "ignored" (do_not_call: ignore:, with its Reason),
	// "refused" (not mapped, and some rows say do not call: plan and run
	// stop), or "unmapped" (not mapped; no row says do not call); for a
	// group, "honoured" (its title is a do-not-call phrase: none of its
	// rows is called) or "held" (its title mentions one without being
	// one: its rows are held, not called, and Mentions counts them).
	Use    string `json:"use"`
	Reason string `json:"reason,omitempty"`
	// Found says how callrun found a column the campaign does not map:
	// "header" or "cells".
	Found string `json:"found,omitempty"`
	// Rows counts the rows whose cell says do not call (or withdraws
	// consent), Examples shows the first two.
	Rows     int      `json:"rows"`
	Examples []string `json:"examples,omitempty"`
	// Unclear counts the cells that read neither yes nor no, whose rows
	// are not called; UnclearAt shows the first.
	Unclear   int    `json:"unclear,omitempty"`
	UnclearAt string `json:"unclear_at,omitempty"`
	// Mentions counts the cells of free text that mention a do-not-call
	// phrase without being one ("do not call before 10am", "DNC
	// (verbal)"): their rows are not called, as those of a cell that
	// reads neither yes nor no, and plan shows the first (MentionAt).
	Mentions  int    `json:"mentions,omitempty"`
	MentionAt string `json:"mention_at,omitempty"`
	// Values are the values (or tags) that said do not call, as
	// written, for a mapping under do_not_call: values:.
	Values []string `json:"values,omitempty"`
	// mentioned are the first cells that mention do not call, which
	// the problem of a column of labels not mapped proposes under
	// values: when no cell said it whole (Values is empty).
	mentioned []string
}

// planSignals returns what the pass over sheet i read of its signal
// columns, and the columns do_not_call: ignores.
func (m *sheetMap) planSignals() []PlanSignal {
	var out []PlanSignal
	for _, s := range m.signals {
		p := PlanSignal{Column: s.name, Index: s.col, Kind: s.kind.String(), Use: "mapped", Rows: s.yes, Examples: s.examples,
			Unclear: s.unclear, UnclearAt: s.unclearAt, Mentions: s.mentions, MentionAt: s.mentionAt, Values: s.matched, mentioned: s.mentioned}
		if s.notes {
			p.Kind = "notes"
		}
		switch {
		case !s.mapped:
			p.Found, p.Use = s.found, "unmapped"
			// A mention in a column of labels refuses it too (not in
			// notes, whose mentions hold their rows and numbers).
			if s.yes > 0 || s.unclear > 0 || s.mentions > 0 && !s.notes {
				p.Use = "refused"
			}
		case s.found != "":
			p.Found, p.Use = s.found, "read" // a status of consent found by its header
		}
		out = append(out, p)
	}
	for _, sc := range m.consentScope {
		if sc.kind == scopeStatus {
			continue // among the signals, above
		}
		p := PlanSignal{Column: sc.name, Kind: "consent_channel", Use: "mapped"}
		if sc.kind == scopeEnd {
			p.Kind = "consent_end"
		}
		if sc.found {
			p.Found, p.Use = "header", "read"
		}
		out = append(out, p)
	}
	for _, ig := range m.ignored {
		out = append(out, PlanSignal{Column: ig.Column, Use: "ignored", Reason: ig.Reason})
	}
	for _, g := range m.groups {
		p := PlanSignal{Group: g.group.Title, TitleRow: g.group.Row, Kind: "group", Use: "honoured", Rows: g.rows, Examples: g.examples}
		if g.says == saysMention {
			p.Use, p.Rows, p.Mentions, p.MentionAt = "held", 0, g.rows, fmt.Sprintf("row %d: %q", g.group.Row, g.group.Title)
		}
		out = append(out, p)
	}
	if m.commentMentions > 0 {
		out = append(out, PlanSignal{Kind: "comments", Use: "held", Mentions: m.commentMentions, MentionAt: m.commentAt})
	}
	return out
}

// signalProblems are the problems of sheet i's refused signal columns
// ([refusedSignal]), at the campaign file's key of the sheet's
// do_not_call: (else its file). plan and run stop on them before any
// call.
func (f *File) signalProblems(i int, signals []PlanSignal) []Problem {
	var out []Problem
	key := f.doNotCallKey(i)
	for _, s := range signals {
		if s.Use != "refused" {
			continue
		}
		says, ways := f.refusedSignal(i, s)
		msg := says + ", so callrun cannot honour it: nothing is called until the campaign says what the column is. " + ways
		out = append(out, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: msg})
	}
	return out
}

// refusedSignal says of a refused signal column of sheet i what it says
// (the column, how many rows say do not call and the first two) and the
// two ways on: map it, or ignore it with a reason.
func (f *File) refusedSignal(i int, s PlanSignal) (says, ways string) {
	var what []string
	if s.Rows > 0 {
		verb := "say do not call"
		if s.Kind == "consent" {
			verb = "withdraw consent"
		}
		what = append(what, fmt.Sprintf("%d row(s) %s (%s)", s.Rows, verb, strings.Join(s.Examples, ", ")))
	}
	if s.Unclear > 0 {
		what = append(what, fmt.Sprintf("%d cell(s) read as neither yes nor no (%s)", s.Unclear, s.UnclearAt))
	}
	if s.Mentions > 0 && s.Kind == "values" {
		what = append(what, fmt.Sprintf("%d cell(s) mention do not call without saying it whole (%s)", s.Mentions, s.MentionAt))
	}
	mapping := fmt.Sprintf("do_not_call: {column: %q}", s.Column)
	switch s.Kind {
	case "values", "notes":
		// The values that said do not call whole; else, for a column
		// refused for its mentions alone ("Closed - Do not call"), those
		// cells, for the user to keep the ones that mean it. Mapped, a
		// mention not among the values still holds its row.
		values := s.Values
		if len(values) == 0 && s.Kind == "values" {
			values = s.mentioned
		}
		quoted := make([]string, len(values))
		for k, v := range values {
			quoted[k] = fmt.Sprintf("%q", v)
		}
		mapping = fmt.Sprintf("do_not_call: [{column: %q, values: [%s]}]", s.Column, strings.Join(quoted, ", "))
	case "consent":
		mapping = fmt.Sprintf("consent: {column: %q}", s.Column)
	}
	if strings.TrimSpace(s.Column) == "" {
		says = fmt.Sprintf("sheet %s: in column %s, which has no header, %s", f.Sheets[i].File, columnLetter(s.Index), strings.Join(what, " and "))
		ways = fmt.Sprintf("A column without a header can be neither mapped nor ignored: give column %s a header in the sheet's header row (Do Not Call, say), then map it under do_not_call: (its rows are then not called) or ignore it there with a reason", columnLetter(s.Index))
		return says, ways
	}
	says = fmt.Sprintf("sheet %s: in column %q, %s, and the campaign does not map the column", f.Sheets[i].File, s.Column, strings.Join(what, " and "))
	ways = fmt.Sprintf("Map it (%s, beside any column mapped there already; its rows are then not called), or ignore it on purpose: do_not_call: {ignore: [{column: %q, reason: \"why these rows may be called\"}]}", mapping, s.Column)
	return says, ways
}

// unnumberedProblems are the problems of the phone cells of flagged rows
// that read as no number ([FlagPass.Unnumbered]): the first few, each
// naming its sheet, row and columns, then how many more each sheet
// holds, at the campaign file's key of the sheet's file. plan and run
// stop on them before any call: the row asks not to call someone whose
// number callrun cannot read, and any other row with that number would
// be called.
func (f *File) unnumberedProblems(first []UnnumberedFlag, cells []int) []Problem {
	const ways = "Correct the number in the sheet (every row with it is then not called); or put the person's number in a suppression file (suppress:) and remove the row; or, where the row names nobody, remove it"
	var out []Problem
	listed := make([]int, len(cells))
	for _, u := range first {
		i := u.Flag.Sheet
		listed[i]++
		key := fmt.Sprintf("sheets[%d].file", i)
		msg := fmt.Sprintf("sheet %s, row %d: %s, but its phone column %q says %q, which reads as no phone number: callrun cannot tell whom the row keeps from being called, and would call them on any other row, so nothing is called until the cell is settled. %s",
			f.Sheets[i].File, u.Flag.Row, flagSays(u.Flag), u.Phone, u.Cell, ways)
		out = append(out, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: msg})
	}
	for i, n := range cells {
		if more := n - listed[i]; more > 0 {
			key := fmt.Sprintf("sheets[%d].file", i)
			msg := fmt.Sprintf("sheet %s: %d more phone cell(s) of rows marked do not call (or whose consent is withdrawn) read as no phone number (only the first %d of the campaign are named), so nothing is called until each is settled. %s",
				f.Sheets[i].File, more, maxUnnumbered, ways)
			out = append(out, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: msg})
		}
	}
	return out
}

// flagSays says what flags a row, as fl records it.
func flagSays(fl FlaggedNumber) string {
	switch {
	case fl.Group != "":
		return fmt.Sprintf("the row is in the group %q (its title in row %d), whose title says do not call", fl.Group, fl.GroupRow)
	case fl.Consent:
		return fmt.Sprintf("its consent column %q says %q: consent to be called was %s", fl.Column, fl.Cell, consentWithdrawnWord(fl.Cell))
	case fl.Comment != "":
		return fmt.Sprintf("the comment on its cell %s says %q, which mentions do not call", fl.Comment, fl.Cell)
	case fl.Unclear:
		return fmt.Sprintf("its do-not-call column %q says %q, neither yes nor no", fl.Column, fl.Cell)
	}
	return fmt.Sprintf("it is marked do not call (column %q says %q)", fl.Column, fl.Cell)
}
