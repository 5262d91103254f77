package report

import (
	"archive/zip"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/xuri/excelize/v2"
)

// MaxXLSXRows is the most report rows a workbook is written for. excelize
// builds the whole compressed workbook in memory, about 240 MiB for a
// million rows, and a sheet that size is more than a person scrolls
// anyway: a larger report is left to report.csv (Excel's own limit is
// 1,048,575 rows).
const MaxXLSXRows = 100_000

// XLSXWriter writes report.xlsx, the report for people who open it in a
// spreadsheet. Excel turns +14155550132 in a CSV into a number and drops
// the plus, and long ids into scientific notation; in the workbook every
// cell is text, so what the cell shows is what was sent. The header row is
// frozen and has a filter, so statuses are one click apart.
//
// Rows are streamed to a temporary file renamed over the target on Commit,
// like [CSVWriter]. An XLSXWriter is not safe for concurrent use.
type XLSXWriter struct {
	path     string
	extra    int  // extra columns (Row.Extra)
	outcomes bool // the outcome columns come last (Row.Outcome)
	book     *excelize.File
	sheet    *excelize.StreamWriter
	rows     int
	tooLarge bool
	done     bool
}

// xlsxSheet is the worksheet's name.
const xlsxSheet = "Report"

// NewXLSXWriter starts a workbook to be committed to path, with the
// columns cols adds, as for [NewCSVWriter].
func NewXLSXWriter(path string, cols Columns) (*XLSXWriter, error) {
	extra := cols.Extra
	book := excelize.NewFile()
	// Compressed for speed: a report is written at the end of every run,
	// and a workbook a few per cent larger costs nobody anything.
	book.ZipWriter = func(w io.Writer) excelize.ZipWriter {
		z := zip.NewWriter(w)
		z.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, flate.BestSpeed)
		})
		return z
	}
	if err := book.SetSheetName("Sheet1", xlsxSheet); err != nil {
		return nil, fmt.Errorf("creating report %s: %w", path, err)
	}
	sw, err := book.NewStreamWriter(xlsxSheet)
	if err != nil {
		return nil, fmt.Errorf("creating report %s: %w", path, err)
	}
	header := header(extra)
	widths := slices.Insert(slices.Clone(xlsxWidths), extraAt, slices.Repeat([]float64{16}, len(extra))...)
	if cols.Outcomes {
		header = append(header, OutcomeColumns...)
		widths = append(widths, outcomeWidths...)
	}
	w := &XLSXWriter{path: path, extra: len(extra), outcomes: cols.Outcomes, book: book, sheet: sw}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return nil, fmt.Errorf("creating report %s: %w", path, err)
	}
	bold, err := book.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, err
	}
	// Column widths must come before the first row in a stream.
	for i, width := range widths {
		if err := sw.SetColWidth(i+1, i+1, width); err != nil {
			return nil, fmt.Errorf("creating report %s: %w", path, err)
		}
	}
	cells := make([]any, len(header))
	for i, h := range header {
		cells[i] = excelize.Cell{StyleID: bold, Value: h}
	}
	if err := sw.SetRow("A1", cells); err != nil {
		return nil, fmt.Errorf("writing report %s: %w", path, err)
	}
	return w, nil
}

// xlsxWidths are the column widths, in characters, in Row's order; an
// extra column is 16 wide.
var xlsxWidths = []float64{16, 6, 16, 28, 14, 14, 22, 20, 8, 11, 48, 8, 8, 22, 26, 21, 21, 48, 11}

// outcomeWidths are the widths of OutcomeColumns.
var outcomeWidths = []float64{10, 21, 8, 48}

