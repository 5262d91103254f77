package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/rs/zerolog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/<name>.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(e2eBin.pkgDir, "testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// writeFiles writes name -> body into dir, making directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ciCampaign is a campaign as a repository keeps it, under campaigns/spring/,
// with an invalid row, a repaired number and an empty second sheet.
var ciCampaign = map[string]string{
	"campaigns/spring/campaign.yaml": `name: spring
agents:
  - name: Spring
    prompt: hello
sheets:
  - file: contacts/leads.csv
    agent: Spring
    fields: {phone_number: Phone, first_name: First Name}
  - file: contacts/later.csv
    agent: Spring
    fields: {phone_number: Phone}
hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}
`,
	"campaigns/spring/contacts/leads.csv": "Phone,First Name\n+14155550132,Ada\nnot a number,Bob\n1.4155550135E+10,Cy\n(415) 555-0134,Di\n",
	"campaigns/spring/contacts/later.csv": "Phone\n",
}

// A Wednesday at noon in New York: inside everyone's hours.
var ciNow = time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC).Add(5 * time.Hour)

// TestPlanFormatGithubGolden: plan --format github prints the plan, then
// one annotation per problem on the file and line it is about: invalid
// rows on their sheet's row, repairs and warnings as warnings, problems of
// the campaign file on their line.
func TestPlanFormatGithubGolden(t *testing.T) {
	dir := t.TempDir()
	// A store of its own: the package's CALLRUN_HOME holds the call
	// starts other tests' campaigns and listens recorded for these
	// numbers, which would hold them back.
	t.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))
	writeFiles(t, dir, ciCampaign)
	writeFiles(t, dir, map[string]string{"campaigns/broken/campaign.yaml": "name: broken\nagents:\n  - name: A\n    promt: hi\npace: {per_second: fast, burst: 1}\n"})
	t.Chdir(dir)
	var out bytes.Buffer
	err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: "campaigns/spring/campaign.yaml", Offline: true, Now: ciNow}, strict: true, format: "github"}, &out)
	if code := exitCode(context.Background(), err); code != run.ExitInvalidRows {
		t.Errorf("spring: exit %d (%v), want 4", code, err)
	}
	out.WriteString("---\n")
	err = runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: "campaigns/broken/campaign.yaml", Offline: true, Now: ciNow}, strict: true, format: "github"}, &out)
	if code := exitCode(context.Background(), err); code != run.ExitUsage {
		t.Errorf("broken: exit %d (%v), want 2", code, err)
	}
	golden(t, "TestPlanFormatGithub", out.String())
	for _, want := range []string{
		"::error file=campaigns/spring/contacts/leads.csv,line=3,title=invalid row 3::phone_number: ",
		"::warning file=campaigns/spring/contacts/leads.csv,line=4,title=repaired number::",
		"::warning file=campaigns/spring/campaign.yaml,title=callrun plan::contacts/later.csv has a header and no rows",
		"::error file=campaigns/broken/campaign.yaml,line=4,title=agents[0].promt::unknown key \"promt\"",
		"::error file=campaigns/broken/campaign.yaml,line=5,title=pace.per_second::cannot read text `fast` as a number",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

func TestAnnotationEscaping(t *testing.T) {
	var b bytes.Buffer
	annotate(&b, "error", "a,b:c.csv", 3, "x", "100% wrong\nsecond line\r")
	if got, want := b.String(), "::error file=a%2Cb%3Ac.csv,line=3,title=x::100%25 wrong%0Asecond line%0D\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEmptySheetWarnsAndFailsStrict: a sheet with a header and no rows is
// a warning, and an error (exit 4) with --strict.
func TestEmptySheetWarnsAndFailsStrict(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, ciCampaign)
	path := filepath.Join(dir, "campaigns/spring/campaign.yaml")
	os.WriteFile(filepath.Join(dir, "campaigns/spring/contacts/leads.csv"), []byte("Phone,First Name\n+14155550132,Ada\n"), 0o644)
	var out bytes.Buffer
	if err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true, Now: ciNow}, format: "text"}, &out); err != nil {
		t.Fatalf("without --strict: %v", err)
	}
	if !strings.Contains(out.String(), "contacts/later.csv has a header and no rows") {
		t.Errorf("no warning:\n%s", out.String())
	}
	err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true, Now: ciNow}, strict: true, format: "text"}, &out)
	if exitCode(context.Background(), err) != run.ExitInvalidRows || !strings.Contains(err.Error(), "sheet contacts/later.csv has a header and no rows") {
		t.Errorf("--strict: %v", err)
	}
}

