package main

import (
	"github.com/callrun/callrun/campaign/run"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// oddCallServer is a sandbox whose call endpoints answer every call start
// with status and body, as a proxy, a captive portal or a service that
// changed its answers would, without reaching the sandbox: the ledger
// holds no call, and nobody was placed.
func oddCallServer(t *testing.T, status int, ctype, body string) *sandbox.Server {
	t.Helper()
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/call/") {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestStatusFalseSendsNobody: a service that answers every call start
// 200 {"status": false, "message": ...}, as PHP APIs say no, placed
// nobody: no contact may be reported sent, nor the run end 0 as a good one
// does.
func TestStatusFalseSendsNobody(t *testing.T) {
	const n = 6
	srv := oddCallServer(t, http.StatusOK, "application/json", `{"status":false,"message":"Insufficient balance"}`)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
	res := e.run(90*time.Second, "run", e.path)
	if res.code == exitOK {
		t.Errorf("exit 0 with nobody placed: %s", res)
	}
	if len(srv.Calls()) != 0 {
		t.Fatalf("test bug: the ledger holds %d calls", len(srv.Calls()))
	}
	c := countStatuses(e.report())
	if c["sent"] != 0 {
		t.Errorf("report.csv says %d sent; the service placed none", c["sent"])
	}
	if sum := e.summary(); sum.Counts["sent"] != 0 || sum.CallsThisRun != 0 {
		t.Errorf("summary.json says %d sent, %d calls this run; the service placed none", sum.Counts["sent"], sum.CallsThisRun)
	}
	if strings.Contains(res.stdout, "sent ") || !strings.Contains(res.stdout+res.stderr, "Insufficient balance") {
		t.Errorf("the summary does not say the service refused, with its message:\n%s", res)
	}
}

// TestRunRefusesASheetUnreadablePastItsFirstRows: a CRM export saved in
// Windows-1252 whose first non-ASCII name comes late (row 802, "José")
// cannot be read to its end; plan exits 2 for it. run must refuse it as
// plan does, before any call, naming the file, the row and what to do:
// it used to call the 800 rows before it, then exit 2 ("invalid campaign
// file") with no report.csv, no summary.json and no summary on the
// terminal, and `callrun report` could not write one either.
func TestRunRefusesASheetUnreadablePastItsFirstRows(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(800), perSecond: 1000, concurrency: 8})
	f, err := os.OpenFile(filepath.Join(e.dir, "contacts.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("c-9999,Jos\xe9,(206) 555-0100,jose@example.com\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	res := e.run(2*time.Minute, "run", e.path)
	if res.code != run.ExitUsage {
		t.Errorf("exit %d, want %d (the campaign's sheet)", res.code, run.ExitUsage)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the sandbox received %d call starts; a sheet plan refuses must stop run before any call", n)
	}
	const why = "contacts.csv row 802: the sheet is not UTF-8 text"
	if last := lastLine(res.stderr); !strings.Contains(last, why) || !strings.Contains(last, "sheets[0].file") || !strings.Contains(last, "encoding: windows-1252") {
		t.Errorf("the last line does not name the sheet's key, file, row and the fix (%q): %s", why, last)
	}
}

// TestAgentListWithoutAListCreatesNoAgent: a service (or a proxy in front
// of it) that answers the agent list 200 {} shows no agent; run took that
// for an account without the campaign's agent and created it at every
// run, a second "E2E Caller", then a third: what "never two with one
// name" forbids, and what makes the campaign's later runs refuse it.
func TestAgentListWithoutAListCreatesNoAgent(t *testing.T) {
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ai/agent/list" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{}`))
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 2})
	for range 2 {
		res := e.run(time.Minute, "run", e.path)
		if res.code == exitOK {
			t.Errorf("exit 0 from a service whose agent list holds no list: %s", res)
		}
	}
	if n := len(srv.Agents()); n != 0 {
		t.Errorf("two runs created %d agents named %q; a list answer that holds no list must stop run before it creates any", n, e2eAgent)
	}
}
