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
	// Fields are the record's fields, one per header column, as in the
	// file. Nil when Err is not nil.
	Fields []string
	// Err is a problem with this record only (wrong number of fields,
	// malformed quotes); reading goes on after it.
	Err error
}

// Reader streams the records of one contact sheet; memory does not
// grow with the sheet. It detects a UTF-8 byte order mark, the delimiter
// (',', ';' or tab) and Excel's "sep=" line; it reads CRLF or LF line
// ends and quoted fields holding newlines. A Reader is not safe for
// concurrent use. The campaign's contact reader and suppression list read
// sheets through it, one Reader a file.
type Reader struct {
	name     string
	closer   io.Closer
	limit    *limiter
	cr       *csv.Reader
	lineBase int // lines of the file before cr's first line: those of records cut by limit
	header   []string
	index    map[string]int // lower-case header name -> column
	delim    rune
	row      int   // row of the last record read
	endLine  int   // line of the file the last record ended on
	err      error // sticky fatal error
}

const (
	// sniffSize is how much of the start of a file is checked for
	// binary content.
	sniffSize = 4 << 10
	// bufSize is the read buffer; the header record is looked for in
	// its first fill to detect the delimiter.
	bufSize = 64 << 10
	// maxRowBytes bounds one record (see limiter). A quote that
	// is never closed would otherwise make encoding/csv read the rest of
	// the file into one field, and a field pasted from a file could take
	// any amount of memory.
	maxRowBytes = 4 << 20
)

// Open opens the sheet at path and reads its header, as [OpenWith] does
// with the zero [Options]. Errors name the path as given.
func Open(path string) (*Reader, error) { return OpenWith(path, Options{}) }

// newReader reads a sheet from r, starting with its header. name
// stands for the sheet in errors (usually its path). r is read as records
// are asked for, and is not closed.
func newReader(name string, r io.Reader) (*Reader, error) {
	return newReaderLimit(name, r, maxRowBytes)
}

// newReaderLimit is newReader with limit bytes at most to a record
// (tests use small ones).
func newReaderLimit(name string, r io.Reader, limit int) (*Reader, error) {
	fail := func(msg string) (*Reader, error) {
		return nil, &Error{File: name, Msg: msg}
	}
	br := bufio.NewReaderSize(r, bufSize)
	head, err := br.Peek(bufSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return fail("cannot read the sheet: " + err.Error())
	}
	if msg := sniff(head); msg != "" {
		return fail(msg)
	}
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		head = head[3:]
	}
	s := &Reader{name: name}
	// Excel writes "sep=;" as a first line to name the delimiter, and
	// does not show it as a row.
	if d, n := excelSepLine(head); n > 0 {
		s.delim = d
		br.Discard(n)
	} else {
		s.delim = detectDelimiter(head)
	}
	s.limit = newLimiter(br, s.delim, limit)
	s.newCSVReader()

	rec, err := s.cr.Read()
	if err == io.EOF {
		return fail("the sheet is empty: it has no header row")
	}
	if err != nil {
		if o := s.takeOver(err); o != nil {
			return fail(fmt.Sprintf("the header row is larger than %s: the file is probably not a CSV sheet", humanSize(int64(limit))))
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fail("the header row cannot be read: " + csvProblem(pe))
		}
		return fail("cannot read the sheet: " + err.Error())
	}
	s.advance(rec, nil)
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return fail(notUTF8)
		}
	}
	header := make([]string, len(rec))
	empty := true
	for i, f := range rec {
		header[i] = strings.TrimFunc(f, isSpace)
		if header[i] != "" {
			empty = false
		}
	}
	if empty {
		return fail("the first row is empty: it should be the header row with the column names")
	}
	s.header = header
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

const notUTF8 = "the sheet is not UTF-8 text (it was probably saved in another encoding): in Excel use File > Save As > CSV UTF-8, or name its code page in the campaign file (encoding: windows-1252 for most Western European exports)"

// sniff returns why head is not a CSV text file, or "". Workbooks
// (.xlsx) and UTF-16 text never get here: OpenWith reads them.
func sniff(head []byte) string {
	if bytes.HasPrefix(head, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")) { // OLE2 compound file
		return "the file is an old Excel workbook (.xls), which callrun does not read: in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"
	}
	if bytes.IndexByte(head[:min(len(head), sniffSize)], 0) >= 0 {
		return "the file holds binary data (NUL bytes), not CSV text; if it is a spreadsheet, in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"
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
	case bytes.HasPrefix(rest, []byte("\r\n")):
		return d, 7
	case bytes.HasPrefix(rest, []byte("\n")):
		return d, 6
	case len(rest) == 0:
		return d, 5
	}
	return 0, 0
}

