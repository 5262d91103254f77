package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/callrun/callrun/report/store"
)

// Statuses lists every status a report row can have, in the order the
// summary prints them.
var Statuses = []store.Status{store.Sent, store.Failed, store.Uncertain, store.Pending, store.Invalid, store.Duplicate, store.Suppressed, store.Erased}

// Endings of a run, for [Summary.Ending].
const (
	EndComplete     = "complete"      // every contact was dealt with
	EndInterrupted  = "interrupted"   // a signal stopped the run
	EndLimit        = "limit"         // the run's contact limit was reached
	EndOutsideHours = "outside-hours" // the calling window closed
	EndRebuilt      = "rebuilt"       // no run: the report was rebuilt from the journal
	EndStopped      = "stopped"       // an error stopped the run (a login to renew, a failing service)
	// EndWaiting: the run called every contact it could, and left some
	// pending that a later run may call, from [Summary.NextCallAt] when
	// that is known: outside their hours, held by contact pressure, or
	// not sent after their attempts.
	EndWaiting = "waiting"
)

// Endings lists every value of [Summary.Ending], for the consumers that
// name each (the metrics file, the docs).
var Endings = []string{EndComplete, EndWaiting, EndInterrupted, EndLimit, EndOutsideHours, EndStopped, EndRebuilt}

// Summary is summary.json, and the summary printed at the end of a run.
// Fill it with [Summary.Add] for each report row and [Summary.Finish].
type Summary struct {
	Campaign       string                    `json:"campaign"`
	Counts         map[string]int            `json:"counts"` // status -> rows; every status is present, even when 0
	Agents         map[string]map[string]int `json:"agents"` // agent name -> status -> rows
	Sheets         map[string]map[string]int `json:"sheets"` // sheet file -> status -> rows
	Rows           int                       `json:"rows"`
	StartedAt      time.Time                 `json:"started_at"`
	FinishedAt     time.Time                 `json:"finished_at"`
	ElapsedSeconds float64                   `json:"elapsed_seconds"`
	CallsThisRun   int                       `json:"calls_this_run"`  // calls this run that the service placed or may have (sent or uncertain)
	RatePerSecond  float64                   `json:"rate_per_second"` // CallsThisRun / ElapsedSeconds
	Ending         string                    `json:"ending"`          // EndComplete, EndWaiting, EndInterrupted, ...
	// NextCallAt is, when contacts were left pending, the first moment
	// one of them may be called (their hours open, contact pressure lets
	// the number go, the service's pause ends); zero when none waits for
	// a time.
	NextCallAt time.Time `json:"next_call_at,omitzero"`
	// Rehearsal: the run was against callrun's sandbox (run --sandbox,
	// or a service that said it is `callrun sandbox`), which phones
	// nobody; its state is kept apart from the campaign's own.
	Rehearsal bool     `json:"rehearsal"`
	Notes     []string `json:"notes,omitempty"` // anything else a person should know
	// NotInSheets counts the contacts the journal records as called
	// (sent, failed or uncertain) that no row of the sheets shows now:
	// the sheets were re-exported without them, or their rows changed.
	// The counts above leave them out.
	NotInSheets int `json:"not_in_sheets,omitempty"`
	// Outcomes counts the contacts by their latest delivered event
	// (started, answered, ended, other; "none" for a contact called and
	// not heard of), and Unmatched the stored deliveries no contact
	// matched: only for a campaign that collects outcomes.
	Outcomes  map[string]int `json:"outcomes,omitempty"`
	Answered  int            `json:"answered,omitempty"` // contacts with a call.answered delivered
	Unmatched *int           `json:"unmatched_deliveries,omitempty"`
	// OptedOut counts, for a campaign whose outcomes: name an opt_out,
	// the contacts called whose number is now on the do-not-call list (an
	// opt-out delivered, or the number added by hand); nil without
	// outcomes.opt_out, when callrun does not learn of opt-outs.
	OptedOut *int `json:"opted_out,omitempty"`
	// Runs are the journal's runs, oldest first, that report.html draws.
	Runs []store.Run `json:"-"`
}