// TestLatin1SheetIsTheCampaignsFault: a sheet in Latin-1 exits 2, names
// the sheet's key and row, and the other sheets are still checked.
func TestLatin1SheetIsTheCampaignsFault(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, ciCampaign)
	writeFiles(t, dir, map[string]string{
		"campaigns/spring/contacts/leads.csv": "Phone,First Name\n+14155550132,Ren\xe9\n",
		"campaigns/spring/contacts/later.csv": "Phone\n+14155550133\nnot a number\n",
	})
	path := filepath.Join(dir, "campaigns/spring/campaign.yaml")
	var out bytes.Buffer
	err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true, Now: ciNow}, format: "json"}, &out)
	if code := exitCode(context.Background(), err); code != run.ExitUsage {
		t.Fatalf("exit %d (%v), want 2", code, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "contacts/leads.csv row 2: the sheet is not UTF-8") || !strings.Contains(msg, "campaign.yaml line 6, sheets[0].file: ") {
		t.Errorf("message: %s", msg)
	}
	var plan struct {
		Sheets []struct {
			File   string `json:"file"`
			Rows   int    `json:"rows"`
			ToCall int    `json:"to_call"`
			Error  string `json:"error"`
		} `json:"sheets"`
		Problems []campaign.RowProblem `json:"problems"`
	}
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(plan.Sheets) != 2 || !strings.Contains(plan.Sheets[0].Error, "not UTF-8") ||
		plan.Sheets[1].Rows != 2 || plan.Sheets[1].ToCall != 1 || len(plan.Problems) != 1 || plan.Problems[0].File != "contacts/later.csv" {
		t.Errorf("the other sheet was not checked: %+v", plan)
	}
	// run stops on it as the campaign's fault too.
	var se *sheet.Error
	if exitCode(context.Background(), errors.Join(errors.New("calling"), &sheet.Error{File: "x.csv", Row: 2, Msg: "not UTF-8"})) != run.ExitUsage || errors.As(nil, &se) {
		t.Error("a sheet error is not exit 2")
	}
}

// TestJSONLogsOneRecordPerProblem: with JSON logs (stderr not a terminal,
// CI) a campaign file's problems come one record each, with file, line and
// key, and a last record with the exit code.
func TestJSONLogsOneRecordPerProblem(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"c.yaml": "name: x\nagents:\n  - name: A\n    promt: hi\npace: {per_second: fast, burst: 1}\n"})
	_, err := campaign.Load(filepath.Join(dir, "c.yaml"), campaign.LoadOptions{Offline: true})
	var b bytes.Buffer
	logFailure(zerolog.New(&b), err, exitCode(context.Background(), err))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d records, want 3:\n%s", len(lines), b.String())
	}
	var recs []map[string]any
	for _, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if strings.Contains(r["message"].(string), "\n") {
			t.Errorf("a record with a newline inside: %s", l)
		}
		recs = append(recs, r)
	}
	if recs[0]["line"] != 4.0 || recs[0]["key"] != "agents[0].promt" || recs[1]["line"] != 5.0 || recs[1]["key"] != "pace.per_second" ||
		recs[2]["exit_code"] != 2.0 || recs[2]["message"] != "2 problems in the campaign file, one record each above" {
		t.Errorf("records:\n%s", b.String())
	}
}

