// Package sheet reads contact sheets: CSV files as CRMs (HighLevel,
// HubSpot) and Excel export them, in UTF-8, UTF-16 or a legacy code page,
// and Excel workbooks (.xlsx), one record at a time so memory does not
// grow with the sheet. The campaign reads its sheets and suppression
// files with it ([Open]), and callrun init reads a sheet's header and
// first rows to write a campaign file.
//
// Reading uses encoding/csv directly rather than gocarina/gocsv: gocsv was
// measured four times slower at reading (1.2 s against 0.3 s for a million
// rows), its map decoding keeps the BOM in the first header name and lets
// a duplicate header win silently, and its reader configuration is global.
// gocsv is kept for writing the report.
package sheet

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a problem with a contact sheet, located as precisely as it can
// be: the file, the row a spreadsheet shows (0: not about one row) and the
// column header (empty: not about one column). [Open], [Reader.Column] and
// [Reader.Next] return it; callrun treats it as a problem with its input
// (a usage error).
type Error struct {
	File  string
	Row   int
	Field string
	Msg   string
	// empty: the file holds no row at all, not even a header ([IsEmpty]).
	empty bool
}

// IsEmpty reports whether err says a sheet holds no row at all (0
// bytes, or blank lines alone): its reader may say what such a file
// means for it, a suppression file that blocks nobody.
func IsEmpty(err error) bool {
	var se *Error
	return errors.As(err, &se) && se.empty
}

// Error returns the message with its location, such as
// `contacts/leads.csv row 14, column "Phone": ...`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Row > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("row ")
		b.WriteString(strconv.Itoa(e.Row))
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("column ")
		b.WriteString(strconv.Quote(e.Field))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Record is one record of a sheet.
type Record struct {
	// Row is the row number a spreadsheet shows for the record: the header
	// is row 1 and the first contact row 2, one row per CSV record even
	// when a quoted field holds a newline. Blank lines count as rows, as
	// spreadsheets show them, although Next skips them.
	Row int
	// Fields are the record's fields, one per header column. Nil when Err
	// is not nil.
	Fields []string
	// Err is a problem with this record only (more fields than the
	// header, malformed quotes); reading goes on after it.
	Err error
	// Refused are the fields of a record refused for its cells (Err says
	// why): for a NUL byte in a cell, one a header column, NUL and all;
	// for more fields than the header, as they were read, which do not
	// line up with its columns. nil otherwise. They are read for what the
	// row says against calling its number (a do-not-call flag, consent
	// withdrawn), which holds in the number's other rows too, and never
	// sent on or reported.
	Refused []string
	// Group is the group of rows the record is in, when the sheet shows
	// its rows in groups under titles of their own; nil otherwise.
	Group *Group
}

// Group is a group of a sheet's rows under a title of its own, as
// monday.com's board export writes each group of a board: a row with the
// group's name in its first cell, the header repeated under it, then the
// group's rows. The title row just above the header itself is the first
// group's. [Reader.Next] gives each record its group; the campaign's
// contact reader does not call the rows of a group whose title says do
// not call.
type Group struct {
	Title string // as written, without the spaces around it
	Row   int    // the row of the title
}

// Reader streams the records of one contact sheet; memory does not
// grow with the sheet. It detects a UTF-8 byte order mark, the delimiter
// (',', ';' or tab) and Excel's "sep=" line; it reads LF, CRLF or bare CR
// line ends (Excel for Mac, Numbers), mixed in one file or not, and
// quoted fields holding newlines. It reads rows as Excel and
// CRM reports write them: a row short of trailing fields reads them as
// empty, one empty field past the header's last is ignored, and a title
// block above the header, a report footer below the data and a row that
// repeats the header are skipped and told in [Reader.Notes]. Rows shown
// in groups, each under a title of its own above the header repeated
// (monday.com's board export), are read with their group ([Group]). A
// Reader is not safe for concurrent use.
// The campaign's contact reader and suppression list read sheets through
// it, one Reader a file.
type Reader struct {
	name    string
	closer  io.Closer
	ends    *lineEnds
	feed    *feeder
	cr      *csv.Reader
	header  []string
	index   map[string]int // lower-case header name -> column
	delim   rune
	row     int // row of the last record read
	endLine int // line of the file the last record ended on
	lastRow int // row of the last record Next returned, or of the header
	// headerRow is the row of the header: 1 unless blank rows or a
	// title are above it.
	headerRow int
	raw       []Record // records read ahead, to read again
	ready     []Record // records read ahead to find a footer and found to be none, for Next to return
	notes     []string
	// group is the group of the rows read now; repeats counts the rows
	// that repeat the header, repeatRows holds the first; groups counts
	// the groups, titles holds the first's titles: Notes tells of them.
	group      *Group
	repeats    int
	repeatRows []string
	groups     int
	titles     []string
	// inSubitems: the rows read now are a monday.com item's subitems;
	// subitems counts those skipped, subitemRows holds the first.
	inSubitems  bool
	subitems    int
	subitemRows []string
	err         error // sticky fatal error
	// workbook is what the reader of a workbook learned of it; nil for
	// a text file.
	workbook *Workbook
	// stamp is the stamp of the file read (see [Reader.Stamp]); nil
	// when none is known.
	stamp func() (Stamp, bool)
	// parsed counts the records parsed on the calling goroutine; past
	// aheadAfter, the parsing goes on ahead on a goroutine of its own
	// (ahead), aheadBatch records at a time, which alone touches cr,
	// feed, ends and the file from then on.
	parsed                 int
	aheadAfter, aheadBatch int
	ahead                  *readAhead
	batch                  []rawRecord // of ahead's, not handed out yet
	// what names the file in messages ("sheet", "suppression file"),
	// holds what its rows are ("contacts", "numbers"): see Options.
	what, holds string
}

