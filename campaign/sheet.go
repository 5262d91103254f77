package campaign

// Contact sheets: CSV files as CRMs (HighLevel, HubSpot) and Excel export
// them, read one record at a time so memory does not grow with the sheet.
//
// Reading uses encoding/csv directly rather than gocarina/gocsv: gocsv was
// measured four times slower at reading (1.2 s against 0.3 s for a million
// rows), its map decoding keeps the BOM in the first header name and lets
// a duplicate header win silently, and its reader configuration is global.
// gocsv is kept for writing the report.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SheetError is a problem with a contact sheet, located as precisely as
// it can be: the file, the row a spreadsheet shows (0: not about one row)
// and the column header (empty: not about one column).
type SheetError struct {
	File  string
	Row   int
	Field string
	Msg   string
}

// Error returns the message with its location, such as
// `contacts/leads.csv row 14, column "Phone": ...`.
func (e *SheetError) Error() string {
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

// SheetRecord is one record of a sheet.
type SheetRecord struct {
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

// SheetReader streams the records of one contact sheet; memory does not
// grow with the sheet. It detects a UTF-8 byte order mark, the delimiter
// (',', ';' or tab) and Excel's "sep=" line; it reads CRLF or LF line
// ends and quoted fields holding newlines. A SheetReader is not safe for
// concurrent use.
type SheetReader struct {
	name     string
	closer   io.Closer
	limit    *sheetLimiter
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
	// sheetSniffSize is how much of the start of a file is checked for
	// binary content.
	sheetSniffSize = 4 << 10
	// sheetBufSize is the read buffer; the header record is looked for in
	// its first fill to detect the delimiter.
	sheetBufSize = 64 << 10
	// sheetMaxRowBytes bounds one record (see sheetLimiter). A quote that
	// is never closed would otherwise make encoding/csv read the rest of
	// the file into one field, and a field pasted from a file could take
	// any amount of memory.
	sheetMaxRowBytes = 4 << 20
)

// OpenSheet opens the sheet at path and reads its header. Errors name the
// path as given.
func OpenSheet(path string) (*SheetReader, error) {
	err := checkRegular(path)
	var f *os.File
	if err == nil {
		f, err = os.Open(path)
	}
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error() // the path is named once, by SheetError
		}
		return nil, &SheetError{File: path, Msg: "cannot open the sheet: " + msg}
	}
	s, err := NewSheetReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.closer = f
	return s, nil
}

// NewSheetReader reads a sheet from r, starting with its header. name
// stands for the sheet in errors (usually its path). r is read as records
// are asked for, and is not closed.
func NewSheetReader(name string, r io.Reader) (*SheetReader, error) {
	return newSheetReader(name, r, sheetMaxRowBytes)
}

