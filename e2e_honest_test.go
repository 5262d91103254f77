package main

import (
	"net/http"
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