// rawRecord is a record as encoding/csv parsed it: its fields and the
// lines of the file it spans, or the error of its Read; and whether a
// line of the file so far ended with a bare CR, for the message of a
// record that is not UTF-8.
type rawRecord struct {
	fields     []string
	start, end int
	err        error
	bareCR     bool
}

// readAhead parses a sheet's records on a goroutine of its own, a batch
// at a time, while the reader's caller works on the records before them:
// parsing is the part of a reading that only one goroutine can do.
type readAhead struct {
	batches chan []rawRecord
	stop    chan struct{}
	done    chan struct{}
}

const (
	// defaultAheadAfter is how many records a Reader parses itself
	// before it parses ahead: a reading of the header and the first rows
	// starts no goroutine.
	defaultAheadAfter = 2048
	// defaultAheadBatch is how many records go to the reader at a time,
	// and aheadBatches how many batches are parsed ahead of it at most.
	defaultAheadBatch = 512
	aheadBatches      = 4
)

const (
	// sniffSize is how much of the start of a file is checked for
	// binary content.
	sniffSize = 4 << 10
	// bufSize is the read buffer; the header record is looked for in
	// its first fill to detect the delimiter.
	bufSize = 64 << 10
	// maxRowBytes and maxRowLines bound one record (see feeder). A quote
	// that is never closed would otherwise make encoding/csv read the
	// rest of the file into one field, and a field pasted from a file
	// could take any amount of memory. No contact row comes near either.
	maxRowBytes = 4 << 20
	maxRowLines = 1000
	// maxTitleRows and maxFooterRows bound the title block above the
	// header and the footer below the data that Reader skips: more rows
	// than that are no title or footer, but rows to read.
	maxTitleRows  = 10
	maxFooterRows = 20
)

// Open opens the sheet at path and reads its header, as [OpenWith] does
// with the zero [Options]. Errors name the path as given.
func Open(path string) (*Reader, error) { return OpenWith(path, Options{}) }

// newReader reads a sheet from r, starting with its header. name
// stands for the sheet in errors (usually its path). r is read as records
// are asked for, and is not closed.
// emptySheet is the message of a sheet without even a header row.
const emptySheet = "the sheet is empty: it has no header row"

func newReader(name string, r io.Reader) (*Reader, error) {
	return newReaderBound(name, r, maxRowBytes, maxRowLines)
}

// newReaderBound is newReader with at most maxBytes bytes and maxLines
// lines to a record (tests use small bounds).
func newReaderBound(name string, r io.Reader, maxBytes, maxLines int) (*Reader, error) {
	return newReaderOf(name, r, maxBytes, maxLines, Options{})
}

// newReaderOf is newReaderBound for a file o says what it is and
// holds (Options.What, Options.Holds), for its messages.
func newReaderOf(name string, r io.Reader, maxBytes, maxLines int, o Options) (*Reader, error) {
	fail := func(msg string) (*Reader, error) {
		return nil, &Error{File: name, Msg: msg}
	}
	ends := &lineEnds{r: r}
	br := bufio.NewReaderSize(ends, bufSize)
	head, err := br.Peek(bufSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return fail("cannot read the " + o.what() + ": " + err.Error())
	}
	if msg := sniff(head); msg != "" {
		return fail(msg)
	}
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		head = head[3:]
	}
	s := &Reader{name: name, ends: ends, what: o.what(), holds: o.holds(), aheadAfter: defaultAheadAfter, aheadBatch: defaultAheadBatch}
	// Excel writes "sep=;" as a first line to name the delimiter, and
	// does not show it as a row.
	if d, n := excelSepLine(head); n > 0 {
		s.delim = d
		br.Discard(n)
	} else {
		s.delim = detectDelimiter(head)
	}
	s.feed = newFeeder(br, maxBytes, maxLines)
	s.cr = csv.NewReader(s.feed)
	s.cr.Comma = s.delim
	s.cr.FieldsPerRecord = -1 // field counts are checked here, per row
	// ReuseRecord would save nothing: the fields handed out must not be
	// overwritten by the next record, so they would have to be copied.

	// Rows above the header that are blank are skipped, as encoding/csv
	// skips empty lines and a workbook's empty rows are, and noted: a
	// sheet saved from Excel with its first row left empty has a row of
	// delimiters alone there (",,,").
	first, err := s.read()
	for err == nil && first.Err == nil && isBlank(first.Fields) {
		first, err = s.read()
	}
	var big *tooLarge
	switch {
	case err == io.EOF:
		return nil, &Error{File: name, Msg: emptySheet, empty: true}
	case errors.As(err, &big):
		return fail(fmt.Sprintf("the header row is larger than %s: the file is probably not a CSV sheet", humanSize(int64(maxBytes))))
	case err != nil:
		// Named by its row, which blank rows above it make other than 1.
		var se *Error
		if errors.As(err, &se) && se.Msg == s.notUTF8() {
			return nil, &Error{File: name, Row: se.Row, Msg: se.Msg}
		}
		if errors.As(err, &se) {
			return nil, &Error{File: name, Row: se.Row, Msg: "the header row cannot be read: " + se.Msg}
		}
		return fail(err.Error())
	case first.Err != nil:
		return nil, &Error{File: name, Row: first.Row, Msg: "the header row cannot be read: " + rowReason(first.Err)}
	}
	rec, err := s.findHeader(first)
	if err != nil {
		return nil, s.err // the rows read so far are a title or the header's
	}
	if first.Row > 1 {
		n := "row 1 is"
		if first.Row > 2 {
			n = fmt.Sprintf("rows 1-%d are", first.Row-1)
		}
		note := fmt.Sprintf("%s: %s blank, above the header, and skipped: the header is row %d", s.name, n, rec.Row)
		if rec.Row != first.Row {
			note = fmt.Sprintf("%s: %s blank, above the title, and skipped", s.name, n)
		}
		s.notes = slices.Insert(s.notes, 0, note)
	}
	header := make([]string, len(rec.Fields))
	empty := true
	for i, f := range rec.Fields {
		header[i] = strings.TrimFunc(f, isSpace)
		if header[i] != "" {
			empty = false
		}
	}
	if empty {
		return fail("the first row is empty: it should be the header row with the column names")
	}
	s.header = header
	s.headerRow = rec.Row
	s.lastRow = rec.Row
	s.index = make(map[string]int, len(header))
	for i, h := range header {
		if h == "" {
			continue // allowed until something refers to it (Column)
		}
		k := strings.ToLower(h)
		if j, dup := s.index[k]; dup {
			if header[j] == h {
				return fail(fmt.Sprintf("the header has the column %q twice (columns %d and %d): rename one of them", h, j+1, i+1))
			}
			return fail(fmt.Sprintf("the header has the columns %q and %q, which differ only in case (columns %d and %d): rename one of them", header[j], h, j+1, i+1))
		}
		s.index[k] = i
	}
	return s, nil
}

