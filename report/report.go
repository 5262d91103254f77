package report

import (
	"encoding/csv"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/gocarina/gocsv"
)

// Row is one row of report.csv: one per input row, in sheet order.
type Row struct {
	Sheet               string     `csv:"sheet"`
	Row                 int        `csv:"row"`
	PhoneNumber         string     `csv:"phone_number"`
	Email               string     `csv:"email"`
	FirstName           string     `csv:"first_name"`
	LastName            string     `csv:"last_name"`
	GHLContactID        string     `csv:"ghl_contact_id"`
	OverrideAgentID     string     `csv:"override_agent_id"`
	LocalPresenceNumber string     `csv:"local_presence_number"`
	Status              string     `csv:"status"`
	Reason              string     `csv:"reason"`
	HTTPStatus          HTTPStatus `csv:"http_status"`
	Attempts            Count      `csv:"attempts"`
	Agent               string     `csv:"agent"`
	AgentID             string     `csv:"agent_id"`
	FirstAttemptAt      string     `csv:"first_attempt_at"` // RFC 3339, UTC; empty when none (see [Timestamp])
	LastAttemptAt       string     `csv:"last_attempt_at"`  // RFC 3339, UTC; empty when none
	Response            string     `csv:"response"`         // excerpt of the service's answer
	// Consent is the row's evidence of consent as callrun read it from
	// the campaign's consent column: a date (YYYY-MM-DD) or "yes"; empty
	// when the cell holds none or the campaign maps no consent.
	Consent string `csv:"consent"`
	// Extra holds the values of the fields the account defines beyond the
	// seven (city, zip_code, ...), one for each extra column the writer
	// was made with, in that order. They stand after local_presence_number.
	Extra []string `csv:"-"`
	// Outcome is what the service's webhooks said of the contact's
	// calls: in the report's last columns (see [OutcomeColumns]) when the
	// writer was made with [Columns.Outcomes].
	Outcome Outcome `csv:"-"`
}

// Outcome is what the service's webhook deliveries said of a contact.
type Outcome struct {
	// Event is the latest event delivered, one of [OutcomeNames] but
	// none; empty when none came. At is when callrun received it, as
	// [Timestamp] writes it.
	Event, At string
	// Starts is how many calls the service itself started for the
	// contact: its call.started deliveries, its own redials included.
	Starts Count
	// Detail holds the fields the campaign's outcomes.fields names, as
	// "name=value; ...".
	Detail string
	// Answered: a call.answered was delivered for the contact, whatever
	// came after.
	Answered bool
}

// OutcomeNames are the outcomes of the contacts called, the latest a call
// gets to first: ended (also an agent webhook's completion), answered,
// started, reported (an account webhook's delivery that names no event:
// the service reported the call), other (an event callrun does not
// know), and none, for a contact no delivery came for. The summary,
// report.html and status count contacts by them.
var OutcomeNames = []string{"ended", "answered", "started", "reported", "other", "none"}

// OutcomeColumns are the report's last columns when it shows outcomes.
var OutcomeColumns = []string{"outcome", "outcome_at", "service_starts", "outcome_detail"}

// cells returns o's cells, in the order of OutcomeColumns.
func (o Outcome) cells() []string {
	starts, _ := o.Starts.MarshalCSV()
	return []string{o.Event, o.At, starts, o.Detail}
}

// Columns are the report's columns beyond Row's own.
type Columns struct {
	// Extra names the columns of the account's own fields (see
	// Row.Extra).
	Extra []string
	// Outcomes adds OutcomeColumns, for a campaign that collects
	// outcomes.
	Outcomes bool
}

// extraAt is where the account's own fields stand among the report's
// columns: after the seven form fields, before status.
var extraAt = slices.Index(csvHeader(), "local_presence_number") + 1

// header returns the report's columns: Row's csv tags, in order, with the
// extra columns after the seven form fields.
func header(extra []string) []string {
	return slices.Insert(csvHeader(), extraAt, extra...)
}

// csvHeader returns the csv tags of Row, in order: the report's columns
// without extra ones.
func csvHeader() []string {
	t := reflect.TypeOf(Row{})
	var out []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("csv"); tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// HTTPStatus is an HTTP status code in the report. Zero, no answer, is an
// empty cell.
type HTTPStatus int

// MarshalCSV implements gocsv's TypeMarshaller.
func (h HTTPStatus) MarshalCSV() (string, error) {
	if h == 0 {
		return "", nil
	}
	return strconv.Itoa(int(h)), nil
}

// Count is a number in the report that is an empty cell when zero, such as
// the attempts of a row that was never called.
type Count int

// MarshalCSV implements gocsv's TypeMarshaller.
func (c Count) MarshalCSV() (string, error) {
	if c == 0 {
		return "", nil
	}
	return strconv.Itoa(int(c)), nil
}

// Timestamp formats t for the report's time columns: RFC 3339 in UTC, or
// empty for the zero time.
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvBatch is how many rows CSVWriter buffers before writing them out.
const csvBatch = 256

// CSVWriter writes report.csv. Rows go to a temporary file in the target's
// directory, which Commit renames over the target once it is complete: a
// reader never sees half a report, and the previous report stays until
// the new one is whole. Rows are written out in batches, so memory does
// not grow with their number.
//
// Write escapes every cell that a spreadsheet would run as a formula. A
// CSVWriter is not safe for concurrent use.
type CSVWriter struct {
	path  string
	pf    *durable.File
	csv   gocsv.CSVWriter
	extra *extraColumns // nil without extra columns
	batch []Row
	err   error // sticky
	done  bool  // committed or aborted
}

// NewCSVWriter starts a report to be committed to path (mode 0600, or
// 0660 in a directory a team shares: see [private.FileMode]), and
// writes its header: Row's columns, and those cols adds (the account's
// own fields, see Row.Extra; the outcome columns).
func NewCSVWriter(path string, cols Columns) (*CSVWriter, error) {
	extra := cols.Extra
	pf, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return nil, fmt.Errorf("creating report %s: %w", path, err)
	}
	cw := csv.NewWriter(pf)
	w := &CSVWriter{path: path, pf: pf, csv: cw, batch: make([]Row, 0, csvBatch)}
	if len(extra) > 0 || cols.Outcomes {
		w.extra = &extraColumns{Writer: cw, n: len(extra), cells: [][]string{extra}, outcomes: cols.Outcomes}
		if cols.Outcomes {
			w.extra.tails = [][]string{OutcomeColumns}
		}
		w.csv = w.extra
	}
	if err := gocsv.MarshalCSV([]Row{}, w.csv); err != nil { // the header alone
		pf.Abort()
		return nil, fmt.Errorf("writing report %s: %w", path, err)
	}
	return w, nil
}

