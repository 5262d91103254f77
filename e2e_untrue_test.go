package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// TestAgentListWithoutTotalFindsTheAgentOnPageTwo: a service (or a proxy
// in front of it) whose agent list leaves out "total" still pages: an
// account of 100 other agents has the campaign's on page 2. Read as a
// total of 0, the first page was taken for the whole list, the agent was
// missed twice in a row, and run created a second "E2E Caller" at every
// run: what "never two with one name" forbids.
func TestAgentListWithoutTotalFindsTheAgentOnPageTwo(t *testing.T) {
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/ai/agent/list" {
			inner.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		var page map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		delete(page, "total")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	for i := range 100 {
		srv.AddAgent(sandbox.Agent{AgentName: fmt.Sprintf("Other %03d", i), GeneralPrompt: "another campaign"})
	}
	mine := srv.AddAgent(sandbox.Agent{AgentName: e2eAgent, GeneralPrompt: "made on the dashboard"})
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 2})
	res := e.run(time.Minute, "run", e.path)
	named := 0
	for _, a := range srv.Agents() {
		if a.AgentName == e2eAgent {
			named++
		}
	}
	if named != 1 {
		t.Errorf("the account holds %d agents named %q after a run; it had one, on the list's page 2: %s", named, e2eAgent, res)
	}
	for _, c := range srv.Calls() {
		if c.AgentID != mine.AgentID {
			t.Errorf("a call went to agent %s, not the account's %q (%s)", c.AgentID, e2eAgent, mine.AgentID)
			break
		}
	}
}

// TestLimitZeroCallsNobody: --limit N is "call at most N contacts this
// run"; --limit 0 (a canary size a script computed as 0) called every
// contact, as no --limit does. It is refused, as --limit -1 is, before
// any call.
func TestLimitZeroCallsNobody(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{AccountFields: []string{"city", "zip_code"}})
	t.Cleanup(srv.Close)
	path := accountTestCampaign(t, srv, srv.URL)
	if got := runApp(t, "run", "--limit", "0", path); got != run.ExitUsage {
		t.Errorf("run --limit 0: exit %d, want %d", got, run.ExitUsage)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("run --limit 0 started %d calls", n)
	}
}