// findHeader returns the header record, first unless first begins a
// title block: rows of one field of text (a report's name, the date it was
// made), then the header, a row of at least two names none of which is a
// phone number. The title is noted; records read ahead that are no title
// are kept in s.raw for Next. A sheet that has nothing but one column
// keeps its first row as the header. An error that ends the reading
// before the header is found is returned.
func (s *Reader) findHeader(first Record) (Record, error) {
	if !lineOfText(first.Fields) {
		return first, nil
	}
	run := []Record{first}
	for len(run) <= maxTitleRows {
		rec, err := s.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Record{}, err
		}
		run = append(run, rec)
		switch {
		case rec.Err != nil:
		case isBlank(rec.Fields):
			continue
		case headerLike(rec.Fields):
			var title []string
			for _, r := range run[:len(run)-1] {
				if !isBlank(r.Fields) {
					title = append(title, strconv.Quote(strings.TrimFunc(r.Fields[0], isSpace)))
				}
			}
			s.notes = append(s.notes, fmt.Sprintf("%s: %s above the header (%s): a title, not read as contacts; the header is row %d",
				s.name, rowSpan(first.Row, rec.Row-1), strings.Join(title, ", "), rec.Row))
			if above := run[len(run)-2]; above.Row == rec.Row-1 && !isBlank(above.Fields) {
				s.startGroup(above)
			}
			return rec, nil
		case lineOfText(rec.Fields):
			continue
		}
		break
	}
	s.raw = run[1:]
	return first, nil
}

// lineOfText reports whether fields are a line of a title or a footer:
// one field of text (with a letter, so not a phone number), the first,
// and any others empty.
func lineOfText(fields []string) bool {
	// The others first: a contact's row has a second field far more often
	// than a first without a letter.
	return len(fields) > 0 && isBlank(fields[1:]) && strings.ContainsFunc(fields[0], unicode.IsLetter)
}

// headerLike reports whether fields can be a header found below a title:
// at least two names, none of which reads as a phone number.
func headerLike(fields []string) bool {
	names := 0
	for _, f := range fields {
		f = strings.TrimFunc(f, isSpace)
		if f == "" {
			continue
		}
		names++
		digits := 0
		for _, r := range f {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits >= 7 && !strings.ContainsFunc(f, unicode.IsLetter) {
			return false
		}
	}
	return names >= 2
}

// isBlank reports whether every field is empty or white space.
func isBlank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimFunc(f, isSpace) != "" {
			return false
		}
	}
	return true
}

func rowSpan(first, last int) string {
	if first == last {
		return fmt.Sprintf("row %d", first)
	}
	return fmt.Sprintf("rows %d-%d", first, last)
}

