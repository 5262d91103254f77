package sheet

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
	// What names the file in messages, "sheet" when empty ("suppression
	// file"); Holds says what its rows are, "contacts" when empty
	// ("numbers").
	What, Holds string
}

// what is o.What, "sheet" when empty.
func (o Options) what() string {
	if o.What == "" {
		return "sheet"
	}
	return o.What
}

// holds is o.Holds, "contacts" when empty.
func (o Options) holds() string {
	if o.Holds == "" {
		return "contacts"
	}
	return o.Holds
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
// its worksheet; a text file that starts with a UTF-16 byte order mark,
// or that is UTF-16 without one ([bomless16]), is decoded; o.Encoding decodes a legacy code page. Whatever the file, the
// records hold UTF-8.
func OpenWith(path string, o Options) (*Reader, error) {
	enc, err := lookupEncoding(o.Encoding)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if err := CheckRegular(path); err != nil {
		return nil, openError(path, err, o)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err, o)
	}
	sr := newStampingReader(f)
	br := bufio.NewReaderSize(sr, bufSize)
	head, _ := br.Peek(8)
	var src io.Reader = br
	closer := io.Closer(f)
	var wbFacts *Workbook
	var stamp func() (Stamp, bool)
	order, bare16 := bomless16(br)
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		f.Close()
		var rc io.ReadCloser
		sr = nil // the text read is the workbook's, not the file's
		if o.Workbooks != nil {
			var st Stamp
			rc, wbFacts, st, err = o.Workbooks.open(path, o.Worksheet)
			stamp = func() (Stamp, bool) { return st, true }
		} else {
			rc, wbFacts, err = openWorkbook(path, o.Worksheet)
		}
		if err != nil {
			var se *Error
			if errors.As(err, &se) {
				se.File = path
				return nil, se
			}
			return nil, &Error{File: path, Msg: err.Error()}
		}
		src, closer = rc, rc
	case bytes.HasPrefix(head, []byte("\xff\xfe")), bytes.HasPrefix(head, []byte("\xfe\xff")):
		// Excel's "Unicode Text": UTF-16 with a byte order mark, which
		// says which of the two it is.
		src = transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	case enc == nil && bare16:
		// UTF-16 without its mark, as some exports write it (Python's
		// utf-16-le): NUL bytes in every other place alone.
		src = transform.NewReader(br, unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder())
	case enc != nil:
		src = transform.NewReader(br, enc.NewDecoder())
	}
	s, err := newReaderOf(path, src, maxRowBytes, maxRowLines, o)
	if err != nil {
		closer.Close()
		var se *Error
		if hint := wbFacts.tabsHint(o.holds()); hint != "" && errors.As(err, &se) && se.Msg == emptySheet {
			se.Msg = "the worksheet is empty: it has no header row; " + hint
		} else if errors.As(err, &se) && se.Msg == emptySheet {
			if fi, serr := os.Stat(path); serr == nil && fi.Size() == 0 {
				se.Msg = "the " + o.what() + " is empty (0 bytes): it has no header row; an export that failed or was cut short leaves such a file: export it again"
			}
		}
		return nil, err
	}
	s.closer, s.workbook = closer, wbFacts
	switch {
	case sr != nil:
		s.stamp = sr.stamp
	case stamp != nil:
		s.stamp = stamp
	}
	return s, nil
}