// planJSONErrors is what `plan --format json` prints when the campaign is
// broken.
type planJSONErrors struct {
	Errors []planError `json:"errors"`
}

// TestPlanJSONAlwaysPrintsJSON: with --format json, stdout holds JSON
// whatever happens: a broken campaign file (exit 2) prints {"errors":
// [...]} with each problem's file, line, key and message; so do a missing
// file and a missing argument; a sheet that cannot be read to its end
// puts its errors beside the plan of the other sheets.
func TestPlanJSONAlwaysPrintsJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, ciCampaign)
	writeFiles(t, dir, map[string]string{"campaigns/broken/campaign.yaml": "name: broken\nagents:\n  - name: A\n    promt: hi\npace: {per_second: fast, burst: 1}\n"})
	t.Chdir(dir)
	plan := func(args ...string) (planJSONErrors, string, int) {
		t.Helper()
		var out bytes.Buffer
		app := newApp(&session{stdout: &out, stderr: io.Discard})
		code := exitCode(context.Background(), app.RunContext(context.Background(), append([]string{"callrun", "plan", "--offline", "--format", "json"}, args...)))
		var got planJSONErrors
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Errorf("plan %s: stdout is not JSON (%v):\n%s", strings.Join(args, " "), err, out.String())
		}
		return got, out.String(), code
	}

	got, out, code := plan("campaigns/broken/campaign.yaml")
	want := []planError{
		{File: "campaigns/broken/campaign.yaml", Line: 4, Key: "agents[0].promt"},
		{File: "campaigns/broken/campaign.yaml", Line: 5, Key: "pace.per_second"},
	}
	if code != run.ExitUsage || len(got.Errors) != len(want) {
		t.Fatalf("broken campaign: exit %d, %s", code, out)
	}
	for i, w := range want {
		if g := got.Errors[i]; g.File != w.File || g.Line != w.Line || g.Key != w.Key || g.Message == "" {
			t.Errorf("error %d: %+v, want %+v and a message", i, g, w)
		}
	}
	if !strings.Contains(got.Errors[0].Message, `unknown key "promt"`) || !strings.Contains(out, `"line": 4`) || !strings.Contains(out, `"key": "agents[0].promt"`) {
		t.Errorf("broken campaign:\n%s", out)
	}

	got, out, code = plan("campaigns/missing/campaign.yaml")
	if code != run.ExitUsage || len(got.Errors) != 1 || got.Errors[0].File != "campaigns/missing/campaign.yaml" || !strings.Contains(got.Errors[0].Message, "no such file") {
		t.Errorf("missing campaign file: exit %d\n%s", code, out)
	}
	got, out, code = plan()
	if code != run.ExitUsage || len(got.Errors) != 1 || !strings.Contains(got.Errors[0].Message, "give the campaign file") {
		t.Errorf("no campaign file given: exit %d\n%s", code, out)
	}

	// A sheet in Latin-1: the plan of the other sheet, and the error.
	writeFiles(t, dir, map[string]string{"campaigns/spring/contacts/leads.csv": "Phone,First Name\n+14155550132,Ren\xe9\n"})
	got, out, code = plan("campaigns/spring/campaign.yaml")
	if code != run.ExitUsage || len(got.Errors) != 1 || got.Errors[0].Line != 6 || got.Errors[0].Key != "sheets[0].file" ||
		!strings.Contains(got.Errors[0].Message, "not UTF-8") || !strings.Contains(out, `"sheets": [`) {
		t.Errorf("a sheet that is not UTF-8: exit %d\n%s", code, out)
	}
	// A plan without errors has no errors key.
	writeFiles(t, dir, map[string]string{"campaigns/spring/contacts/leads.csv": "Phone,First Name\n+14155550132,Ada\n"})
	if _, out, code = plan("campaigns/spring/campaign.yaml"); code != exitOK || strings.Contains(out, `"errors"`) {
		t.Errorf("a good campaign: exit %d\n%s", code, out)
	}
}
