package report

import (
	"bufio"
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/callrun/callrun/report/store"
)

// page holds report.html's template and style sheet, built into the
// binary: the page makes no request of its own.
//
//go:embed html/report.html.tmpl html/report.css
var page embed.FS

var (
	pageTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
		"when": whenText, "whenSec": whenSecText, "pct": pctText, "num": numText,
	}).ParseFS(page, "html/report.html.tmpl"))
	pageCSS = func() template.CSS {
		b, err := page.ReadFile("html/report.css")
		if err != nil {
			panic(err)
		}
		return template.CSS(b)
	}()
)

// Page gathers what report.html shows beyond the counts of [Summary]: the
// invalid rows by reason, the countries called and the contacts waiting
// for their hours. The caller that writes report.csv fills it as it goes,
// then calls [WriteHTML]. Its memory is bounded by the number of reasons,
// countries and waiting times, not of rows.
//
// It also lists every row by name under its status ([Page.AddPerson]),
// spooled to temporary files in its directory rather than kept in
// memory. Plan makes the page of a plan (plan --report): the same page,
// its statuses what run would do.
type Page struct {
	invalid   map[string]*InvalidGroup
	countries map[string]int
	waiting   map[time.Time]*Waiting
	dir       string
	people    map[string]*peopleList
	err       error // of spooling the people
	// Plan: the page is of a plan, before any call (plan --report).
	Plan bool
}

// InvalidGroup is the invalid rows that fail for one reason.
type InvalidGroup struct {
	Reason   string    // the reason, with the cells' own values left out
	Fix      string    // what to change in the sheet
	Count    int       // rows
	Examples []Example // the first few rows
}

// Example is one row of a sheet, for a person to find it.
type Example struct {
	Sheet  string
	Row    int
	Column string // the sheet's column, when there is one
	Cell   string // the cell as written
}

// Waiting is the contacts that may not be called before the same moment.
type Waiting struct {
	At        time.Time // when they may be called; zero: not in the next three weeks
	Count     int
	Countries map[string]int
}

// maxExamples is how many rows of an invalid reason the page shows.
const maxExamples = 3

// NewPage returns an empty Page whose people are spooled in dir, the
// directory report.html is written to.
func NewPage(dir string) *Page {
	return &Page{invalid: map[string]*InvalidGroup{}, countries: map[string]int{}, waiting: map[time.Time]*Waiting{},
		dir: dir, people: map[string]*peopleList{}}
}

// AddInvalid counts an invalid row under reason (see [ReasonGroup]), with
// fix saying what to change.
func (p *Page) AddInvalid(reason, fix string, ex Example) {
	g := p.invalid[reason]
	if g == nil {
		g = &InvalidGroup{Reason: reason, Fix: fix}
		p.invalid[reason] = g
	}
	g.Count++
	if len(g.Examples) < maxExamples {
		g.Examples = append(g.Examples, ex)
	}
}

// AddCalled counts a contact called (sent, failed or uncertain; in a
// plan, to call) in country, as a person reads it ("United States
// (US)"; "" when unknown).
func (p *Page) AddCalled(country string) { p.countries[country]++ }

// AddWaiting counts a pending contact of country whose hours are closed
// until at (the zero time: not in the next three weeks).
func (p *Page) AddWaiting(at time.Time, country string) {
	at = at.UTC()
	w := p.waiting[at]
	if w == nil {
		w = &Waiting{At: at, Countries: map[string]int{}}
		p.waiting[at] = w
	}
	w.Count++
	w.Countries[country]++
}

// ReasonGroup returns the reason of an invalid row without the values of
// its cells (each quoted part of it, and each number written +digits), so
// that rows failing the same way group together: `"abc" is not an e-mail
// address` and `"x@" is not an e-mail address` are both `"…" is not an
// e-mail address`.
func ReasonGroup(reason string) string {
	if !strings.ContainsAny(reason, `"+`) {
		return reason
	}
	var b strings.Builder
	reason = plusNumbers(reason)
	for {
		i := strings.IndexByte(reason, '"')
		if i < 0 {
			break
		}
		q, err := strconv.QuotedPrefix(reason[i:])
		if err != nil {
			break
		}
		b.WriteString(reason[:i])
		b.WriteString(`"…"`)
		reason = reason[i+len(q):]
	}
	b.WriteString(reason)
	return b.String()
}