// Add counts a report row.
func (s *Summary) Add(r Row) {
	s.init()
	s.Rows++
	s.Counts[r.Status]++
	if r.Agent != "" {
		add(s.Agents, r.Agent, r.Status)
	}
	if r.Sheet != "" {
		add(s.Sheets, r.Sheet, r.Status)
	}
	if s.Outcomes != nil && r.Attempts > 0 {
		ev := r.Outcome.Event
		if ev == "" {
			ev = "none"
		}
		s.Outcomes[ev]++
		if r.Outcome.Answered {
			s.Answered++
		}
	}
}

// TakeCounts sets s's counts to o's: what Add counted of the rows, the
// outcomes found for them, and when the first contact left pending may
// be called. A run's report counts its rows apart
// while the run calls, and its summary takes the counts at the end.
func (s *Summary) TakeCounts(o *Summary) {
	s.Rows, s.Counts, s.Agents, s.Sheets = o.Rows, o.Counts, o.Agents, o.Sheets
	s.Outcomes, s.Answered, s.Unmatched, s.OptedOut = o.Outcomes, o.Answered, o.Unmatched, o.OptedOut
	s.NextCallAt = o.NextCallAt
	s.NotInSheets = o.NotInSheets
}

func add(m map[string]map[string]int, name, status string) {
	c := m[name]
	if c == nil {
		c = zeroCounts()
		m[name] = c
	}
	c[status]++
}

// Finish sets FinishedAt, and ElapsedSeconds and RatePerSecond from
// StartedAt and CallsThisRun.
func (s *Summary) Finish(at time.Time) {
	s.FinishedAt = at
	s.ElapsedSeconds = 0
	s.RatePerSecond = 0
	if !s.StartedAt.IsZero() && at.After(s.StartedAt) {
		s.ElapsedSeconds = at.Sub(s.StartedAt).Seconds()
		s.RatePerSecond = float64(s.CallsThisRun) / s.ElapsedSeconds
	}
}

// init makes the maps and puts every status in Counts.
func (s *Summary) init() {
	if s.Counts == nil {
		s.Counts = zeroCounts()
	}
	for _, st := range Statuses {
		if _, ok := s.Counts[string(st)]; !ok {
			s.Counts[string(st)] = 0
		}
	}
	if s.Agents == nil {
		s.Agents = make(map[string]map[string]int)
	}
	if s.Sheets == nil {
		s.Sheets = make(map[string]map[string]int)
	}
}

func zeroCounts() map[string]int {
	m := make(map[string]int, len(Statuses))
	for _, st := range Statuses {
		m[string(st)] = 0
	}
	return m
}

// WriteSummary writes s to path as indented JSON, atomically (the file is
// either the previous summary or the new one, never a mix) and with the
// mode of a file that holds personal data ([private.FileMode]).
func WriteSummary(path string, s *Summary) error {
	s.init()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("writing summary %s: %w", path, err)
	}
	b = append(b, '\n')
	if err := durable.WriteFile(path, b, private.FileMode(filepath.Dir(path))); err != nil {
		return fmt.Errorf("writing summary %s: %w", path, err)
	}
	return nil
}