// bomless16 returns the byte order of UTF-16 text without a byte order
// mark at the start of br, and false when it does not look like such text:
// its first bytes (up to 4 KiB, an even count of 16 or more) hold NUL
// bytes in odd places (little-endian) or in even ones (big-endian), in a
// quarter of the pairs or more, as the ASCII of a contact sheet (digits,
// delimiters, line ends) puts them, and in the other places in an eighth
// as many at most, never both bytes of a pair. Binary data has pairs of
// NUL bytes, and is left to [sniff].
func bomless16(br *bufio.Reader) (unicode.Endianness, bool) {
	head, _ := br.Peek(sniffSize)
	head = head[:len(head)&^1]
	if len(head) < 16 {
		return unicode.LittleEndian, false
	}
	// even and odd count the pairs whose first or second byte alone is
	// 0: in UTF-16LE, the second byte of every Latin letter, and the
	// first of a character such as 一 (U+4E00) or Ā (U+0100), one in
	// 256 of the others. A pair of two zeros is U+0000, which no text
	// holds.
	var even, odd int
	for i := 0; i < len(head); i += 2 {
		switch {
		case head[i] == 0 && head[i+1] == 0:
			return unicode.LittleEndian, false
		case head[i] == 0:
			even++
		case head[i+1] == 0:
			odd++
		}
	}
	pairs := len(head) / 2
	switch {
	case odd*4 >= pairs && even*8 <= odd:
		return unicode.LittleEndian, true
	case even*4 >= pairs && odd*8 <= even:
		return unicode.BigEndian, true
	}
	return unicode.LittleEndian, false
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

func openError(path string, err error, o Options) error {
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error() // the path is named once, by Error.Error
	}
	return &Error{File: path, Msg: "cannot open the " + o.what() + ": " + msg}
}

// notWorkbook returns why the zip archive at path is not an Excel
// workbook, saying what it is and how to make a sheet of it, or "": an
// OpenDocument spreadsheet (LibreOffice's .ods), an Apple Numbers
// document, or another archive (a CRM's export downloaded as a .zip of
// CSV files). excelize's own words for these ("EOF", "unsupported
// workbook file format") told to open the file in Excel.
func notWorkbook(path string) string {
	z, err := zip.OpenReader(path)
	if err != nil {
		return "" // excelize says what is wrong
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		n := strings.ToLower(f.Name)
		switch {
		case n == "xl/workbook.xml" || n == "[content_types].xml":
			return ""
		case n == "mimetype":
			if rc, err := f.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 100))
				rc.Close()
				if bytes.Contains(b, []byte("opendocument.spreadsheet")) {
					return "the file is an OpenDocument spreadsheet (.ods, LibreOffice or OpenOffice), which callrun does not read: in LibreOffice use File > Save As > Excel 2007-365 (.xlsx), or Text CSV with UTF-8"
				}
			}
		case n == "index.zip" || n == "index.xml.gz" || strings.HasPrefix(n, "index/") && strings.HasSuffix(n, ".iwa"):
			return "the file is an Apple Numbers document, which callrun does not read: in Numbers use File > Export To > CSV (Text Encoding: Unicode (UTF-8)) or Excel"
		}
		if !f.FileInfo().IsDir() && len(names) < 5 {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return "the file is an empty zip archive, not an Excel workbook (.xlsx)"
	}
	return fmt.Sprintf("the file is a zip archive, not an Excel workbook (.xlsx); it holds %s: unzip it and name the sheet inside in the campaign file", quoteAll(names))
}

// maxWorkbookBytes bounds what a workbook may unpack to: a zip archive
// of a few kilobytes can claim gigabytes.
const maxWorkbookBytes = 1 << 30

