package campaign

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// ReportFiles are the names of the report files in the state directory.
const (
	ReportCSV   = "report.csv"
	ReportXLSX  = "report.xlsx"
	ReportHTML  = "report.html"
	SummaryJSON = "summary.json"
)

// WriteReport rebuilds report.csv, report.xlsx, report.html and
// summary.json in dir from the sheets and the journal: one row per input
// row, in sheet order, with its final status. It is what every run ends
// with, however it ends, and what `callrun report` does on its own. sum
// carries the run's own facts (times, calls, ending, the journal's runs);
// the counts are added here. Contacts waiting for their hours are those
// closed at sum.FinishedAt.
func WriteReport(ctx context.Context, f *File, st *store.State, norm *phone.Normalizer, sup *Suppression, dir string, sum *report.Summary) error {
	page, err := writeRows(ctx, f, st, norm, sup, dir, sum)
	if err != nil {
		return err
	}
	if sum.Rows > report.MaxXLSXRows {
		sum.Notes = append(sum.Notes, fmt.Sprintf("report.xlsx is written for up to %d rows; this report has more, so open report.csv (in Excel: Data > From Text/CSV, with the phone column as Text)", report.MaxXLSXRows))
	}
	if err := report.WriteHTML(filepath.Join(dir, ReportHTML), sum, page); err != nil {
		return err
	}
	return report.WriteSummary(filepath.Join(dir, SummaryJSON), sum)
}

// writeRows writes report.csv and report.xlsx in dir in one pass over
// the sheets, counts the rows in sum, and gathers what report.html shows
// of them. The workbook streams its rows to a temporary file, and is
// dropped once the report outgrows it (an older report.xlsx is then
// removed, as it would no longer match report.csv).
func writeRows(ctx context.Context, f *File, st *store.State, norm *phone.Normalizer, sup *Suppression, dir string, sum *report.Summary) (*report.Page, error) {
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	outcomes, err := OpenOutcomes(ctx, f, st, norm, dir)
	if err != nil {
		return nil, err
	}
	if outcomes != nil {
		sum.Outcomes = map[string]int{}
	}
	cols := report.Columns{Extra: f.AccountFields(), Outcomes: outcomes != nil}
	w, err := report.NewCSVWriterFor(filepath.Join(dir, ReportCSV), cols)
	if err != nil {
		return nil, err
	}
	xw, err := report.NewXLSXWriterFor(filepath.Join(dir, ReportXLSX), cols)
	if err != nil {
		w.Abort()
		return nil, err
	}
	page := newReportPage(f, hours, sum.FinishedAt)
	err = f.NewContactReader(norm, sup).Each(ctx, func(c *Contact) error {
		row := ReportRow(f, st, c)
		outcomes.Add(c, &row)
		sum.Add(row)
		page.add(c, &row)
		if err := w.Write(row); err != nil {
			return err
		}
		return xw.Write(row)
	})
	if err != nil {
		w.Abort()
		xw.Abort()
		return nil, fmt.Errorf("writing %s: %w", ReportCSV, err)
	}
	if err := w.Commit(); err != nil {
		xw.Abort()
		return nil, err
	}
	if outcomes != nil && !f.Shard.Sharded() { // a shard's report meets only its own contacts
		n := outcomes.Unmatched()
		sum.Unmatched = &n
	}
	return page.Page, xw.Commit()
}

// SettledKey returns the journal key under which c's record stands: its
// own (agent, number, occurrence), or, with dedupe: campaign, the same
// number under another agent (its sheet was moved to another agent, or
// the sheets were reordered): a number is called once in the campaign,
// whichever agent called it.
func SettledKey(f *File, st *store.State, c *Contact) (store.Key, bool) {
	own := store.Key{Agent: f.Agents[c.Agent].Name, Phone: c.Phone, N: c.N}
	if _, ok := st.Status(own); ok || f.Dedupe != "campaign" {
		return own, ok
	}
	if k, ok := st.FindPhone(c.Phone); ok {
		return k, true
	}
	return own, false
}