// Text returns the summary for a person, to read at the end of a run or to
// paste into an e-mail: the counts per status (those that are not 0), per
// agent and per sheet, the rate achieved, and what to do next.
func (s *Summary) Text() string {
	var b strings.Builder
	name := s.Campaign
	if name == "" {
		name = "(unnamed)"
	}
	if s.Rehearsal {
		name += " (a rehearsal: nobody was phoned)"
	}
	fmt.Fprintf(&b, "Campaign %s: %d %s, %s.\n", name, s.Rows, plural(s.Rows, "row", "rows"), s.endingText(localTime))

	order := statusOrder(s.Counts, nil)
	width := 0
	for _, st := range order {
		width = max(width, len(st))
	}
	for _, st := range order {
		fmt.Fprintf(&b, "  %-*s %d\n", width, st, s.Counts[st])
	}
	writeGroup(&b, "By agent", s.Agents)
	writeGroup(&b, "By sheet", s.Sheets)
	if line := s.outcomesText(); line != "" {
		b.WriteString(line)
	}

	if s.Ending != EndRebuilt {
		d := time.Duration(s.ElapsedSeconds * float64(time.Second))
		if d >= time.Second {
			d = d.Round(time.Second)
		} else {
			d = d.Round(time.Millisecond)
		}
		fmt.Fprintf(&b, "This run: %d %s started in %s (%s calls/s).\n",
			s.CallsThisRun, plural(s.CallsThisRun, "call", "calls"), d, rateText(s.RatePerSecond))
	}
	for _, note := range s.Notes {
		fmt.Fprintf(&b, "Note: %s\n", note)
	}
	if n := s.NotInSheets; n > 0 {
		fmt.Fprintf(&b, "Note: %d %s the journal holds a call start for (sent, failed or uncertain) %s shown by no row of the sheets now (re-exported without them, or their rows changed or are suppressed now), so the counts above leave them out; callrun history CAMPAIGN.yaml NUMBER shows a number's calls.\n",
			n, plural(n, "contact", "contacts"), plural(n, "is", "are"))
	}
	if s.Rehearsal {
		fmt.Fprintf(&b, "Rehearsal: %s\n", RehearsalText)
	}
	for _, next := range s.next(localTime) {
		fmt.Fprintf(&b, "Next: %s\n", next)
	}
	return b.String()
}

