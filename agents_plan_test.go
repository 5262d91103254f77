package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
)

// TestPlanFailsWhenRunWouldRefuse: two agents of the account share the
// campaign's agent name, so run refuses (and the ledger stays empty).
// plan prints the plan saying so and exits 1, as run does; plan --strict
// exits 4; plan --offline does not know and says so, exiting 0.
func TestPlanFailsWhenRunWouldRefuse(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	a1 := srv.AddAgent(sandbox.Agent{AgentName: "Declared", GeneralPrompt: "hello"})
	a2 := srv.AddAgent(sandbox.Agent{AgentName: "Declared", GeneralPrompt: "hello"})
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	ctx := context.Background()
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}

	runErr := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard)
	if code := exitCode(ctx, runErr); code != exitRuntime || !strings.Contains(runErr.Error(), "matches 2 agents") {
		t.Fatalf("run: exit %d, %v; want 1 refusing the name", code, runErr)
	}
	if n := len(srv.Calls()); n != 0 || srv.Stats().AgentsCreated != 0 {
		t.Fatalf("run that refused: %d calls in the ledger, %d agents created", n, srv.Stats().AgentsCreated)
	}

	for _, tc := range []struct {
		name     string
		o        planOptions
		wantCode int
		wantErr  []string // in the error
		wantOut  string   // in the plan printed
	}{
		{"online", planOptions{PlanOptions: run.PlanOptions{Path: path}}, exitRuntime,
			[]string{"run would refuse this campaign", `"Declared" matches 2 agents`, a1.AgentID, a2.AgentID}, "run will refuse"},
		{"online --strict", planOptions{PlanOptions: run.PlanOptions{Path: path}, strict: true}, run.ExitInvalidRows,
			[]string{"plan --strict: run would refuse this campaign", a1.AgentID, a2.AgentID}, "run will refuse"},
		{"online --strict --format json", planOptions{PlanOptions: run.PlanOptions{Path: path}, strict: true, format: "json"}, run.ExitInvalidRows,
			[]string{"plan --strict: run would refuse"}, `"action": "ambiguous"`},
		{"--offline --strict", planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}, strict: true}, exitOK,
			nil, "offline: not checked whether each agent exists, or exists twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runPlan(ctx, nolog, tc.o, &out)
			if code := exitCode(ctx, err); code != tc.wantCode {
				t.Errorf("exit %d (%v), want %d", code, err, tc.wantCode)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v lacks %q", err, want)
				}
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("plan lacks %q:\n%s", tc.wantOut, out.String())
			}
		})
	}

	// Once one is deleted, plan --strict passes and run calls the other.
	srv.RemoveAgent(a2.AgentID)
	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}, strict: true, format: "json"}, &out); err != nil {
		t.Fatalf("plan --strict with one agent: %v", err)
	}
	var plan campaign.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil || plan.Agents[0].Action != campaign.ActionExists {
		t.Fatalf("plan: %v %+v", err, plan.Agents)
	}
	if err := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if p := srv.Placed(); len(p) != 1 || p[0].AgentID != a1.AgentID || srv.Stats().AgentsCreated != 0 {
		t.Errorf("ledger %+v, %d agents created; want one call to %s", p, srv.Stats().AgentsCreated, a1.AgentID)
	}
}

// TestRunStopsWhenItsCreateMadeTheNameAmbiguous: another program creates
// the campaign's agent just after callrun's second listing read the list,
// so callrun creates one too. The listing after the create shows both:
// run stops before any call (exit 1), naming the name, both ids and what
// to do; the ledger is empty. From then on plan --strict exits 4.
func TestRunStopsWhenItsCreateMadeTheNameAmbiguous(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	ctx := context.Background()
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	pages := 0
	var other sandbox.Agent
	srv.OnListPage(func(int) {
		mu.Lock()
		defer mu.Unlock()
		if pages++; pages == 2 {
			other = srv.AddAgent(sandbox.Agent{AgentName: "Declared", GeneralPrompt: "hello"})
		}
	})
	err := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard)
	var amb *campaign.AmbiguousError
	if code := exitCode(ctx, err); code != exitRuntime || !errors.As(err, &amb) || amb.Created == "" {
		t.Fatalf("run: exit %d, %v; want 1 with the agent just created named", code, err)
	}
	for _, want := range []string{`agent name "Declared" now matches 2 agents`, other.AgentID, amb.Created, "no call was started", "delete all but one of them"} {
		if !strings.Contains(message(err), want) {
			t.Errorf("message lacks %q: %s", want, message(err))
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls in the ledger after run stopped", n)
	}
	if n := len(srv.Agents()); n != 2 || srv.Stats().AgentsCreated != 1 {
		t.Errorf("%d agents, %d created by callrun; want 2, 1", n, srv.Stats().AgentsCreated)
	}
	srv.OnListPage(nil)
	if code := exitCode(ctx, runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}, strict: true}, io.Discard)); code != run.ExitInvalidRows {
		t.Errorf("plan --strict after: exit %d, want 4", code)
	}
}

// TestRunUsesTheAgentItCreatedThatTheListHides: the service's list never
// shows the agents callrun creates. The first run creates the campaign's
// agent and calls with it; the second creates none, and plan says it
// uses the remembered agent, naming its id, as run does.
func TestRunUsesTheAgentItCreatedThatTheListHides(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{ListHidesCreated: true})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	ctx := context.Background()
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	agents := srv.Agents()
	if len(agents) != 1 || srv.Stats().AgentsCreated != 1 {
		t.Fatalf("%d agents on the service, %d created, after two runs; want 1, 1", len(agents), srv.Stats().AgentsCreated)
	}
	if p := srv.Placed(); len(p) != 1 || p[0].AgentID != agents[0].AgentID {
		t.Errorf("ledger %+v; want one call to %s", p, agents[0].AgentID)
	}
	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}, strict: true, format: "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var plan campaign.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil || plan.Agents[0].Action != campaign.ActionRemembered || plan.Agents[0].AgentID != agents[0].AgentID {
		t.Errorf("plan: %v %+v; want the remembered agent %s", err, plan.Agents, agents[0].AgentID)
	}
	out.Reset()
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"remembered Declared (id " + agents[0].AgentID + ", status unknown", "the service's list does not show agent \"Declared\""} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}
