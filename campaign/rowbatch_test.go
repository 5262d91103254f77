package campaign

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
)

// TestRowsJudgedInOrder plans the repo's real-shaped sheets with one
// worker judging rows in batches of 1,024, as a single core does, and
// again with several workers on batches of a few rows, so that every
// sheet is cut into many batches judged at once, and finds the same
// contacts in the same order, the same plan (text and JSON) and the same
// plan report, byte for byte. The sheets: the messy fixture campaign,
// the Excel and CRM report rows, every export of testdata/exports (with
// the campaign file init writes and what steps.csv says a user adds),
// the CRM, signal and phone corpora, and a generated sheet with a
// do-not-call and a consent column.
func TestRowsJudgedInOrder(t *testing.T) {
	campaigns := map[string]string{
		"messy":      filepath.Join("..", "testdata", "campaigns", "messy", "campaign.yaml"),
		"excel_rows": filepath.Join("testdata", "excel_rows", "campaign.yaml"),
	}
	steps := exportSteps(t)
	for _, dir := range []string{"exports", "crm", "signals", "phones"} {
		sheets, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*"))
		for _, path := range sheets {
			name := filepath.Base(path)
			ext := filepath.Ext(name)
			if ext != ".csv" && ext != ".xlsx" || name == "truth.csv" || name == "steps.csv" || (dir == "exports" && steps[name] == nil) {
				continue
			}
			campaigns[dir+"/"+name] = initCampaign(t, path, steps[name])
		}
	}
	bench := t.TempDir()
	campaigns["generated"] = writePlanBenchCampaignFlagged(t, bench, 3000, 5, benchBothColumns)

	now := time.Date(2026, 11, 20, 19, 59, 0, 0, time.UTC)
	planned := 0
	for name, path := range campaigns {
		t.Run(name, func(t *testing.T) {
			f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
			if err != nil {
				t.Logf("not planned, the campaign file does not load: %v", err)
				return
			}
			if err := f.CheckSheets(); err != nil {
				t.Logf("not planned, its sheets are refused: %v", err)
				return
			}
			planned++
			one := planAllWays(t, f, now, 1, 1024)
			if one.rows < 3 {
				t.Fatalf("only %d rows read: the test would show nothing", one.rows)
			}
			for _, w := range []struct{ workers, batch int }{{4, 3}, {3, 1}, {2, 7}} {
				got := planAllWays(t, f, now, w.workers, w.batch)
				for _, part := range []struct {
					what       string
					want, have string
				}{
					{"contacts", one.contacts, got.contacts},
					{"plan text", one.text, got.text},
					{"plan JSON", one.json, got.json},
					{"plan report", one.report, got.report},
				} {
					if part.have != part.want {
						t.Errorf("%d workers, batches of %d: the %s differ from one worker's:\n%s", w.workers, w.batch, part.what, firstDiff(part.want, part.have))
					}
				}
			}
		})
	}
	if planned < 20 {
		t.Errorf("only %d campaigns planned; the corpus has more", planned)
	}
}

// planned is what planAllWays read of a campaign.
type planned struct {
	rows                         int
	contacts, text, json, report string
}

// planAllWays reads f's contacts and plans it, with workers goroutines
// judging rows in batches of batch.
func planAllWays(t *testing.T, f *File, now time.Time, workers, batch int) planned {
	t.Helper()
	saved := [2]int{judgeWorkers, rowBatchSize}
	judgeWorkers, rowBatchSize = workers, batch
	defer func() { judgeWorkers, rowBatchSize = saved[0], saved[1] }()
	ctx := context.Background()
	sup, err := f.LoadSuppression(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var p planned
	var contacts strings.Builder
	cr := f.NewContactReader(sup)
	cr.Now = func() time.Time { return now }
	cr.SheetFailed = func(i int, se *sheet.Error) { fmt.Fprintf(&contacts, "sheet %d failed: %v\n", i, se) }
	cr.SheetNote = func(i int, note string) { fmt.Fprintf(&contacts, "sheet %d: %s\n", i, note) }
	err = cr.Each(ctx, func(c *Contact) error {
		p.rows++
		cc := *c
		var zones []string
		for _, z := range ContactZones(c) {
			zones = append(zones, z.String())
		}
		cc.zones = nil
		held := ""
		if cc.Held != nil {
			held = cc.Held.Error()
			cc.Held = nil
		}
		fmt.Fprintf(&contacts, "%+v zones=%v held=%q\n", cc, zones, held)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Sheets {
		fmt.Fprintf(&contacts, "sheet %d signals: %+v\n", i, cr.Signals(i))
	}
	p.contacts = contacts.String()

	dir := t.TempDir()
	rep, err := StartPlanReport(f, store.EmptyState(), dir, now)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(ctx, f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: now, Report: rep})
	if err != nil {
		rep.Abort()
		t.Fatal(err)
	}
	if err := rep.Finish(); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ReportCSV))
	if err != nil {
		t.Fatal(err)
	}
	p.text, p.json, p.report = text.String(), string(js), string(data)
	return p
}