// newSheetReader is NewSheetReader with limit bytes at most to a record
// (tests use small ones).
func newSheetReader(name string, r io.Reader, limit int) (*SheetReader, error) {
	fail := func(msg string) (*SheetReader, error) {
		return nil, &SheetError{File: name, Msg: msg}
	}
	br := bufio.NewReaderSize(r, sheetBufSize)
	head, err := br.Peek(sheetBufSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return fail("cannot read the sheet: " + err.Error())
	}
	if msg := sheetSniff(head); msg != "" {
		return fail(msg)
	}
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		head = head[3:]
	}
	s := &SheetReader{name: name}
	// Excel writes "sep=;" as a first line to name the delimiter, and
	// does not show it as a row.
	if d, n := sheetExcelSepLine(head); n > 0 {
		s.delim = d
		br.Discard(n)
	} else {
		s.delim = sheetDetectDelimiter(head)
	}
	s.limit = newSheetLimiter(br, s.delim, limit)
	s.newCSVReader()

	rec, err := s.cr.Read()
	if err == io.EOF {
		return fail("the sheet is empty: it has no header row")
	}
	if err != nil {
		if o := s.takeOver(err); o != nil {
			return fail(fmt.Sprintf("the header row is larger than %s: the file is probably not a CSV sheet", sheetSize(int64(limit))))
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fail("the header row cannot be read: " + sheetCSVProblem(pe))
		}
		return fail("cannot read the sheet: " + err.Error())
	}
	s.advance(rec, nil)
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return fail(sheetNotUTF8)
		}
	}
	header := make([]string, len(rec))
	empty := true
	for i, f := range rec {
		header[i] = strings.TrimFunc(f, isSheetSpace)
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

const sheetNotUTF8 = "the sheet is not UTF-8 text (it was probably saved in another encoding): in Excel use File > Save As > CSV UTF-8"

// sheetSniff returns why head is not a CSV text file, or "".
func sheetSniff(head []byte) string {
	const excel = "looks like an Excel workbook, not CSV: in Excel use File > Save As > CSV UTF-8"
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "the file " + excel // .xlsx is a zip archive
	case bytes.HasPrefix(head, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
		return "the file " + excel // .xls (OLE2 compound file)
	case bytes.HasPrefix(head, []byte("\xff\xfe")), bytes.HasPrefix(head, []byte("\xfe\xff")):
		return "the file is UTF-16 text (Excel's \"Unicode Text\"), not UTF-8 CSV: in Excel use File > Save As > CSV UTF-8"
	}
	if bytes.IndexByte(head[:min(len(head), sheetSniffSize)], 0) >= 0 {
		return "the file holds binary data (NUL bytes), not CSV text; if it is a spreadsheet, in Excel use File > Save As > CSV UTF-8"
	}
	return ""
}

// sheetExcelSepLine recognises Excel's "sep=X" first line and returns the
// delimiter and the length of the line, or n == 0.
func sheetExcelSepLine(head []byte) (delim rune, n int) {
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

// sheetDetectDelimiter counts ',', ';' and tabs outside quotes in the first
// record of head and returns the most frequent, ',' when none occurs or on
// a tie with ','.
func sheetDetectDelimiter(head []byte) rune {
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

// isSheetSpace reports the characters trimmed around header names:
// Unicode white space and stray byte order marks or zero-width spaces.
func isSheetSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\ufeff' || r == '\u200b'
}

// Header returns the column names as in the file, with the byte order
// mark and surrounding spaces removed. Empty names are "".
func (s *SheetReader) Header() []string { return slices.Clone(s.header) }

// Delimiter returns the field delimiter: ',', ';' or '\t'.
func (s *SheetReader) Delimiter() rune { return s.delim }

// Name returns the name the sheet is known by in errors.
func (s *SheetReader) Name() string { return s.name }

// Column returns the index of the header column called name, compared
// after trimming and without regard to case. The error for a missing
// column lists the header's columns and suggests the nearest one.
func (s *SheetReader) Column(name string) (int, error) {
	want := strings.TrimFunc(name, isSheetSpace)
	if want == "" {
		return -1, &SheetError{File: s.name, Msg: "a column name is empty: name a column of the header"}
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
	if near := sheetNearestColumn(want, s.header); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return -1, errors.New(msg + ")")
}

// sheetNearestColumn suggests the header name closest to want: one that
// contains it or is contained in it once case, spaces, '_' and '-' are
// ignored ("Phone" and "Phone Number"), else the one at the smallest edit
// distance if that is small for the length of the name. "" when nothing
// is close.
func sheetNearestColumn(want string, header []string) string {
	w := sheetFoldName(want)
	best, bestScore := "", 0
	for _, h := range header {
		if h == "" {
			continue
		}
		f := sheetFoldName(h)
		var score int
		switch {
		case f == w:
			score = 1000
		case w != "" && f != "" && (strings.Contains(f, w) || strings.Contains(w, f)):
			score = 500 - sheetAbs(len(f)-len(w))
		default:
			d := editDistance(w, f)
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

func sheetFoldName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-', '.':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func sheetAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the Levenshtein distance between a and b, by rune.
func editDistance(a, b string) int {
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
func (s *SheetReader) advance(rec []string, pe *csv.ParseError) {
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
func (s *SheetReader) advanceLines(start, end int) {
	if start > s.endLine {
		s.row += start - s.endLine
	} else {
		s.row++
	}
	s.endLine = end
}

// newCSVReader starts reading records from where s.limit is: at the
// header, or after a record it cut.
func (s *SheetReader) newCSVReader() {
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
func (s *SheetReader) takeOver(err error) *sheetOverLimit {
	o := s.limit.over
	if o == nil || err == nil {
		return nil
	}
	var cut *sheetOverLimit
	var pe *csv.ParseError
	if !errors.As(err, &cut) && !(errors.As(err, &pe) && pe.StartLine+s.lineBase == o.startLine) {
		return nil
	}
	s.limit.over = nil
	s.lineBase = o.endLines
	s.newCSVReader()
	return o
}

// overRecord is the SheetRecord, or the error that ends the reading, for
// a record cut past the limit.
func (s *SheetReader) overRecord(o *sheetOverLimit) (SheetRecord, error) {
	limit := sheetSize(int64(o.limit))
	s.advanceLines(o.startLine, max(o.endLines, o.startLine))
	if o.quoteLine > 0 {
		s.err = &SheetError{File: s.name, Row: s.row, Msg: fmt.Sprintf(
			"the row is larger than %s, with a quoted field that opens on line %d of the file and runs over line breaks: probably a quote that is never closed, so the rows after it cannot be read reliably; check the quotes of that row",
			limit, o.quoteLine)}
		return SheetRecord{}, s.err
	}
	e := &SheetError{File: s.name, Row: s.row}
	if o.field < len(s.header) {
		e.Field = s.header[o.field]
	}
	where := "this field takes it past the limit"
	if e.Field == "" {
		where = fmt.Sprintf("its field %d (the header has %d) takes it past the limit", o.field+1, len(s.header))
	}
	e.Msg = fmt.Sprintf("the row is %s long, on line %d of the file, and a row may hold at most %s (%s): it is not read",
		sheetSize(o.size), o.startLine, limit, where)
	if o.unclosed {
		e.Msg += fmt.Sprintf("; a quote opened on line %d is never closed", o.startLine)
	}
	return SheetRecord{Row: s.row, Err: e}, nil
}

// Next returns the next record. Records whose fields are all empty (blank
// rows, ",,,") are skipped. A problem with one record is returned in
// SheetRecord.Err and reading can go on; an error that ends the reading
// (the file is not UTF-8, cannot be read, or has a row that never ends) is
// returned as err, and again by every later call. At the end Next returns
// io.EOF.
func (s *SheetReader) Next() (SheetRecord, error) {
	if s.err != nil {
		return SheetRecord{}, s.err
	}
	for {
		rec, err := s.cr.Read()
		if o := s.takeOver(err); o != nil {
			return s.overRecord(o)
		}
		if err == io.EOF {
			s.err = io.EOF
			return SheetRecord{}, io.EOF
		}
		if err != nil {
			return s.recordError(err)
		}
		s.advance(rec, nil)
		blank := true
		for _, f := range rec {
			if !utf8.ValidString(f) {
				s.err = &SheetError{File: s.name, Row: s.row, Msg: sheetNotUTF8}
				return SheetRecord{}, s.err
			}
			if blank && strings.TrimFunc(f, isSheetSpace) != "" {
				blank = false
			}
		}
		if blank {
			continue
		}
		if len(rec) != len(s.header) {
			return SheetRecord{Row: s.row, Err: &SheetError{File: s.name, Row: s.row,
				Msg: fmt.Sprintf("has %d fields but the header has %d (a missing or extra %s?)", len(rec), len(s.header), sheetDelimName(s.delim))}}, nil
		}
		return SheetRecord{Row: s.row, Fields: rec}, nil
	}
}

// recordError handles an error from encoding/csv: a malformed record is
// that row's error; anything else ends the reading.
func (s *SheetReader) recordError(err error) (SheetRecord, error) {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		s.err = &SheetError{File: s.name, Row: s.row + 1, Msg: "cannot read the sheet: " + err.Error()}
		return SheetRecord{}, s.err
	}
	s.advance(nil, pe)
	pe = &csv.ParseError{StartLine: pe.StartLine + s.lineBase, Line: pe.Line + s.lineBase, Column: pe.Column, Err: pe.Err} // lines of the file
	if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
		// A quoted field ran over several lines and then broke (or
		// reached the end of the file): the lines it swallowed may have
		// been rows of their own, so what follows cannot be trusted.
		s.err = &SheetError{File: s.name, Row: s.row, Msg: sheetCSVProblem(pe)}
		return SheetRecord{}, s.err
	}
	return SheetRecord{Row: s.row, Err: &SheetError{File: s.name, Row: s.row, Msg: sheetCSVProblem(pe)}}, nil
}

// sheetCSVProblem explains a csv.ParseError in a sentence, with the line of the
// file (which differs from the row when quoted fields hold newlines).
func sheetCSVProblem(pe *csv.ParseError) string {
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

func sheetDelimName(d rune) string {
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

// Close closes the file opened by OpenSheet; it does nothing for a
// SheetReader made by NewSheetReader.
func (s *SheetReader) Close() error {
	if s.closer == nil {
		return nil
	}
	c := s.closer
	s.closer = nil
	return c.Close()
}
