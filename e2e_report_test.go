package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// reportTemps returns the temporary report files in dir: what a report
// write killed half-way leaves behind.
func reportTemps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var temps []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".report.") || strings.HasPrefix(n, ".summary.json") {
			temps = append(temps, n)
		}
	}
	return temps
}

// TestKilledReportLeavesNoContactData kills `callrun report` with SIGKILL
// while it writes the report files, then checks that the temporary files
// it left (which hold contact data) are removed by the next `callrun
// report`, but not while another process holds the state directory's lock:
// they could then be a running run's.
func TestKilledReportLeavesNoContactData(t *testing.T) {
	// Enough rows that writing report.xlsx takes a good part of a second:
	// the kill lands while a temporary file is there to be left.
	var sheet strings.Builder
	sheet.WriteString("First Name,Phone\n")
	const rows = 50000
	for i := range rows {
		fmt.Fprintf(&sheet, "Ada %d,(415) 555-%04d\n", i, i%100)
	}
	e := newOfflineCampaign(t, strings.NewReader(sheet.String()))

	var left []string
	for round := 1; len(left) == 0; round++ {
		if round > 10 {
			t.Fatal("in 10 rounds, callrun report never left a temporary file when killed")
		}
		p := e.start("report", e.path)
		waitFor(t, 60*time.Second, "a temporary report file or the end of callrun report", func() bool {
			select {
			case <-p.done:
				return true
			default:
			}
			return len(reportTemps(t, e.stateDir)) > 0
		})
		p.cmd.Process.Kill()
		<-p.done
		left = reportTemps(t, e.stateDir)
	}
	for _, n := range left {
		b, err := os.ReadFile(filepath.Join(e.stateDir, n))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("left by the kill: %s (%d bytes)", n, len(b))
	}

	// A run holding the lock may be writing these very files: a report
	// then leaves them alone, and still rebuilds.
	unlock, err := store.Lock(e.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	res := e.run(60*time.Second, "report", e.path)
	if res.code != 0 {
		t.Fatalf("report while another process holds the lock: %s", res)
	}
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(e.stateDir, n)); err != nil {
			t.Errorf("report removed %s while another process held the lock: %v", n, err)
		}
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}

	res = e.run(60*time.Second, "report", e.path)
	if res.code != 0 {
		t.Fatalf("report: %s", res)
	}
	if temps := reportTemps(t, e.stateDir); len(temps) > 0 {
		t.Errorf("after callrun report, the temporary files a killed report left are still there: %v", temps)
	}
	b, err := os.ReadFile(filepath.Join(e.stateDir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != rows+1 {
		t.Errorf("report.csv has %d lines, want a header and %d rows", n, rows)
	}
}

// newOfflineCampaign writes a campaign that plan --offline, status and
// report can use (they ask the service nothing) into a temporary
// directory, with sheet as its contacts.csv (columns First Name and
// Phone), for the binary to run from another directory.
func newOfflineCampaign(t *testing.T, sheet io.Reader) *e2eCampaign {
	t.Helper()
	dir := t.TempDir()
	cwd := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	const campaignYAML = `# written by e2e_report_test.go; offline: nobody is phoned
name: offline
agents:
  - name: Caller
    prompt: You remind people of their appointment. This is a test; nobody is phoned.
sheets:
  - file: contacts.csv
    agent: Caller
    fields: {phone_number: Phone, first_name: First Name}
region: US
state_dir: state
unsafe_ignore_called_person_hours: true
`
	if err := os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte(campaignYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "contacts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, sheet)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return &e2eCampaign{t: t, dir: dir, cwd: cwd, path: filepath.Join(dir, "campaign.yaml"), stateDir: filepath.Join(dir, "state"), env: e2eEnv(dir)}
}
