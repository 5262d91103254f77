package campaign

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// agentStores returns the two stores a campaign's agents are remembered
// in, by name: its state directory's files and a PostgreSQL database.
func agentStores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"files": func(t *testing.T) store.Store { return store.Files{Dir: t.TempDir()} },
		"postgres": func(t *testing.T) store.Store {
			p, err := store.OpenPostgres(context.Background(), pgtest.URL(t), "agents", 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return p
		},
	}
}

// logged gathers what EnsureAgents logs.
type logged struct{ lines []string }

func (l *logged) logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// TestEnsureAgentsUsesTheRememberedAgentTheListHides: the service's list
// never shows the agents callrun creates. Two runs over one store create
// one agent; the second uses it, remembered, and says so.
func TestEnsureAgentsUsesTheRememberedAgentTheListHides(t *testing.T) {
	for name, open := range agentStores(t) {
		t.Run(name, func(t *testing.T) {
			srv, c := sandboxClient(t, sandbox.Options{ListHidesCreated: true})
			st := open(t)
			first, err := EnsureAgents(context.Background(), c, specs("Hidden"), EnsureOptions{Memory: st, Run: "first"})
			if err != nil {
				t.Fatal(err)
			}
			var log logged
			second, err := EnsureAgents(context.Background(), c, specs("Hidden"), EnsureOptions{Memory: st, Run: "second", Warnf: log.logf})
			if err != nil {
				t.Fatal(err)
			}
			if n := countNames(srv)["Hidden"]; n != 1 {
				t.Fatalf("%d agents named Hidden on the service after two runs, want 1", n)
			}
			if second[0].Action != ActionRemembered || second[0].AgentID != first[0].AgentID {
				t.Errorf("the second run's plan: %s %s, want %s %s", second[0].Action, second[0].AgentID, ActionRemembered, first[0].AgentID)
			}
			if len(log.lines) != 1 || !strings.Contains(log.lines[0], "does not show agent \"Hidden\" (id "+first[0].AgentID+")") {
				t.Errorf("warned %q", log.lines)
			}
			if err := WaitReady(context.Background(), c, second, time.Millisecond, nil); err != nil {
				t.Errorf("WaitReady on the remembered agent: %v", err)
			}
			got, err := st.CreatedAgents(context.Background())
			if err != nil || len(got) != 1 || got[0].ID != first[0].AgentID || got[0].Name != "Hidden" || got[0].Run != "first" || got[0].At.IsZero() {
				t.Errorf("the store remembers %+v (%v)", got, err)
			}
		})
	}
}

// TestEnsureAgentsCreatesAgainARememberedAgentTheServiceLost: the
// remembered agent was deleted on the service (its call endpoint answers
// 404): it is created once again, and the new one remembered.
func TestEnsureAgentsCreatesAgainARememberedAgentTheServiceLost(t *testing.T) {
	for name, open := range agentStores(t) {
		t.Run(name, func(t *testing.T) {
			srv, c := sandboxClient(t, sandbox.Options{ListHidesCreated: true})
			st := open(t)
			first, err := EnsureAgents(context.Background(), c, specs("Gone"), EnsureOptions{Memory: st})
			if err != nil {
				t.Fatal(err)
			}
			srv.RemoveAgent(first[0].AgentID)
			second, err := EnsureAgents(context.Background(), c, specs("Gone"), EnsureOptions{Memory: st})
			if err != nil {
				t.Fatal(err)
			}
			if second[0].Action != ActionCreated || second[0].AgentID == first[0].AgentID {
				t.Fatalf("after the remembered agent was deleted: %s %s", second[0].Action, second[0].AgentID)
			}
			third, err := EnsureAgents(context.Background(), c, specs("Gone"), EnsureOptions{Memory: st})
			if err != nil {
				t.Fatal(err)
			}
			if n := countNames(srv)["Gone"]; n != 1 || srv.Stats().AgentsCreated != 2 {
				t.Errorf("%d agents named Gone, %d created in all; want 1 and 2", n, srv.Stats().AgentsCreated)
			}
			if third[0].Action != ActionRemembered || third[0].AgentID != second[0].AgentID {
				t.Errorf("the third run's plan: %s %s, want the agent created again", third[0].Action, third[0].AgentID)
			}
		})
	}
}

