package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// exportsDir holds the corpus of real-shaped exports that
// TestExportsCorpusEndToEnd takes through init and run: each file as its
// tool writes it, truth.csv with what must happen to each of its rows,
// and steps.csv with what a new user does between init and run. Its
// README names where each file's shape comes from.
const exportsDir = "testdata/exports"

// exportTruth is a row of truth.csv: one contact of an export, whether it
// must be called and at which number, and the numbers of the row that
// must never be called whatever happens.
type exportTruth struct {
	file, name, must, why string
	row                   int
	number                string   // the number to call (must = call)
	others                []string // the row's other numbers: calling one instead is a miss, not a wrong call
	never                 []string // numbers no call may go to: the whole row's when must = never, a fax or an assistant's line otherwise
}

// exportSteps is a row of steps.csv: what a user does with the file init
// wrote. region and phone fill a TODO init left for them (a user reads
// init's note and writes the answer); suppress is the do-not-call file
// the user adds; rows, when set, is how many rows plan must read.
type exportSteps struct {
	file, region, phone, suppress, note string
	rows                                int
}

// readExportsCSV reads a CSV file of the corpus into maps by header.
func readExportsCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(exportsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// exportOutcome is what became of one row of truth.csv.
type exportOutcome struct {
	exportTruth
	right   bool   // a must-call row called at its number
	wrong   bool   // a number that must never be called was, or one no row holds
	verdict string // what happened, for the failure list
}

// TestExportsCorpusEndToEnd takes every export of testdata/exports as a
// new user would: callrun init, the agent's prompt and what steps.csv
// says (a region or phone column init left TODO, the do-not-call file),
// plan, login and a run against the sandbox. Then, over the sandbox's
// ledger: no number of a row that must never be called (listed, flagged
// in any column or language, no phone consent where the campaign asks
// for it, another country) and no assistant's, fax or pager line is
// called, nor any number no row holds, nor any number twice; at least
// 95% of the rows that must be called are called at their right number,
// over the whole corpus; and plan reads every row of the Excel for Mac
// files. Per file, it logs how many were called right and every row that
// went wrong, with what happened to it.
//
// Two edits are the test's, not a user's, and change nobody's fate: no
// calling hours (the test runs at any hour) and a fast pace.
func TestExportsCorpusEndToEnd(t *testing.T) {
	truths := map[string][]exportTruth{}
	for _, m := range readExportsCSV(t, "truth.csv") {
		row, err := strconv.Atoi(m["row"])
		if err != nil || (m["must"] != "call" && m["must"] != "never") || (m["must"] == "call") != (m["number"] != "") {
			t.Fatalf("truth.csv: bad row %v", m)
		}
		truths[m["file"]] = append(truths[m["file"]], exportTruth{
			file: m["file"], name: m["name"], must: m["must"], why: m["why"], row: row,
			number: m["number"], others: strings.Fields(m["others"]), never: strings.Fields(m["never"]),
		})
	}
	var steps []exportSteps
	for _, m := range readExportsCSV(t, "steps.csv") {
		s := exportSteps{file: m["file"], region: m["region"], phone: m["phone_column"], suppress: m["suppress"], note: m["note"]}
		if m["rows"] != "" {
			s.rows, _ = strconv.Atoi(m["rows"])
		}
		if truths[s.file] == nil {
			t.Fatalf("steps.csv names %s, which truth.csv does not", s.file)
		}
		steps = append(steps, s)
	}
	if len(steps) != len(truths) || len(steps) < 15 {
		t.Fatalf("steps.csv has %d files and truth.csv %d; the corpus needs at least 15", len(steps), len(truths))
	}

	var all []exportOutcome
	for _, s := range steps {
		t.Run(s.file, func(t *testing.T) {
			all = append(all, runExport(t, s, truths[s.file])...)
		})
	}

	// The corpus as a whole: the bar is 95% of the rows to call.
	toCall, right := 0, 0
	var report strings.Builder
	byFile := map[string][2]int{}
	for _, o := range all {
		if o.must == "call" {
			toCall++
			c := byFile[o.file]
			c[1]++
			if o.right {
				right++
				c[0]++
			}
			byFile[o.file] = c
		}
		if !o.right || o.wrong {
			fmt.Fprintf(&report, "  %s row %d (%s), must %s: %s [%s]\n", o.file, o.row, o.name, o.must, o.verdict, o.why)
		}
	}
	for _, s := range steps {
		c := byFile[s.file]
		t.Logf("%-28s %2d of %2d to call called at the right number", s.file, c[0], c[1])
	}
	t.Logf("corpus: %d of %d rows to call called at the right number (%.1f%%); rows that went wrong:\n%s", right, toCall, 100*float64(right)/float64(toCall), report.String())
	if 100*right < 95*toCall {
		t.Errorf("only %d of %d rows to call (%.1f%%) were called at their right number; the bar is 95%%", right, toCall, 100*float64(right)/float64(toCall))
	}
}

// runExport takes one export through init, the user's steps, plan and a
// run against a sandbox of its own, and judges each of its rows by the
// ledger.
func runExport(t *testing.T, s exportSteps, truth []exportTruth) []exportOutcome {
	dir := t.TempDir()
	for _, name := range []string{s.file, s.suppress} {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(exportsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := inProcessSandbox(t, dir)
	// A store of its own: the do-not-call list and call starts of one
	// export's run must not hold back another's.
	t.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))

	outcomes := make([]exportOutcome, len(truth))
	for i, tr := range truth {
		outcomes[i] = exportOutcome{exportTruth: tr}
	}
	// why is said of every row to call that was not called, when nothing
	// more precise is known; planRows is how many rows plan read.
	why, planRows := "", 0

	path := filepath.Join(dir, "campaign.yaml")
	code, out := runAppOut(t, "init", "--offline", filepath.Join(dir, s.file))
	if code != 0 {
		why = "init failed: " + lastLine(out)
		t.Errorf("init: exit %d\n%s", code, out)
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		file := userEdits(t, string(data), s)
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}

		code, out = runAppOut(t, "plan", "--offline", "--format", "json", path)
		var plan struct {
			Totals struct {
				Rows   int `json:"rows"`
				ToCall int `json:"to_call"`
			} `json:"totals"`
		}
		if i := strings.Index(out, "{"); i < 0 || json.Unmarshal([]byte(out[i:]), &plan) != nil {
			t.Logf("plan: exit %d, no JSON\n%s", code, out)
			why = "plan refused: " + lastLine(out)
		} else {
			t.Logf("plan: exit %d, %d rows read, %d to call", code, plan.Totals.Rows, plan.Totals.ToCall)
			planRows = plan.Totals.Rows
		}
		if s.rows > 0 && plan.Totals.Rows != s.rows {
			t.Errorf("plan read %d rows of %s, which has %d: every row must be read", plan.Totals.Rows, s.file, s.rows)
		}
		if code, out := runAppOut(t, "auth", "login", "--code", sandbox.DefaultCode, path); code != 0 {
			t.Fatalf("login: exit %d\n%s", code, out)
		}
		code, out = runAppOut(t, "run", path)
		t.Logf("run: exit %d", code)
		if code != 0 {
			t.Logf("run said:\n%s", out)
			why = fmt.Sprintf("run exit %d: %s", code, lastLine(out))
		}
	}

	requested := callsByNumber(srv.Calls())
	placed := callsByNumber(srv.Placed())
	rows := exportReportRows(t, dir)
	for n, k := range placed {
		if k > 1 {
			t.Errorf("%s: %s was placed %d times", s.file, n, k)
		}
	}
	for i := range outcomes {
		o := &outcomes[i]
		var called []string
		for _, n := range o.never {
			if requested[n] > 0 {
				called = append(called, n)
			}
		}
		if len(called) > 0 {
			o.wrong = true
			o.verdict = "CALLED " + strings.Join(called, ", ") + ", which must never be called"
			t.Errorf("%s row %d (%s): CALLED %s, which must never be called: %s", s.file, o.row, o.name, strings.Join(called, ", "), o.why)
		}
		if o.must == "never" {
			o.right = !o.wrong
			if o.right {
				o.verdict = "not called"
			}
			continue
		}
		switch other := slices.IndexFunc(o.others, func(n string) bool { return placed[n] > 0 }); {
		case placed[o.number] > 0:
			o.right = true
		case o.wrong:
		case other >= 0:
			o.verdict = fmt.Sprintf("called %s, not its right number %s", o.others[other], o.number)
		case rows[o.row] != "":
			o.verdict = "not called: " + rows[o.row]
		case why != "":
			o.verdict = "not called: " + why
		default:
			o.verdict = fmt.Sprintf("not called, and the report has no row %d (plan read %d rows of the file)", o.row, planRows)
		}
	}
	known := map[string]bool{}
	for _, tr := range truth {
		for _, n := range slices.Concat([]string{tr.number}, tr.others, tr.never) {
			known[n] = n != ""
		}
	}
	for n, k := range requested {
		if !known[n] {
			t.Errorf("%s: the sandbox received %d call(s) to %q, a number no row of the file holds", s.file, k, n)
			outcomes = append(outcomes, exportOutcome{exportTruth: exportTruth{file: s.file, name: "no row", must: "never", why: "no row holds this number"},
				right: true, wrong: true, verdict: "CALLED " + n})
		}
	}
	return outcomes
}

