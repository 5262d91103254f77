package sheet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Options say how to read a sheet that is not plain UTF-8 CSV. The zero
// Options read UTF-8 CSV (and, whatever they say, UTF-16 text that starts
// with a byte order mark, and .xlsx workbooks by their content).
type Options struct {
	// Encoding names the sheet's legacy code page by any name
	// golang.org/x/text knows ("windows-1252", "latin1", "shift_jis");
	// "" or "utf-8" reads UTF-8.
	Encoding string
	// Worksheet names the worksheet of an .xlsx workbook to read; "" reads
	// the first.
	Worksheet string
	// Workbooks, when set, keeps the text of a workbook read to its end,
	// to read it from there the next time.
	Workbooks *Workbooks
}

// CheckEncoding returns an error unless name is an encoding
// [Options.Encoding] accepts. The campaign file's checks use it.
func CheckEncoding(name string) error {
	_, err := lookupEncoding(name)
	return err
}

func lookupEncoding(name string) (encoding.Encoding, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "utf-8", "utf8":
		return nil, nil
	case "macroman", "mac roman", "mac-roman", "mac_roman", "x-macroman":
		n = "macintosh" // the names people know Mac Roman by, which the WHATWG list lacks
	}
	e, err := htmlindex.Get(n)
	if err != nil {
		return nil, fmt.Errorf("unknown encoding %q: name a code page such as windows-1252, iso-8859-15, macintosh (Mac Roman) or shift_jis", name)
	}
	return e, nil
}

// OpenWith opens the sheet at path as [Open] does, reading it as o says.
// A workbook (.xlsx, recognised by its content) is read row by row from
// its worksheet; a text file that starts with a UTF-16 byte order mark is
// decoded; o.Encoding decodes a legacy code page. Whatever the file, the
// records hold UTF-8.
func OpenWith(path string, o Options) (*Reader, error) {
	enc, err := lookupEncoding(o.Encoding)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if err := CheckRegular(path); err != nil {
		return nil, openError(path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	br := bufio.NewReaderSize(f, bufSize)
	head, _ := br.Peek(8)
	var src io.Reader = br
	closer := io.Closer(f)
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			return nil, openError(path, err)
		}
		var rc io.ReadCloser
		if o.Workbooks != nil {
			rc, err = o.Workbooks.open(path, o.Worksheet, fi)
		} else {
			rc, err = openWorkbook(path, o.Worksheet)
		}
		if err != nil {
			return nil, &Error{File: path, Msg: err.Error()}
		}
		src, closer = rc, rc
	case bytes.HasPrefix(head, []byte("\xff\xfe")), bytes.HasPrefix(head, []byte("\xfe\xff")):
		// Excel's "Unicode Text": UTF-16 with a byte order mark, which
		// says which of the two it is.
		src = transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	case enc != nil:
		src = transform.NewReader(br, enc.NewDecoder())
	}
	s, err := newReader(path, src)
	if err != nil {
		closer.Close()
		return nil, err
	}
	s.closer = closer
	return s, nil
}

// GuessEncoding returns the code page of the text file at path when its
// start is not UTF-8 but reads cleanly in that code page (no byte it
// leaves undefined, no control character but tab and line ends), and ""
// otherwise: UTF-8, UTF-16 with its mark, a workbook, or a file it cannot
// tell. A file whose lines end with a bare CR is taken for Excel for
// Mac's "CSV (Macintosh)" or "Comma Separated Values", written in the
// Mac's code page: "macintosh" (Mac Roman, in which every byte is
// defined); any other is taken for the Windows code page:
// "windows-1252". callrun init writes it into the campaign file it
// drafts.
func GuessEncoding(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("\xff\xfe")) || bytes.HasPrefix(head, []byte("\xfe\xff")) {
		return ""
	}
	if len(head) == 1<<20 {
		// Cut at the last line end, not inside a character.
		if i := max(bytes.LastIndexByte(head, '\n'), bytes.LastIndexByte(head, '\r')); i > 0 {
			head = head[:i+1]
		}
	}
	if utf8.Valid(head) {
		return ""
	}
	mac := firstLineEndsWithCR(head)
	for _, c := range head {
		switch {
		case !mac && (c == 0x81 || c == 0x8d || c == 0x8f || c == 0x90 || c == 0x9d): // undefined in Windows-1252
			return ""
		case c < 0x20 && c != '\t' && c != '\r' && c != '\n':
			return ""
		}
	}
	if mac {
		return "macintosh"
	}
	return "windows-1252"
}

// firstLineEndsWithCR reports whether the first line of text ends with a
// bare CR.
func firstLineEndsWithCR(text []byte) bool {
	i := bytes.IndexAny(text, "\r\n")
	return i >= 0 && text[i] == '\r' && (i+1 == len(text) || text[i+1] != '\n')
}

func openError(path string, err error) error {
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error() // the path is named once, by Error.Error
	}
	return &Error{File: path, Msg: "cannot open the sheet: " + msg}
}