// Write adds one row. Every value is written as text, so no spreadsheet
// reinterprets it; a workbook cell is never run as a formula. Past
// MaxXLSXRows the workbook is dropped (see TooLarge) and its memory freed.
func (w *XLSXWriter) Write(r Row) error {
	if w.tooLarge {
		return nil
	}
	if w.done {
		return fmt.Errorf("writing report %s: already committed or aborted", w.path)
	}
	if w.rows >= MaxXLSXRows {
		w.tooLarge = true
		w.Abort()
		w.book, w.sheet = nil, nil // the stream's buffer with them
		return nil
	}
	http, _ := r.HTTPStatus.MarshalCSV()
	attempts, _ := r.Attempts.MarshalCSV()
	if len(r.Extra) > w.extra {
		return fmt.Errorf("writing report %s: a row has %d extra cells for %d extra columns", w.path, len(r.Extra), w.extra)
	}
	values := []string{r.Sheet, strconv.Itoa(r.Row), r.PhoneNumber, r.Email, r.FirstName, r.LastName, r.GHLContactID,
		r.OverrideAgentID, r.LocalPresenceNumber, r.Status, r.Reason, http, attempts, r.Agent, r.AgentID,
		r.FirstAttemptAt, r.LastAttemptAt, r.Response, r.Consent}
	values = slices.Insert(values, extraAt, append(slices.Clip(r.Extra), make([]string, w.extra-len(r.Extra))...)...)
	if w.outcomes {
		values = append(values, r.Outcome.cells()...)
	}
	cells := make([]any, len(values))
	for i, v := range values {
		// A string value is a text cell ("str" or inline string): Excel
		// shows +14155550132 and 00123 as written. An empty one is no
		// cell at all (nil), which reads back the same and costs nothing.
		if v != "" {
			cells[i] = cutCell(v)
		}
	}
	w.rows++
	cell, _ := excelize.CoordinatesToCellName(1, w.rows+1)
	if err := w.sheet.SetRow(cell, cells); err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	return nil
}

// Commit finishes the workbook, writes it to a temporary file beside the
// target and renames it into place. When the report was too large it
// removes any older report.xlsx instead, which would no longer match
// report.csv.
func (w *XLSXWriter) Commit() error {
	if w.tooLarge {
		if err := os.Remove(w.path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	if w.done {
		return fmt.Errorf("committing report %s: already committed or aborted", w.path)
	}
	w.done = true
	defer w.book.Close()
	// A table gives the header filter buttons (status, agent, ...).
	cols := len(xlsxWidths) + w.extra
	if w.outcomes {
		cols += len(OutcomeColumns)
	}
	last, _ := excelize.ColumnNumberToName(cols)
	showStripes := true
	if err := w.sheet.AddTable(&excelize.Table{Range: fmt.Sprintf("A1:%s%d", last, max(w.rows+1, 2)), Name: "Report",
		StyleName: "TableStyleLight9", ShowRowStripes: &showStripes}); err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	if err := w.sheet.Flush(); err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	f, err := durable.Create(w.path, private.FileMode(filepath.Dir(w.path)))
	if err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	defer f.Abort() // a no-op once committed
	if err := w.book.Write(f); err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("writing report %s: %w", w.path, err)
	}
	return nil
}

// Abort drops the workbook; the previous report.xlsx stays.
func (w *XLSXWriter) Abort() {
	if !w.done {
		w.done = true
		w.book.Close()
	}
}

// ReadXLSX reads a report workbook back as rows of text, header first. It
// is for tests and tools that check what a person would see.
func ReadXLSX(path string) ([][]string, error) {
	book, err := excelize.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer book.Close()
	rows, err := book.GetRows(xlsxSheet, excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, err
	}
	// GetRows leaves out empty cells at a row's end: pad to the header.
	for i, r := range rows {
		if len(rows) > 0 && len(r) < len(rows[0]) {
			rows[i] = append(r, make([]string, len(rows[0])-len(r))...)
		}
	}
	return rows, nil
}

// cutCell returns v as a workbook cell holds it: whole, or, when it is
// longer than Excel's limit (32,767 UTF-16 units, excelize.TotalCellChars,
// which excelize would cut at without a word), its start and a note that
// says it is cut, how long it is and that report.csv holds it whole.
func cutCell(v string) string {
	units := 0
	for _, r := range v {
		units += utf16.RuneLen(r)
	}
	if units <= excelize.TotalCellChars {
		return v
	}
	note := fmt.Sprintf(" … [cut: %s characters in all, more than a spreadsheet cell holds; report.csv has them all]", groupThousands(utf8.RuneCountInString(v)))
	room := excelize.TotalCellChars - len(note) // its bytes: at least its UTF-16 units
	var b strings.Builder
	for _, r := range v {
		n := utf16.RuneLen(r)
		if room-n < 0 {
			break
		}
		room -= n
		b.WriteRune(r)
	}
	return b.String() + note
}

// groupThousands writes n with a comma between each group of three digits.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
