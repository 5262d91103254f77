package campaign

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
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
// row, in sheet order, with its final status. It is what `callrun report`
// does, and what a run's [Report] writes. sum carries the run's own facts
// (times, calls, ending, the journal's runs); the counts are added here.
// Contacts waiting for their hours are those closed at sum.FinishedAt;
// a rehearsal's (sum.Rehearsal) wait for none. The rows of the people
// in erased (nil: none) are written erased, as those the journal holds
// erased are.
func WriteReport(ctx context.Context, f *File, st *store.State, sup *Suppression, erased *ErasedSet, dir string, sum *report.Summary) error {
	of := reportOf{at: func() time.Time { return sum.FinishedAt }, end: func() RunEnd { return RunEnd{Ending: sum.Ending} }, rehearsal: sum.Rehearsal}
	page, err := writeRows(ctx, f, st, sup, nil, erased, dir, sum, of, nil)
	if err != nil {
		return err
	}
	return writePage(dir, sum, page)
}

// ErasedSet is a store's erased set as the report reads it: the keyed
// hashes of the people erased, and the keys to hash a sheet's number
// with. The report writes the row of a number in it erased, whether or
// not the journal ever held the contact. A nil *ErasedSet holds nobody.
type ErasedSet struct {
	keys   *store.ErasureKeys
	hashes map[string]bool
}

// LoadErased reads the erased set of s for a report. A store that erased
// nobody costs one look at its set, and its keys are not read; a hash
// whose key the store lacks is an error (see [store.CheckHashKey]): the
// report would show the person in clear.
func LoadErased(ctx context.Context, s store.Store) (*ErasedSet, error) {
	er, err := s.Erasure()
	if err != nil {
		return nil, fmt.Errorf("reading the erased set for the report: %w", err)
	}
	entries, err := er.ErasedEntries(ctx)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	keys, err := er.Keys(ctx)
	if err != nil {
		return nil, err
	}
	set := &ErasedSet{keys: keys, hashes: make(map[string]bool, len(entries))}
	for _, e := range entries {
		if err := store.CheckHashKey(keys, e.Hash, er.String()); err != nil {
			return nil, err
		}
		set.hashes[e.Hash] = true
	}
	return set, nil
}

// Has reports whether the E.164 number e164 is in the set.
func (e *ErasedSet) Has(e164 string) bool {
	if e == nil || e164 == "" {
		return false
	}
	for _, h := range e.keys.Hashes(e164) {
		if e.hashes[h] {
			return true
		}
	}
	return false
}

// reportOf is what a report is of beyond the sheets and the journal.
type reportOf struct {
	// at is when the report is of, and end how the run ended: asked for
	// the first contact left pending, whose row waits for the run's end.
	at        func() time.Time
	end       func() RunEnd
	rehearsal bool // the run was a rehearsal (against the sandbox)
}

// writePage writes report.html and summary.json in dir, once the rows
// are written and counted in sum.
func writePage(dir string, sum *report.Summary, page *report.Page) error {
	if sum.Rows > report.MaxXLSXRows {
		sum.Notes = append(sum.Notes, fmt.Sprintf("report.xlsx is written for up to %d rows; this report has more, so open report.csv (in Excel: Data > From Text/CSV, with the phone column as Text)", report.MaxXLSXRows))
	}
	if err := report.WriteHTML(filepath.Join(dir, ReportHTML), sum, page); err != nil {
		return err
	}
	return report.WriteSummary(filepath.Join(dir, SummaryJSON), sum)
}