// openWorkbook returns the rows of a worksheet of the workbook at path as
// CSV text, produced as it is read: every field quoted, one line a row,
// an empty line for an empty row, a row as wide as the first (the
// header) at least. A cell holds its value as stored (a text as written,
// a number by its full value, never the rounded or scientific form Excel
// may display, a formula by its cached value), but a number in a date or
// time format is an ISO 8601 date, time, or both, and a cell of a merged
// range below the header the range's top-left value ([mergeFill]). A
// formula cell whose value was never computed refuses the worksheet: an
// *Error naming its row and cell. excelize opens the workbook (its
// worksheets, styles and calendar); the worksheet's XML is surveyed
// ([surveyWorksheet]), then read in one pass by a worksheetReader.
// Closing it stops the reading. It returns too what it learned of the
// workbook before the rows: its tabs, the rows the worksheet hides, and
// the comments on its cells ([readComments]).
func openWorkbook(path, worksheet string) (io.ReadCloser, *Workbook, error) {
	if why := notWorkbook(path); why != "" {
		return nil, nil, errors.New(why)
	}
	wb, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: maxWorkbookBytes})
	if err != nil {
		if errors.Is(err, excelize.ErrWorkbookFileFormat) {
			return nil, nil, errors.New("the file is a zip archive but not an Excel workbook (.xlsx)")
		}
		return nil, nil, fmt.Errorf("the file looks like an Excel workbook (.xlsx) but cannot be read as one (%v): open it in Excel and save it again", err)
	}
	defer wb.Close()
	sheets := wb.GetSheetList()
	name := worksheet
	if name == "" {
		if len(sheets) == 0 {
			return nil, nil, errors.New("the workbook has no worksheet")
		}
		name = sheets[0]
	} else if idx, _ := wb.GetSheetIndex(name); idx < 0 {
		return nil, nil, fmt.Errorf("the workbook has no worksheet %q; its worksheets: %s", name, quoteAll(sheets))
	}
	wr := &worksheetReader{dates: dateStyles(wb)}
	if p, err := wb.GetWorkbookProps(); err == nil && p.Date1904 != nil {
		wr.date1904 = *p.Date1904
	}
	part, err := worksheetPart(wb, name)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	if wr.strings, err = readSharedStrings(&z.Reader); err != nil {
		z.Close()
		return nil, nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	// The worksheet is read twice: surveyed for its merged ranges, which
	// it lists after its rows, and for a formula never computed, then
	// read row by row.
	if wr.survey, err = surveyPart(&z.Reader, part); err != nil {
		z.Close()
		return nil, nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	if ref := wr.survey.uncomputed; ref != "" {
		z.Close()
		return nil, nil, &Error{Row: wr.survey.uncomputedRow, Msg: fmt.Sprintf("worksheet %q, cell %s: %s", name, ref, uncomputedFormula)}
	}
	// A workbook that asks to be computed again when opened was written by
	// a program that does not compute formulas (XlsxWriter, and so
	// pandas, save 0 as every formula's value, Apache POI a new formula's):
	// a flag's =IF(...) would read as its 0, a no. One set to calculate by
	// hand may hold values older than its cells. Any formula of the
	// worksheet refuses it, as one never computed does: which columns
	// matter is not known here.
	if ref := wr.survey.formula; ref != "" {
		if why := staleCalc(wb, &z.Reader); why != "" {
			z.Close()
			return nil, nil, &Error{Row: wr.survey.formulaRow, Msg: fmt.Sprintf("worksheet %q, cell %s: %s", name, ref, why)}
		}
	}
	facts := &wr.survey.facts
	if err := readComments(wb, &z.Reader, part, facts); err != nil {
		z.Close()
		return nil, nil, fmt.Errorf("cannot read the comments of worksheet %q: %v", name, err)
	}
	rc, err := openPart(&z.Reader, part, false)
	if err == nil && rc == nil {
		err = fmt.Errorf("the workbook has no %s", part)
	}
	if err != nil {
		z.Close()
		return nil, nil, fmt.Errorf("cannot read worksheet %q: %v", name, err)
	}
	wr.x = newXMLScanner(rc)
	pr, pw := io.Pipe()
	go func() {
		err := wr.writeCSV(pw)
		rc.Close()
		z.Close()
		pw.CloseWithError(err)
	}()
	facts.Worksheet, facts.Tabs = name, workbookTabs(wb)
	return pr, facts, nil
}

// surveyPart surveys the worksheet part of z ([surveyWorksheet]).
func surveyPart(z *zip.Reader, part string) (*worksheetSurvey, error) {
	rc, err := openPart(z, part, false)
	if err == nil && rc == nil {
		err = fmt.Errorf("the workbook has no %s", part)
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return surveyWorksheet(rc)
}

// workbookTabs lists the sheets of wb, in its order, as its workbook part
// names them, with whether it hides each.
func workbookTabs(wb *excelize.File) []Tab {
	if wb.WorkBook == nil {
		return nil
	}
	tabs := make([]Tab, 0, len(wb.WorkBook.Sheets.Sheet))
	for _, s := range wb.WorkBook.Sheets.Sheet {
		tabs = append(tabs, Tab{Name: s.Name, Hidden: s.State == "hidden" || s.State == "veryHidden"})
	}
	return tabs
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
