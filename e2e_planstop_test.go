package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// e2ePlanElsewhere is what a plan --format json says of the contacts its
// campaign called already from another journal.
type e2ePlanElsewhere struct {
	Totals struct {
		Done            int `json:"done"`
		ToCall          int `json:"to_call"`
		Held            int `json:"held"`
		CalledElsewhere int `json:"called_elsewhere"`
	} `json:"totals"`
	CalledElsewhere *struct {
		Contacts int    `json:"contacts"`
		Journal  string `json:"journal"`
		Starts   string `json:"starts"`
		Rows     []struct {
			File string `json:"file"`
			Row  int    `json:"row"`
		} `json:"rows"`
	} `json:"called_elsewhere"`
}

// TestPlanSaysRunWouldStopForCallsFromAnotherStateDirectory: a campaign
// that called people from one state directory, planned from a second
// one on the same CALLRUN_HOME (a second checkout of its folder) or from
// its own directory restored from a backup older than its last calls.
// run stops there (ForeignStartError, exit 1) before calling anyone the
// campaign called; plan used to say all was fine (exit 0, "to call"), so
// a CI dry-run passed and the cron run stopped. Now plan, online and
// --offline, says run would stop, names the journal, lists the rows and
// exits 1 as run would (4 with --strict), and plan --report marks each
// called_elsewhere. A plan of the directory the calls were made from
// says nothing of it. No plan places a call: the sandbox's ledger has
// only the first run's.
func TestPlanSaysRunWouldStopForCallsFromAnotherStateDirectory(t *testing.T) {
	const n, called = 6, 4
	for _, tc := range []struct {
		name    string
		restore bool // the same state directory, restored from a backup made after its first 2 calls
	}{
		{name: "second checkout"},
		{name: "restored from an older backup", restore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			home := t.TempDir()
			a := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
			a.env = append(a.env, "CALLRUN_HOME="+home)
			backup := filepath.Join(t.TempDir(), "state")
			for i, limit := range []string{"2", "2"} {
				if res := a.run(60*time.Second, "run", "--limit", limit, a.path); res.code != 0 {
					t.Fatalf("run %d of the first directory: %s", i+1, res)
				}
				if i == 0 {
					copyDir(t, a.stateDir, backup) // the backup, made between the two runs
				}
			}
			if got := len(srv.Calls()); got != called {
				t.Fatalf("the first directory's runs placed %d calls, want %d", got, called)
			}
			// The original, before anything is restored: nothing to say.
			if p, res := planElsewhere(t, a, "--offline"); res.code != 0 || p.CalledElsewhere != nil || p.Totals.Done != called || p.Totals.ToCall != n-called {
				t.Errorf("plan of the directory the calls were made from: %s", res)
			}

			b, elsewhere := a, called
			if tc.restore {
				if err := os.RemoveAll(a.stateDir); err != nil {
					t.Fatal(err)
				}
				copyDir(t, backup, a.stateDir)
				elsewhere = called - 2 // the backup knows the first run's two calls
			} else {
				b = newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
				b.env = append(b.env, "CALLRUN_HOME="+home)
			}
			journal := filepath.Join(b.stateDir, "journal.jsonl")
			for _, mode := range [][]string{{"--offline"}, {}} {
				p, res := planElsewhere(t, b, mode...)
				if res.code != 1 {
					t.Errorf("plan %v: exit %d, want 1 as run would stop: %s", mode, res.code, res)
				}
				if ce := p.CalledElsewhere; ce == nil || ce.Contacts != elsewhere || p.Totals.CalledElsewhere != elsewhere || len(ce.Rows) != elsewhere || ce.Journal != journal || !strings.Contains(ce.Starts, home) {
					t.Errorf("plan %v --format json: %+v, want %d contacts called elsewhere, journal %s: %s", mode, p, elsewhere, journal, res)
				}
				if p.Totals.ToCall != n-called || p.Totals.Done != called-elsewhere {
					t.Errorf("plan %v: totals %+v, want %d to call and %d done", mode, p.Totals, n-called, called-elsewhere)
				}
				if !strings.Contains(res.stderr, journal) || !strings.Contains(res.stderr, "state_dir") || !strings.Contains(res.stderr, "new name") {
					t.Errorf("plan %v: the error does not name the journal and what to decide: %s", mode, res)
				}
			}
			text := b.run(30*time.Second, "plan", "--offline", b.path)
			if text.code != 1 || !strings.Contains(text.stdout, "RUN WOULD STOP") || !strings.Contains(text.stdout, journal) {
				t.Errorf("plan --offline, text: %s", text)
			}
			if strict := b.run(30*time.Second, "plan", "--offline", "--strict", b.path); strict.code != run.ExitInvalidRows {
				t.Errorf("plan --offline --strict: exit %d, want %d: %s", strict.code, run.ExitInvalidRows, strict)
			}
			dir := filepath.Join(t.TempDir(), "before")
			if res := b.run(30*time.Second, "plan", "--offline", "--report", dir, b.path); res.code != 1 {
				t.Errorf("plan --report: %s", res)
			}
			if got := reportStatuses(t, filepath.Join(dir, "report.csv"))["called_elsewhere"]; got != elsewhere {
				t.Errorf("plan --report: %d rows called_elsewhere, want %d", got, elsewhere)
			}
			if got := len(srv.Calls()); got != called {
				t.Errorf("after the plans the sandbox has %d calls, want the first directory's %d", got, called)
			}

			// The plan was right: run stops, and calls nobody again.
			res := b.run(60*time.Second, "run", b.path)
			if res.code != 1 || !strings.Contains(res.stderr, "does not record") {
				t.Errorf("run of the second directory: %s", res)
			}
			if got := len(srv.Calls()); got != called {
				t.Errorf("after the second directory's run the sandbox has %d calls, want %d", got, called)
			}

			// What the stop says to do works, and calls the others once.
			if tc.restore {
				// The later state is lost: the people called since the
				// backup go into a suppression file, from the plan's report.
				writeCalledElsewhere(t, filepath.Join(dir, "report.csv"), filepath.Join(b.dir, "called.csv"))
				yaml, err := os.ReadFile(b.path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(b.path, append(yaml, "suppress: [{file: called.csv, columns: [phone_number]}]\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
				if p, res := planElsewhere(t, b, "--offline"); res.code != 0 || p.CalledElsewhere != nil || p.Totals.ToCall != n-called {
					t.Errorf("plan with the people called since the backup suppressed: %s", res)
				}
			} else {
				b = a // run from the state directory the campaign ran from
			}
			if res := b.run(60*time.Second, "run", b.path); res.code != 0 {
				t.Errorf("run as the stop says: %s", res)
			}
			l := b.ledger()
			l.checkNobodyTwice(t)
			if len(l.placed) != n {
				t.Errorf("%d numbers were called, want each of the %d once", len(l.placed), n)
			}
		})
	}
}

// planElsewhere runs plan --format json with args on e's campaign.
func planElsewhere(t *testing.T, e *e2eCampaign, args ...string) (e2ePlanElsewhere, e2eResult) {
	t.Helper()
	res := e.run(30*time.Second, append(append([]string{"plan", "--format", "json"}, args...), e.path)...)
	var p e2ePlanElsewhere
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("plan --format json: %v: %s", err, res)
	}
	return p, res
}

// writeCalledElsewhere writes the rows of the plan's report.csv at from
// whose status is called_elsewhere, with its header, to the file to, as
// a person saves them from a spreadsheet.
func writeCalledElsewhere(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", from, err)
	}
	col := slices.Index(recs[0], "status")
	out := [][]string{recs[0]}
	for _, r := range recs[1:] {
		if r[col] == "called_elsewhere" {
			out = append(out, r)
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reportStatuses counts the rows of a report.csv by status.
func reportStatuses(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "status" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s has no status column: %v", path, recs[0])
	}
	m := map[string]int{}
	for _, r := range recs[1:] {
		m[r[col]]++
	}
	return m
}

// copyDir copies the files of directory from into a new directory to,
// keeping their modes (a restore from a backup).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			copyDir(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}