// extraColumns is the CSV writer gocsv writes the report through when it
// has extra columns: it puts each record's extra cells (Row.Extra, which
// gocsv does not see, or the header's names) after the seven form fields,
// and, with outcomes, its outcome cells last.
type extraColumns struct {
	*csv.Writer
	n        int        // extra columns
	cells    [][]string // the extra cells of the records gocsv is about to write, in order
	outcomes bool       // the outcome columns come last
	tails    [][]string // their cells, record by record
}

func (x *extraColumns) Write(record []string) error {
	var cells []string
	if len(x.cells) > 0 {
		cells, x.cells = x.cells[0], x.cells[1:]
	}
	if len(cells) > x.n {
		return fmt.Errorf("a row has %d extra cells for %d extra columns", len(cells), x.n)
	}
	cells = append(slices.Clip(cells), make([]string, x.n-len(cells))...) // missing cells are empty
	record = slices.Insert(record, extraAt, cells...)
	if x.outcomes {
		var tail []string
		if len(x.tails) > 0 {
			tail, x.tails = x.tails[0], x.tails[1:]
		}
		record = append(record, tail...)
	}
	return x.Writer.Write(record)
}

// Write adds one row to the report, with its cells escaped for
// spreadsheets (see [Escape]).
func (w *CSVWriter) Write(r Row) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("writing report %s: already committed or aborted", w.path)
	}
	w.batch = append(w.batch, escapeRow(r))
	if len(w.batch) == cap(w.batch) {
		return w.flush()
	}
	return nil
}

// flush writes the buffered rows to the temporary file.
func (w *CSVWriter) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	if w.extra != nil {
		for _, r := range w.batch {
			w.extra.cells = append(w.extra.cells, r.Extra)
			if w.extra.outcomes {
				w.extra.tails = append(w.extra.tails, r.Outcome.cells())
			}
		}
	}
	if err := gocsv.MarshalCSVWithoutHeaders(w.batch, w.csv); err != nil {
		w.err = fmt.Errorf("writing report %s: %w", w.path, err)
		return w.err
	}
	clear(w.batch)
	w.batch = w.batch[:0]
	return nil
}

// Commit writes the remaining rows, syncs the file, renames it over the
// target and syncs the directory. After a failed Commit the previous
// report is still in place and the temporary file is gone.
func (w *CSVWriter) Commit() error {
	if w.done {
		return fmt.Errorf("committing report %s: already committed or aborted", w.path)
	}
	err := w.flush()
	if err == nil {
		if err = w.pf.Commit(); err != nil {
			err = fmt.Errorf("committing report %s: %w", w.path, err)
		}
	}
	if err != nil {
		w.pf.Abort()
	}
	w.done = true
	return err
}

// Abort drops the report being written, leaving the previous one in
// place. It does nothing after Commit, so it is safe to defer.
func (w *CSVWriter) Abort() {
	w.done = true
	w.pf.Abort()
}

// escapeRow escapes a row's text cells for spreadsheets. The two phone
// columns and the account's own fields keep an E.164 number as it is:
// '+' and digits alone are no formula, and the phone number of every row
// but an invalid one is E.164.
func escapeRow(r Row) Row {
	for _, p := range []*string{
		&r.Sheet, &r.Email, &r.FirstName, &r.LastName, &r.GHLContactID,
		&r.OverrideAgentID, &r.Status, &r.Reason, &r.Agent, &r.AgentID,
		&r.FirstAttemptAt, &r.LastAttemptAt, &r.Response, &r.Consent, &r.Outcome.Event, &r.Outcome.At, &r.Outcome.Detail,
	} {
		*p = Escape(*p)
	}
	r.PhoneNumber, r.LocalPresenceNumber = EscapeNumber(r.PhoneNumber), EscapeNumber(r.LocalPresenceNumber)
	if len(r.Extra) > 0 {
		extra := make([]string, len(r.Extra)) // the caller's slice stays as it is
		for i, v := range r.Extra {
			extra[i] = EscapeNumber(v) // phone_number1, say
		}
		r.Extra = extra
	}
	return r
}

// Escape returns s made safe for a spreadsheet: a cell that begins with
// '=', '+', '-', '@', a tab or a carriage return, which a spreadsheet
// would run as a formula, gets a leading single quote.
func Escape(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// EscapeNumber is Escape for a cell that holds a phone number: an E.164
// number ('+' and digits alone) is no formula and stays as it is.
func EscapeNumber(s string) string {
	if isE164(s) {
		return s
	}
	return Escape(s)
}

// isE164 reports whether s is shaped like a validated E.164 number: '+'
// then 8 to 15 digits. Such a number is no formula, and stays as it is.
func isE164(s string) bool {
	if len(s) < 9 || len(s) > 16 || s[0] != '+' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