// Report writes the report files of a run while it calls, so that the run
// ends soon after its last call rather than reading every sheet and the
// whole journal again then. `callrun run` starts one just before it
// calls ([StartReport]) and finishes it once the calls are over
// ([Report.Finish]); what it writes is what [WriteReport] would write at
// that moment.
//
// A goroutine reads the sheets as WriteReport does and writes each row
// once this run can no longer change it: a row of the sheets alone
// (invalid, duplicate, suppressed), or a contact whose record in the
// journal is one the run leaves alone (see settledFor) and is not a call
// in flight. At the first row that is not yet final it waits, looking
// again every reportPoll, until the row is final or the run is over.
// A contact left pending, a failed one that --retry-failed may send
// again, an uncertain one with --retry-uncertain, and any intent with no
// outcome (a call in flight, or one a killed run left) wait until the
// end, and the rows after them with them; with outcomes every called
// contact does, as the webhooks' deliveries may still change it.
//
// The files are written to temporary files renamed into place at the end,
// as WriteReport's are; a run killed before then leaves the previous
// report, and the temporary files for the next run to remove
// ([report.RemoveStale]).
type Report struct {
	f      *File
	opts   *RunOptions // its State, Suppress, RetryFailed and RetryUncertain
	erased *ErasedSet
	dir    string
	rows   report.Summary // the rows' counts, until Finish
	over   chan struct{}  // closed by Finish: every row is final
	at     time.Time      // the run's end, for the contacts waiting for their hours; set before over is closed
	end    RunEnd         // how the run ended; set with at
	done   chan struct{}  // closed when the rows are written
	page   *report.Page
	err    error
	early  bool // the rows are written while the run calls
	// made counts the rows found final while the run called, for tests
	// to see them made before the run ends.
	made atomic.Int64
}

// reportPoll is how often a Report looks again at a row that was not
// final: the rows of about that much time are left for the run's end.
const reportPoll = 25 * time.Millisecond

// StartReport starts the report of a run over f with opts (its State,
// Suppress, RetryFailed, RetryUncertain), to be written in dir, the rows
// of the people in erased (nil: none) written erased.
// The caller must call Finish after the run, before closing the State,
// and start the run with opts after StartReport: the run and the report
// share opts' table of the numbers seen in the sheets, which StartReport
// sets. ctx ends the reading of the sheets: a run that is to write its
// report however it ends passes one no signal cancels.
func StartReport(ctx context.Context, f *File, opts *RunOptions, erased *ErasedSet, dir string) *Report {
	opts.seen = newNumbersSeen(f)
	r := &Report{f: f, opts: opts, erased: erased, dir: dir, over: make(chan struct{}), done: make(chan struct{}),
		early: f.Outcomes == nil}
	if r.early {
		go r.write(ctx)
	}
	return r
}

// write writes the rows, waiting at each one that is not final.
func (r *Report) write(ctx context.Context) {
	defer close(r.done)
	if r.early {
		// Not while the run's first calls start: they are the run's
		// start-up, and no row of a new campaign is final yet.
		select {
		case <-time.After(reportPoll):
		case <-r.over:
		}
	}
	of := reportOf{at: func() time.Time { return r.at }, end: func() RunEnd { return r.end }, rehearsal: r.opts.Rehearsal}
	wait := func(c *Contact) {
		select {
		case <-r.over:
			return // every row is final: the run is waiting for the report
		default:
			// While the run calls, a row at a time: a call whose turn
			// comes goes first.
			runtime.Gosched()
		}
		tick := (*time.Ticker)(nil)
		for !r.final(c) {
			if tick == nil {
				tick = time.NewTicker(reportPoll)
				defer tick.Stop()
			}
			select {
			case <-r.over:
				return
			case <-tick.C:
			}
		}
		r.made.Add(1)
	}
	r.page, r.err = writeRows(ctx, r.f, r.opts.State, r.opts.Suppress, r.opts.seen, r.erased, r.dir, &r.rows, of, wait)
}

// final reports whether c's row can no longer change in this run.
func (r *Report) final(c *Contact) bool {
	select {
	case <-r.over:
		return true
	default:
	}
	if c.Status != ToCall {
		return true
	}
	st := r.opts.State
	key, ok := SettledKey(r.f, st, c)
	if !ok {
		return false
	}
	status, _ := st.Status(key)
	if !settledFor(status, r.opts) {
		return false
	}
	if status == store.Uncertain { // an intent alone: perhaps a call in flight
		e, _ := st.Lookup(key)
		return !e.Unanswered()
	}
	return true
}

// Finish writes the rows left, then report.html and summary.json. sum
// carries the run's own facts, as for WriteReport: its FinishedAt is the
// run's end, its Ending how it ended, and its NextCallAt, if set, when
// the service said it may be called again (ErrCallLater). The rows'
// counts are added to it, and NextCallAt becomes the first moment a
// contact left pending may be called.
func (r *Report) Finish(ctx context.Context, sum *report.Summary) error {
	r.at = sum.FinishedAt
	if r.at.IsZero() {
		r.at = time.Now()
	}
	r.end = RunEnd{Ending: sum.Ending, ResumeAt: sum.NextCallAt}
	close(r.over)
	if !r.early {
		r.write(ctx)
	}
	<-r.done
	if r.err != nil {
		return r.err
	}
	sum.TakeCounts(&r.rows)
	return writePage(r.dir, sum, r.page)
}