// firstDiff shows the first line where have differs from want.
func firstDiff(want, have string) string {
	w, h := strings.Split(want, "\n"), strings.Split(have, "\n")
	for i := range max(len(w), len(h)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(h) {
			b = h[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %s\nhave %s", i+1, a, b)
		}
	}
	return "(same lines)"
}

// exportSteps reads testdata/exports/steps.csv: by file, the region,
// phone column and suppression file a user gives the campaign file init
// wrote for it.
func exportSteps(t *testing.T) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "exports", "steps.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		steps[m["file"]] = m
	}
	return steps
}

// initCampaign writes, in a directory of its own, the campaign file init
// writes for the sheet at path, as a user fills it in: the prompt, the
// region (US unless steps says), the phone column and suppression file
// steps names, and returns its path.
func initCampaign(t *testing.T, path string, steps map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Base(path)
	copyFile := func(name string) {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(name)
	enc := sheet.GuessEncoding(path)
	r, err := sheet.OpenWith(path, sheet.Options{Encoding: enc})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for len(rows) < 200 {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Err == nil {
			rows = append(rows, slices.Clone(rec.Fields))
		}
	}
	header := r.Header()
	r.Close()
	var b bytes.Buffer
	if _, err := WriteInit(&b, InitOptions{Sheet: name, SheetName: name, Header: header, Rows: rows, Encoding: enc}); err != nil {
		t.Fatal(err)
	}
	file := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello, this is a test call."`, 1)
	region := cmp.Or(steps["region"], "US")
	file = regexp.MustCompile(`(?m)^region: TODO\b.*$`).ReplaceAllString(file, "region: "+region)
	if p := steps["phone_column"]; p != "" {
		file = strings.Replace(file, `phone_number: "TODO"`, fmt.Sprintf("phone_number: %q", p), 1)
	}
	if s := steps["suppress"]; s != "" {
		copyFile(s)
		file = strings.Replace(file, "suppress: []", fmt.Sprintf("suppress: [%q]", s), 1)
	}
	out := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(out, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWorkbookUnpackedOnce plans a campaign whose sheet is a workbook
// with a do-not-call and a consent column, which the pass before any
// contact is judged reads whole: the workbook is unpacked once, its text
// read again for the contacts, and the plan is the one of a campaign
// that unpacks it each time it reads it. A workbook changed on disk is
// unpacked again.
func TestWorkbookUnpackedOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeSignalsWorkbook(t, dir, 3000)
	now := time.Date(2026, 11, 20, 19, 59, 0, 0, time.UTC)
	plan := func(f *File) string {
		t.Helper()
		if err := f.CheckSheets(); err != nil {
			t.Fatal(err)
		}
		sup, err := f.LoadSuppression(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		// The rows that withdrew consent are invalid, as consent is
		// required; their numbers are flagged all the same.
		if p.Totals.Rows != 3000 || p.FlaggedNumbers != 120 || p.Totals.DoNotCallFlag != 60 || p.Totals.Invalid != 60 {
			t.Fatalf("plan counted %+v, %d numbers flagged: the sheet has 3,000 rows, 60 flagged do not call and 60 withdrawn", p.Totals, p.FlaggedNumbers)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	once := plan(f)
	if n := f.workbooks.Unpacked(); n != 1 {
		t.Errorf("the workbook was unpacked %d times to plan it; once is enough", n)
	}
	if plan(f); f.workbooks.Unpacked() != 1 {
		t.Errorf("planned again, the workbook was unpacked %d times in all", f.workbooks.Unpacked())
	}

	each, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	each.workbooks = nil // every reading unpacks it
	if got := plan(each); got != once {
		t.Errorf("the plan read from the kept text differs from the plan of the workbook itself:\n%s", firstDiff(once, got))
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "contacts.xlsx"), later, later); err != nil {
		t.Fatal(err)
	}
	if plan(f); f.workbooks.Unpacked() != 2 {
		t.Errorf("a workbook changed since it was read was unpacked %d times in all; it must be read again", f.workbooks.Unpacked())
	}
}
