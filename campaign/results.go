package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// ReportFiles are the names of the report files in the state directory.
const (
	ReportCSV   = "report.csv"
	ReportXLSX  = "report.xlsx"
	SummaryJSON = "summary.json"
)

// WriteReport rebuilds report.csv and summary.json in dir from the sheets
// and the journal: one row per input row, in sheet order, with its final
// status. It is what every run ends with, however it ends, and what
// `callrun report` does on its own. sum carries the run's own facts
// (times, calls, ending); the counts are added here.
func WriteReport(ctx context.Context, f *File, st *store.State, norm *phone.Normalizer, sup *Suppression, dir string, sum *report.Summary) error {
	w, err := report.NewCSVWriter(filepath.Join(dir, ReportCSV), f.AccountFields()...)
	if err != nil {
		return err
	}
	cr := f.NewContactReader(norm, sup)
	err = cr.Each(ctx, func(c *Contact) error {
		row := ReportRow(f, st, c)
		sum.Add(row)
		return w.Write(row)
	})
	if err != nil {
		w.Abort()
		return fmt.Errorf("writing %s: %w", ReportCSV, err)
	}
	if err := w.Commit(); err != nil {
		return err
	}
	// The workbook is a second pass, made only for a report small enough
	// for it: a large run never holds workbook rows in memory.
	if err := writeXLSX(ctx, f, st, norm, sup, filepath.Join(dir, ReportXLSX), sum.Rows); err != nil {
		return err
	}
	if sum.Rows > report.MaxXLSXRows {
		sum.Notes = append(sum.Notes, fmt.Sprintf("report.xlsx is written for up to %d rows; this report has more, so open report.csv (in Excel: Data > From Text/CSV, with the phone column as Text)", report.MaxXLSXRows))
	}
	return report.WriteSummary(filepath.Join(dir, SummaryJSON), sum)
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

// writeXLSX writes report.xlsx for a report of rows rows, or, when that is
// more than a workbook is written for, removes an older one that would no
// longer match report.csv.
func writeXLSX(ctx context.Context, f *File, st *store.State, norm *phone.Normalizer, sup *Suppression, path string, rows int) error {
	if rows > report.MaxXLSXRows {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	xw, err := report.NewXLSXWriter(path, f.AccountFields()...)
	if err != nil {
		return err
	}
	err = f.NewContactReader(norm, sup).Each(ctx, func(c *Contact) error {
		return xw.Write(ReportRow(f, st, c))
	})
	if err != nil {
		xw.Abort()
		return fmt.Errorf("writing %s: %w", ReportXLSX, err)
	}
	return xw.Commit()
}