// maxWorkbookBytes bounds what a workbook may unpack to: a zip archive
// of a few kilobytes can claim gigabytes.
const maxWorkbookBytes = 1 << 30

// openWorkbook returns the rows of a worksheet of the workbook at path as
// CSV text, produced as it is read: every field quoted, one line a row,
// an empty line for an empty row, so that the rows keep the numbers the
// spreadsheet shows. Closing it stops the reading.
func openWorkbook(path, worksheet string) (io.ReadCloser, error) {
	wb, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: maxWorkbookBytes})
	if err != nil {
		if errors.Is(err, excelize.ErrWorkbookFileFormat) {
			return nil, errors.New("the file is a zip archive but not an Excel workbook (.xlsx)")
		}
		return nil, fmt.Errorf("the file looks like an Excel workbook (.xlsx) but cannot be read as one (%v): open it in Excel and save it again", err)
	}
	sheets := wb.GetSheetList()
	name := worksheet
	if name == "" {
		if len(sheets) == 0 {
			wb.Close()
			return nil, errors.New("the workbook has no worksheet")
		}
		name = sheets[0]
	} else if idx, _ := wb.GetSheetIndex(name); idx < 0 {
		wb.Close()
		return nil, fmt.Errorf("the workbook has no worksheet %q; its worksheets: %s", name, quoteAll(sheets))
	}
	date1904 := false
	if p, err := wb.GetWorkbookProps(); err == nil && p.Date1904 != nil {
		date1904 = *p.Date1904
	}
	// Two readers of the same worksheet in step: one gives each cell as
	// stored (a number by its full value), the other as Excel shows it,
	// which tells a date from a number.
	raw, err := wb.Rows(name)
	if err != nil {
		wb.Close()
		return nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	shown, err := wb.Rows(name)
	if err != nil {
		raw.Close()
		wb.Close()
		return nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	pr, pw := io.Pipe()
	go func() {
		err := writeRows(pw, raw, shown, date1904)
		raw.Close()
		shown.Close()
		wb.Close()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// writeRows writes the rows of raw (and of shown, the same rows as
// displayed) to w as CSV text until the worksheet ends or w is closed.
// A worksheet keeps no empty cells at the end of a row, so a row is
// written as wide as the first (the header) at least.
func writeRows(w io.Writer, raw, shown *excelize.Rows, date1904 bool) error {
	// The rows as shown are read on a goroutine of their own, beside the
	// rows as stored: each reader parses the worksheet's XML.
	shownRows := make(chan shownRow, 256)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(shownRows)
		for shown.Next() {
			sv, err := shown.Columns()
			select {
			case shownRows <- shownRow{sv, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	})
	defer wg.Wait()
	defer close(done)
	bw := bufio.NewWriterSize(w, 64<<10)
	width := -1
	for raw.Next() {
		next, ok := <-shownRows
		if !ok {
			return errors.New("the worksheet changed while it was read")
		}
		rv, err := raw.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return fmt.Errorf("reading the worksheet: %v", err)
		}
		sv, err := next.cols, next.err
		if err != nil {
			return fmt.Errorf("reading the worksheet: %v", err)
		}
		if width < 0 {
			width = len(rv)
		}
		for len(rv) > 0 && len(rv) < width {
			rv = append(rv, "")
		}
		for i, v := range rv {
			if i > 0 {
				bw.WriteByte(',')
			}
			if i < len(sv) {
				v = cellText(v, sv[i], date1904)
			}
			bw.WriteByte('"')
			bw.WriteString(strings.ReplaceAll(v, `"`, `""`))
			bw.WriteByte('"')
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	if err := raw.Error(); err != nil {
		return fmt.Errorf("reading the worksheet: %v", err)
	}
	return bw.Flush()
}

// shownRow is a row of a worksheet as Excel shows it, or the error of
// reading it.
type shownRow struct {
	cols []string
	err  error
}

var (
	scientific = regexp.MustCompile(`^[-+]?\d+(\.\d+)?[eE][-+]?\d+$`)
	// dateShown matches what Excel shows of a date or a time: 3/1/24,
	// 01.03.2024, 2024-03-01, 13:45, Mar-24.
	dateShown = regexp.MustCompile(`(?i)\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d:\d\d|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`)
)

// cellText is what a cell holds for callrun: the value as stored (a text
// as written, a number by its full value, never the rounded or
// scientific form Excel may display, a formula by its cached value), but
// a date or time as a date: ISO 8601, from the stored serial number.
func cellText(raw, shown string, date1904 bool) string {
	if raw == shown || scientific.MatchString(shown) || !dateShown.MatchString(shown) {
		return raw
	}
	serial, err := strconv.ParseFloat(raw, 64)
	if err != nil || serial < 0 || serial > 2958465 { // 9999-12-31
		return raw
	}
	t, err := excelize.ExcelDateToTime(serial, date1904)
	if err != nil {
		return raw
	}
	switch {
	case serial < 1: // a time of day alone
		return t.Format("15:04:05")
	case serial == float64(int64(serial)):
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04:05")
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