// plusNumbers replaces each +digits in s (eight digits or more, an E.164
// number) with +….
func plusNumbers(s string) string {
	if !strings.Contains(s, "+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		j := i + 1
		for s[i] == '+' && j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i-1 >= 8 {
			b.WriteString("+…")
			i = j - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// maxListed bounds the invalid reasons and waiting times the page lists.
const maxListed = 40

// WriteHTML writes report.html to path, atomically like [WriteSummary]:
// one self-contained page (its style and charts inline) with the
// summary's figures, the runs in s.Runs and what p gathered, everyone p
// listed included. It closes p.
func WriteHTML(path string, s *Summary, p *Page) error {
	s.init()
	if p == nil {
		p = NewPage(filepath.Dir(path))
	}
	defer p.Close()
	if p.err != nil {
		return fmt.Errorf("writing %s: %w", path, p.err)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, newPageView(s, p)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer f.Abort()
	bw := bufio.NewWriter(f)
	if err := p.writeWithPeople(bw, b.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// pageView is what the template draws.
type pageView struct {
	CSS          template.CSS
	Campaign     string
	Ending       string
	At           time.Time
	Rows         int
	Funnel       []funnelStep
	StatusCounts []statusCount // every status, in the summary's order
	Sheets       groupTable
	Agents       groupTable
	Runs         []runView
	ThisRun      bool // a run wrote the report (not `callrun report`)
	Calls        int
	Rate         string
	Elapsed      string
	Invalid      []*InvalidGroup
	InvalidMore  int // reasons not listed
	InvalidRows  int
	Countries    []countryLine
	Waiting      []*Waiting
	WaitingMore  int
	WaitingRows  int
	Notes        []string
	Next         []string
	// Plan: the page of a plan, before any call; Rehearsal: of a run
	// against callrun's sandbox.
	Plan, Rehearsal bool
	RehearsalText   string
	NextCallAt      time.Time // when the first contact left waiting may be called
	People          []peopleSection
	// HasOutcomes: the campaign collects outcomes and some delivery came;
	// Outcomes counts the contacts called by their latest event, and
	// Unmatched the deliveries no contact took.
	HasOutcomes bool
	Collecting  bool // the campaign collects outcomes, delivered or not
	Outcomes    []statusCount
	Unmatched   int
	OptOuts     bool // the campaign's outcomes: name an opt_out
}

// peopleSection is the people of one status, as the page lists them.
type peopleSection struct {
	Status, Title, About string
	N                    int
	From                 bool // a column says from when each may be called
	Open                 bool // short enough to show unfolded
	Marker               template.HTML
}

// peopleOpen is how many people a section shows unfolded; a longer list
// is folded in a <details> that the browser's find still searches.
const peopleOpen = 25

// peopleTitles names each status's section, and says what it means.
var peopleTitles = map[string][2]string{
	string(store.Sent):       {"Sent", "The service accepted the call start."},
	string(store.Failed):     {"Failed", "The service refused the call start; the reason says why. --retry-failed sends them again once that is fixed."},
	string(store.Uncertain):  {"Uncertain", "The call start may have reached the service: check before sending again with --retry-uncertain."},
	string(store.Pending):    {"Not called yet", "Each waits for what the reason names; a later run calls them, from the time shown where there is one."},
	string(store.Suppressed): {"Not called: suppressed", "A suppression file, the do-not-call list, or the sheet's own do-not-call or consent column keeps each from being called; the reason says which."},
	string(store.Duplicate):  {"Not called: duplicates", "The number is in an earlier row, which is called instead (dedupe:)."},
	string(store.Invalid):    {"Not called: invalid rows", "The row cannot be called as written; the reason names the column. Fix it in the sheet and plan again."},
	string(store.Erased):     {"Erased", "callrun keeps nothing of each person but a keyed hash of the number: erased on request (no campaign on the store calls them again, unless erased with --allow-contact), or by the campaign's retention: (a later campaign may call them). Each row says which. The sheet still holds the row until it is removed there."},
	PlanToCall:               {"To call", "callrun run calls each of them now, once, at the campaign's pace."},
	PlanWaiting:              {"Waiting for their hours", "To call, but their calling hours (the called person's, or the campaign's hours:) are closed now: callrun run calls each from the time shown."},
	PlanHeld:                 {"Held back by contact pressure", "Their number was called on this machine's store as often as the limits allow (or talked to within 7 days, under Reg F's rule): callrun run calls each from the time shown."},
	PlanCalledElsewhere:      {"Called already from another state directory: run stops", "This campaign started a call to each of them already, by this machine's call starts, from a state directory whose journal is not this one (a second copy of the campaign, or this directory before an older backup was restored over it): callrun run stops before calling them again. Run the campaign from the directory it ran from, or take these people out of the sheets."},
	PlanDone:                 {"Done in an earlier run", "The journal says an earlier run settled them: callrun run does not call them again."},
}

// hasOutcomes reports whether the campaign collects outcomes and any
// delivery has come.
func (s *Summary) hasOutcomes() bool {
	if s.Outcomes == nil {
		return false
	}
	if s.Unmatched != nil && *s.Unmatched > 0 {
		return true
	}
	for name, n := range s.Outcomes {
		if name != "none" && n > 0 {
			return true
		}
	}
	return false
}

type funnelStep struct {
	Key, Label, Note string
	N                int
	Collected        bool
	Width            float64 // percent of rows
}

// groupTable is the status counts per sheet or per agent.
type groupTable struct {
	Title, Group string // Group names the summary's map: sheets, agents
	Statuses     []string
	Lines        []statusLine
}

type statusLine struct {
	Name   string
	Total  int
	Counts []statusCount
	Bar    []barPart
}

type statusCount struct {
	Status string
	N      int
}

// barPart is one status's part of a stacked bar, in percent.
type barPart struct {
	Status  string
	X, W    float64
	N       int
	Percent string
}

type runView struct {
	N                   int
	Start, End          time.Time
	Ended               bool // an end record was written
	Ending              string
	Calls               int
	Duration            string
	Bars                []runBar
	Bin                 string // what a bar counts: "minute", "10 seconds"
	Peak                int
	ChartW, ChartH      int
	FirstTick, LastTick time.Time
}

type runBar struct {
	X, Y, W, H float64
	N          int
	At         time.Time
}

type countryLine struct {
	Country string
	N       int
	Width   float64
}

// newPageView is what the HTML page shows of summary s and page p.
func newPageView(s *Summary, p *Page) pageView {
	v := pageView{
		CSS: pageCSS, Campaign: s.Campaign, Ending: s.endingText(whenText), At: s.FinishedAt, Rows: s.Rows,
		ThisRun: s.Ending != EndRebuilt && !p.Plan, Calls: s.CallsThisRun, Rate: rateText(s.RatePerSecond),
		Elapsed: durationText(time.Duration(s.ElapsedSeconds * float64(time.Second))),
		Notes:   s.Notes, Plan: p.Plan, Rehearsal: s.Rehearsal, RehearsalText: RehearsalText, NextCallAt: s.NextCallAt,
		OptOuts: s.OptedOut != nil,
	}
	if !p.Plan {
		v.Next = s.next(whenText)
	}
	if v.Campaign == "" {
		v.Campaign = "(unnamed)"
	}
	v.addFunnel(s)
	order := pageStatuses(p)
	v.addStatuses(s, p, order)
	columns := statusColumns(s, order)
	v.Sheets = groupTable{Title: "By sheet", Group: "sheets", Statuses: columns, Lines: statusLines(s.Sheets, columns)}
	v.Agents = groupTable{Title: "By agent", Group: "agents", Statuses: columns, Lines: statusLines(s.Agents, columns)}
	for i, r := range s.Runs {
		v.Runs = append(v.Runs, newRunView(i+1, r))
	}
	v.addInvalid(p)
	v.addCountries(p)
	v.addWaiting(p)
	return v
}

// addFunnel sets the page's funnel, from the rows to the opt-outs, and its outcomes.
func (v *pageView) addFunnel(s *Summary) {
	c := s.Counts
	called := c[string(store.Sent)] + c[string(store.Failed)] + c[string(store.Uncertain)]
	step := func(key, label string, n int, note string) funnelStep {
		st := funnelStep{Key: key, Label: label, N: n, Note: note, Collected: true}
		if s.Rows > 0 {
			st.Width = 100 * float64(n) / float64(s.Rows)
		}
		return st
	}
	v.Funnel = []funnelStep{
		step("rows", "Rows in the sheets", s.Rows, ""),
		step("valid", "Valid", s.Rows-c[string(store.Invalid)], "every row but the invalid ones"),
		step("called", "Tried", called, "sent, failed or uncertain: a call start went to the service, which may have refused it (failed)"),
		step("sent", "Sent", c[string(store.Sent)], "the service accepted the call start"),
		{Key: "answered", Label: "Answered", Note: "not collected: the campaign has no outcomes: block, so callrun does not hear how calls went; add one and run callrun listen (docs/outcomes.md)"},
		{Key: "opted-out", Label: "Opted out", Note: "not collected: the campaign has no outcomes: block; add one with opt_out: {field: ..., values: [...]}, and an opt-out puts the number on the do-not-call list (docs/outcomes.md)"},
	}
	v.Collecting = s.Outcomes != nil
	if v.Collecting {
		v.Funnel[4].Note = "none delivered yet: the service's webhooks reach callrun listen, at the campaign's outcomes url"
		v.Funnel[5].Note = "not collected: the campaign's outcomes: block has no opt_out; add opt_out: {field: ..., values: [...]} naming what a delivery says when the person asks not to be called again (docs/outcomes.md)"
	}
	if s.OptedOut != nil {
		v.Funnel[5] = step("opted-out", "Opted out", *s.OptedOut, "called, and now on the do-not-call list: an opt-out the service delivered (outcomes.opt_out), or the number added by hand")
	}
	if v.HasOutcomes = s.hasOutcomes(); v.HasOutcomes {
		v.Funnel[4] = step("answered", "Answered", s.Answered, "the service delivered call.answered")
		for _, name := range OutcomeNames {
			if n, ok := s.Outcomes[name]; ok {
				v.Outcomes = append(v.Outcomes, statusCount{Status: name, N: n})
			}
		}
		if s.Unmatched != nil {
			v.Unmatched = *s.Unmatched
		}
	}
}

// addStatuses sets the page's status counts, order's first, and its people by status.
func (v *pageView) addStatuses(s *Summary, p *Page, order []string) {
	c := s.Counts
	for _, st := range order {
		v.StatusCounts = append(v.StatusCounts, statusCount{Status: st, N: c[st]})
	}
	for _, st := range statusOrder(c, order) {
		if !slices.Contains(order, st) {
			v.StatusCounts = append(v.StatusCounts, statusCount{Status: st, N: c[st]})
		}
	}
	listed := map[string]int{}
	for st, l := range p.people {
		listed[st] = l.n
	}
	for _, st := range statusOrder(listed, order) {
		l := p.people[st]
		t := peopleTitles[st]
		v.People = append(v.People, peopleSection{Status: st, Title: cmp.Or(t[0], st), About: t[1], N: l.n,
			From: l.from, Open: l.n <= peopleOpen, Marker: peopleMarker(st)})
	}
}

// addInvalid sets the page's groups of invalid rows, the largest first, maxListed at most.
func (v *pageView) addInvalid(p *Page) {
	groups := slices.Collect(maps.Values(p.invalid))
	slices.SortFunc(groups, func(a, b *InvalidGroup) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.Reason, b.Reason))
	})
	for _, g := range groups {
		v.InvalidRows += g.Count
	}
	if len(groups) > maxListed {
		v.InvalidMore, groups = len(groups)-maxListed, groups[:maxListed]
	}
	v.Invalid = groups
}

// addCountries sets the page's contacts by country, the most first.
func (v *pageView) addCountries(p *Page) {
	top := 0
	for country, n := range p.countries {
		if country == "" {
			country = "unknown"
		}
		v.Countries = append(v.Countries, countryLine{Country: country, N: n})
		top = max(top, n)
	}
	slices.SortFunc(v.Countries, func(a, b countryLine) int {
		return cmp.Or(b.N-a.N, strings.Compare(a.Country, b.Country))
	})
	for i := range v.Countries {
		v.Countries[i].Width = 100 * float64(v.Countries[i].N) / float64(top)
	}
}

// addWaiting sets the page's waiting contacts, the soonest first, maxListed at most.
func (v *pageView) addWaiting(p *Page) {
	waits := slices.Collect(maps.Values(p.waiting))
	slices.SortFunc(waits, func(a, b *Waiting) int {
		switch {
		case a.At.IsZero() != b.At.IsZero():
			if a.At.IsZero() {
				return 1 // never, last
			}
			return -1
		}
		return a.At.Compare(b.At)
	})
	for _, w := range waits {
		v.WaitingRows += w.Count
	}
	if len(waits) > maxListed {
		v.WaitingMore, waits = len(waits)-maxListed, waits[:maxListed]
	}
	v.Waiting = waits
}

// pageStatuses are the statuses the page shows, in order: a run's, or a
// plan's.
func pageStatuses(p *Page) []string {
	if p.Plan {
		return PlanStatuses
	}
	out := make([]string, len(Statuses))
	for i, st := range Statuses {
		out[i] = string(st)
	}
	return out
}

// statusColumns returns the statuses the tables show: those of order
// with a row in any sheet, then others, sorted.
func statusColumns(s *Summary, order []string) []string {
	out := statusOrder(s.Counts, order)
	if len(out) == 0 {
		return order[:1]
	}
	return out
}

func statusLines(groups map[string]map[string]int, columns []string) []statusLine {
	var out []statusLine
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		l := statusLine{Name: name}
		for _, n := range groups[name] {
			l.Total += n
		}
		x := 0.0
		for _, st := range columns {
			n := groups[name][st]
			l.Counts = append(l.Counts, statusCount{Status: st, N: n})
			if n > 0 && l.Total > 0 {
				w := 100 * float64(n) / float64(l.Total)
				l.Bar = append(l.Bar, barPart{Status: st, X: x, W: w, N: n, Percent: pctText(n, l.Total)})
				x += w
			}
		}
		out = append(out, l)
	}
	return out
}

// maxBars is how many bars a run's chart has at most: a longer run counts
// its call starts per several seconds or minutes a bar.
const maxBars = 120

// runBins are the spans a bar of a run's chart may count, shortest first:
// the shortest that keeps the bars to maxBars.
var runBins = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour}

func newRunView(n int, r store.Run) runView {
	v := runView{N: n, Start: r.StartedAt, End: r.LastAt, Ended: !r.EndedAt.IsZero(), Ending: endingText(r.Ending),
		Calls: r.Calls, ChartW: 600, ChartH: 120}
	if v.Ended {
		v.End = r.EndedAt
	}
	v.Duration = durationText(v.End.Sub(r.StartedAt))
	// Per second when the run was short enough for the journal's seconds,
	// per minute else.
	counts, unit := r.PerSecond, time.Second
	first := r.StartedAt.Truncate(time.Second)
	if v.End.Sub(first) >= store.SecondsKept {
		counts, unit, first = r.PerMinute, time.Minute, r.StartedAt.Truncate(time.Minute)
	}
	units := max(len(counts), int(v.End.Sub(first)/unit)+1, 10) // a short run is a few bars, not one across
	bin := runBins[len(runBins)-1]
	for _, b := range runBins {
		if b >= unit && int((time.Duration(units)*unit+b-1)/b) <= maxBars {
			bin = b
			break
		}
	}
	per := int(bin / unit)
	bins := make([]int, (units+per-1)/per)
	for i, k := range counts {
		bins[min(i/per, len(bins)-1)] += k
	}
	v.Bin = binText(bin)
	v.Peak = slices.Max(bins)
	v.FirstTick = first
	v.LastTick = first.Add(time.Duration(len(bins)) * bin)
	w := float64(v.ChartW) / float64(len(bins))
	for i, k := range bins {
		h := 0.0
		if v.Peak > 0 {
			h = float64(v.ChartH) * float64(k) / float64(v.Peak)
		}
		v.Bars = append(v.Bars, runBar{X: float64(i) * w, Y: float64(v.ChartH) - h, W: max(w-1, w*0.8), H: h, N: k,
			At: first.Add(time.Duration(i) * bin)})
	}
	return v
}

// binText names the span of a bar: "second", "10 seconds", "minute".
func binText(d time.Duration) string {
	switch {
	case d == time.Second:
		return "second"
	case d < time.Minute:
		return fmt.Sprintf("%d seconds", d/time.Second)
	case d == time.Minute:
		return "minute"
	case d < time.Hour:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return "hour"
}

// whenSecText is whenText to the second.
func whenSecText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("Mon 2 Jan 2006 15:04:05 UTC")
}

// whenText formats a moment for the page: in UTC, to the minute, with
// the date; "—" for the zero time.
func whenText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("Mon 2 Jan 2006 15:04 UTC")
}

// pctText is n as a percentage of total, "" when total is 0.
func pctText(n, total int) string {
	if total == 0 {
		return ""
	}
	p := 100 * float64(n) / float64(total)
	if p > 0 && p < 1 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

// numText writes n with thousands separators: 12,345.
func numText(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + numText(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func durationText(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