// Notes returns what the Reader skipped and why, one sentence each naming
// the sheet: a title block above the header (known once the Reader is
// open), and a report footer and the rows that repeat the header, with
// the groups' titles (known once Next has returned io.EOF). The
// campaign's plan and run show them.
func (s *Reader) Notes() []string {
	notes := slices.Clone(s.notes)
	if s.repeats > 0 {
		rows := "row " + listed(s.repeatRows, s.repeats) + " repeats"
		if s.repeats > 1 {
			rows = "rows " + listed(s.repeatRows, s.repeats) + " repeat"
		}
		note := fmt.Sprintf("%s: %s the header: not read as contacts", s.name, rows)
		if s.groups > 0 {
			note += fmt.Sprintf("; the rows are in %d group(s), each under the title in the row above its header: %s", s.groups, listed(s.titles, s.groups))
		}
		notes = append(notes, note)
	}
	if s.subitems > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s an item's subitems (under a \"Subitems\" header row, as monday.com exports them): not read as contacts", s.name, rowsAre(s.subitemRows, s.subitems)))
	}
	return notes
}

// rowsAre says which rows of the first listed are, in all n.
func rowsAre(rows []string, n int) string {
	if n == 1 {
		return "row " + listed(rows, n) + " is"
	}
	return "rows " + listed(rows, n) + " are"
}

// maxNoted is how many rows or titles a note lists.
const maxNoted = 5

// listed joins the first items of n, with how many more there are.
func listed(items []string, n int) string {
	list := strings.Join(items, ", ")
	if n > len(items) {
		list += fmt.Sprintf(", and %d more", n-len(items))
	}
	return list
}

// repeatsHeader reports whether fields are the header again, cell for
// cell, empty cells past the last name aside.
func (s *Reader) repeatsHeader(fields []string) bool {
	if len(fields) == 0 || strings.TrimFunc(fields[0], isSpace) != s.header[0] {
		return false
	}
	n, h := len(fields), len(s.header)
	for n > 0 && strings.TrimFunc(fields[n-1], isSpace) == "" {
		n--
	}
	for h > 0 && s.header[h-1] == "" {
		h--
	}
	if n != h {
		return false
	}
	for i, f := range fields[:n] {
		if strings.TrimFunc(f, isSpace) != s.header[i] {
			return false
		}
	}
	return true
}

// subitemsWords are the words monday.com's board export writes in the
// header row of an item's subitems, in the languages of its interface.
var subitemsWords = []string{"subitems", "subitem", "unterelemente", "sous-éléments", "sous-elements", "subelementos", "subitens", "sottoelementi"}

// subitemsHeader reports whether fields are the header of an item's
// subitems, as monday.com's board export writes it under the item: a
// first cell (or, with the first empty, a second) that says Subitems,
// and another name beside it. The rows under it, up to the next row
// whose first cell is not empty, are the subitems: tasks of the item in
// columns of their own, never contacts, whatever their cells hold under
// the sheet's header.
func subitemsHeader(fields []string) bool {
	first := 0
	if len(fields) > 1 && strings.TrimFunc(fields[0], isSpace) == "" {
		first = 1
	}
	if len(fields) <= first+1 {
		return false
	}
	word := strings.TrimFunc(fields[first], isSpace)
	// Every word begins with s or u, and no other letter lowers to one:
	// most rows are told at their first letter.
	if word == "" || !strings.ContainsRune("sSuU", rune(word[0])) || !slices.Contains(subitemsWords, strings.ToLower(word)) {
		return false
	}
	return !isBlank(fields[first+1:])
}

// subitem takes note of rec, a subitems' header or one of the subitems
// under it, and reads on among them.
func (s *Reader) subitem(rec Record) {
	s.inSubitems = true
	if s.subitems++; len(s.subitemRows) < maxNoted {
		s.subitemRows = append(s.subitemRows, strconv.Itoa(rec.Row))
	}
	s.lastRow = rec.Row
}

// repeatedHeader takes note of rec, a row that repeats the header.
func (s *Reader) repeatedHeader(rec Record) {
	if s.repeats++; len(s.repeatRows) < maxNoted {
		s.repeatRows = append(s.repeatRows, strconv.Itoa(rec.Row))
	}
	s.lastRow = rec.Row
}

// startGroup starts the group titled by rec, a line of text just above
// the header or a repeat of it.
func (s *Reader) startGroup(rec Record) {
	s.group = &Group{Title: strings.TrimFunc(rec.Fields[0], isSpace), Row: rec.Row}
	if s.groups++; len(s.titles) < maxNoted {
		s.titles = append(s.titles, fmt.Sprintf("%q (row %d)", s.group.Title, rec.Row))
	}
}

// headerBelow reports whether the record after above, the one Next has
// just read, is the row below it and repeats the header, and if so reads
// it.
func (s *Reader) headerBelow(above Record) (Record, bool) {
	below := func(rec Record) bool {
		return rec.Err == nil && rec.Row == above.Row+1 && s.repeatsHeader(rec.Fields)
	}
	if len(s.ready) > 0 {
		if rec := s.ready[0]; below(rec) {
			s.ready = s.ready[1:]
			return rec, true
		}
		return Record{}, false
	}
	rec, err := s.read()
	if err != nil {
		return Record{}, false // read returns it again
	}
	if below(rec) {
		return rec, true
	}
	s.raw = append([]Record{rec}, s.raw...)
	return Record{}, false
}

// notUTF8 says that the sheet is not UTF-8 and what to do. A file whose
// lines end with a bare CR is most likely Excel for Mac's "CSV
// (Macintosh)" or "Comma Separated Values", which are written in the Mac's
// code page: the message names that one.
func (s *Reader) notUTF8() string { return notUTF8(s.what, s.ends != nil && s.ends.bareCR) }