// failingEndpoint answers every call-endpoint request with a 500.
type failingEndpoint struct{ *apiclient.Client }

func (failingEndpoint) GetCallEndpoint(context.Context, string) (*apiclient.CallEndpoint, error) {
	return nil, &apiclient.Error{Op: "get call endpoint", StatusCode: http.StatusInternalServerError}
}

// TestEnsureAgentsCreatesNothingOnAnUnclearAnswerForARememberedAgent:
// the service answers 500 when asked for the remembered agent: nothing
// is created, and the error says to run again.
func TestEnsureAgentsCreatesNothingOnAnUnclearAnswerForARememberedAgent(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{ListHidesCreated: true})
	st := store.Files{Dir: t.TempDir()}
	if _, err := EnsureAgents(context.Background(), c, specs("Unclear"), EnsureOptions{Memory: st}); err != nil {
		t.Fatal(err)
	}
	_, err := EnsureAgents(context.Background(), failingEndpoint{c}, specs("Unclear"), EnsureOptions{Memory: st})
	if err == nil || !strings.Contains(err.Error(), "run again") {
		t.Errorf("EnsureAgents on a 500: %v, want an error saying to run again", err)
	}
	if srv.Stats().AgentsCreated != 1 {
		t.Errorf("%d agents created, want 1: none on the unclear answer", srv.Stats().AgentsCreated)
	}
}

// goneEndpoint answers every call-endpoint request with a 410 Gone.
type goneEndpoint struct{ *apiclient.Client }

func (goneEndpoint) GetCallEndpoint(context.Context, string) (*apiclient.CallEndpoint, error) {
	return nil, &apiclient.Error{Op: "get call endpoint", StatusCode: http.StatusGone}
}

// TestEnsureAgentsCreatesAgainARememberedAgentTheServiceSaysIsGone: a
// 410 for the remembered agent says it is gone, as a 404 does: one is
// created again, not a run stopped for good.
func TestEnsureAgentsCreatesAgainARememberedAgentTheServiceSaysIsGone(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{ListHidesCreated: true})
	st := store.Files{Dir: t.TempDir()}
	if _, err := EnsureAgents(context.Background(), c, specs("Gone"), EnsureOptions{Memory: st}); err != nil {
		t.Fatal(err)
	}
	plans, err := EnsureAgents(context.Background(), goneEndpoint{c}, specs("Gone"), EnsureOptions{Memory: st})
	if err != nil || plans[0].Action != ActionCreated || srv.Stats().AgentsCreated != 2 {
		t.Errorf("EnsureAgents on a 410: %v, %+v, %d created; want one created again", err, plans, srv.Stats().AgentsCreated)
	}
}

// TestEnsureAgentsPassesOverARememberedAgentRenamedOnTheService: the
// listing shows the remembered agent under another name (renamed on the
// service): it is not used for the name it no longer has; one is created.
func TestEnsureAgentsPassesOverARememberedAgentRenamedOnTheService(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	renamed := srv.AddAgent(sandbox.Agent{AgentName: "Sales (old)", GeneralPrompt: "x"})
	st := store.Files{Dir: t.TempDir()}
	if err := st.RememberAgent(context.Background(), store.CreatedAgent{Name: "Sales", ID: renamed.AgentID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var log logged
	plans, err := EnsureAgents(context.Background(), c, specs("Sales"), EnsureOptions{Memory: st, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Action != ActionCreated || plans[0].AgentID == renamed.AgentID || srv.Stats().AgentsCreated != 1 {
		t.Errorf("plan %s %s, %d created; want a new agent, not the renamed %s", plans[0].Action, plans[0].AgentID, srv.Stats().AgentsCreated, renamed.AgentID)
	}
	if !strings.Contains(strings.Join(log.lines, "\n"), `is named "Sales (old)" on the service now`) {
		t.Errorf("logged %q", log.lines)
	}
}
