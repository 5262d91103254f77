package campaign

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
)

// TestPlanExcelRows plans sheets as Excel and CRM reports write them (a
// Salesforce report with its footer, a hand-kept Excel list with a title
// and rows that drop their empty last fields, a trailing comma on every
// row): none of those shapes is an invalid row, and the footer and title
// are each noted once.
func TestPlanExcelRows(t *testing.T) {
	path := filepath.Join("testdata", "excel_rows", "campaign.yaml")
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Now: time.Date(2026, 11, 20, 19, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Counts{
		// Katherine and Edsger have no Phone; Ada's number comes twice.
		"salesforce_report.csv": {Rows: 8, ToCall: 5, Invalid: 2, Duplicate: 1},
		// Mia's 555-1234 is too short; Charlotte has no phone; Henry's
		// Notes say "do not call before 10", which callrun cannot read:
		// held.
		"excel_handkept.csv": {Rows: 22, ToCall: 19, Invalid: 2, Suppressed: 1},
		// Lena's 12345 is too short.
		"trailing_commas.csv": {Rows: 7, ToCall: 6, Invalid: 1},
		// Jürgen's and Anna's cells are spreadsheet error values.
		"excel_de_decimal.csv": {Rows: 6, ToCall: 4, Invalid: 2},
	}
	for _, s := range plan.Sheets {
		if w := want[filepath.Base(s.File)]; s.Counts != w || s.Error != "" {
			t.Errorf("%s: %+v %s; want %+v", s.File, s.Counts, s.Error, w)
		}
	}
	var problems []string
	for _, p := range plan.Problems {
		problems = append(problems, filepath.Base(p.File)+" "+p.Field+" "+p.Message)
	}
	wantProblems := []string{
		`salesforce_report.csv phone_number column "Phone": phone number is empty`,
		`salesforce_report.csv phone_number column "Phone": phone number is empty`,
		`excel_handkept.csv phone_number column "Phone": "555-1234" is not a valid phone number for region US`,
		`excel_handkept.csv phone_number column "Phone": phone number is empty`,
		`trailing_commas.csv phone_number column "Phone": "12345" is not a valid phone number for region DE`,
		`excel_de_decimal.csv phone_number column "Telefon": "#NAME?" is a spreadsheet error value, not a phone number: fix the formula or the value in the sheet`,
		`excel_de_decimal.csv phone_number column "Telefon": "#WERT!" is a spreadsheet error value, not a phone number: fix the formula or the value in the sheet`,
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	for i, p := range problems {
		if !strings.HasPrefix(p, wantProblems[i]) {
			t.Errorf("problem %d: %s\nwant one starting %s", i, p, wantProblems[i])
		}
	}
	var rows []int
	for _, p := range plan.Problems {
		rows = append(rows, p.Row)
	}
	if want := []int{5, 6, 9, 23, 7, 5, 6}; !reflect.DeepEqual(rows, want) {
		t.Errorf("invalid rows %v; want %v (the rows a spreadsheet shows)", rows, want)
	}
	// The decimal comma is repaired, and the repair listed.
	if len(plan.Repairs) != 1 || plan.Repairs[0].Row != 4 || plan.Repairs[0].Number != "+4930902830" ||
		plan.Repairs[0].Why != `"4930902830,00" (the number 4930902830 exported as a decimal) was read as +4930902830; export the phone column as text` {
		t.Errorf("repairs %+v; want excel_de_decimal.csv row 4 read as +4930902830", plan.Repairs)
	}
	notes := []string{
		f.Path("salesforce_report.csv") + `: rows 12-17 after the data ("Open Contacts - West Region", "Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.", "Confidential Information - Do Not Distribute", ...): a report's footer, not read as contacts`,
		f.Path("excel_handkept.csv") + `: rows 1-2 above the header ("Call list November"): a title, not read as contacts; the header is row 3`,
	}
	for _, n := range notes {
		if c := count(plan.Warnings, n); c != 1 {
			t.Errorf("note %q is among the warnings %d times; warnings:\n%s", n, c, strings.Join(plan.Warnings, "\n"))
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestRunStopsAtARowThatNeverEnds: a quote never closed stops the run at
// its row, with an error naming the sheet, the row and the line, and
// nobody past it is called; once the sheet is fixed, a run calls the rest
// and nobody twice. A footer is noted once and called never.
func TestRunStopsAtARowThatNeverEnds(t *testing.T) {
	var b strings.Builder
	b.WriteString("Phone,First Name\n")
	for i := range 3 {
		fmt.Fprintf(&b, "%s,Name %d\n", dtPhone(i), i)
	}
	fmt.Fprintf(&b, "%s,\"Name 3\n", dtPhone(3)) // the quote never closes
	for i := 4; i < 1500; i++ {
		fmt.Fprintf(&b, "%s,Name %d\n", dtPhone(i), i)
	}
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, ""), map[string]string{"leads.csv": b.String()})
	_, err := e.run(context.Background(), nil)
	want := "leads.csv row 5: a quoted field of the row that starts on line 5 of the file runs over more than 1000 lines: probably a quote that is never closed"
	var se *sheet.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v; want a *sheet.Error containing %q", err, want)
	}
	// Calls already on their way when the sheet failed are kept in the
	// journal; none past the broken row was made.
	placed := dtPlaced(e.srv)
	for p, n := range placed {
		if n != 1 || (p != dtPhone(0) && p != dtPhone(1) && p != dtPhone(2)) {
			t.Errorf("%s placed %d times by the run that stopped", p, n)
		}
	}
	if c := e.state().Counts(); c[store.Sent] != len(placed) || c[store.Uncertain]+c[store.Failed] != 0 {
		t.Errorf("journal counts %v for %d placed", c, len(placed))
	}
	e.checkIntentBeforeSend(1)

	fixed := strings.Replace(b.String(), `"Name 3`, "Name 3", 1) + "\n\"Generated By: Jane Doe\"\n\"Acme, Inc.\"\n"
	dtWrite(t, filepath.Join(e.dir, "leads.csv"), fixed)
	e.reload()
	var logged []string
	res := e.mustRun(func(o *RunOptions) {
		o.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	})
	if res.Sent != 1500-len(placed) || res.Skipped != len(placed) {
		t.Errorf("second run: %+v", res)
	}
	e.checkPlacedOnce(1500)
	footer := e.f.Path("leads.csv") + `: rows 1503-1504 after the data ("Generated By: Jane Doe", "Acme, Inc."): a report's footer, not read as contacts`
	if c := count(logged, footer); c != 1 {
		t.Errorf("the footer was logged %d times; the log:\n%s", c, strings.Join(logged, "\n"))
	}
}