// notUTF8 is [Reader.notUTF8] for a file named what in messages that has
// a line ended by a bare CR or not.
func notUTF8(what string, bareCR bool) string {
	if what == "" {
		what = "sheet"
	}
	if bareCR {
		return "the " + what + " is not UTF-8 text: its lines end with a bare CR, as in Excel for Mac's \"CSV (Macintosh)\" and \"Comma Separated Values\", which Excel writes in the Mac's code page: name it in the campaign file (encoding: macintosh), or in Excel use File > Save As > CSV UTF-8"
	}
	return "the " + what + " is not UTF-8 text (it was probably saved in another encoding): in Excel use File > Save As > CSV UTF-8, or name its code page in the campaign file (encoding: windows-1252 for most Western European exports)"
}

// sniff returns why head is not a CSV text file, or "". Workbooks
// (.xlsx) and UTF-16 text, with its mark or without ([bomless16]), never
// get here: OpenWith reads them.
func sniff(head []byte) string {
	if bytes.HasPrefix(head, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")) { // OLE2 compound file
		return "the file is an old Excel workbook (.xls), which callrun does not read: in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"
	}
	if bytes.IndexByte(head[:min(len(head), sniffSize)], 0) >= 0 {
		return "the file holds binary data (NUL bytes), not CSV text; if it is a spreadsheet, in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"
	}
	// What a CRM's or a web app's "Export to Excel" writes under an .xls
	// name: a web page of a table (Salesforce's "Excel Format .xls"), or
	// Excel 2003's XML Spreadsheet. Read as CSV, its first line is a tag,
	// and the message was about a quote in a field.
	start := bytes.ToLower(bytes.TrimLeft(bytes.TrimPrefix(head[:min(len(head), sniffSize)], []byte("\xef\xbb\xbf")), " \t\r\n"))
	switch {
	case bytes.HasPrefix(start, []byte("<")) && bytes.Contains(start, []byte("<workbook")) && bytes.Contains(start, []byte("urn:schemas-microsoft-com:office:spreadsheet")):
		return "the file is an Excel 2003 XML Spreadsheet, which callrun does not read: in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"
	case bytes.HasPrefix(start, []byte("<html")), bytes.HasPrefix(start, []byte("<!doctype html")), bytes.HasPrefix(start, []byte("<table")), bytes.HasPrefix(start, []byte("<?xml")) && bytes.Contains(start, []byte("<html")):
		return "the file is a web page (HTML), not a CSV sheet: an \"Export to Excel\" often writes one under an .xls name; open it in Excel and use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8, or export the list as CSV"
	}
	return ""
}

// excelSepLine recognises Excel's "sep=X" first line and returns the
// delimiter and the length of the line, or n == 0.
func excelSepLine(head []byte) (delim rune, n int) {
	if len(head) < 5 || !bytes.EqualFold(head[:4], []byte("sep=")) {
		return 0, 0
	}
	d := rune(head[4])
	if d != ',' && d != ';' && d != '\t' && d != '|' {
		return 0, 0
	}
	rest := head[5:]
	switch {
	case bytes.HasPrefix(rest, []byte("\n")):
		return d, 6
	case len(rest) == 0:
		return d, 5
	}
	return 0, 0
}

// detectDelimiter counts ',', ';' and tabs outside quotes in the first
// record of head and returns the most frequent, ',' when none occurs or on
// a tie with ','. A header whose every comma is followed by a space and
// that has a semicolon followed by none is separated by ';': its commas
// are a name's ("Nachname, Vorname;Telefon", as a German Excel writes a
// column so named), which no program writes as a delimiter.
func detectDelimiter(head []byte) rune {
	var commas, semis, tabs, spacedCommas, bareSemis int
	inQuotes := false
scan:
	for i, c := range head {
		spaced := i+1 < len(head) && head[i+1] == ' '
		switch c {
		case '"':
			inQuotes = !inQuotes
		case '\n':
			if !inQuotes {
				break scan
			}
		case ',':
			if !inQuotes {
				commas++
				if spaced {
					spacedCommas++
				}
			}
		case ';':
			if !inQuotes {
				semis++
				if !spaced {
					bareSemis++
				}
			}
		case '\t':
			if !inQuotes {
				tabs++
			}
		}
	}
	switch {
	case semis > commas && semis >= tabs:
		return ';'
	case commas > 0 && spacedCommas == commas && bareSemis > 0 && semis >= tabs:
		return ';'
	case tabs > commas && tabs > semis:
		return '\t'
	}
	return ','
}

// isSpace reports the characters trimmed around header names:
// Unicode white space and stray byte order marks or zero-width spaces.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\ufeff' || r == '\u200b'
}

// HeaderRow returns the row of the header: 1, or the row below the
// blank rows or the title above it (see [Reader.Notes]).
func (s *Reader) HeaderRow() int { return s.headerRow }

// Header returns the column names as in the file, with the byte order
// mark and surrounding spaces removed. Empty names are "".
func (s *Reader) Header() []string { return slices.Clone(s.header) }

// Delimiter returns the field delimiter: ',', ';' or '\t'.
func (s *Reader) Delimiter() rune { return s.delim }

// Name returns the name the sheet is known by in errors.
func (s *Reader) Name() string { return s.name }

