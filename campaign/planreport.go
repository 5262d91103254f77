package campaign

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// PlanReport writes the report of a plan (plan --report): report.csv and
// report.html as they would be before any call, every row with what run
// would do with it and why. Its rows' statuses are the plan's decisions:
// to_call, waiting (to call once its hours open), held (contact pressure,
// until a time), done (an earlier run settled it), and invalid, duplicate
// and suppressed as in a run's report. It uses the run's report writers.
// [BuildPlan] gives it each row ([PlanOptions.Report]); Finish writes the
// page.
type PlanReport struct {
	f     *File
	st    *store.State
	dir   string
	now   time.Time
	w     *report.CSVWriter
	page  *reportPage
	sum   report.Summary
	err   error // the first error of a row, returned by Finish
	ended bool
}

// StartPlanReport starts the report of a plan of f at now, with the
// journal's state st (for the rows an earlier run settled), to be
// written to dir. The caller calls Finish, or Abort on failure.
func StartPlanReport(f *File, st *store.State, dir string, now time.Time) (*PlanReport, error) {
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	w, err := report.NewCSVWriter(filepath.Join(dir, ReportCSV), report.Columns{Extra: f.AccountFields()})
	if err != nil {
		return nil, err
	}
	of := reportOf{at: func() time.Time { return now }, end: func() RunEnd { return RunEnd{} }}
	r := &PlanReport{f: f, st: st, dir: dir, now: now, w: w, page: newReportPage(f, hours, of, dir)}
	r.page.Plan = true
	r.sum = report.Summary{Campaign: f.Name, StartedAt: now}
	return r, nil
}

// add writes the row of contact c, on which the plan decided: c.Status
// for a row of the sheets alone (invalid, duplicate, suppressed), else
// report.PlanDone, Suppressed (its number is on the do-not-call list),
// report.PlanCalledElsewhere (run stops at it), report.PlanHeld (held
// back by contact pressure, held saying until when) or ToCall.
func (r *PlanReport) add(c *Contact, decision string, held *store.HeldError) {
	if r == nil || r.err != nil {
		return
	}
	c.Held = held
	row := ReportRow(r.f, r.st, c)
	var wt *Wait
	switch decision {
	case report.PlanDone:
		what := fmt.Sprintf("%s in an earlier run", row.Status)
		if row.LastAttemptAt != "" {
			what += " (" + row.LastAttemptAt + ")"
		}
		row.Status, row.Reason = report.PlanDone, joinReasons(what, row.Reason)
	case report.PlanCalledElsewhere:
		row.Status = report.PlanCalledElsewhere
		row.Reason = joinReasons("this campaign started a call to them already from another state directory (the store's call starts say so, this journal does not): run stops before calling them again", row.Reason)
	case report.PlanHeld:
		row.Status = report.PlanHeld
		wt = r.page.waits.pending(c, &row, r.now, RunEnd{})
	case ToCall:
		row.Status = report.PlanToCall
		if row.FirstAttemptAt != "" { // pending in the journal: tried, provably not sent
			row.Reason = "tried by an earlier run and not sent: " + row.Reason
		}
		if wt = r.page.waits.hoursWait(c, r.now); wt != nil {
			row.Status, row.Reason = report.PlanWaiting, joinReasons(wt.Why, row.Reason)
		}
	}
	r.sum.Add(row)
	r.page.add(c, &row, wt)
	if err := r.w.Write(row); err != nil {
		r.err = err
	}
}

// Finish commits report.csv and writes report.html.
func (r *PlanReport) Finish() error {
	if r.err != nil {
		r.Abort()
		return fmt.Errorf("writing the plan's %s: %w", ReportCSV, r.err)
	}
	r.ended = true
	if err := r.w.Commit(); err != nil {
		r.page.Close()
		return err
	}
	r.sum.Finish(r.now)
	return report.WriteHTML(filepath.Join(r.dir, ReportHTML), &r.sum, r.page.Page)
}

// Abort drops the report, leaving the files of dir as they were. It does
// nothing after Finish, so it is safe to defer.
func (r *PlanReport) Abort() {
	if r == nil || r.ended {
		return
	}
	r.ended = true
	r.w.Abort()
	r.page.Close()
}
