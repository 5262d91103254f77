package campaign

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
	"github.com/nyaruka/phonenumbers"
)

// Row statuses decided from the sheets alone, before the journal is read.
const (
	ToCall     = "to_call"
	Invalid    = "invalid"
	Duplicate  = "duplicate"
	Suppressed = "suppressed"
)

// Index of each form field in [FormFields] and in Contact.Fields.
const (
	FieldPhone = iota
	FieldEmail
	FieldFirstName
	FieldLastName
	FieldGHLContactID
	FieldOverrideAgentID
	FieldLocalPresence
	numFields
)

// Contact is one row of a sheet, mapped to the call endpoint's form fields
// and judged: to call, invalid, suppressed or duplicate.
type Contact struct {
	Sheet  int    // index in File.Sheets
	Row    int    // the row number a spreadsheet shows
	Agent  int    // index in File.Agents
	Phone  string // E.164; empty when the number is invalid
	Fields [numFields]string
	// Extra holds the fields beyond the seven, one for each of the
	// campaign's [File.AccountFields] in that order, with the value this
	// row sends (empty: not sent). Each row gets a slice of its own, so a
	// copy of the Contact keeps it.
	Extra []FormValue
	// TZ is the contact's time zone from the sheet's timezone_column, if
	// any; empty means "from the phone number".
	TZ string
	// N counts earlier rows with the same number and agent; above 0 only
	// with dedupe: none, where it keeps repeated rows apart in the journal.
	N int
	// Country is the number's country as the phone library places it
	// ("US", "JM"; "001" for international non-geographic numbers), and
	// Kind its kind (mobile, landline, toll-free, ...).
	Country string
	Kind    phonenumbers.PhoneNumberType
	Status  string
	Field   string // the form field (or "row") an invalid row fails on
	Column  string // the CSV column of Field, when there is one
	Reason  string
	Warning string // a repair made to the row's data, for the person
	Cell    string // the phone cell as written, when Warning says it was repaired
	// PhoneColumn is the column the number was taken from, when the sheet
	// lists several phone columns.
	PhoneColumn string
	// DoNotCall is set on a contact to call whose number is on the
	// store's do-not-call list: it is not called, and the report shows it
	// suppressed unless the journal says it was called before.
	DoNotCall bool
	// DoNotCallColumn is the do_not_call: column whose cell says yes, or
	// the consent column whose cell withdraws consent, on a contact
	// suppressed for it; DoNotCallGroup the title of its group of rows,
	// on one suppressed for it saying do not call.
	DoNotCallColumn, DoNotCallGroup string
	// Consent is the row's evidence of consent as read from the sheet's
	// consent column: a date (YYYY-MM-DD), "yes", or empty for none;
	// ConsentCell the cell as written.
	Consent, ConsentCell string
	// Held is set, for the report, on a contact to call that contact
	// pressure holds back ([Suppression.SetPressure]).
	Held *store.HeldError
	// zones are [ContactZones]' answer, kept by the contact reader's
	// judge, which asks it of every row with a number; nil when not
	// asked yet.
	zones []*time.Location
	// state is [ContactState]'s answer, two letters or none, once
	// stateSet (kept small: a plan holds a million contacts).
	state    [2]byte
	stateSet bool
}

// Form returns the form fields to send: every non-empty field.
func (c *Contact) Form() url.Values {
	form := url.Values{}
	for i, v := range c.Fields {
		if v != "" {
			form.Set(FormFields[i], v)
		}
	}
	for _, x := range c.Extra {
		if x.Value != "" {
			form.Set(x.Name, x.Value)
		}
	}
	return form
}

// formOrder is the order of the form fields in an encoded form: by name,
// as url.Values.Encode sorts them.
var formOrder = func() []int {
	order := make([]int, len(FormFields))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(FormFields[a], FormFields[b]) })
	return order
}()

// EncodeForm returns Form().Encode() without building the map: the body of
// the contact's call start.
func (c *Contact) EncodeForm() string {
	n := 0
	for _, v := range c.Fields {
		n += len(v) + 24
	}
	for _, x := range c.Extra {
		n += len(x.Name) + len(x.Value) + 8
	}
	buf := make([]byte, 0, n)
	extra := c.Extra // sorted by name, as File.AccountFields is
	for _, i := range formOrder {
		for len(extra) > 0 && extra[0].Name < FormFields[i] {
			buf = appendFormField(buf, extra[0].Name, extra[0].Value)
			extra = extra[1:]
		}
		buf = appendFormField(buf, FormFields[i], c.Fields[i])
	}
	for _, x := range extra {
		buf = appendFormField(buf, x.Name, x.Value)
	}
	return string(buf)
}

// appendFormField appends name=value to an encoded form, unless value is
// empty. Field names are letters, digits and _: they need no escaping.
func appendFormField(buf []byte, name, value string) []byte {
	if value == "" {
		return buf
	}
	if len(buf) > 0 {
		buf = append(buf, '&')
	}
	buf = append(buf, name...)
	buf = append(buf, '=')
	return appendQueryEscape(buf, value)
}

