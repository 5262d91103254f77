package campaign

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// Counts are a sheet's rows by what run would do with them. Every row is
// counted in exactly one of Invalid, Duplicate, Suppressed, Done, ToCall,
// Held, CalledElsewhere.
type Counts struct {
	Rows       int `json:"rows"`
	Invalid    int `json:"invalid"`
	Duplicate  int `json:"duplicate"`
	Suppressed int `json:"suppressed"`
	Done       int `json:"done"`
	ToCall     int `json:"to_call"`
	// Held counts the contacts contact pressure holds back for now: their
	// number was called on the store (by any campaign) as often as the
	// limits allow, or talked to within 7 days under Reg F's rule, or
	// this campaign calls it already (dedupe: agent or none); they stay
	// pending, to be called later.
	Held int `json:"held"`
	// CalledElsewhere counts the contacts this campaign (by its name)
	// started a call to already, by the store's call starts, that the
	// journal does not record: run stops (exit 1) at the first of them
	// ([store.ForeignStartError]) and calls none of them. See
	// Plan.CalledElsewhere.
	CalledElsewhere int `json:"called_elsewhere,omitempty"`
	// DoNotCall counts, of Suppressed, the contacts not yet called whose
	// number is on the store's do-not-call list.
	DoNotCall int `json:"do_not_call,omitempty"`
	// DoNotCallFlag counts, of Suppressed, the rows whose number a
	// do_not_call: column (the CRM's flag) says yes for, or a consent
	// cell withdraws consent for, in that row or another.
	DoNotCallFlag int `json:"do_not_call_flag,omitempty"`
}

func (c *Counts) add(o Counts) {
	c.Rows += o.Rows
	c.Invalid += o.Invalid
	c.Duplicate += o.Duplicate
	c.Suppressed += o.Suppressed
	c.Done += o.Done
	c.ToCall += o.ToCall
	c.Held += o.Held
	c.CalledElsewhere += o.CalledElsewhere
	c.DoNotCall += o.DoNotCall
	c.DoNotCallFlag += o.DoNotCallFlag
}

// PlanAgent is one agent in a plan.
type PlanAgent struct {
	Name    string   `json:"name"`
	Action  string   `json:"action"` // create | exists | remembered | ambiguous | unknown
	AgentID string   `json:"agent_id"`
	Status  string   `json:"status,omitempty"`
	Drift   []string `json:"drift,omitempty"`
	IDs     []string `json:"ids,omitempty"` // when ambiguous
	// Fields are the form fields of the agent's call endpoint, with their
	// defaults; online, for an agent that exists.
	Fields []PlanField `json:"form_fields,omitempty"`
}

// PlanSheet is one sheet in a plan.
type PlanSheet struct {
	File  string `json:"file"`
	Agent string `json:"agent"`
	Counts
	// Error says why the sheet could not be read to its end (it is not
	// UTF-8, say); the counts are of the rows before that.
	Error string `json:"error,omitempty"`
	// Signals are the sheet's columns that say, or may say, that a
	// person is not to be called, and what the campaign does with each.
	Signals []PlanSignal `json:"signals,omitempty"`
	// noPhone counts the rows invalid because their phone cells are
	// empty: every row, and the mapping is likely wrong (emptyPhoneWarning).
	noPhone int
}