// writeRows writes report.csv and report.xlsx in dir in one pass over
// the sheets, counts the rows in sum, and gathers what report.html shows
// of them; of says when the report is of and how the run ended, asked
// only for a contact left pending (whose hours may be closed then), and
// whether it was a rehearsal. wait, if set, is called
// before each row is made and returns once the row is final (see
// [Report]). seen, if set, is the dedupe table the reading of the sheets
// shares with the run's. The workbook streams its rows to a temporary file, and is
// dropped once the report outgrows it (an older report.xlsx is then
// removed, as it would no longer match report.csv).
func writeRows(ctx context.Context, f *File, st *store.State, sup *Suppression, seen *numbersSeen, erased *ErasedSet, dir string, sum *report.Summary, of reportOf, wait func(*Contact)) (*report.Page, error) {
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	outcomes, err := OpenOutcomes(ctx, f, st)
	if err != nil {
		return nil, err
	}
	if outcomes != nil {
		sum.Outcomes = map[string]int{}
		if f.Outcomes.OptOut != nil {
			sum.OptedOut = new(int)
		}
	}
	sum.NextCallAt = time.Time{}
	cols := report.Columns{Extra: f.AccountFields(), Outcomes: outcomes != nil}
	w, err := report.NewCSVWriter(filepath.Join(dir, ReportCSV), cols)
	if err != nil {
		return nil, err
	}
	xw, err := report.NewXLSXWriter(filepath.Join(dir, ReportXLSX), cols)
	if err != nil {
		w.Abort()
		return nil, err
	}
	page := newReportPage(f, hours, of, dir)
	shown := 0 // rows that show a contact the journal records as called
	cr := f.NewContactReader(sup)
	if seen != nil {
		cr.seen = seen
	}
	err = cr.Each(ctx, func(c *Contact) error {
		if wait != nil {
			wait(c)
			// Whether the number is on the do-not-call list as the row
			// is made: a row that waited for the run's end takes the
			// list as the run left it.
			c.DoNotCall = c.Status == ToCall && sup != nil && sup.OnDoNotCall(c.Phone)
			// And whether contact pressure holds it back, as the run
			// left the call starts.
			c.Held = nil
			if c.Status == ToCall {
				c.Held = sup.heldBack(c.Phone)
			}
		}
		if ShowsACall(f, st, c) {
			shown++
		}
		row := ReportRow(f, st, c)
		if erased.Has(c.Phone) { // at their request, whatever the journal says
			eraseRow(&row, ReasonErased)
		} else if why, ok := duplicateErased(f, st, c); ok {
			eraseRow(&row, why)
		}
		wt := page.explain(c, &row)
		outcomes.Add(c, &row)
		if row.Status == string(store.Erased) {
			eraseRow(&row, row.Reason) // and the deliveries' detail
		}
		sum.Add(row)
		if wt != nil && !wt.Until.IsZero() && (sum.NextCallAt.IsZero() || wt.Until.Before(sum.NextCallAt)) {
			sum.NextCallAt = wt.Until
		}
		if sum.OptedOut != nil && row.Attempts > 0 && sup != nil && sup.OnDoNotCall(c.Phone) {
			*sum.OptedOut++
		}
		page.add(c, &row, wt)
		if err := w.Write(row); err != nil {
			return err
		}
		return xw.Write(row)
	})
	if err != nil {
		w.Abort()
		xw.Abort()
		page.Close()
		return nil, fmt.Errorf("writing %s: %w", ReportCSV, err)
	}
	// Called contacts no row shows now (the sheet was re-exported
	// without them, or their row changed): the report's counts would
	// otherwise say fewer calls than the service placed.
	sum.NotInSheets = CallsNotShown(f, st, shown)
	if err := w.Commit(); err != nil {
		xw.Abort()
		page.Close()
		return nil, err
	}
	if outcomes != nil && !f.Shard.Sharded() { // a shard's report meets only its own contacts
		n := outcomes.Unmatched()
		sum.Unmatched = &n
	}
	if err := xw.Commit(); err != nil {
		page.Close()
		return nil, err
	}
	return page.Page, nil
}