// outcomesText is the line that says what the service delivered of the
// contacts called, for a campaign that collects outcomes; "" otherwise.
func (s *Summary) outcomesText() string {
	if s.Outcomes == nil {
		return ""
	}
	called := 0
	for _, n := range s.Outcomes {
		called += n
	}
	if called == 0 {
		return ""
	}
	var parts []string
	for _, ev := range OutcomeNames {
		if n := s.Outcomes[ev]; n != 0 {
			name := ev
			if ev == "none" {
				name = "with nothing delivered yet"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	line := fmt.Sprintf("Outcomes of the %d called: %s", called, strings.Join(parts, ", "))
	if s.Answered > 0 {
		line += fmt.Sprintf(" (%d answered)", s.Answered)
	}
	if s.Unmatched != nil && *s.Unmatched > 0 {
		line += fmt.Sprintf("; %d %s matched no contact", *s.Unmatched, plural(*s.Unmatched, "delivery", "deliveries"))
	}
	return line + ".\n"
}

// statusOrder returns the statuses with a count that is not 0: those of
// known in its order (the statuses of a run, when nil), then any others
// sorted.
func statusOrder(counts map[string]int, known []string) []string {
	if known == nil {
		for _, st := range Statuses {
			known = append(known, string(st))
		}
	}
	var order, other []string
	for _, st := range known {
		if counts[st] != 0 {
			order = append(order, st)
		}
	}
	for st, n := range counts {
		if n != 0 && !slices.Contains(known, st) {
			other = append(other, st)
		}
	}
	slices.Sort(other)
	return append(order, other...)
}

// writeGroup writes per-agent or per-sheet counts, one line each.
func writeGroup(b *strings.Builder, title string, groups map[string]map[string]int) {
	if len(groups) == 0 {
		return
	}
	names := make([]string, 0, len(groups))
	width := 0
	for name := range groups {
		names = append(names, name)
		width = max(width, len(name))
	}
	slices.Sort(names)
	fmt.Fprintf(b, "%s:\n", title)
	for _, name := range names {
		c := groups[name]
		var parts []string
		for _, st := range statusOrder(c, nil) {
			parts = append(parts, fmt.Sprintf("%s %d", st, c[st]))
		}
		fmt.Fprintf(b, "  %-*s %s\n", width, name, strings.Join(parts, ", "))
	}
}

// RehearsalText says what a rehearsal is, for its summary and page.
const RehearsalText = "This run was against callrun's sandbox, which phones nobody. Its journal, report and do-not-call list are kept apart from the campaign's own, and it counts no call against anyone's contact pressure: callrun plan still shows the real campaign with everyone to call."

// localTime writes a moment for the printed summary: in this machine's
// zone, to the minute.
func localTime(t time.Time) string { return t.Local().Format("Mon 2 Jan 15:04 MST") }

// next returns what a person should do next, one sentence per thing;
// when writes a moment.
func (s *Summary) next(when func(time.Time) string) []string {
	var out []string
	if n := s.Counts[string(store.Uncertain)]; n > 0 {
		out = append(out, fmt.Sprintf("%d uncertain: the service may have placed %s; check %s in report.csv before re-sending with --retry-uncertain.",
			n, plural(n, "this call", "these calls"), plural(n, "it", "them")))
	}
	if n := s.Counts[string(store.Pending)]; n > 0 {
		switch {
		case s.Ending == EndOutsideHours:
			out = append(out, fmt.Sprintf("%d pending: run again inside calling hours to continue.", n))
		case !s.NextCallAt.IsZero():
			out = append(out, fmt.Sprintf("%d pending: run again from %s to continue (the reason column of report.csv says what holds each, and from when).", n, when(s.NextCallAt)))
		default:
			out = append(out, fmt.Sprintf("%d pending: run again to continue.", n))
		}
	}
	if n := s.Counts[string(store.Failed)]; n > 0 {
		out = append(out, fmt.Sprintf("%d failed: the reason column of report.csv says why; re-send with --retry-failed once that is fixed.", n))
	}
	if n := s.Counts[string(store.Invalid)]; n > 0 {
		out = append(out, fmt.Sprintf("%d invalid: fix %s in the sheets (report.csv names the problem) and run again.", n, plural(n, "that row", "those rows")))
	}
	counted := 0
	for _, n := range s.Counts {
		counted += n
	}
	switch {
	case len(out) == 0 && s.Rows == 0 && counted == 0:
		// A sheet exported empty (a CRM filter, the wrong list) is no
		// campaign done: say so, as plan's warning does.
		out = append(out, "the sheets hold no contact rows, so nobody was called: check that the export is the list you meant (callrun plan warns of an empty sheet).")
	case len(out) == 0:
		out = append(out, "nothing left to do: every contact has a final status.")
	}
	return out
}

// endingText says how the run ended, for a person; when writes the
// moment a waiting run's contacts may be called.
func (s *Summary) endingText(when func(time.Time) string) string {
	if s.Ending != EndWaiting {
		return endingText(s.Ending)
	}
	n := s.Counts[string(store.Pending)]
	if s.NextCallAt.IsZero() {
		return fmt.Sprintf("not complete: %d %s left pending for a later run", n, plural(n, "contact", "contacts"))
	}
	if n == 1 {
		return fmt.Sprintf("not complete: 1 contact waiting, who may be called from %s", when(s.NextCallAt))
	}
	return fmt.Sprintf("not complete: %d contacts waiting, the first may be called from %s", n, when(s.NextCallAt))
}

// endingTexts say each ending of [Summary.Ending] for a person; "" is a
// run not finished.
var endingTexts = map[string]string{
	EndComplete:     "complete",
	EndWaiting:      "waiting: contacts left pending for a later run",
	EndInterrupted:  "interrupted",
	EndLimit:        "stopped at the contact limit",
	EndOutsideHours: "stopped outside calling hours",
	EndRebuilt:      "rebuilt from the journal",
	EndStopped:      "stopped on an error",
	"":              "not finished",
}

func endingText(e string) string { return cmp.Or(endingTexts[e], e) }

// rateText formats a rate with as many decimals as a person needs.
func rateText(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 1:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