// Column returns the index of the header column called name, compared
// after trimming and without regard to case. The error for a missing
// column lists the header's columns and suggests the nearest one.
func (s *Reader) Column(name string) (int, error) {
	want := strings.TrimFunc(name, isSpace)
	if want == "" {
		return -1, &Error{File: s.name, Msg: "a column name is empty: name a column of the header"}
	}
	if i, ok := s.index[strings.ToLower(want)]; ok {
		return i, nil
	}
	var cols []string
	for _, h := range s.header {
		if h != "" {
			cols = append(cols, strconv.Quote(h))
		}
	}
	const maxListed = 30
	list := strings.Join(cols[:min(len(cols), maxListed)], ", ")
	if len(cols) > maxListed {
		list += fmt.Sprintf(", and %d more", len(cols)-maxListed)
	}
	msg := fmt.Sprintf("%s %s has no column %q (columns: %s", s.what, s.name, want, list)
	if near := nearestColumn(want, s.header); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	msg += ")"
	if row := s.nameBelow(want); row > 0 {
		msg += fmt.Sprintf("; row %d holds %q: if that row is the header, delete the rows above it (a title or a row of group names over the columns)", row, want)
	}
	if hint := s.workbook.tabsHint(s.holds); hint != "" {
		msg += "; " + hint
	}
	return -1, errors.New(msg)
}

// nameBelow returns the row, among the few below the header, that holds
// a cell reading want (trimmed, in any case), or 0: a sheet whose header
// is not its first row, under a title of several cells or a row of group
// names over the columns ("Person", "Contact", merged across them), which
// is no title [findHeader] skips. The records it reads are kept in s.raw,
// to be read again.
func (s *Reader) nameBelow(want string) int {
	var recs []Record
	found := 0
	for len(recs) < maxTitleRows {
		rec, err := s.read()
		if err != nil {
			break
		}
		recs = append(recs, rec)
		if found == 0 && slices.ContainsFunc(rec.Fields, func(f string) bool { return strings.EqualFold(strings.TrimFunc(f, isSpace), want) }) {
			found = rec.Row
		}
	}
	s.raw = append(recs, s.raw...)
	return found
}

// nearestColumn suggests the header name closest to want: one that
// contains it or is contained in it once case, spaces, '_' and '-' are
// ignored ("Phone" and "Phone Number"), else the one at the smallest edit
// distance if that is small for the length of the name. "" when nothing
// is close.
func nearestColumn(want string, header []string) string {
	w := foldName(want)
	best, bestScore := "", 0
	for _, h := range header {
		if h == "" {
			continue
		}
		f := foldName(h)
		var score int
		switch {
		case f == w:
			score = 1000
		case w != "" && f != "" && (strings.Contains(f, w) || strings.Contains(w, f)):
			score = 500 - abs(len(f)-len(w))
		default:
			d := EditDistance(w, f)
			if d > max(2, len(w)/3) {
				continue
			}
			score = 100 - d
		}
		if score > bestScore {
			best, bestScore = h, score
		}
	}
	return best
}

func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-', '.':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// EditDistance is the Levenshtein distance between a and b, by rune. The
// reader suggests column names with it; the campaign file's loader and the
// command line suggest keys, flags and commands.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// advanceLines moves the row count past a record on lines start to end of
// the file.
func (s *Reader) advanceLines(start, end int) {
	if start > s.endLine {
		s.row += start - s.endLine
	} else {
		s.row++
	}
	s.endLine = end
}

// read returns the next record as the file has it, with its row, or the
// error that ends the reading (io.EOF at the end), which it returns again
// on every later call. A malformed record is returned in Record.Err.
func (s *Reader) read() (Record, error) {
	if len(s.raw) > 0 {
		rec := s.raw[0]
		s.raw = s.raw[1:]
		return rec, nil
	}
	if s.err != nil {
		return Record{}, s.err
	}
	raw := s.nextRaw()
	if raw.err != nil {
		rec, err := s.readError(raw.err)
		if s.err != nil {
			s.stopAhead() // nothing more is read
		}
		return rec, err
	}
	s.advanceLines(raw.start, raw.end)
	for _, f := range raw.fields {
		if !utf8.ValidString(f) {
			s.err = &Error{File: s.name, Row: s.row, Msg: notUTF8(s.what, raw.bareCR)}
			s.stopAhead()
			return Record{}, s.err
		}
	}
	return Record{Row: s.row, Fields: raw.fields}, nil
}

// parse parses the next record of the file.
func (s *Reader) parse() rawRecord {
	rec, err := s.cr.Read()
	defer s.feed.startRecord()
	bareCR := s.ends != nil && s.ends.bareCR
	if err != nil {
		return rawRecord{err: err, bareCR: bareCR}
	}
	start, _ := s.cr.FieldPos(0)
	last := len(rec) - 1
	end, _ := s.cr.FieldPos(last)
	end += strings.Count(rec[last], "\n")
	return rawRecord{fields: rec, start: start, end: end, bareCR: bareCR}
}