// detectDelimiter counts ',', ';' and tabs outside quotes in the first
// record of head and returns the most frequent, ',' when none occurs or on
// a tie with ','.
func detectDelimiter(head []byte) rune {
	var commas, semis, tabs int
	inQuotes := false
scan:
	for _, c := range head {
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
			}
		case ';':
			if !inQuotes {
				semis++
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
	msg := fmt.Sprintf("sheet %s has no column %q (columns: %s", s.name, want, list)
	if near := nearestColumn(want, s.header); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return -1, errors.New(msg + ")")
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

// advance moves the row count past the record just read (rec, or the
// parse error pe): one row for the record and one for each blank line
// before it, which encoding/csv skips but spreadsheets show.
func (s *Reader) advance(rec []string, pe *csv.ParseError) {
	var start, end int
	if pe != nil {
		// The rest of the line with the error is dropped; reading
		// resumes on the next line.
		start, end = pe.StartLine, pe.Line
	} else {
		start, _ = s.cr.FieldPos(0)
		last := len(rec) - 1
		end, _ = s.cr.FieldPos(last)
		end += strings.Count(rec[last], "\n")
	}
	s.advanceLines(start+s.lineBase, end+s.lineBase)
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

// newCSVReader starts reading records from where s.limit is: at the
// header, or after a record it cut.
func (s *Reader) newCSVReader() {
	s.cr = csv.NewReader(s.limit)
	s.cr.Comma = s.delim
	s.cr.FieldsPerRecord = -1 // field counts are checked here, per row
	// ReuseRecord would save nothing: the fields handed out must not be
	// overwritten by the next record, so they would have to be copied.
}

// takeOver returns the record s.limit cut past the limit if err, from the
// csv.Reader's last Read, is about that record, and moves on past it: a
// new csv.Reader starts after it (the old one's buffer is empty, having
// handed out the cut's error), its lines counted from there. The cut's
// error reaches Read unless the record was malformed before the cut; the
// record's first line then tells the two apart.
func (s *Reader) takeOver(err error) *overLimit {
	o := s.limit.over
	if o == nil || err == nil {
		return nil
	}
	var cut *overLimit
	var pe *csv.ParseError
	if !errors.As(err, &cut) && !(errors.As(err, &pe) && pe.StartLine+s.lineBase == o.startLine) {
		return nil
	}
	s.limit.over = nil
	s.lineBase = o.endLines
	s.newCSVReader()
	return o
}

// overRecord is the Record, or the error that ends the reading, for
// a record cut past the limit.
func (s *Reader) overRecord(o *overLimit) (Record, error) {
	limit := humanSize(int64(o.limit))
	s.advanceLines(o.startLine, max(o.endLines, o.startLine))
	if o.quoteLine > 0 {
		s.err = &Error{File: s.name, Row: s.row, Msg: fmt.Sprintf(
			"the row is larger than %s, with a quoted field that opens on line %d of the file and runs over line breaks: probably a quote that is never closed, so the rows after it cannot be read reliably; check the quotes of that row",
			limit, o.quoteLine)}
		return Record{}, s.err
	}
	e := &Error{File: s.name, Row: s.row}
	if o.field < len(s.header) {
		e.Field = s.header[o.field]
	}
	where := "this field takes it past the limit"
	if e.Field == "" {
		where = fmt.Sprintf("its field %d (the header has %d) takes it past the limit", o.field+1, len(s.header))
	}
	e.Msg = fmt.Sprintf("the row is %s long, on line %d of the file, and a row may hold at most %s (%s): it is not read",
		humanSize(o.size), o.startLine, limit, where)
	if o.unclosed {
		e.Msg += fmt.Sprintf("; a quote opened on line %d is never closed", o.startLine)
	}
	return Record{Row: s.row, Err: e}, nil
}

// Next returns the next record. Records whose fields are all empty (blank
// rows, ",,,") are skipped. A problem with one record is returned in
// Record.Err and reading can go on; an error that ends the reading
// (the file is not UTF-8, cannot be read, or has a row that never ends) is
// returned as err, and again by every later call. At the end Next returns
// io.EOF.
func (s *Reader) Next() (Record, error) {
	if s.err != nil {
		return Record{}, s.err
	}
	for {
		rec, err := s.cr.Read()
		if o := s.takeOver(err); o != nil {
			return s.overRecord(o)
		}
		if err == io.EOF {
			s.err = io.EOF
			return Record{}, io.EOF
		}
		if err != nil {
			return s.recordError(err)
		}
		s.advance(rec, nil)
		blank := true
		for _, f := range rec {
			if !utf8.ValidString(f) {
				s.err = &Error{File: s.name, Row: s.row, Msg: notUTF8}
				return Record{}, s.err
			}
			if blank && strings.TrimFunc(f, isSpace) != "" {
				blank = false
			}
		}
		if blank {
			continue
		}
		if len(rec) != len(s.header) {
			return Record{Row: s.row, Err: &Error{File: s.name, Row: s.row,
				Msg: fmt.Sprintf("has %d fields but the header has %d (a missing or extra %s?)", len(rec), len(s.header), delimName(s.delim))}}, nil
		}
		return Record{Row: s.row, Fields: rec}, nil
	}
}

// recordError handles an error from encoding/csv: a malformed record is
// that row's error; anything else ends the reading.
func (s *Reader) recordError(err error) (Record, error) {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		s.err = &Error{File: s.name, Row: s.row + 1, Msg: "cannot read the sheet: " + err.Error()}
		return Record{}, s.err
	}
	s.advance(nil, pe)
	pe = &csv.ParseError{StartLine: pe.StartLine + s.lineBase, Line: pe.Line + s.lineBase, Column: pe.Column, Err: pe.Err} // lines of the file
	if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
		// A quoted field ran over several lines and then broke (or
		// reached the end of the file): the lines it swallowed may have
		// been rows of their own, so what follows cannot be trusted.
		s.err = &Error{File: s.name, Row: s.row, Msg: csvProblem(pe)}
		return Record{}, s.err
	}
	return Record{Row: s.row, Err: &Error{File: s.name, Row: s.row, Msg: csvProblem(pe)}}, nil
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

// Close closes the file opened by Open; it does nothing for a
// Reader made by newReader.
func (s *Reader) Close() error {
	if s.closer == nil {
		return nil
	}
	c := s.closer
	s.closer = nil
	return c.Close()
}