// ReportRow is a contact's row of report.csv.
func ReportRow(f *File, st *store.State, c *Contact) (row report.Row) {
	row = report.Row{
		Sheet: f.Sheets[c.Sheet].File, Row: c.Row, Agent: f.Agents[c.Agent].Name,
		PhoneNumber: c.Fields[FieldPhone], Email: c.Fields[FieldEmail],
		FirstName: c.Fields[FieldFirstName], LastName: c.Fields[FieldLastName],
		GHLContactID: c.Fields[FieldGHLContactID], OverrideAgentID: c.Fields[FieldOverrideAgentID],
		LocalPresenceNumber: c.Fields[FieldLocalPresence],
		Status:              c.Status, Reason: c.Reason,
	}
	if len(c.Extra) > 0 {
		row.Extra = make([]string, len(c.Extra)) // in the order of f.AccountFields, as c.Extra is
		for i, x := range c.Extra {
			row.Extra[i] = x.Value
		}
	}
	switch c.Status {
	case Invalid:
		if c.Column != "" {
			row.Reason = fmt.Sprintf("column %q: %s", c.Column, c.Reason)
		}
		return row
	case Duplicate, Suppressed:
		return row
	}
	defer func() {
		if c.PhoneColumn != "" {
			row.Reason = strings.TrimPrefix(row.Reason+"; ", "; ") + fmt.Sprintf("number from column %q", c.PhoneColumn)
		}
	}()
	row.Reason = c.Warning
	key, _ := SettledKey(f, st, c)
	e, ok := st.Lookup(key)
	if c.DoNotCall && (!ok || e.Status == store.Pending) {
		// Never called (or provably not), and on the list now.
		row.Status, row.Reason = Suppressed, ReasonDoNotCall
		return row
	}
	if !ok {
		row.Status = string(store.Pending)
		return row
	}
	row.Status, row.HTTPStatus, row.Attempts, row.AgentID = string(e.Status), report.HTTPStatus(e.HTTP), report.Count(e.Attempts), e.AgentID
	row.FirstAttemptAt, row.LastAttemptAt, row.Response = report.Timestamp(e.FirstAt), report.Timestamp(e.LastAt), e.Body
	if e.Reason != "" {
		row.Reason = e.Reason
	}
	if key.Agent != row.Agent {
		row.Reason = strings.TrimPrefix(row.Reason+"; ", "; ") + "called through agent " + key.Agent + " (dedupe: campaign)"
	}
	return row
}

// reportPage gathers what report.html shows of each contact.
type reportPage struct {
	*report.Page
	f     *File
	hours *CallingHours
	now   time.Time
	// opens caches when a closed contact may be called, by country and
	// zones: NextOpen looks days ahead, and the contacts of a zone share
	// the answer.
	opens map[string]time.Time
}

func newReportPage(f *File, hours *CallingHours, now time.Time) *reportPage {
	if now.IsZero() {
		now = time.Now()
	}
	return &reportPage{Page: report.NewPage(), f: f, hours: hours, now: now, opens: map[string]time.Time{}}
}

// add counts c, whose report row is row: an invalid row under its
// reason, a contact called under its country, a pending one whose hours
// are closed under when they open.
func (p *reportPage) add(c *Contact, row *report.Row) {
	switch row.Status {
	case Invalid:
		field := c.Field
		group := report.ReasonGroup(c.Reason)
		if c.Column != "" {
			group = fmt.Sprintf("column %q: %s", c.Column, group)
		}
		p.AddInvalid(group, invalidFix(field, c.Reason), report.Example{Sheet: row.Sheet, Row: c.Row, Column: c.Column, Cell: invalidCell(c)})
	case string(store.Sent), string(store.Failed), string(store.Uncertain):
		p.AddCalled(c.Country)
	case string(store.Pending):
		if c.Phone == "" || p.hours.Open(c, p.now) {
			return
		}
		var key strings.Builder
		key.WriteString(c.Country)
		for _, z := range ContactZones(c) {
			key.WriteString(" " + z.String())
		}
		at, ok := p.opens[key.String()]
		if !ok {
			at = p.hours.NextOpen(c, p.now)
			p.opens[key.String()] = at
		}
		p.AddWaiting(at, c.Country)
	}
}

// invalidCell is the cell an invalid row fails on, as written.
func invalidCell(c *Contact) string {
	if i := slices.Index(FormFields, c.Field); i >= 0 {
		return c.Fields[i]
	}
	if c.Field == "timezone" {
		return c.TZ
	}
	return ""
}

// invalidFix says what to change in the sheet for a row invalid in field.
func invalidFix(field, reason string) string {
	switch {
	case strings.HasPrefix(reason, "no time zone is known"):
		return "give the row a time zone in a timezone_column (an IANA name such as America/Chicago), with hours: {timezone: contact}."
	case field == FormFields[FieldPhone]:
		return "correct the number as the reason says (a number written +country number always reads), or remove the row; a number of a country or kind the campaign does not call is not called until the campaign file allows it."
	case field == FormFields[FieldEmail]:
		return "correct the address, or empty the cell: the e-mail is optional."
	case field == FormFields[FieldLocalPresence]:
		return "write yes or no, or empty the cell."
	case field == "timezone":
		return "write an IANA time zone such as America/Chicago, or empty the cell."
	case field == "row":
		return "the row itself could not be read: fix it in the sheet as the reason says (a stray quote, a cell too large), or remove it."
	}
	return "correct the cell as the reason says."
}