// ShowsACall reports whether c's report row shows a call start the
// journal holds (sent, failed or uncertain); see [CallsNotShown].
func ShowsACall(f *File, st *store.State, c *Contact) bool {
	if c.Status != ToCall {
		return false
	}
	key, ok := SettledKey(f, st, c)
	if !ok {
		return false
	}
	s, _ := st.Status(key)
	return s == store.Sent || s == store.Failed || s == store.Uncertain
}

// CallsNotShown returns how many contacts the journal holds a call start
// for (sent, failed or uncertain) that no row shows, when shown rows of
// the sheets showed one ([ShowsACall]): the sheets were re-exported
// without them, or their rows changed. A shard's rows meet only its own
// contacts, so for a shard it is 0.
func CallsNotShown(f *File, st *store.State, shown int) int {
	if f.Shard.Sharded() {
		return 0
	}
	n := st.Counts()
	return max(0, n[store.Sent]+n[store.Failed]+n[store.Uncertain]-shown)
}

// SettledKey returns the journal key under which c's record stands: its
// own (agent, number, occurrence), or, with dedupe: campaign, the same
// number under another agent (its sheet was moved to another agent, or
// the sheets were reordered) whose record says more that the number may
// have been called (see [store.State.FindPhone]): a number is called once
// in the campaign, whichever agent called it, also when its own agent's
// record is only a try that was not placed.
func SettledKey(f *File, st *store.State, c *Contact) (store.Key, bool) {
	own := store.Key{Agent: f.Agents[c.Agent].Name, Phone: c.Phone, N: c.N}
	ownStatus, ok := st.Status(own)
	if f.Dedupe != "campaign" || (ok && ownStatus.Settles() == store.Sent.Settles()) {
		return own, ok
	}
	if k, found := st.FindPhone(c.Phone); found {
		if other, _ := st.Status(k); !ok || other.Settles() > ownStatus.Settles() {
			return k, true
		}
	}
	return own, ok
}