// nextRaw returns the next record parsed: parsed here for the first
// s.aheadAfter records, then by the goroutine that parses ahead.
func (s *Reader) nextRaw() rawRecord {
	if s.ahead == nil {
		if s.parsed < s.aheadAfter {
			s.parsed++
			return s.parse()
		}
		s.startAhead()
	}
	if len(s.batch) == 0 {
		batch, ok := <-s.ahead.batches
		if !ok {
			// Never so: the goroutine stops after the error that ends
			// the file, which ends the reading here too.
			return rawRecord{err: errors.New("the reading ahead stopped")}
		}
		s.batch = batch
	}
	raw := s.batch[0]
	s.batch = s.batch[1:]
	return raw
}

// startAhead starts the goroutine that parses the records ahead. It
// stops after the error that ends the file (io.EOF, a record over the
// bound, a failed read), or when [Reader.stopAhead] tells it to.
func (s *Reader) startAhead() {
	a := &readAhead{batches: make(chan []rawRecord, aheadBatches), stop: make(chan struct{}), done: make(chan struct{})}
	s.ahead = a
	n := s.aheadBatch
	go func() {
		defer close(a.done)
		defer close(a.batches)
		for {
			batch := make([]rawRecord, 0, n)
			ended := false
			for len(batch) < n && !ended {
				raw := s.parse()
				batch = append(batch, raw)
				if raw.err != nil {
					var pe *csv.ParseError
					ended = !errors.As(raw.err, &pe)
				}
			}
			select {
			case a.batches <- batch:
			case <-a.stop:
				return
			}
			if ended {
				return
			}
		}
	}()
}

// stopAhead stops the goroutine parsing ahead, if any, and waits for it.
func (s *Reader) stopAhead() {
	if a := s.ahead; a != nil {
		select {
		case <-a.stop:
		default:
			close(a.stop)
		}
		<-a.done
	}
}

// readError is read's answer to the error of encoding/csv's Read: a
// record that breaks the rules alone, or the error that ends the reading.
func (s *Reader) readError(err error) (Record, error) {
	var big *tooLarge
	var pe *csv.ParseError
	switch {
	case err == io.EOF:
		s.err = io.EOF
		return Record{}, io.EOF
	case errors.As(err, &big):
		s.advanceLines(big.start, big.start)
		s.err = &Error{File: s.name, Row: s.row, Msg: tooLargeProblem(big, s.feed)}
		return Record{}, fmt.Errorf("%w (%w)", s.err, big)
	case errors.As(err, &pe):
		// The rest of the line with the error is dropped; reading
		// resumes on the next line.
		s.advanceLines(pe.StartLine, pe.Line)
		if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
			// A quoted field ran over several lines and then broke (or
			// reached the end of the file): the lines it swallowed may
			// have been rows of their own, so what follows cannot be
			// trusted.
			s.err = &Error{File: s.name, Row: s.row, Msg: csvProblem(pe)}
			return Record{}, s.err
		}
		return Record{Row: s.row, Err: &Error{File: s.name, Row: s.row, Msg: csvProblem(pe)}}, nil
	}
	s.err = &Error{File: s.name, Row: s.row + 1, Msg: "cannot read the " + s.what + ": " + err.Error()}
	return Record{}, s.err
}

// tooLargeProblem says what is wrong with a record over feeder's bounds,
// and what to check.
func tooLargeProblem(big *tooLarge, f *feeder) string {
	if big.lines > 1 {
		over := fmt.Sprintf("more than %d lines", f.maxLines)
		if big.lines < f.maxLines {
			over = fmt.Sprintf("%d lines and more than %s", big.lines, humanSize(int64(f.maxSize)))
		}
		return fmt.Sprintf("a quoted field of the row that starts on line %d of the file runs over %s: probably a quote that is never closed, so the rows after it cannot be read; check the quotes of that row", big.start, over)
	}
	return fmt.Sprintf("the row on line %d of the file is larger than %s, far more than a contact's row holds: check that line (a field pasted from a file, or a file that is not a contact sheet)", big.start, humanSize(int64(f.maxSize)))
}

// Next returns the next record, with its group. Records whose fields are
// all empty (blank rows, ",,,") are skipped, and a report footer (a blank
// row, then rows of one field of text to the end of the file) ends the
// sheet with a note. A row that repeats the header is skipped, and the
// line of text just above it, if any, is the title of the group of rows
// that follows; both are noted. A problem with one record is returned in
// Record.Err and reading can go on; an error that ends the reading (the
// file is not UTF-8, cannot be read, or has a row that never ends) is
// returned as err, and again by every later call. At the end Next
// returns io.EOF.
func (s *Reader) Next() (Record, error) {
	for {
		var rec Record
		// judged: a record read ahead to find a footer, and found to be
		// none.
		judged := len(s.ready) > 0
		if judged {
			rec = s.ready[0]
			s.ready = s.ready[1:]
		} else {
			var err error
			if rec, err = s.read(); err != nil {
				if s.err != io.EOF {
					return Record{}, s.err // without the tooLarge it may wrap
				}
				return Record{}, err
			}
		}
		if rec.Err == nil && s.inSubitems && !isBlank(rec.Fields) {
			s.inSubitems = strings.TrimFunc(rec.Fields[0], isSpace) == ""
		}
		switch {
		case rec.Err != nil:
			s.lastRow = rec.Row
			rec.Group = s.group
			return rec, nil
		case isBlank(rec.Fields):
			continue
		case s.inSubitems || subitemsHeader(rec.Fields):
			s.subitem(rec)
			continue
		case s.repeatsHeader(rec.Fields):
			s.repeatedHeader(rec)
			continue
		case len(s.header) > 1 && lineOfText(rec.Fields):
			if header, ok := s.headerBelow(rec); ok {
				s.startGroup(rec)
				s.repeatedHeader(header)
				continue
			}
			if !judged && rec.Row > s.lastRow+1 {
				s.footer(rec)
				continue
			}
		}
		s.lastRow = rec.Row
		rec = s.fit(rec)
		rec.Group = s.group
		return rec, nil
	}
}