// Plan is what `callrun run` would do, as `callrun plan` shows it. Its
// JSON form is read by CI scripts: its shape is part of the interface.
type Plan struct {
	Campaign        string       `json:"campaign"`
	Offline         bool         `json:"offline"`
	Agents          []PlanAgent  `json:"agents"`
	Sheets          []PlanSheet  `json:"sheets"`
	Totals          Counts       `json:"totals"`
	Problems        []RowProblem `json:"problems"`
	ProblemsOmitted int          `json:"problems_omitted,omitempty"` // invalid rows beyond the listed ones
	// Countries counts the contacts to call by the country of their number
	// ("US": 110; "001" for international non-geographic numbers).
	Countries map[string]int `json:"countries"`
	// Repairs lists every number read other than as written (Excel damage),
	// up to MaxPlanProblems; RepairsOmitted counts the rest.
	Repairs        []PlanRepair `json:"repairs"`
	RepairsOmitted int          `json:"repairs_omitted,omitempty"`
	Hours          PlanHours    `json:"hours"`
	// HeldUntil is when the first held contact may be called (RFC 3339,
	// UTC); HeldRepeats counts, of Held, the repeats of a number this
	// campaign calls already (dedupe: agent or none).
	HeldUntil   string `json:"held_until,omitempty"`
	HeldRepeats int    `json:"held_repeats,omitempty"`
	// SuppressionIgnored counts the entries of suppression files that are
	// no phone number at all, and so suppress nobody.
	SuppressionIgnored int   `json:"suppression_ignored,omitempty"`
	EstimateSeconds    int64 `json:"estimate_seconds"`
	// Shard is the part of the campaign planned, with --shard.
	Shard *PlanShard `json:"shard,omitempty"`
	// Store says where the journal is (done counts come from it), for
	// people; the commands set it.
	Store string `json:"store,omitempty"`
	// Retention is the campaign's retention: as written; "": its data
	// is kept for ever.
	Retention string   `json:"retention,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	// SheetProblems are the sheets that could not be read to their end,
	// as problems of the campaign file (naming the sheet's file: key):
	// `callrun plan` exits 2 on any, after showing the other sheets.
	SheetProblems []Problem `json:"-"`
	// UnmappedDoNotCall counts the rows whose cell says do not call (or
	// reads neither yes nor no, or in a column of labels mentions do not
	// call: "Closed - Do not call") in a signal column the campaign neither
	// maps nor ignores (a header such as "Do Not Call", "DND" or
	// "SMS_BLACKLISTED", or "Do not call" among a column's labels): plan
	// and run refuse the campaign, naming each column (Sheets[].Signals,
	// use "refused").
	UnmappedDoNotCall int `json:"unmapped_do_not_call,omitempty"`
	// UnclearDoNotCall counts the cells of the do_not_call: columns that
	// say neither yes nor no, or mention do not call without saying it,
	// the rows of groups whose title does, and the comments on cells that
	// do, whose rows are not called; a warning names the first of each
	// column.
	UnclearDoNotCall int `json:"unclear_do_not_call,omitempty"`
	// UnnumberedDoNotCall counts the phone cells of rows marked do not
	// call (or whose consent is withdrawn, or whose flag reads neither
	// yes nor no) that hold five digits or more and read as no number:
	// plan and run refuse the campaign, naming the first few.
	UnnumberedDoNotCall int `json:"unnumbered_do_not_call,omitempty"`
	// NotDialledColumns counts the columns of the sheets' phone_number
	// whose header names a line callrun never dials (an assistant's, a
	// fax, a pager); a warning names each, and how many rows had a number
	// there.
	NotDialledColumns int `json:"not_dialled_phone_columns,omitempty"`
	// FlaggedNumbers counts the numbers the sheets' do_not_call: columns
	// flag, or whose consent cell withdraws consent, those of every column
	// of numbers of the rows so marked (a Mobile beside the phone column,
	// [otherPhones]) in every shard; run puts those of [Suppression.Flagged]
	// on the store's do-not-call list before its first call. A number
	// whose mark reads neither yes nor no is not among them: see
	// HeldNumbers.
	FlaggedNumbers int `json:"flagged_numbers,omitempty"`
	// HeldNumbers counts the numbers of the rows whose mark callrun
	// cannot read (a flag cell that reads neither yes nor no, a note or
	// a comment that mentions do not call): suppressed in every row that
	// holds them, as FlaggedNumbers', but put on no list.
	HeldNumbers int `json:"held_numbers,omitempty"`
	// CalledElsewhere, when set, is the contacts this campaign started a
	// call to already from a state directory that is not this one, by the
	// store's call starts: run would stop at the first (exit 1), and plan
	// fails as run would ([Plan.Refusal]).
	CalledElsewhere *PlanCalledElsewhere `json:"called_elsewhere,omitempty"`
	// OptOutsHeld are the opt-outs held on the store's do-not-call list
	// (status's opt_outs_held): deliveries `listen` stored whose number it
	// could not read. While one is held no run on the store starts a call:
	// run would stop before its first (exit 1), and plan fails as run
	// would ([Plan.Refusal]). Empty when none is, or the list was not
	// read (--offline with the store in PostgreSQL).
	OptOutsHeld []store.OptOutHold `json:"opt_outs_held,omitempty"`
	// ClockOff, online, says that this machine's clock is more than a
	// minute from the service's, as the service's answers to the plan
	// dated them: run would stop before its first call (exit 1), and
	// plan fails as run would ([Plan.Refusal]). Offline it is not known.
	ClockOff string `json:"clock_off,omitempty"`
	// ErasureKeyMissing says that the store's erased set holds a keyed
	// hash whose erasure key the store lacks: callrun cannot tell who was
	// erased, so run would stop before its first call (exit 1), and plan
	// fails as run would ([Plan.Refusal]).
	ErasureKeyMissing string `json:"erasure_key_missing,omitempty"`

	heldWhere string // the list the holds are on, for people
	path      string // the campaign file, for the commands that resolve a hold
	rehearsal bool   // the holds are a rehearsal's: resolve them with --sandbox
	groups    []*problemGroup
	repair    []*problemGroup
	calling   time.Duration // calling time alone, without waiting for hours
	now       time.Time
	nextOpen  time.Time // Hours.NextOpen, in the zone of hours: (else UTC)
	heldUntil time.Time
}

// hold says whether contact pressure holds number back at now; nil when
// it does not, or when p is nil.
func (p *PlanPressure) hold(number string, now time.Time) *store.HeldError {
	if p == nil {
		return nil
	}
	at, conversed := p.Starts[number], p.Conversations[number]
	if p.Hashes != nil {
		at = slices.Clone(at)
		for _, h := range p.Hashes(number) {
			at = append(at, p.Starts[h]...)
			if c := p.Conversations[h]; c.After(conversed) {
				conversed = c
			}
		}
	}
	limits := p.Limits
	// The states' cap of three holds no number called fewer times, and
	// reading a +1 number's country costs the library's Parse: not on
	// every row of a sheet.
	if len(limits) > 0 && len(at) >= stateAttemptMax {
		if extra := StateAttemptLimits(number); len(extra) > 0 {
			limits = append(slices.Clip(limits), extra...) // as the run's store.Pressure.NumberLimits
		}
	}
	return store.Later(store.HoldUntil(limits, number, at, now),
		store.HoldAfterConversation(number, conversed, p.AfterConversation, now))
}

// add counts a call start to number at now, as run would.
func (p *PlanPressure) add(number string, now time.Time) {
	if p != nil {
		p.Starts[number] = append(p.Starts[number], now)
	}
}

// PlanCalledElsewhere is what a plan found of the contacts this
// campaign called already from another journal ([Plan.CalledElsewhere]).
type PlanCalledElsewhere struct {
	Contacts int `json:"contacts"`
	// Journal is the journal that does not record them (the plan's
	// state directory's); Starts, the call starts that record them.
	Journal string `json:"journal"`
	Starts  string `json:"starts"`
	// First is when the earliest of those calls was started (RFC 3339, UTC).
	First string `json:"first"`
	// Rows are the first MaxCalledElsewhereRows of them, by sheet and row.
	Rows []PlanRow `json:"rows"`
	// Decide is what to decide, as run's stop says it.
	Decide string `json:"decide"`
	first  time.Time
}

// PlanRow is a row of a sheet.
type PlanRow struct {
	File string `json:"file"`
	Row  int    `json:"row"`
}

// MaxCalledElsewhereRows bounds the rows a plan lists of the contacts
// called already from another journal; plan --report lists every one.
const MaxCalledElsewhereRows = 20

// PlanShard is the shard a plan covers: the contacts whose number hashes
// to Index of Count, called at PerSecond (the campaign's per_second / Count).
type PlanShard struct {
	Index     int     `json:"index"`
	Count     int     `json:"count"`
	PerSecond float64 `json:"per_second"`
}

// PlanRepair is a number read other than as written: the cell, the number
// called, its country, and why.
type PlanRepair struct {
	File    string `json:"file"`
	Row     int    `json:"row"`
	Field   string `json:"field"`
	Cell    string `json:"cell"`
	Number  string `json:"number"`
	Country string `json:"country"`
	Why     string `json:"why"`
}

// PlanHours says when the contacts to call may be called, as of the
// plan's time: how many are outside their calling hours now (the called
// person's and the campaign's), and the first moment one of those opens.
type PlanHours struct {
	OutsideNow int    `json:"outside_now"`
	NextOpen   string `json:"next_open,omitempty"` // RFC 3339, in the zone of the campaign's hours: (else UTC)
	// Never counts contacts whose hours do not open in the next three weeks.
	Never int `json:"never,omitempty"`
	// OtherZones counts, with a fixed hours.timezone, the contacts whose
	// numbers ring in a zone whose clock differs from it now.
	OtherZones int `json:"other_zones,omitempty"`
}

// MaxPlanProblems bounds the problems a plan lists one by one; the counts
// and the grouped text cover every row.
const MaxPlanProblems = 1000

// problemGroup gathers invalid (or repaired) rows of one sheet and field.
type problemGroup struct {
	file, field, column string
	rows                []int
	more                int
	examples            []string
}

const maxGroupRows = 40

func (g *problemGroup) add(row int, msg string) {
	if len(g.rows) < maxGroupRows {
		g.rows = append(g.rows, row)
	} else {
		g.more++
	}
	if len(g.examples) < 3 {
		g.examples = append(g.examples, fmt.Sprintf("row %d: %s", row, msg))
	}
}

// PlanOptions are the inputs of [BuildPlan] besides the campaign file.
type PlanOptions struct {
	Offline bool
	Agents  []AgentPlan
	// Done reports whether a contact is already settled in the journal
	// (sent, failed or uncertain); nil means nothing is.
	Done func(c *Contact) bool
	// Suppression; nil means none is loaded (and none applies).
	Suppress *Suppression
	Now      time.Time
	Warnings []string
	// Pressure is the campaign's contact pressure and the call starts the
	// store counts now, by number; nil: none is known (offline with
	// PostgreSQL, or pressure off), and no contact is held.
	Pressure *PlanPressure
	// Report, if set, is given every row with the plan's decision on it
	// (plan --report).
	Report *PlanReport
	// CalledElsewhere, if set, reports whether run would refuse the first
	// call start of a contact not done because the store's call starts
	// say this campaign started a call to it already from a journal that
	// does not record it ([store.ForeignStartError]), and when the
	// earliest such start was counted; nil: not checked (PostgreSQL, a
	// rehearsal, or offline with the state in PostgreSQL).
	CalledElsewhere func(c *Contact) (time.Time, bool)
	// Journal and Starts name the journal the plan read and the call
	// starts CalledElsewhere read, for the plan's words.
	Journal, Starts string
	// Held are the opt-outs held on the store's do-not-call list, which
	// stop every run on it before its first call; HeldWhere names the
	// list. Path is the campaign file and Rehearsal says the list is a
	// rehearsal's, for the commands that resolve a hold.
	Held      []store.OptOutHold
	HeldWhere string
	Path      string
	Rehearsal bool
	// ClockOff is why this machine's clock is too far from the service's
	// for run to call (online, as the service's answers dated them); "":
	// it is not, or it is not known.
	ClockOff string
	// ErasureKeyMissing is why the store's erased set cannot be read
	// ([store.ErrErasureKeyMissing]), on which run stops; "": it can.
	ErasureKeyMissing string
}

// PlanPressure is what a plan knows of contact pressure: the limits, and
// the store's counted call starts of each number (within the longest
// limit), which BuildPlan adds its own contacts to call to; with Reg F's
// rule (AfterConversation), the latest conversation with each number
// within it. An erased person's starts and conversations are under the
// keyed hashes of their number: Hashes, set when the store holds any,
// gives a number's.
type PlanPressure struct {
	Limits            []store.PressureLimit
	Starts            map[string][]time.Time
	AfterConversation time.Duration
	Conversations     map[string]time.Time
	Hashes            func(e164 string) []string
}

// emptyPhoneWarning is plan's warning for sheet i, whose phone columns
// are empty in every row: the mapping names the wrong column more likely
// than the export holds no number at all. It names the sheet's other
// columns whose header names a phone line callrun dials, for the user to
// map. Each row is listed invalid besides, "phone number is empty", which
// alone did not say that the sheet's numbers are elsewhere.
func emptyPhoneWarning(f *File, i int) string {
	s := &f.Sheets[i]
	var mapped, others []string
	if r, m, err := f.openSheet(i); err == nil {
		header := r.Header()
		r.Close()
		used := map[string]bool{}
		for _, pc := range m.phones {
			mapped = append(mapped, pc.name)
			used[strings.ToLower(pc.name)] = true
		}
		for _, h := range header {
			if kind, _ := phoneLineKind(h); h != "" && !used[strings.ToLower(h)] && phoneLineHeader(h) && kind != lineNotDialled {
				others = append(others, h)
			}
		}
	}
	msg := fmt.Sprintf("%s: its phone column is empty in every row, so nobody on it can be called", s.File)
	if len(mapped) > 0 {
		msg = fmt.Sprintf("%s: phone_number's column%s %s %s empty in every row, so nobody on it can be called", s.File, plural(len(mapped)), quoteList(mapped), map[bool]string{true: "is", false: "are"}[len(mapped) == 1])
	}
	if len(others) == 0 {
		return msg + ": map the column that holds the numbers, phone_number: <its header>"
	}
	return fmt.Sprintf("%s; the sheet has %s: map the column%s that hold%s the numbers, phone_number: [%s]", msg, quoteList(others), plural(len(others)), map[bool]string{true: "s", false: ""}[len(others) == 1], strings.Join(append(mapped, others...), ", "))
}

// BuildPlan reads every sheet and counts what run would do with each row.
func BuildPlan(ctx context.Context, f *File, opts PlanOptions) (*Plan, error) {
	p := &Plan{Campaign: f.Name, Offline: opts.Offline, Problems: []RowProblem{}, Repairs: []PlanRepair{}, Countries: map[string]int{}, Warnings: opts.Warnings, Retention: f.Retention,
		OptOutsHeld: opts.Held, heldWhere: opts.HeldWhere, path: opts.Path, rehearsal: opts.Rehearsal, ClockOff: opts.ClockOff, ErasureKeyMissing: opts.ErasureKeyMissing}
	if f.Shard.Sharded() {
		p.Shard = &PlanShard{Index: f.Shard.Index, Count: f.Shard.Count, PerSecond: f.Pace.PerSecond}
	}
	hours, err := f.CallingHours()
	if err != nil {
		return nil, err
	}
	pc := &planCounter{p: p, opts: opts, when: newPlanWhen(hours, opts.Now), planned: map[string]bool{}, repeats: f.Dedupe != "campaign",
		groups: map[[2]string]*problemGroup{}, repairs: map[string]*problemGroup{}}
	p.addAgents(opts.Agents)
	p.addSuppression(opts.Suppress)
	p.Sheets = make([]PlanSheet, len(f.Sheets))
	for i, s := range f.Sheets {
		p.Sheets[i] = PlanSheet{File: s.File, Agent: s.Agent}
	}
	cr := p.newContactReader(f, opts)
	if err := cr.Each(ctx, pc.count); err != nil {
		return nil, err
	}
	p.addSignals(f, cr, opts.Suppress)
	if opts.Suppress != nil {
		for _, fl := range opts.Suppress.flagged {
			if fl.Unclear {
				p.HeldNumbers++
			} else {
				p.FlaggedNumbers++
			}
		}
	}
	for i, s := range p.Sheets {
		p.Totals.add(s.Counts)
		if s.Rows == 0 && s.Error == "" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s has a header and no rows: nothing to call from it (was it exported empty?)", s.File))
		}
		if s.Rows > 0 && s.noPhone == s.Rows {
			p.Warnings = append(p.Warnings, emptyPhoneWarning(f, i))
		}
	}
	p.Hours, p.nextOpen = pc.when.result()
	if !pc.heldUntil.IsZero() {
		p.HeldUntil = pc.heldUntil.UTC().Format(time.RFC3339)
		p.heldUntil = pc.heldUntil
	}
	p.addWarnings(f)
	p.EstimateSeconds, p.Warnings = estimate(f, p.Totals.ToCall, opts.Now, p.Warnings)
	p.calling = time.Duration(math.Ceil(float64(p.Totals.ToCall)/f.Rate())) * time.Second
	p.now = opts.Now
	return p, nil
}

// addAgents lists the plan's agents, warning of those that differ or need a look.
func (p *Plan) addAgents(agents []AgentPlan) {
	for _, a := range agents {
		pa := PlanAgent{Name: a.Spec.Name, Action: a.Action, AgentID: a.AgentID, Status: a.Status, Drift: a.Drift, IDs: a.IDs}
		p.Agents = append(p.Agents, pa)
		if len(a.Drift) > 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("agent %q on the service differs from the file: %s (%s)", a.Spec.Name, strings.Join(a.Drift, "; "), DriftAdvice))
		}
		if w := a.Warning(); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
}

// addSuppression warns of suppression entries that are no number or several; sup may be nil.
func (p *Plan) addSuppression(sup *Suppression) {
	if sup == nil {
		return
	}
	for _, sp := range sup.Problems {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s row %d: %s (ignored: this entry suppresses nobody)", sp.File, sp.Row, sp.Message))
	}
	if more := sup.Ignored - len(sup.Problems); more > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("and %d more entries of the suppression files that are no phone number", more))
	}
	p.SuppressionIgnored = sup.Ignored
	for _, file := range sup.Empty {
		p.Warnings = append(p.Warnings, fmt.Sprintf("suppression file %s holds no numbers (was it exported empty?): it keeps nobody from being called", file))
	}
	if n := sup.Several; n > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d suppression entr(ies) may mean more than one number, and every number each may mean is suppressed, which can keep someone else from being called (%s); write them as +country number to suppress only the one meant", n, sup.Example))
	}
}

// newContactReader reads f's contacts, a sheet's failure a problem of p, its note a warning.
func (p *Plan) newContactReader(f *File, opts PlanOptions) *ContactReader {
	cr := f.NewContactReader(opts.Suppress)
	cr.SheetFailed = func(i int, se *sheet.Error) {
		p.Sheets[i].Error = se.Error()
		key := fmt.Sprintf("sheets[%d].file", i)
		p.SheetProblems = append(p.SheetProblems, Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: se.Error()})
	}
	cr.SheetNote = func(_ int, note string) { p.Warnings = append(p.Warnings, note) }
	if !opts.Now.IsZero() {
		cr.Now = func() time.Time { return opts.Now }
	}
	return cr
}

// planCounter counts each contact BuildPlan reads into its plan: its
// sheet's counts, the problems and repairs, the hours of those to call.
type planCounter struct {
	p         *Plan
	opts      PlanOptions
	when      *planWhen
	heldUntil time.Time                   // the earliest a held contact may be called
	planned   map[string]bool             // numbers this plan calls, when it may call one twice
	repeats   bool                        // dedupe: agent or none, which let a number be called twice
	groups    map[[2]string]*problemGroup // invalid rows by sheet and field
	repairs   map[string]*problemGroup    // repaired numbers by sheet
}

// count counts contact c, and gives it with the plan's decision to the report.
func (pc *planCounter) count(c *Contact) error {
	ps := &pc.p.Sheets[c.Sheet]
	ps.Rows++
	decision, held := c.Status, (*store.HeldError)(nil) // for opts.Report
	switch c.Status {
	case Invalid:
		ps.Invalid++
		pc.invalid(ps, c)
		if c.Field == FormFields[FieldPhone] && strings.HasPrefix(c.Reason, "phone number is empty") {
			ps.noPhone++
		}
	case Duplicate:
		ps.Duplicate++
	case Suppressed:
		ps.Suppressed++
		if c.DoNotCallColumn != "" || c.DoNotCallGroup != "" {
			ps.DoNotCallFlag++
		}
	default:
		decision, held = pc.callable(ps, c)
	}
	if c.Warning != "" && c.Status != Invalid {
		pc.repaired(ps, c)
	}
	pc.opts.Report.add(c, decision, held)
	return nil
}

// calledElsewhere lists contact c, which this campaign started a call to
// at at from another journal.
func (pc *planCounter) calledElsewhere(ps *PlanSheet, c *Contact, at time.Time) {
	ce := pc.p.CalledElsewhere
	if ce == nil {
		ce = &PlanCalledElsewhere{Journal: pc.opts.Journal, Starts: pc.opts.Starts, Rows: []PlanRow{}, Decide: store.ForeignStartDecide}
		pc.p.CalledElsewhere = ce
	}
	ce.Contacts++
	if ce.first.IsZero() || at.Before(ce.first) {
		ce.first = at
		ce.First = at.UTC().Format(time.RFC3339)
	}
	if len(ce.Rows) < MaxCalledElsewhereRows {
		ce.Rows = append(ce.Rows, PlanRow{File: ps.File, Row: c.Row})
	}
}

// invalid lists contact c among the problems and groups it by sheet and field.
func (pc *planCounter) invalid(ps *PlanSheet, c *Contact) {
	p := pc.p
	field := c.Field
	if len(p.Problems) < MaxPlanProblems {
		msg := c.Reason
		if c.Column != "" {
			msg = fmt.Sprintf("column %q: %s", c.Column, c.Reason)
		}
		p.Problems = append(p.Problems, RowProblem{File: ps.File, Row: c.Row, Field: field, Message: msg})
	} else {
		p.ProblemsOmitted++
	}
	k := [2]string{ps.File, field}
	g := pc.groups[k]
	if g == nil {
		g = &problemGroup{file: ps.File, field: field, column: c.Column}
		pc.groups[k] = g
		p.groups = append(p.groups, g)
	}
	g.add(c.Row, c.Reason)
}

// callable counts contact c, whose row may be called, as done, on the
// do-not-call list, held back by contact pressure or to call, and
// returns that decision and the hold.
func (pc *planCounter) callable(ps *PlanSheet, c *Contact) (string, *store.HeldError) {
	opts := pc.opts
	if opts.Done != nil && opts.Done(c) {
		ps.Done++
		return report.PlanDone, nil
	}
	if c.DoNotCall {
		ps.Suppressed++
		ps.DoNotCall++
		return Suppressed, nil
	}
	// Before contact pressure, as the journal checks it: run stops at
	// this contact whether or not pressure holds it back now.
	if opts.CalledElsewhere != nil {
		if at, ok := opts.CalledElsewhere(c); ok {
			ps.CalledElsewhere++
			pc.calledElsewhere(ps, c, at)
			return report.PlanCalledElsewhere, nil
		}
	}
	if h := opts.Pressure.hold(c.Phone, opts.Now); h != nil {
		ps.Held++
		if pc.planned[c.Phone] {
			pc.p.HeldRepeats++
		}
		if pc.heldUntil.IsZero() || h.Until.Before(pc.heldUntil) {
			pc.heldUntil = h.Until
		}
		return report.PlanHeld, h
	}
	if pc.repeats {
		// Only dedupe: agent or none lets a number be called
		// twice in one campaign: remember its start.
		pc.planned[c.Phone] = true
		opts.Pressure.add(c.Phone, opts.Now)
	}
	ps.ToCall++
	pc.p.Countries[c.Country]++
	pc.when.add(c)
	return c.Status, nil
}

// repaired lists contact c, its number read other than as written, among the repairs.
func (pc *planCounter) repaired(ps *PlanSheet, c *Contact) {
	p := pc.p
	g := pc.repairs[ps.File]
	if g == nil {
		g = &problemGroup{file: ps.File, field: "phone_number"}
		pc.repairs[ps.File] = g
		p.repair = append(p.repair, g)
	}
	g.add(c.Row, c.Warning)
	if len(p.Repairs) < MaxPlanProblems {
		p.Repairs = append(p.Repairs, PlanRepair{File: ps.File, Row: c.Row, Field: "phone_number", Cell: c.Cell, Number: c.Phone, Country: c.Country, Why: c.Warning})
	} else {
		p.RepairsOmitted++
	}
}

// addSignals adds the sheets' do-not-call and consent columns and their
// problems, and those of the phone cells of flagged rows that read as no
// number (sup may be nil).
func (p *Plan) addSignals(f *File, cr *ContactReader, sup *Suppression) {
	p.NotDialledColumns = cr.NotDialledColumns()
	for i := range p.Sheets {
		signals := cr.Signals(i)
		p.Sheets[i].Signals = signals
		for _, s := range signals {
			switch s.Use {
			case "refused":
				p.UnmappedDoNotCall += s.Rows + s.Unclear
				if s.Kind == "values" {
					p.UnmappedDoNotCall += s.Mentions
				}
			case "mapped", "read":
				p.UnclearDoNotCall += s.Unclear + s.Mentions
			case "held":
				p.UnclearDoNotCall += s.Mentions
			}
		}
		p.SheetProblems = append(p.SheetProblems, f.signalProblems(i, signals)...)
	}
	if sup != nil {
		for _, n := range sup.unnumberedCells {
			p.UnnumberedDoNotCall += n
		}
		p.SheetProblems = append(p.SheetProblems, sup.unnumberedProblems(f)...)
	}
}

// addWarnings adds the warnings of repeats held, pressure, Reg F, hours, consent and zones.
func (p *Plan) addWarnings(f *File) {
	if p.HeldRepeats > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d contact(s) repeat a number this campaign calls (dedupe: %s); contact pressure holds each back until the number may be called again", p.HeldRepeats, f.Dedupe))
	}
	if f.PressureLimits() == nil {
		p.Warnings = append(p.Warnings, "pressure: {off: true}: nothing limits how often a number is called across campaigns, not even the three calls a day Florida's, Oklahoma's and Maryland's laws allow; a person called an hour ago by another campaign is called again")
	}
	if w := f.RegFWarning(); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	p.Warnings = append(p.Warnings, HoursWarnings(f)...)
	p.Warnings = append(p.Warnings, ConsentWarnings(f)...)
	if n := p.Hours.OtherZones; n > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("hours.timezone is %s, but %d contact(s) to call have numbers in other time zones; each is called only inside 08:00-20:00 of its own zones as well", f.Hours.Timezone, n))
	}
	if n := p.Hours.Never; n > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d contact(s) to call have no calling hours in the next three weeks (their zones, hours: and holidays never leave one open); they will stay pending", n))
	}
}

// estimate returns how long run would take for n calls at the configured
// rate, inside the calling window.
func estimate(f *File, n int, now time.Time, warnings []string) (int64, []string) {
	if n == 0 {
		return 0, warnings // nothing to call is done now, whenever the window opens
	}
	need := time.Duration(math.Ceil(float64(n)/f.Rate()*1e9)) * time.Nanosecond
	w, err := f.Window()
	switch {
	case err != nil:
		return int64(need.Seconds()), warnings
	case w == nil:
		return int64(math.Ceil(need.Seconds())), warnings
	case w.Contact:
		warnings = append(warnings, "with timezone: contact the estimate leaves out calling hours")
	}
	d, ok := w.OpenSeconds(now, need)
	if !ok {
		warnings = append(warnings, "the calling window never opens")
		return 0, warnings
	}
	return int64(math.Ceil(d.Seconds())), warnings
}

// Refusal returns the error `callrun run` would stop with before any call,
// as far as the plan knows (an opt-out held on the store; online, an agent
// name that two agents share, or this machine's clock too far from the
// service's; an erased set whose key is missing; contacts called from
// another state directory), the first run would meet, or nil. `callrun plan` returns it
// after printing the plan, so that a plan that says "run will refuse" does
// not exit 0.
func (p *Plan) Refusal() error {
	if len(p.OptOutsHeld) > 0 {
		return &OptOutsHeldError{Held: &store.OptOutHeldError{Holds: p.OptOutsHeld, Where: p.heldWhere}}
	}
	for _, a := range p.Agents {
		if a.Action == ActionAmbiguous {
			return fmt.Errorf("run would refuse this campaign: %w", &AmbiguousError{Name: a.Name, IDs: a.IDs})
		}
	}
	if p.ClockOff != "" {
		return fmt.Errorf("run would stop (exit 1) before its first call: %s", p.ClockOff)
	}
	if p.ErasureKeyMissing != "" {
		return fmt.Errorf("run would stop (exit 1) before its first call: %s", p.ErasureKeyMissing)
	}
	if ce := p.CalledElsewhere; ce != nil {
		return &CalledElsewhereError{Campaign: p.Campaign, Plan: ce}
	}
	return nil
}

// CalledElsewhereError is the refusal of a plan whose campaign called
// some of its contacts already from another journal
// ([Plan.CalledElsewhere]): run would stop with a
// [store.ForeignStartError] at the first. It wraps [store.ErrForeignStart].
type CalledElsewhereError struct {
	Campaign string
	Plan     *PlanCalledElsewhere
}

func (e *CalledElsewhereError) Error() string {
	ce := e.Plan
	return fmt.Sprintf("run would stop (exit 1) before calling %d contact(s) that campaign %s started a call to already (the first at %s, by the %s) and that journal %s does not record: "+
		"this state directory is not the one those calls were made from (a second copy or checkout of the campaign, the campaign file copied elsewhere, or a state directory restored from a backup made before those calls). %s",
		ce.Contacts, e.Campaign, ce.First, ce.Starts, ce.Journal, ce.Decide)
}

func (e *CalledElsewhereError) Unwrap() error { return store.ErrForeignStart }

// OptOutsHeldError is the refusal of a plan whose store holds opt-outs
// whose number listen could not read ([Plan.OptOutsHeld]): run would stop
// before its first call with Held, which it wraps (so it is
// [store.ErrOptOutHeld]).
type OptOutsHeldError struct {
	Held *store.OptOutHeldError
}

func (e *OptOutsHeldError) Error() string {
	return fmt.Sprintf("run would stop (exit 1) before its first call, as every run on the store does while an opt-out is held: %v", e.Held)
}

func (e *OptOutsHeldError) Unwrap() error { return e.Held }

// writeHeld writes the opt-outs held on the store for a person: each
// hold, and the commands that resolve one.
func (p *Plan) writeHeld(b *strings.Builder) {
	if len(p.OptOutsHeld) == 0 {
		return
	}
	fmt.Fprintf(b, "\nOpt-outs held on the %s: %d, whose number callrun listen could not read; RUN WOULD STOP before its first call (exit 1), as every run on the store does until a person resolves each:\n", p.heldWhere, len(p.OptOutsHeld))
	others := false
	for _, h := range p.OptOutsHeld {
		fmt.Fprintf(b, "  delivery %s of campaign %s, received %s", h.Key, h.Campaign, h.At.Local().Format("Mon 2 Jan 15:04 MST"))
		if h.Reason != "" {
			fmt.Fprintf(b, ": %s", apiclient.Redact(h.Reason))
		}
		b.WriteString("\n")
		others = others || h.Campaign != p.Campaign
	}
	path, key := cmp.Or(p.path, "CAMPAIGN.yaml"), "KEY"
	if len(p.OptOutsHeld) == 1 && !others {
		key = p.OptOutsHeld[0].Key
	}
	sandbox := ""
	if p.rehearsal {
		sandbox = "--sandbox "
	}
	b.WriteString("  To resolve one: find the person's number in the delivery, put it on the do-not-call list, then resolve the hold:\n")
	fmt.Fprintf(b, "    callrun outcomes show %s%s %s\n", sandbox, path, key)
	fmt.Fprintf(b, "    callrun suppress add %s%s NUMBER\n", sandbox, path)
	fmt.Fprintf(b, "    callrun outcomes resolve %s--note \"NUMBER, by NAME\" %s %s\n", sandbox, path, key)
	if others {
		b.WriteString("  (a hold of another campaign on the store is resolved with that campaign's file)\n")
	}
}

// WriteText prints the plan for a person.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	mode := "online"
	if p.Offline {
		mode = "offline: the service was not asked"
	}
	fmt.Fprintf(&b, "Plan for campaign %s (%s)\n", p.Campaign, mode)
	if p.Shard != nil {
		fmt.Fprintf(&b, "Shard %d/%d: the contacts whose number hashes to %d of %d, called at %.4g a second (pace.per_second / %d)\n", p.Shard.Index, p.Shard.Count, p.Shard.Index, p.Shard.Count, p.Shard.PerSecond, p.Shard.Count)
	}
	if p.Store != "" {
		fmt.Fprintf(&b, "Journal: %s\n", p.Store)
	}
	if p.Retention == "" {
		fmt.Fprintf(&b, "Data kept: for ever; add retention: 90d (at least 31d) to erase each person's data that long after their last call (docs/privacy.md)\n")
	} else {
		fmt.Fprintf(&b, "Data kept: %s after each person's last call (retention:), then erased at the start of a run or daily by listen; the do-not-call list is kept\n", p.Retention)
	}
	p.writeHeld(&b)
	if p.ClockOff != "" {
		fmt.Fprintf(&b, "\nRUN WOULD STOP before its first call (exit 1): %s. (This plan's calling hours and contact pressure are read by this machine's clock too.)\n", p.ClockOff)
	}
	if p.ErasureKeyMissing != "" {
		fmt.Fprintf(&b, "\nRUN WOULD STOP before its first call (exit 1): %s.\n", p.ErasureKeyMissing)
	}
	p.writeAgents(&b)
	p.writeSheets(&b)
	if len(p.groups) > 0 {
		fmt.Fprintf(&b, "\nInvalid rows (skipped and reported; fix them in the sheet and run again):\n")
		for _, g := range p.groups {
			writeGroup(&b, g)
		}
	}
	if len(p.repair) > 0 {
		fmt.Fprintf(&b, "\nRepaired numbers (check them):\n")
		for _, g := range p.repair {
			writeGroup(&b, g)
		}
	}
	if len(p.Countries) > 0 {
		b.WriteString("\nTo call, by country:")
		for _, c := range slices.Sorted(maps.Keys(p.Countries)) {
			fmt.Fprintf(&b, " %s %d", c, p.Countries[c])
		}
		b.WriteString("\n")
	}
	if p.Totals.Held > 0 {
		fmt.Fprintf(&b, "\nHeld back by contact pressure: %d contact(s), called on this store as often as the limits allow (or, with Reg F's rule, talked to within 7 days); they stay pending", p.Totals.Held)
		if !p.heldUntil.IsZero() {
			fmt.Fprintf(&b, ", the first may be called from %s", p.heldUntil.Local().Format("Mon 2 Jan 15:04 MST"))
		}
		b.WriteString(".\n")
	}
	if ce := p.CalledElsewhere; ce != nil {
		fmt.Fprintf(&b, "\nCalled already by this campaign from another state directory: %d contact(s); RUN WOULD STOP at the first (exit 1). The %s record a call this campaign (name: %s) started to each (the first on %s) that journal %s does not record:\n", ce.Contacts, ce.Starts, p.Campaign, ce.first.Local().Format("Mon 2 Jan 15:04 MST"), ce.Journal)
		byFile := map[string][]int{}
		var files []string
		for _, r := range ce.Rows {
			if _, ok := byFile[r.File]; !ok {
				files = append(files, r.File)
			}
			byFile[r.File] = append(byFile[r.File], r.Row)
		}
		for _, file := range files {
			fmt.Fprintf(&b, "  %s: row(s) %s\n", file, rowRanges(byFile[file]))
		}
		if more := ce.Contacts - len(ce.Rows); more > 0 {
			fmt.Fprintf(&b, "  and %d more (plan --report DIR lists every one, as %s)\n", more, report.PlanCalledElsewhere)
		}
		fmt.Fprintf(&b, "  %s\n", ce.Decide)
	}
	if p.FlaggedNumbers > 0 {
		fmt.Fprintf(&b, "\nMarked do not call (or consent withdrawn) in the sheets: %d number(s), in every column of numbers of the rows so marked (a Mobile or Home Phone beside the phone column too), suppressed in every row that holds them; run puts those not on it yet on the store's do-not-call list before its first call, so that every campaign on the store honours them.\n", p.FlaggedNumbers)
	}
	if p.HeldNumbers > 0 {
		fmt.Fprintf(&b, "\nMarks that read neither yes nor no in the sheets (or notes and comments that mention do not call): %d number(s) of the rows so marked, suppressed in every row that holds them and put on no list; decide each (see the rows' reasons).\n", p.HeldNumbers)
	}
	if h := p.Hours; h.OutsideNow > 0 && !p.now.IsZero() {
		fmt.Fprintf(&b, "\nOutside their calling hours now: %d contact(s)", h.OutsideNow)
		if !p.nextOpen.IsZero() {
			fmt.Fprintf(&b, "; the next window opens %s %s, in %s", p.nextOpen.Format("Mon 2 Jan 15:04"), p.nextOpen.Location(), HumanDuration(p.nextOpen.Sub(p.now)))
		}
		b.WriteString(".\n")
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range p.Warnings {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	total := time.Duration(p.EstimateSeconds) * time.Second
	fmt.Fprintf(&b, "\n%d to call: about %s of calling", p.Totals.ToCall, p.calling)
	if total > p.calling+time.Minute && !p.now.IsZero() {
		fmt.Fprintf(&b, "; with calling hours, done around %s (%s from now)", p.now.Add(total).Format("Mon 2 Jan 15:04 MST"), total.Round(time.Minute))
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAgents writes the plan's agents for a person, with their form fields.
func (p *Plan) writeAgents(b *strings.Builder) {
	b.WriteString("\nAgents:\n")
	for _, a := range p.Agents {
		line := fmt.Sprintf("  %-10s %s", a.Action, a.Name)
		switch {
		case a.Action == ActionRemembered:
			line += fmt.Sprintf(" (id %s, status unknown: the service's list does not show it)", a.AgentID)
		case a.AgentID != "":
			line += fmt.Sprintf(" (id %s, %s)", a.AgentID, a.Status)
		case len(a.IDs) > 0:
			line += fmt.Sprintf(" (ids %s: rename one; run will refuse)", strings.Join(a.IDs, ", "))
		}
		b.WriteString(line + "\n")
		if len(a.Fields) > 0 {
			fmt.Fprintf(b, "             form fields: %s\n", fieldsLine(a.Fields))
		}
	}
	if p.Offline && len(p.Agents) > 0 {
		b.WriteString("  (offline: not checked whether each agent exists, or exists twice, which run refuses; plan without --offline checks)\n")
	}
}

// writeSheets writes the plan's sheets for a person: counts, errors, signal columns.
func (p *Plan) writeSheets(b *strings.Builder) {
	b.WriteString("\nSheets:\n")
	for _, s := range p.Sheets {
		fmt.Fprintf(b, "  %s -> %s\n    %s\n", s.File, s.Agent, countsLine(s.Counts))
		if s.Error != "" {
			fmt.Fprintf(b, "    cannot be read past that: %s\n", s.Error)
		}
		if len(s.Signals) > 0 {
			b.WriteString("    do-not-call and consent columns:\n")
			for _, sig := range s.Signals {
				fmt.Fprintf(b, "      %s\n", signalLine(sig))
			}
		}
	}
	if len(p.Sheets) > 1 {
		fmt.Fprintf(b, "  total\n    %s\n", countsLine(p.Totals))
	}
}

// signalLine says for a person what plan found of a signal column and
// what the campaign does with it.
func signalLine(s PlanSignal) string {
	switch {
	case s.Use == "ignored":
		return fmt.Sprintf("%q: ignored on purpose (do_not_call: ignore:): %q", s.Column, s.Reason)
	case s.Kind == "group" && s.Use == "honoured":
		return fmt.Sprintf("group %q (its title in row %d): the title says do not call, so none of its %d row(s) is called (%s)", s.Group, s.TitleRow, s.Rows, strings.Join(s.Examples, ", "))
	case s.Kind == "group":
		return fmt.Sprintf("group %q (its title in row %d): the title mentions do not call without saying it, and its %d row(s) are not called until it says which", s.Group, s.TitleRow, s.Mentions)
	case s.Kind == "comments":
		return fmt.Sprintf("comments on cells: %d mention do not call, and their rows are not called, nor any row with their number, until a person reads them (%s)", s.Mentions, s.MentionAt)
	}
	what := map[string]string{"flag": "a do-not-call flag", "values": "labels or a status", "notes": "notes", "consent": "consent to be called", "consent_status": "the status of consent to be called",
		"consent_channel": "the channel consent is for", "consent_end": "the day consent ends"}[s.Kind]
	if s.Found != "" {
		what += ", found by its " + s.Found
	}
	use := map[string]string{"mapped": "mapped", "unmapped": "not mapped", "refused": "NOT MAPPED, so nothing is called (see the problem below)",
		"read": "read on every row beside the consent column (a row it puts out of scope has no consent)"}[s.Use]
	var parts []string
	switch {
	case s.Rows > 0 && (s.Kind == "consent" || s.Kind == "consent_status"):
		parts = append(parts, fmt.Sprintf("%d row(s) withdraw consent (%s)", s.Rows, strings.Join(s.Examples, ", ")))
	case s.Rows > 0:
		parts = append(parts, fmt.Sprintf("%d row(s) say do not call (%s)", s.Rows, strings.Join(s.Examples, ", ")))
	case s.Kind == "consent_channel" || s.Kind == "consent_end":
	case s.Kind != "consent":
		parts = append(parts, "no row says do not call")
	}
	if s.Unclear > 0 {
		parts = append(parts, fmt.Sprintf("%d cell(s) read neither yes nor no, and their rows are not called (%s)", s.Unclear, s.UnclearAt))
	}
	if s.Mentions > 0 {
		parts = append(parts, fmt.Sprintf("%d cell(s) mention do not call without saying it, and their rows are not called (%s)", s.Mentions, s.MentionAt))
	}
	line := fmt.Sprintf("%q (%s): %s", s.Column, what, use)
	if len(parts) > 0 {
		line += "; " + strings.Join(parts, "; ")
	}
	return line
}

func countsLine(c Counts) string {
	line := fmt.Sprintf("%d rows: %d to call, %d done, %d invalid, %d duplicate, %d suppressed",
		c.Rows, c.ToCall, c.Done, c.Invalid, c.Duplicate, c.Suppressed)
	var of []string
	if c.DoNotCall > 0 {
		of = append(of, fmt.Sprintf("%d on the do-not-call list", c.DoNotCall))
	}
	if c.DoNotCallFlag > 0 {
		of = append(of, fmt.Sprintf("%d marked do not call in the sheet", c.DoNotCallFlag))
	}
	if len(of) > 0 {
		line += " (" + strings.Join(of, ", ") + ")"
	}
	if c.Held > 0 {
		line += fmt.Sprintf(", %d held", c.Held)
	}
	if c.CalledElsewhere > 0 {
		line += fmt.Sprintf(", %d called already from another state directory (run stops)", c.CalledElsewhere)
	}
	return line
}

func writeGroup(b *strings.Builder, g *problemGroup) {
	what := g.field
	if g.column != "" {
		what = fmt.Sprintf("%s (column %q)", g.field, g.column)
	}
	n := len(g.rows) + g.more
	rows := rowRanges(g.rows)
	if g.more > 0 {
		rows += fmt.Sprintf(" and %d more", g.more)
	}
	fmt.Fprintf(b, "  %s, %s: %d row(s): %s\n", g.file, what, n, rows)
	for _, e := range g.examples {
		fmt.Fprintf(b, "      %s\n", e)
	}
	if n > len(g.examples) {
		fmt.Fprintf(b, "      ... and %d more (each with its reason in --format json and in report.csv)\n", n-len(g.examples))
	}
}

// rowRanges writes sorted row numbers compactly: 4, 7, 9-11.
func rowRanges(rows []int) string {
	sort.Ints(rows)
	var parts []string
	for i := 0; i < len(rows); {
		j := i
		for j+1 < len(rows) && rows[j+1] == rows[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", rows[i], rows[j]))
		} else {
			parts = append(parts, fmt.Sprint(rows[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// planWhen counts, for a plan, the contacts outside their calling hours at
// the plan's time. Contacts whose zones and rules are alike share one
// answer, so a large sheet costs a lookup a row.
type planWhen struct {
	hours   *CallingHours
	now     time.Time
	memo    map[string]planWhenAnswer
	campOff []int // the campaign zone's UTC offsets now (each reading's), with a fixed hours.timezone
	res     PlanHours
	next    time.Time
}

type planWhenAnswer struct {
	open, other bool
	next        time.Time
}

func newPlanWhen(h *CallingHours, now time.Time) *planWhen {
	w := &planWhen{hours: h, now: now, memo: map[string]planWhenAnswer{}}
	if h.Window != nil && !h.Window.Contact {
		for _, z := range h.Window.Zones() {
			_, off := now.In(z).Zone()
			w.campOff = append(w.campOff, off)
		}
	}
	return w
}

func (w *planWhen) add(c *Contact) {
	if w.now.IsZero() {
		return
	}
	// The answer is the country's rule (the state's, in the US) and the
	// hours in each of the contact's zones.
	zones := ContactZones(c)
	var b strings.Builder
	b.Grow(64)
	b.WriteString(c.Country)
	b.WriteString("/")
	b.WriteString(ContactState(c))
	for _, z := range zones {
		b.WriteString("|")
		b.WriteString(z.String())
	}
	key := b.String()
	a, ok := w.memo[key]
	if !ok {
		a.open = w.hours.Open(c, w.now)
		if !a.open {
			a.next = w.hours.NextOpen(c, w.now)
		}
		if win := w.hours.Window; win != nil && !win.Contact {
			for _, z := range zones {
				if _, off := w.now.In(z).Zone(); !slices.Contains(w.campOff, off) {
					a.other = true
				}
			}
		}
		w.memo[key] = a
	}
	if a.other {
		w.res.OtherZones++
	}
	if a.open {
		return
	}
	w.res.OutsideNow++
	if a.next.IsZero() {
		w.res.Never++
	} else if w.next.IsZero() || a.next.Before(w.next) {
		w.next = a.next
	}
}

func (w *planWhen) result() (PlanHours, time.Time) {
	if w.next.IsZero() {
		return w.res, w.next
	}
	loc := time.UTC
	if win := w.hours.Window; win != nil && !win.Contact {
		loc = win.Loc
	}
	next := w.next.In(loc)
	w.res.NextOpen = next.Format(time.RFC3339)
	return w.res, next
}

// Opening says for a person when a calling window opens, as of now, in
// the zone of at: "Mon 09:00 America/New_York, in 2 d 15 h" (with the
// date when it is more than six days away). The progress line and run's
// messages use it.
func Opening(at, now time.Time) string {
	layout := "Mon 15:04"
	if at.Sub(now) > 6*24*time.Hour {
		layout = "Mon 2 Jan 15:04"
	}
	return fmt.Sprintf("%s %s, in %s", at.Format(layout), at.Location(), HumanDuration(at.Sub(now)))
}

// HumanDuration writes d for a person: "2 d 15 h", "3 h 20 min", "5 min".
func HumanDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d/time.Hour)%24, int(d/time.Minute)%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d d %d h", days, hours)
	case hours > 0:
		return fmt.Sprintf("%d h %d min", hours, mins)
	}
	return fmt.Sprintf("%d min", mins)
}

// quoteList quotes each name and joins them with ", ".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