// userEdits makes the changes to init's file that a user makes before a
// run, as steps.csv says: the agent's prompt, the region or phone column
// init left TODO, the do-not-call file; and the test's own two, which
// change nobody's fate: no calling hours (it runs at any hour) and a pace
// that keeps it short. A TODO left after them is logged: what a user
// would write there is not the test's to guess.
func userEdits(t *testing.T, file string, s exportSteps) string {
	t.Helper()
	file = strings.Replace(file, `"TODO: write the agent's prompt"`, `"Hello, this is a test call about your enquiry."`, 1)
	if s.region != "" {
		file = regexp.MustCompile(`(?m)^region: TODO\b.*$`).ReplaceAllString(file, "region: "+s.region)
	}
	if s.phone != "" {
		file = strings.Replace(file, `phone_number: "TODO"`, fmt.Sprintf("phone_number: %q", s.phone), 1)
	}
	if s.suppress != "" {
		file = strings.Replace(file, "suppress: []", fmt.Sprintf("suppress: [%q]", s.suppress), 1)
	}
	file = regexp.MustCompile(`(?m)^hours: .*$`).ReplaceAllString(file, "unsafe_ignore_called_person_hours: true")
	file = regexp.MustCompile(`(?m)^pace: .*$`).ReplaceAllString(file, "pace: {per_second: 100, burst: 1, concurrency: 4}")
	for _, line := range strings.Split(file, "\n") {
		if code, _, _ := strings.Cut(line, "#"); strings.Contains(code, "TODO") {
			t.Logf("init's file still says TODO after the user's steps: %s", strings.TrimSpace(line))
		}
	}
	return file
}

// exportReportRows reads the run's report.csv, if it wrote one, into
// "status: reason" by sheet row.
func exportReportRows(t *testing.T, dir string) map[int]string {
	t.Helper()
	rows := map[int]string{}
	paths, _ := filepath.Glob(filepath.Join(dir, ".callrun", "*", "report.csv"))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(recs) == 0 {
			t.Fatalf("%s: %v", p, err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, r := range recs[1:] {
			n, _ := strconv.Atoi(r[col["row"]])
			rows[n] = r[col["status"]] + ": " + r[col["reason"]]
		}
	}
	return rows
}
