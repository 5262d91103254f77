package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
)

// TestKillMidRunReportResumes kills `callrun run` with SIGKILL while it
// calls, with its report half written (a run writes the report's rows
// as its calls settle: their temporary files are in the state
// directory), and runs it again to its end. From the sandbox's ledger:
// nobody was phoned twice, every contact was phoned but those the kill
// left uncertain (at most the calls in flight), and the report says so;
// the temporary files are gone, and `callrun report` afterwards writes
// the same report.csv and report.xlsx as the run.
func TestKillMidRunReportResumes(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			const n, concurrency = 600, 4
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 200, concurrency: concurrency, postgres: e2eDatabase(t, kind)})

			p := e.start("run", e.path)
			waitFor(t, 30*time.Second, "calls under way and the report half written", func() bool {
				return srv.Stats().CallsReceived > n/3 && len(reportTemps(t, e.stateDir)) > 0
			})
			p.cmd.Process.Kill()
			<-p.done
			if res := p.result(); !res.signaled {
				t.Fatalf("the run ended before the kill: %s", res)
			}
			if got := srv.Stats().CallsReceived; got >= n {
				t.Fatalf("the report's temporary files appeared only once all %d calls were made, not while the run called", got)
			}
			if left := reportTemps(t, e.stateDir); len(left) == 0 {
				t.Fatal("the kill left no temporary report file: the report was not being written while the run called")
			}
			if _, err := os.Stat(filepath.Join(e.stateDir, "report.csv")); err == nil {
				t.Error("a report.csv was written before the run ended")
			}

			res := e.run(60*time.Second, "run", e.path)
			if res.code != exitOK && res.code != run.ExitIncomplete { // 3: the kill left some uncertain
				t.Fatalf("the run after the kill: %s", res)
			}
			l := e.ledger()
			l.checkNobodyTwice(t)
			rows := e.report()
			e.checkReportAgainstLedger(rows, l)
			counts := countStatuses(rows)
			if counts["sent"]+counts["uncertain"] != n || counts["uncertain"] > concurrency {
				t.Errorf("report: %v, want %d sent or uncertain, at most %d uncertain", counts, n, concurrency)
			}
			if l.totalPlaced() < n-concurrency || l.totalPlaced() > n {
				t.Errorf("%d calls placed for %d contacts", l.totalPlaced(), n)
			}
			if temps := reportTemps(t, e.stateDir); len(temps) > 0 {
				t.Errorf("temporary report files left after the run: %v", temps)
			}

			// `callrun report` rebuilds what the run wrote.
			runCSV, runBook := readReportFiles(t, e.stateDir)
			if res := e.run(60*time.Second, "report", e.path); res.code != exitOK && res.code != run.ExitIncomplete {
				t.Fatalf("callrun report: %s", res)
			}
			repCSV, repBook := readReportFiles(t, e.stateDir)
			if runCSV != repCSV {
				t.Errorf("callrun report wrote another report.csv than the run:\n%s\nthe run's:\n%s", repCSV, runCSV)
			}
			if !slices.EqualFunc(runBook, repBook, slices.Equal) {
				t.Error("callrun report wrote another report.xlsx than the run")
			}
			if got := len(l.calls); len(e.ledger().calls) != got {
				t.Error("callrun report called the service")
			}
		})
	}
}

// readReportFiles returns report.csv and the cells of report.xlsx in dir.
func readReportFiles(t *testing.T, dir string) (string, [][]string) {
	t.Helper()
	csv, err := os.ReadFile(filepath.Join(dir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	book, err := report.ReadXLSX(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	return string(csv), book
}

// TestRunReportFaultLeavesTheCalls: a run whose report cannot be written
// (report.csv is a directory, so the finished file cannot take its place)
// still calls every contact once, then fails naming the report; the run
// after the fault is cleared calls nobody and writes the report.
func TestRunReportFaultLeavesTheCalls(t *testing.T) {
	const n = 150
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 200, concurrency: 4})
	blocker := filepath.Join(e.stateDir, "report.csv")
	if err := os.MkdirAll(blocker, 0o755); err != nil {
		t.Fatal(err)
	}

	res := e.run(60*time.Second, "run", e.path)
	if res.code == exitOK || !strings.Contains(res.stderr, "report.csv") {
		t.Fatalf("a run whose report cannot be written: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != n {
		t.Errorf("%d calls placed, want %d", l.totalPlaced(), n)
	}
	if st := e.status(); st["sent"] != n {
		t.Errorf("status after the failed report: %v, want %d sent", st, n)
	}
	if temps := reportTemps(t, e.stateDir); len(temps) > 0 {
		t.Errorf("temporary report files left: %v", temps)
	}

	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != exitOK {
		t.Fatalf("the run after the fault: %s", res)
	}
	l = e.ledger()
	l.checkNobodyTwice(t)
	if l.totalPlaced() != n {
		t.Errorf("%d calls placed after the second run, want %d", l.totalPlaced(), n)
	}
	rows := e.report()
	e.checkReportAgainstLedger(rows, l)
	if c := countStatuses(rows); c["sent"] != n {
		t.Errorf("report: %v, want %d sent", c, n)
	}
}