// appendQueryEscape appends url.QueryEscape(s) to buf.
func appendQueryEscape(buf []byte, s string) []byte {
	const upperHex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			buf = append(buf, c)
		case c == ' ':
			buf = append(buf, '+')
		default:
			buf = append(buf, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return buf
}

// RowProblem is an invalid row, as plan shows it.
type RowProblem struct {
	File    string `json:"file"`
	Row     int    `json:"row"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// sheetMap is a sheet's header resolved against its mapping.
type sheetMap struct {
	// hidden is, with hidden_rows: skip, the workbook whose hidden rows
	// are not called; nil otherwise.
	hidden *sheet.Workbook
	// hiddenSkipped counts the rows not called for it, hiddenAt holds
	// the first.
	hiddenSkipped int
	hiddenAt      []string
	// comments is the workbook whose cells have comments, read on every
	// row for a request not to be called ([sheetMap.commentRow]); nil
	// when there is none. commentMentions counts the rows a comment
	// holds, commentAt tells the first.
	comments        *sheet.Workbook
	commentMentions int
	commentAt       string
	cols            [numFields]int // CSV column of each form field; -1 when not mapped
	names           [numFields]string
	extra           []extraField // one for each of the campaign's account fields, in order
	tzCol           int
	// countryCol is the column of each row's country; -1 when the sheet
	// names none.
	countryCol int
	// callingCol is an unmapped column whose header names the phone's
	// country calling code ("Country Code": 44), callingName its header;
	// -1 when none ([sheetMap.callingCodeWhy]).
	callingCol  int
	callingName string
	// placeCols are the unmapped columns whose header names a country
	// (the person's, their address's), placeNames their headers, when
	// the sheet maps no country_column ([sheetMap.placeWhy]).
	placeCols  []int
	placeNames []string
	// phones are the columns phone_number lists, in order.
	phones []phoneCol
	// notDialledRows counts, by index in phones, the rows with something
	// in a column whose header names a line callrun never dials, passed
	// over for that; typeSkipped counts the numbers passed over for what
	// their type cell says, typeSkippedExample shows the first: the sums
	// of the rows' [rowCounts], added in sheet order.
	notDialledRows     []int
	typeSkipped        int
	typeSkippedExample string
	// nameCol is the column of full names split into first and last
	// name (name_column); -1 when none.
	nameCol int
	// signals are the sheet's signal columns (see [sheetMap.signalRow]):
	// its do_not_call: columns first, then its consent column, then the
	// columns the campaign does not map that their header or their first
	// rows show to be one. header is the sheet's header; tracked marks the
	// columns among signals or ignored (do_not_call: ignore:); sampleRows
	// counts down the first rows whose every cell is read.
	signals []*signalColumn
	ignored []IgnoredColumn
	// groups are the sheet's groups of rows whose title says or mentions
	// do not call, in order; group is the group of the rows read now.
	groups     []*groupSignal
	group      *groupSignal
	header     []string
	tracked    []bool
	sampleRows int
	// consentCol is the column of each row's consent (consent.column);
	// -1 when the sheet maps none.
	consentCol      int
	consentName     string
	consentRequired bool
	// consentLines are the places in phones of the columns of the line
	// the consent column's header names ("Mobile Consent": "Mobile
	// Phone"), consentLineNames their headers; nil when the consent is
	// the row's ([sheetMap.mapConsentLines]).
	consentLines     []int
	consentLineNames []string
	// consentScope are the columns that scope each row's consent (its
	// channel, its end, its status; see [File.mapConsentScope]), and
	// channelCol the channel's; -1 when none.
	consentScope []scopeColumn
	channelCol   int
}

// phoneCol is one column of a sheet's phone_number as the contact reader
// reads it.
type phoneCol struct {
	col     int // CSV column
	name    string
	typeCol int // the CSV column of its type_column; -1 when none
	// typeName is the type_column's name.
	typeName string
	// notDialled says, when the column's header names a line callrun
	// never dials, what it is ("a fax").
	notDialled string
}

// typedPhone is a phone column with a type column, as readRowPhone orders
// a row's: its place in the row's order, its index in sheetMap.phones,
// and the kind its type cell names.
type typedPhone struct {
	at, k int
	kind  lineKind
}

// typeKind is what a type cell says of its number.
type typeKind struct {
	kind lineKind
	what string
}

// extraField is where a sheet takes a field beyond the seven from: a CSV
// column, a constant, or neither (the sheet does not send it).
type extraField struct {
	name  string
	col   int    // CSV column; -1 when not mapped
	value string // the constant under set:, when not mapped
}

// headerError is the error of a sheet whose header lacks columns the
// campaign file maps: each problem names the campaign file's key that
// maps the missing column, so that its line is the one to fix.
type headerError struct{ problems []Problem }

func (e *headerError) Error() string {
	msgs := make([]string, len(e.problems))
	for i, p := range e.problems {
		msgs[i] = p.Msg
	}
	return strings.Join(msgs, "; ")
}

// sheetProblems are the problems of sheet i that stop a run: err's
// problems when it is a *headerError, else one at sheets[i].file.
func (f *File) sheetProblems(i int, err error) []Problem {
	if he, ok := err.(*headerError); ok {
		return he.problems
	}
	key := fmt.Sprintf("sheets[%d].file", i)
	return []Problem{{File: f.Source, Line: f.Line(key), Key: key, Msg: err.Error()}}
}

// openSheet opens a sheet and resolves its mapped columns. Its errors are
// problems with the sheet as a whole, which stop a run before any call;
// a header without a mapped column is a *headerError.
func (f *File) openSheet(i int) (*sheet.Reader, *sheetMap, error) {
	s := &f.Sheets[i]
	r, err := sheet.OpenWith(f.Path(s.File), f.SheetOptions(i))
	if err != nil {
		return nil, nil, err
	}
	if s.Worksheet != "" && r.Workbook() == nil {
		// The worksheet was never read: the file named is a text file,
		// perhaps the CSV beside the workbook meant, whose rows would be
		// called instead (a suppression file's key refuses the same).
		r.Close()
		key := fmt.Sprintf("sheets[%d].worksheet", i)
		if !f.has(key) {
			key = fmt.Sprintf("sheets[%d].file", i)
		}
		return nil, nil, &headerError{[]Problem{{File: f.Source, Line: f.Line(key), Key: key,
			Msg: fmt.Sprintf("sheet %s names the worksheet %q, but it is a text file, not an .xlsx workbook: name the workbook whose tab it is in file:, or remove the worksheet key", s.File, s.Worksheet)}}}
	}
	m := &sheetMap{tzCol: -1, countryCol: -1, nameCol: -1, channelCol: -1}
	var problems []Problem
	// at adds a problem of the key that maps the column, or of the
	// sheet's file when the key is not in the campaign file (a
	// top-level setting the sheet takes, say).
	at := func(key string, err error) {
		if !f.has(key) {
			key = fmt.Sprintf("sheets[%d].file", i)
		}
		problems = append(problems, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: err.Error()})
	}
	sheetKey := func(k string) string { return fmt.Sprintf("sheets[%d].%s", i, k) }
	for fi, field := range FormFields {
		m.cols[fi] = -1
		col, ok := s.Fields[field]
		if !ok {
			continue
		}
		if idx := sheetColumn(r, col, sheetKey("fields."+field), at); idx >= 0 {
			m.cols[fi], m.names[fi] = idx, col
		}
	}
	for _, field := range f.AccountFields() {
		x := extraField{name: field, col: -1, value: s.Set[field]}
		if col, ok := s.Fields[field]; ok {
			x.col = sheetColumn(r, col, sheetKey("fields."+field), at)
		}
		m.extra = append(m.extra, x)
	}
	if s.TimezoneColumn != "" {
		m.tzCol = sheetColumn(r, s.TimezoneColumn, sheetKey("timezone_column"), at)
	}
	if s.CountryColumn != "" {
		m.countryCol = sheetColumn(r, s.CountryColumn, sheetKey("country_column"), at)
	}
	if s.NameColumn != "" {
		m.nameCol = sheetColumn(r, s.NameColumn, sheetKey("name_column"), at)
	}
	for k, pc := range s.PhoneColumns {
		p := phoneCol{col: m.cols[FieldPhone], name: pc.Column, typeCol: -1, typeName: pc.TypeColumn}
		if k > 0 {
			p.col = sheetColumn(r, pc.Column, sheetKey("fields.phone_number"), at)
		}
		if pc.TypeColumn != "" {
			idx, err := r.Column(pc.TypeColumn)
			if err != nil {
				at(sheetKey("fields.phone_number"), fmt.Errorf("type_column of %q: %w", pc.Column, err))
			}
			p.typeCol = idx
		}
		if kind, what := phoneLineKind(pc.Column); kind == lineNotDialled {
			p.notDialled = what
		}
		m.phones = append(m.phones, p)
	}
	m.mapCallingCode(r.Header())
	dncKey, consentKey := "do_not_call", "consent.column"
	if s.DoNotCall != nil {
		dncKey = sheetKey(dncKey)
	}
	if s.Consent != nil {
		consentKey = sheetKey(consentKey)
	}
	for _, msg := range f.resolveDoNotCall(i, r, m) {
		at(dncKey, errors.New(msg))
	}
	if err := f.mapConsent(i, r, m); err != nil {
		at(consentKey, err)
	} else if m.consentCol >= 0 && !m.tracked[m.consentCol] {
		m.signals = append(m.signals, &signalColumn{col: m.consentCol, name: m.consentName, kind: signalConsent, mapped: true})
		m.tracked[m.consentCol] = true
	}
	m.mapConsentLines()
	if len(problems) == 0 {
		used := m.usedColumns()
		for _, err := range f.mapConsentScope(i, r, m, used) {
			at(consentKey, err)
		}
		m.watchHeaders(used)
	}
	if s.HiddenRows == HiddenSkip {
		m.hidden = r.Workbook()
	}
	if wb := r.Workbook(); wb.HasComments() {
		m.comments = wb
	}
	if len(problems) > 0 {
		r.Close()
		return nil, nil, &headerError{problems}
	}
	return r, m, nil
}

// sheetColumn is the index of column name in r, or -1 after telling at its error under key.
func sheetColumn(r *sheet.Reader, name, key string, at func(key string, err error)) int {
	idx, err := r.Column(name)
	if err != nil {
		at(key, err)
	}
	return idx
}

// CheckSheets opens every sheet and suppression file and checks their
// headers: the problems that stop a run before any call is made. It
// returns nil or a *FileError. It keeps, for [File.WorkbookProblems],
// what the sheets that are workbooks hold besides their rows.
func (f *File) CheckSheets() error {
	var problems []Problem
	add := func(key string, err error) {
		problems = append(problems, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: err.Error()})
	}
	f.workbookIssues = nil
	for i := range f.Sheets {
		r, _, err := f.openSheet(i)
		if err != nil {
			problems = append(problems, f.sheetProblems(i, err)...)
			continue
		}
		f.workbookIssues = append(f.workbookIssues, f.workbookProblems(i, r)...)
		r.Close()
	}
	for i, p := range f.Suppress {
		r, err := openSuppressFile(f.Path(p.File), p)
		if err != nil {
			add(fmt.Sprintf("suppress[%d]", i), err)
			continue
		}
		r.Close()
	}
	if len(problems) > 0 {
		return &FileError{Problems: problems}
	}
	return nil
}

// CheckSheetsReadable reads to its end, record by record, every sheet
// that the pass over the signal columns (sup's, [File.ReadFlagged]) did
// not read to its end, and returns a *FileError naming the row that stops
// a sheet (a sheet not UTF-8, a row larger than a row may be, a quote
// never closed), as plan shows it (exit 2), or nil. run calls it before
// any call: a run that called the rows before such a row would stop
// there, after calling them, with a report it cannot write (the report
// reads the sheets again and meets the same row) and no summary; the
// campaign's fault is told before anyone is phoned instead.
func (f *File) CheckSheetsReadable(ctx context.Context, sup *Suppression) error {
	var problems []Problem
	for i := range f.Sheets {
		if sup != nil && i < len(sup.spools) && sup.spools[i] != nil {
			continue // read to its end by the pass
		}
		r, _, err := f.openSheet(i)
		if err != nil {
			problems = append(problems, f.sheetProblems(i, err)...)
			continue
		}
		for n := 0; err == nil; n++ {
			if n%4096 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					r.Close()
					return cerr
				}
			}
			_, err = r.Next()
		}
		r.Close()
		if !errors.Is(err, io.EOF) {
			problems = append(problems, f.sheetProblems(i, err)...)
		}
	}
	if len(problems) > 0 {
		return &FileError{Problems: problems}
	}
	return nil
}

// phoneKey is an E.164 number's digits as an integer (at most 15 digits,
// so below 2^50): the key of a number in the suppression and dedupe sets.
func phoneKey(e164 string) uint64 {
	n, err := strconv.ParseUint(strings.TrimPrefix(e164, "+"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// numbersSeen is the dedupe table of a campaign's sheets: the row where
// each dedupe key ([ContactReader.dedupeKey]) first appears. Readers of
// the same sheets may share one: a run and its report ([StartReport])
// read them at the same time, and hold the campaign's numbers once rather
// than twice. Every reader reads the rows in the same order, so whichever
// meets a number first records its true first row, and the others find it
// there.
//
// It is a table of its own, open-addressed, rather than a map: the one
// goroutine that settles a sheet's rows in order asks it of every row,
// and a table of a million numbers is far larger than a cache, so each
// lookup waits on memory. Its slots are where [numbersSeen.warm] can read
// a batch's keys ahead, so that the waits of a batch overlap
// (BenchmarkNumbersSeen; BenchmarkPlan1M).
type numbersSeen struct {
	mu sync.Mutex
	// slots hold the keys recorded (0 for an empty slot: no dedupe key
	// is 0), each at the first free slot from its hash on; never more
	// than half are used.
	slots []seenSlot
	used  int
	shift uint // 64 less the log2 of len(slots)
	// f, when set, is the campaign whose sheets' lines size the table
	// when the first number is recorded ([File.sheetLines]): a table
	// grown a number at a time costs three times as much to fill.
	f *File
	// warmed is what warm read, kept so that its reads are not left out.
	warmed uint64
}

// emptyKey is the key numbersSeen records for the key 0 (which marks an
// empty slot): no dedupe key has its top bit set (a campaign has at most
// maxAgents agents).
const emptyKey = 1 << 63

// seenSlot is a slot of numbersSeen's table.
type seenSlot struct {
	key uint64
	at  rowAt
}

// rowAt is where a row is: its sheet's index and its row number.
type rowAt struct{ sheet, row int32 }

func newNumbersSeen(f *File) *numbersSeen { return &numbersSeen{f: f} }

// slot is the slot key's search starts at.
func (s *numbersSeen) slot(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 >> s.shift }

// size makes the table hold, empty, at least n keys.
func (s *numbersSeen) size(n int) {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	s.slots, s.used, s.shift = make([]seenSlot, size), 0, uint(64-bits.TrailingZeros(uint(size)))
}

// firstRow returns the row where key first appears, recording at if no
// row was recorded for it before.
func (s *numbersSeen) firstRow(key uint64, at rowAt) rowAt {
	if key == 0 {
		key = emptyKey // 0 marks an empty slot
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slots == nil {
		n := 0
		if s.f != nil {
			n = s.f.sheetLines()
		}
		s.size(n)
	}
	if at, ok := s.record(key, at); !ok {
		return at
	}
	if s.used++; 2*s.used > len(s.slots) {
		old := s.slots
		s.size(s.used)
		for _, sl := range old {
			if sl.key != 0 {
				s.record(sl.key, sl.at)
				s.used++
			}
		}
	}
	return at
}

// record returns the row recorded for key, and false; or, when there is
// none, records at and returns it and true.
func (s *numbersSeen) record(key uint64, at rowAt) (rowAt, bool) {
	mask := uint64(len(s.slots) - 1)
	for i := s.slot(key); ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.key == key {
			return sl.at, false
		}
		if sl.key == 0 {
			sl.key, sl.at = key, at
			return at, true
		}
	}
}

// warm reads the slot of each of keys, the keys a batch of rows is about
// to look up: reads that do not wait on one another, so that the memory
// brings their slots in at once, not one lookup after another.
func (s *numbersSeen) warm(keys []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slots == nil {
		return
	}
	var sum uint64
	for _, k := range keys {
		sum += s.slots[s.slot(k)].key
	}
	s.warmed += sum
}

// maxSheetLines bounds what sheetLines returns: the table of the numbers
// seen grows past it as it fills.
const maxSheetLines = 1 << 24

// sheetLines counts the lines of the campaign's sheets that are text (by
// their line ends: LF, or CR alone as Excel for Mac writes them), up to
// maxSheetLines: at least their rows, which a table of their numbers is
// sized by. A workbook, or a file that cannot be read, counts none.
func (f *File) sheetLines() int {
	lines := 0
	buf := make([]byte, 1<<20)
	for _, s := range f.Sheets {
		path := f.Path(s.File)
		if sheet.CheckRegular(path) != nil {
			continue // a named pipe, say, which opening would wait on
		}
		file, err := os.Open(path)
		if err != nil {
			continue
		}
		lf, cr := 0, 0
		for first := true; ; first = false {
			n, err := file.Read(buf)
			if first && bytes.HasPrefix(buf[:n], []byte("PK\x03\x04")) {
				break
			}
			lf += bytes.Count(buf[:n], []byte{'\n'})
			cr += bytes.Count(buf[:n], []byte{'\r'})
			if err != nil {
				break
			}
		}
		file.Close()
		if lines += max(lf, cr); lines >= maxSheetLines {
			return maxSheetLines
		}
	}
	return lines
}

// ContactReader streams every row of every sheet of a campaign, in sheet
// order, judged and mapped. Memory grows with the number of distinct
// numbers (the dedupe set), not with the rows.
type ContactReader struct {
	f        *File
	suppress *Suppression
	seen     *numbersSeen
	// repeats counts, with dedupe: none, the rows after the first of each
	// dedupe key this reader has read: a contact's occurrence (Contact.N).
	repeats map[uint64]int
	agentOf map[string]int
	rules   []*phone.Rules // by sheet
	// inCountry[i][country] are sheet i's rules for a row whose country
	// column says country: [0] the sheet's, [1] the same calling every
	// country (to tell a number of another country as such).
	inCountry   []map[string]*[2]*phone.Rules
	inCountryMu sync.Mutex // workers judge rows at once
	// SheetFailed, when set, is told of sheet i when it cannot be read to its
	// end (not UTF-8, a row that never ends), and reading goes on with the
	// next sheet; plan uses it to check every sheet. When nil, Each stops
	// and returns that error.
	SheetFailed func(i int, err *sheet.Error)
	// Now is the clock a date of consent is checked against (a date in
	// the future is no evidence); nil means time.Now.
	Now func() time.Time
	// SheetNote, when set, is told what was skipped in sheet i that is no
	// contact row (a title block, a report footer; see
	// [sheet.Reader.Notes]), once the sheet has been read.
	SheetNote func(i int, note string)
	// notDialled counts the columns of phone_number, over the sheets read
	// so far, whose header names a line callrun never dials.
	notDialled int
	// signals are, by sheet, what its signal columns said, once it is
	// read (see [ContactReader.Signals]).
	signals [][]PlanSignal
	// spools are, by sheet, the records the pass over the signal columns
	// kept ([Suppression]'s), read rather than the sheet.
	spools []*rowSpool
	// flags tells the numbers the suppression's flagged numbers do not
	// hold; nil when it holds none.
	flags *flagFilter
}

// NewContactReader prepares to read the campaign's contacts.
func (f *File) NewContactReader(suppress *Suppression) *ContactReader {
	agentOf := map[string]int{}
	for i, a := range f.Agents {
		agentOf[a.Name] = i
	}
	rules := make([]*phone.Rules, len(f.Sheets))
	for i := range f.Sheets {
		rules[i] = f.PhoneRules(i)
	}
	inCountry := make([]map[string]*[2]*phone.Rules, len(f.Sheets))
	for i := range inCountry {
		inCountry[i] = map[string]*[2]*phone.Rules{}
	}
	cr := &ContactReader{f: f, suppress: suppress, seen: newNumbersSeen(f), repeats: map[uint64]int{}, agentOf: agentOf, rules: rules, inCountry: inCountry,
		signals: make([][]PlanSignal, len(f.Sheets))}
	if suppress != nil {
		cr.spools, cr.flags = suppress.spools, newFlagFilter(suppress.flagged)
	}
	return cr
}

// spool returns the records the pass over the signal columns kept of
// sheet i; nil when it kept none.
func (cr *ContactReader) spool(i int) *rowSpool {
	if i < len(cr.spools) {
		return cr.spools[i]
	}
	return nil
}

// Each calls fn for every row of every sheet, in order. The *Contact is
// reused: fn must copy what it keeps. An error from fn stops the reading
// and is returned; so is a problem with a sheet as a whole.
func (cr *ContactReader) Each(ctx context.Context, fn func(*Contact) error) error {
	for i := range cr.f.Sheets {
		if err := cr.eachInSheet(ctx, i, fn); err != nil {
			return err
		}
	}
	return nil
}

func (cr *ContactReader) eachInSheet(ctx context.Context, i int, fn func(*Contact) error) error {
	spec := &cr.f.Sheets[i]
	r, m, err := cr.f.openSheet(i)
	if err != nil {
		return err
	}
	defer r.Close()
	// The records the pass over the signal columns kept, when it read
	// the sheet as it stands; else the sheet's.
	var recs records = r
	notes := r.Notes
	if sp := cr.spool(i); sp != nil && sp.current(cr.f.Path(spec.File), r) {
		recs, notes = sp.reading(), func() []string { return sp.notes }
	} else {
		sheetReadings.Add(1)
	}
	agent := cr.agentOf[spec.Agent]
	judge := func(b *rowBatch, s *rowScratch) {
		s.counts = &b.counts
		b.keys = b.keys[:0]
		for j, rec := range b.recs {
			c := &b.contacts[j]
			*c = Contact{Sheet: i, Row: rec.Row, Agent: agent}
			if rec.Err != nil {
				c.Status, c.Field, c.Reason = Invalid, "row", rowReason(rec.Err)
				var se *sheet.Error
				if errors.As(rec.Err, &se) {
					c.Column = se.Field // the column of a field too large, say
				}
				continue
			}
			cr.judge(c, spec, i, m, s, rec)
			if m.hidden.RowHidden(rec.Row) {
				// Not called, so no repair of its number to check.
				c.Status, c.Field, c.Column, c.Reason, c.Warning, c.Cell = Suppressed, "", "", ReasonHidden, "", ""
			}
			if c.Status == "" {
				b.keys = append(b.keys, cr.dedupeKey(c))
			}
		}
	}
	settle := func(b *rowBatch) error {
		m.addCounts(&b.counts)
		cr.seen.warm(b.keys)
		for j, rec := range b.recs {
			c := &b.contacts[j]
			if rec.Err == nil {
				cr.settle(c, i, m, rec)
			}
			if c.Reason == ReasonHidden {
				if m.hiddenSkipped++; len(m.hiddenAt) < 5 {
					m.hiddenAt = append(m.hiddenAt, fmt.Sprint(c.Row))
				}
			}
			if !cr.f.Shard.holds(spec.File, c) {
				continue // another shard's
			}
			if err := fn(c); err != nil {
				return err
			}
		}
		return nil
	}
	err = cr.judgeInOrder(ctx, recs, len(m.phones), judge, settle)
	if cr.SheetNote != nil {
		for _, note := range notes() {
			cr.SheetNote(i, note)
		}
	}
	cr.sheetRead(i, m)
	cr.passedOver(i, m)
	var se *sheet.Error
	if cr.SheetFailed != nil && errors.As(err, &se) {
		cr.SheetFailed(i, se)
		return nil
	}
	return err
}

// passedOver tells cr.SheetNote, once sheet i is read, of each column of
// its phone_number whose header names a line callrun never dials (which
// it counts for [ContactReader.NotDialledColumns]), and of the numbers
// passed over for what their type cell says.
func (cr *ContactReader) passedOver(i int, m *sheetMap) {
	file := cr.f.Sheets[i].File
	for k, p := range m.phones {
		if p.notDialled == "" {
			continue
		}
		cr.notDialled++
		if cr.SheetNote != nil {
			cr.SheetNote(i, fmt.Sprintf("sheet %s: phone_number lists column %q, which is named for %s: callrun does not call its numbers; %d row(s) have one there, and were called at their next phone column, if any; remove the column from phone_number", file, p.name, p.notDialled, m.notDialledRows[k]))
		}
	}
	if m.hiddenSkipped > 0 && cr.SheetNote != nil {
		cr.SheetNote(i, fmt.Sprintf("sheet %s: %d row(s) hidden in the workbook were not called (hidden_rows: skip; row %s)", file, m.hiddenSkipped, strings.Join(m.hiddenAt, ", row ")))
	}
	if m.typeSkipped > 0 && cr.SheetNote != nil {
		cr.SheetNote(i, fmt.Sprintf("sheet %s: %d number(s) were not called because their type column names a line no person answers or another person's (a fax, a pager, an assistant; %s); their rows were called at their next number, if any", file, m.typeSkipped, m.typeSkippedExample))
	}
}

// NotDialledColumns counts, over the sheets read so far, the columns of
// phone_number whose header names a line callrun never dials (an
// assistant's, a fax, a pager): mapped by hand, they are read and passed
// over, and plan --strict fails on them.
func (cr *ContactReader) NotDialledColumns() int { return cr.notDialled }

// rowReason is the sentence of a per-row sheet error, without the file,
// row and column that the report and plan show beside it.
func rowReason(err error) string {
	var se *sheet.Error
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// judge maps a row's fields and decides what the row alone says of it:
// invalid, and why, or nothing yet. It reads nothing that another row
// changes, so workers judge rows at once (s is the worker's); what
// depends on the rows before it is left to [ContactReader.settle].
func (cr *ContactReader) judge(c *Contact, spec *SheetSpec, sheetIdx int, m *sheetMap, s *rowScratch, rec sheet.Record) {
	fields := rec.Fields
	m.fillFields(c, spec, fields)
	rules, anyCountry, country, bad := cr.rowRules(sheetIdx, m, fields)
	if bad != "" {
		c.Status, c.Field, c.Column = Invalid, "country", spec.CountryColumn
		c.Reason = fmt.Sprintf("%q is not a country: write a code such as US, DE or DEU, or a country's name, or leave the cell empty to read the number as region %s's", bad, spec.Region)
	}
	if m.nameCol >= 0 {
		first, last := SplitName(fields[m.nameCol])
		if m.cols[FieldFirstName] < 0 {
			c.Fields[FieldFirstName] = first
		}
		if m.cols[FieldLastName] < 0 {
			c.Fields[FieldLastName] = last
		}
	}
	ph, raw, column, err := cr.readRowPhone(c.Row, m, s, fields, func(raw string) (phone.Number, error) {
		return cr.readPhone(raw, spec, rules, anyCountry, country)
	})
	if len(m.phones) > 1 {
		c.PhoneColumn = column
	}
	calling, callingCol := "", ""
	if err == nil {
		// A calling code or a country beside the number that is not the
		// number's: the number, read in the sheet's region, may be
		// another person's.
		if calling, callingCol = m.callingCodeWhy(fields, raw, ph.E164); calling != "" {
			err = errors.New(calling)
		}
	}
	if err != nil {
		if calling != "" && c.Status == "" {
			c.Status, c.Field, c.Column, c.Reason = Invalid, "country", callingCol, calling
		}
		m.setInvalid(c, FieldPhone, "%s", err.Error())
		if c.Field == FormFields[FieldPhone] && len(m.phones) > 1 {
			c.Column = column
			if raw != "" {
				c.Fields[FieldPhone] = raw // the cell the reason is about
			}
		}
	} else {
		c.Phone, c.Fields[FieldPhone], c.Country, c.Kind, c.Warning = ph.E164, ph.E164, ph.Region, ph.Kind, ph.Repair
		if ph.Repair != "" {
			c.Cell = raw
		}
	}
	m.checkFields(c, spec, fields)
	cr.judgeConsent(c, spec, m, s, fields)
	if c.Status == "" {
		c.zones = withZoneColumn(c, s.zones.Zones(c.Phone, c.Country, c.Kind))
		ContactState(c)
	}
	needZone := !cr.f.UnsafeIgnoreCalledPersonHours || (cr.f.Hours != nil && cr.f.Hours.Timezone == "contact")
	if c.Status == "" && needZone && len(c.zones) == 0 {
		// It would wait for its hours forever.
		c.Status, c.Field, c.Column = Invalid, FormFields[FieldPhone], m.names[FieldPhone]
		c.Reason = "no time zone is known for this number, so the called person's hours cannot be checked; give it one in a timezone_column (with hours: {timezone: contact})"
	}
}

// settle decides, after [ContactReader.judge], what the rows before c's
// decide of it, in sheet order: its sheet's signal columns (which count
// what they say, and which its first rows add to), its group of rows,
// the numbers flagged elsewhere, the suppression files and the
// do-not-call list, and whether an earlier row has its number. Suppressed
// first, then a duplicate of an earlier row, else to call.
func (cr *ContactReader) settle(c *Contact, sheetIdx int, m *sheetMap, rec sheet.Record) {
	if cr.flagDoNotCall(c, m, rec) || (cr.flags.mayHave(c.Phone) && cr.suppress.flaggedElsewhere(c, cr.f)) {
		return
	}
	if c.Status == "" {
		cr.judgeValid(c, sheetIdx)
	}
}

// setInvalid makes c invalid in form field field, unless c has a status already.
func (m *sheetMap) setInvalid(c *Contact, field int, format string, args ...any) {
	if c.Status == "" {
		c.Status, c.Field, c.Column, c.Reason = Invalid, FormFields[field], m.names[field], fmt.Sprintf(format, args...)
	}
}

// fillFields sets c's form and account fields from a row, or the sheet's set:.
func (m *sheetMap) fillFields(c *Contact, spec *SheetSpec, fields []string) {
	for fi := range numFields {
		if col := m.cols[fi]; col >= 0 {
			c.Fields[fi] = strings.TrimSpace(fields[col])
		} else if v, ok := spec.Set[FormFields[fi]]; ok {
			c.Fields[fi] = v
		}
	}
	if len(m.extra) > 0 {
		c.Extra = make([]FormValue, len(m.extra))
		for i, x := range m.extra {
			v := x.value
			if x.col >= 0 {
				v = strings.TrimSpace(fields[x.col])
			}
			c.Extra[i] = FormValue{Name: x.name, Value: v}
		}
	}
}

// checkFields makes c invalid at a wrong local presence, e-mail or time zone.
func (m *sheetMap) checkFields(c *Contact, spec *SheetSpec, fields []string) {
	if m.cols[FieldLocalPresence] >= 0 && c.Fields[FieldLocalPresence] != "" {
		if yn, ok := YesNo(c.Fields[FieldLocalPresence]); ok {
			c.Fields[FieldLocalPresence] = yn
		} else {
			m.setInvalid(c, FieldLocalPresence, "%q is not yes or no", c.Fields[FieldLocalPresence])
		}
	}
	if e := c.Fields[FieldEmail]; e != "" && !plausibleEmail(e) {
		m.setInvalid(c, FieldEmail, "%q is not an e-mail address", e)
	}
	if m.tzCol >= 0 {
		if tz := strings.TrimSpace(fields[m.tzCol]); tz != "" {
			if _, err := loadZone(tz); err != nil && c.Status == "" {
				// loadZone's words: the zone's own case, the nearest name,
				// or why Local is none.
				c.Status, c.Field, c.Column, c.Reason = Invalid, "timezone", spec.TimezoneColumn, err.Error()
			}
			c.TZ = tz
		}
	}
}

// dedupeKey is the key of valid contact c in the dedupe table: its
// number's phoneKey, with the agent's index from bit 50 up unless dedupe
// is campaign-wide.
func (cr *ContactReader) dedupeKey(c *Contact) uint64 {
	key := phoneKey(c.Phone)
	if cr.f.Dedupe != "campaign" {
		key |= uint64(c.Agent) << 50 // agent and none: per agent
	}
	return key
}

// judgeValid decides whether valid contact c is suppressed, a duplicate or to call.
func (cr *ContactReader) judgeValid(c *Contact, sheetIdx int) {
	if cr.suppress != nil && cr.suppress.Has(c.Phone) {
		c.Status, c.Reason = Suppressed, "the number is in a suppression file"
		return
	}
	key := cr.dedupeKey(c)
	at := rowAt{sheet: int32(sheetIdx), row: int32(c.Row)}
	if cr.seen.firstRow(key, at) != at {
		if cr.f.Dedupe != "none" {
			c.Status, c.Reason = Duplicate, "the number appears in an earlier row"
			if cr.f.Dedupe == "agent" {
				c.Reason = "the number appears in an earlier row for the same agent"
			}
			return
		}
		cr.repeats[key]++
		c.N = cr.repeats[key]
	}
	c.Status = ToCall
	c.DoNotCall = cr.suppress != nil && cr.suppress.OnDoNotCall(c.Phone)
	c.Held = cr.suppress.heldBack(c.Phone)
}

// readRowPhone returns the number a row is called at, read by read: the
// first number, in the order of the sheet's phone columns and, within a
// cell that lists several (phone.Split), in its order, that reads as one
// the campaign calls. It passes over a column whose header names a line
// callrun never dials and a number whose type cell does (a fax, a pager,
// an assistant's line). Columns with a type column trade places among
// themselves by the kind of line their type cell names, as init orders
// the columns it maps: a mobile first, then the person's own lines, then
// work (Google Contacts' `Phone 2` mobile before its `Phone 1` work line);
// a number whose type cell names a company's main line is tried after
// every other. raw is the cell or the part of it the number was read
// from, column its column. When no number can be called, err is the
// first one's reason (else why the numbers there were passed over), and
// raw and column the cell and column it is about.
func (cr *ContactReader) readRowPhone(row int, m *sheetMap, s *rowScratch, fields []string, read func(string) (phone.Number, error)) (ph phone.Number, raw, column string, err error) {
	var firstErr, passed error
	var errCol, errCell, passedCol, passedCell string
	try := func(p *phoneCol, cell string) bool {
		parts := phone.Split(cell)
		if parts == nil {
			parts = []string{cell}
		}
		for _, part := range parts {
			n, perr := read(part)
			if perr == nil {
				ph, raw, column = n, part, p.name
				return true
			}
			if firstErr == nil {
				firstErr, errCol, errCell = perr, p.name, cell
			}
		}
		return false
	}
	// The columns to try, in the list's order; typed holds the places of
	// those with a type column, and their kinds, to be ordered below.
	order, typed := s.tryOrder[:0], s.typedKinds[:0]
	for k := range m.phones {
		p := &m.phones[k]
		if strings.TrimSpace(fields[p.col]) == "" {
			continue
		}
		if p.notDialled != "" {
			s.counts.phoneRows[k]++
			if passed == nil {
				passed, passedCol, passedCell = fmt.Errorf("column %q is named for %s, which callrun does not call", p.name, p.notDialled), p.name, strings.TrimSpace(fields[p.col])
			}
			continue
		}
		if p.typeCol >= 0 {
			tk := s.typeKind(fields[p.typeCol])
			if tk.kind == lineNotDialled {
				typeCell := strings.TrimSpace(fields[p.typeCol])
				if s.counts.typeSkipped++; s.counts.typeSkippedExample == "" {
					s.counts.typeSkippedExample = fmt.Sprintf("row %d: column %q says %q", row, p.typeName, typeCell)
				}
				if passed == nil {
					passed, passedCol, passedCell = fmt.Errorf("column %q says %q: the number in column %q is %s, which callrun does not call", p.typeName, typeCell, p.name, tk.what), p.name, strings.TrimSpace(fields[p.col])
				}
				continue
			}
			typed = append(typed, typedPhone{at: len(order), k: k, kind: tk.kind})
		}
		order = append(order, k)
	}
	if len(typed) > 1 {
		// The typed columns' places, refilled in the order of their kinds
		// (stable: two mobiles keep the list's order); a company's main
		// line leaves its place and goes last.
		places := s.typedPlaces[:0]
		for _, t := range typed {
			places = append(places, t.at)
		}
		slices.SortStableFunc(typed, func(a, b typedPhone) int { return cmp.Compare(a.kind, b.kind) })
		var last []int
		for i, t := range typed {
			if t.kind == lineCompanyMain {
				last = append(last, t.k)
				order[places[i]] = -1
				continue
			}
			order[places[i]] = t.k
		}
		order = append(slices.DeleteFunc(order, func(k int) bool { return k < 0 }), last...)
		s.typedPlaces = places
	} else if len(typed) == 1 && typed[0].kind == lineCompanyMain {
		order = append(slices.Delete(order, typed[0].at, typed[0].at+1), typed[0].k)
	}
	s.tryOrder, s.typedKinds = order, typed
	for _, k := range order {
		if try(&m.phones[k], strings.TrimSpace(fields[m.phones[k].col])) {
			return ph, raw, column, nil
		}
	}
	switch {
	case firstErr != nil:
		return phone.Number{}, errCell, errCol, firstErr
	case passed != nil:
		return phone.Number{}, passedCell, passedCol, passed
	case len(m.phones) > 1:
		names := make([]string, len(m.phones))
		for k, p := range m.phones {
			names[k] = p.name
		}
		return phone.Number{}, "", "", fmt.Errorf("phone number is empty in every phone column (%s)", strings.Join(names, ", "))
	}
	_, err = read("")
	return phone.Number{}, "", "", err
}

// typeKind returns what a type cell says of its number, read once for
// each distinct cell a worker meets.
func (s *rowScratch) typeKind(cell string) typeKind {
	tk, ok := s.typeKinds[cell]
	if !ok {
		if s.typeKinds == nil {
			s.typeKinds = map[string]typeKind{}
		}
		tk.kind, tk.what = phoneLineKind(cell)
		if len(s.typeKinds) < 1000 { // a sheet has a few labels; free text is read each time
			s.typeKinds[strings.Clone(cell)] = tk
		}
	}
	return tk
}

// rowRules returns the phone rules a row of sheet sheetIdx is read with:
// the sheet's, or, where its country column names a country, that
// country's (country its code), with anyCountry, the same calling every
// country, to tell a number of another country as such. bad is the
// country cell when it names no country (the sheet's rules apply).
func (cr *ContactReader) rowRules(sheetIdx int, m *sheetMap, fields []string) (rules, anyCountry *phone.Rules, country, bad string) {
	rules = cr.rules[sheetIdx]
	if m.countryCol < 0 {
		return rules, nil, "", ""
	}
	cell := strings.TrimSpace(fields[m.countryCol])
	if cell == "" {
		return rules, nil, "", ""
	}
	code, ok := phone.ParseCountry(cell)
	if !ok {
		return rules, nil, "", cell
	}
	cr.inCountryMu.Lock()
	defer cr.inCountryMu.Unlock()
	pair := cr.inCountry[sheetIdx][code]
	if pair == nil {
		in := cr.rules[sheetIdx].InCountry(code)
		pair = &[2]*phone.Rules{in, in.AnyCountry()}
		cr.inCountry[sheetIdx][code] = pair
	}
	return pair[0], pair[1], code, ""
}

// readPhone reads a phone cell of a row of spec with the rules rowRules
// gave for it.
func (cr *ContactReader) readPhone(raw string, spec *SheetSpec, rules, anyCountry *phone.Rules, country string) (phone.Number, error) {
	if country != "" {
		// Another country's number is told as such, before whether
		// the campaign calls that country.
		if ph, err := phone.Read(raw, anyCountry); err == nil && ph.Region != country {
			return ph, fmt.Errorf("%s is a number in %s, but the row's country (column %q) is %s: fix the number or the country", ph.E164, phone.CountryName(ph.Region), spec.CountryColumn, phone.CountryName(country))
		}
	}
	return phone.Read(raw, rules)
}

// SplitName splits a full name into first and last name: the last word is
// the last name, the words before it the first; one word is a first name.
// A "Last, First" cell is read the other way round. The contact reader
// splits a sheet's name_column with it.
func SplitName(full string) (first, last string) {
	full = strings.TrimSpace(full)
	if l, f, ok := strings.Cut(full, ","); ok {
		return strings.Join(strings.Fields(f), " "), strings.Join(strings.Fields(l), " ")
	}
	words := strings.Fields(full)
	switch len(words) {
	case 0:
		return "", ""
	case 1:
		return words[0], ""
	}
	return strings.Join(words[:len(words)-1], " "), words[len(words)-1]
}

// plausibleEmail is a light check: one @ with text on both sides and a dot
// after it, no spaces. The service validates what it needs.
func plausibleEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && strings.Contains(domain, ".") && !strings.ContainsAny(s, " \t") && !strings.Contains(domain, "@")
}