// footer reads on from first, a line of text after a blank row, to tell a
// report's footer from rows of the sheet. If only lines of text (and blank
// rows) follow to the end of the file, they are a footer: it is noted and
// the reading ends. If another record follows, the records read are
// queued for Next. If an error ends the reading first, it does so at
// once: lines of text are no contacts to call anyway.
func (s *Reader) footer(first Record) {
	run := []Record{first}
	for {
		rec, err := s.read()
		if err == io.EOF {
			var lines []string
			for _, r := range run[:min(len(run), 3)] {
				lines = append(lines, strconv.Quote(strings.TrimFunc(r.Fields[0], isSpace)))
			}
			if len(run) > 3 {
				lines = append(lines, "...")
			}
			s.notes = append(s.notes, fmt.Sprintf("%s: %s after the data (%s): a report's footer, not read as contacts",
				s.name, rowSpan(first.Row, run[len(run)-1].Row), strings.Join(lines, ", ")))
			return
		}
		if err == nil && rec.Err == nil && isBlank(rec.Fields) {
			continue
		}
		if err == nil && rec.Err == nil && lineOfText(rec.Fields) && len(run) < maxFooterRows {
			run = append(run, rec)
			continue
		}
		if err != nil {
			return
		}
		s.ready = append(s.ready, run...)
		s.ready = append(s.ready, rec)
		return
	}
}

// fit gives a record one field per header column, as Excel's rows are
// meant: trailing fields it left out read as empty, and one empty field
// past the last column is dropped. A record with more fields is an error.
func (s *Reader) fit(rec Record) Record {
	n, want := len(rec.Fields), len(s.header)
	switch {
	case rec.Err != nil || n == want:
	case n < want:
		rec.Fields = append(rec.Fields, make([]string, want-n)...)
	case n == want+1 && strings.TrimFunc(rec.Fields[n-1], isSpace) == "":
		rec.Fields = rec.Fields[:want]
	default:
		rec.Err = &Error{File: s.name, Row: rec.Row,
			Msg: fmt.Sprintf("has %d fields but the header has %d (an extra %s, or a field holding one that is not in quotes?)", n, want, delimName(s.delim))}
		rec.Refused, rec.Fields = rec.Fields, nil
	}
	if rec.Err == nil {
		// A NUL byte past the first bytes of a text file (those make it a
		// binary file, see sniff): one cell pasted from another program.
		// Its row is no contact to send on, NUL and all, to the service.
		for i, f := range rec.Fields {
			if strings.IndexByte(f, 0) >= 0 {
				rec.Err = &Error{File: s.name, Row: rec.Row,
					Msg: fmt.Sprintf("column %q holds a NUL byte, a character that is not text (left by a copy from another program): delete it from the cell", s.header[i])}
				rec.Refused, rec.Fields = rec.Fields, nil
				break
			}
		}
	}
	return rec
}

// rowReason is the sentence of a record's error, without its location.
func rowReason(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// csvProblem explains a csv.ParseError in a sentence, with the line of the
// file (which differs from the row when quoted fields hold newlines).
func csvProblem(pe *csv.ParseError) string {
	where := fmt.Sprintf("line %d, character %d of the file", pe.Line, pe.Column)
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Sprintf(`a field that is not in quotes contains a quote (%s): put the field in quotes and double its quotes, as in "5"" screen"`, where)
	case errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine:
		return fmt.Sprintf("a quote opened on line %d of the file is not closed properly (%s), so the rows after it cannot be read reliably: check the quotes of that row", pe.StartLine, where)
	case errors.Is(pe.Err, csv.ErrQuote):
		return fmt.Sprintf(`a quoted field is not closed properly (%s): a quote inside a quoted field must be doubled ("")`, where)
	}
	return fmt.Sprintf("malformed CSV (%s): %v", where, pe.Err)
}

func delimName(d rune) string {
	switch d {
	case ',':
		return "comma"
	case ';':
		return "semicolon"
	case '\t':
		return "tab"
	}
	return strconv.QuoteRune(d)
}

// Stamp returns, once the reader has read to the end, the stamp of the
// file whose bytes it parsed: for a text sheet, of the bytes read, as the
// file was when opened; for a workbook opened through a [Workbooks], of
// the workbook before its text was unpacked. False when none is known:
// not read to the end yet, a text sheet written to as it was read, a
// workbook opened without a Workbooks. The campaign's kept records of a sheet
// are those of this stamp.
func (s *Reader) Stamp() (Stamp, bool) {
	if s.stamp == nil || s.err != io.EOF {
		return Stamp{}, false
	}
	return s.stamp()
}

// Close closes the file opened by Open; it does nothing for a
// Reader made by newReader.
func (s *Reader) Close() error {
	s.stopAhead()
	if s.closer == nil {
		return nil
	}
	c := s.closer
	s.closer = nil
	return c.Close()
}