// ReportRow is a contact's row of report.csv.
func ReportRow(f *File, st *store.State, c *Contact) (row report.Row) {
	row = report.Row{
		Sheet: f.Sheets[c.Sheet].File, Row: c.Row, Agent: f.Agents[c.Agent].Name,
		PhoneNumber: c.Fields[FieldPhone], Email: c.Fields[FieldEmail],
		FirstName: c.Fields[FieldFirstName], LastName: c.Fields[FieldLastName],
		GHLContactID: c.Fields[FieldGHLContactID], OverrideAgentID: c.Fields[FieldOverrideAgentID],
		LocalPresenceNumber: c.Fields[FieldLocalPresence],
		Status:              c.Status, Reason: c.Reason, Consent: c.Consent,
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
		if c.PhoneColumn != "" && row.Status != string(store.Erased) {
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
		if c.Held != nil {
			row.Reason = strings.TrimPrefix(row.Reason+"; ", "; ") + c.Held.Error()
		}
		return row
	}
	if e.Status == store.Erased {
		row.Attempts = report.Count(e.Attempts)
		eraseRow(&row, cmp.Or(e.Reason, ReasonErased)) // what the contact's status was: nothing of the person
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

// ReasonErased is the reason of the report row of a contact in the
// erased set whose journal does not say why.
const ReasonErased = "erased at the person's request: callrun keeps nothing of them"

// eraseRow empties every personal cell of an erased contact's row: the
// number, the name, the e-mail, every mapped field, the consent, the
// service's answer and the deliveries' detail. The sheet, the row, the
// agent, the count of attempts and the latest event delivered stay, so
// that the report still has one row per sheet row and its counts hold;
// why says why the person was erased.
func eraseRow(row *report.Row, why string) {
	*row = report.Row{Sheet: row.Sheet, Row: row.Row, Agent: row.Agent, Status: string(store.Erased),
		Reason: why, Attempts: row.Attempts, Extra: make([]string, len(row.Extra)), Outcome: row.Outcome}
	row.Outcome.Detail = ""
}

// duplicateErased reports whether duplicate row c stands for a contact
// the journal holds erased, and why: the row repeats a number, and is
// blanked as the contact it repeats is (a retention's, whose people are
// in no erased set).
func duplicateErased(f *File, st *store.State, c *Contact) (string, bool) {
	if c.Status != Duplicate || st == nil {
		return "", false
	}
	key, ok := SettledKey(f, st, c)
	if status, _ := st.Status(key); !ok || status != store.Erased {
		return "", false
	}
	if e, ok := st.Lookup(key); ok {
		return cmp.Or(e.Reason, ReasonErased), true
	}
	return "", false
}

// reportPage gathers what report.html shows of each contact.
type reportPage struct {
	*report.Page
	waits *waits
	of    reportOf
	now   time.Time         // of.at's answer (time.Now when it is zero), once asked
	end   RunEnd            // of.end's answer, asked with now
	names map[string]string // countries by code, as the page names them
}

func newReportPage(f *File, hours *CallingHours, of reportOf, dir string) *reportPage {
	w := newWaits(f, hours)
	w.rehearsal = of.rehearsal
	return &reportPage{Page: report.NewPage(dir), waits: w, of: of, names: map[string]string{}}
}

// explain gives the row of a contact left pending its reason, the rule
// that holds it and from when it may be called, and returns that wait;
// on a rehearsal's row of a contact called outside the hours a real run
// keeps, it says so. It returns nil for any other row.
func (p *reportPage) explain(c *Contact, row *report.Row) *Wait {
	switch row.Status {
	case string(store.Pending):
		if p.now.IsZero() {
			if p.now = p.of.at(); p.now.IsZero() {
				p.now = time.Now()
			}
			p.end = p.of.end()
		}
		return p.waits.pending(c, row, p.now, p.end)
	case string(store.Sent), string(store.Failed), string(store.Uncertain):
		if p.of.rehearsal {
			p.waits.rehearsed(c, row)
		}
	}
	return nil
}

// add counts c, whose report row is row, on the page and lists it by
// name: an invalid row under its reason, a contact called (or, in a
// plan, to call) under its country, one whose hours are closed under
// when they open (wt).
func (p *reportPage) add(c *Contact, row *report.Row, wt *Wait) {
	switch row.Status {
	case Invalid:
		field := c.Field
		group := report.ReasonGroup(c.Reason)
		if c.Column != "" {
			group = fmt.Sprintf("column %q: %s", c.Column, group)
		}
		p.AddInvalid(group, invalidFix(field, c.Reason), report.Example{Sheet: row.Sheet, Row: c.Row, Column: c.Column, Cell: invalidCell(c)})
	case string(store.Sent), string(store.Failed), string(store.Uncertain), report.PlanToCall, report.PlanWaiting:
		p.AddCalled(p.countryName(c.Country))
	}
	who := report.Person{Name: strings.TrimSpace(row.FirstName + " " + row.LastName), Number: row.PhoneNumber,
		Sheet: row.Sheet, Row: row.Row, Why: row.Reason}
	if wt != nil {
		who.From = wt.Until
		if !wt.Until.IsZero() { // the page shows the time apart
			who.Why = strings.Replace(who.Why, wt.Why, wt.What, 1)
		}
		if wt.Rule == WaitHours || wt.Rule == WaitCampaignHours {
			p.AddWaiting(wt.Until, p.countryName(c.Country))
		}
	}
	p.AddPerson(row.Status, who)
}

// countryName is a country code as the page shows it: "Guernsey (GG)";
// "" when unknown. The contacts of a country share the name.
func (p *reportPage) countryName(code string) string {
	if code == "" {
		return ""
	}
	name, ok := p.names[code]
	if !ok {
		name = phone.CountryName(code)
		p.names[code] = name
	}
	return name
}

// invalidCell is the cell an invalid row fails on, as written.
func invalidCell(c *Contact) string {
	if i := slices.Index(FormFields, c.Field); i >= 0 {
		return c.Fields[i]
	}
	switch c.Field {
	case "timezone":
		return c.TZ
	case "consent":
		return c.ConsentCell
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
	case field == "consent":
		return "record the person's consent in the CRM (the date they gave it, or a yes) and export the sheet again; a row without it is not called. A date read as the wrong day and month follows the sheet's region."
	case field == "row":
		return "the row itself could not be read: fix it in the sheet as the reason says (a stray quote, a cell too large), or remove it."
	}
	return "correct the cell as the reason says."
}
