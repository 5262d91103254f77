package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
)

// sandboxClient returns a sandbox and a client logged in to it.
func sandboxClient(t *testing.T, opts sandbox.Options) (*sandbox.Server, *apiclient.Client) {
	t.Helper()
	srv := sandbox.NewServer(opts)
	t.Cleanup(srv.Close)
	o := &apiclient.OAuth{BaseURL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret, RedirectURI: "http://127.0.0.1/cb"}
	tokens := apiclient.NewFileTokenSource(o, &apiclient.TokenFile{Path: filepath.Join(t.TempDir(), "tok.json")})
	if _, err := tokens.Login(context.Background(), sandbox.DefaultCode); err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(srv.URL, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func specs(names ...string) []AgentSpec {
	out := make([]AgentSpec, len(names))
	for i, n := range names {
		out[i] = AgentSpec{Name: n, Prompt: "prompt of " + n, ReadyTimeout: time.Minute,
			Webhook: &Webhook{URL: "https://hooks.example.com/" + n, Method: "POST"}}
	}
	return out
}

// countNames returns how many agents on the sandbox carry each name.
func countNames(srv *sandbox.Server) map[string]int {
	n := map[string]int{}
	for _, a := range srv.Agents() {
		n[a.AgentName]++
	}
	return n
}

func TestPlanAgentsMatchesByExactName(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentName: "Same", Status: "active", GeneralPrompt: "prompt of Same", WebhookEndpoint: "https://hooks.example.com/Same", WebhookEndpointMethod: "POST"})
	srv.AddAgent(sandbox.Agent{AgentName: "Drifted", Status: "pending", GeneralPrompt: "old prompt", WebhookEndpoint: "https://hooks.example.com/Drifted", WebhookEndpointMethod: "GET"})
	a1 := srv.AddAgent(sandbox.Agent{AgentName: "Twice", Status: "active", GeneralPrompt: "x"})
	a2 := srv.AddAgent(sandbox.Agent{AgentName: "Twice", Status: "active", GeneralPrompt: "x"})
	srv.AddAgent(sandbox.Agent{AgentName: "new", Status: "active", GeneralPrompt: "x"}) // case differs
	for i := range 120 {                                                                // push the declared names past page 1
		srv.AddAgent(sandbox.Agent{AgentName: "filler " + string(rune('a'+i%26)), Status: "active", GeneralPrompt: "x"})
	}
	srv.AddAgent(sandbox.Agent{AgentName: "Late", Status: "training", GeneralPrompt: "prompt of Late", WebhookEndpoint: "https://hooks.example.com/Late", WebhookEndpointMethod: "POST"})

	plans, err := PlanAgents(context.Background(), c, specs("Same", "Drifted", "Twice", "New", "Late"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ActionExists, ActionExists, ActionAmbiguous, ActionCreate, ActionExists}
	for i, p := range plans {
		if p.Action != want[i] {
			t.Errorf("%s: action %s, want %s", p.Spec.Name, p.Action, want[i])
		}
	}
	if len(plans[0].Drift) != 0 {
		t.Errorf("Same: drift %q", plans[0].Drift)
	}
	if d := strings.Join(plans[1].Drift, "; "); !strings.Contains(d, "prompt differs") || !strings.Contains(d, "webhook method is GET, the file says POST") {
		t.Errorf("Drifted: drift %q", d)
	}
	if plans[1].Ready() || plans[1].Status != "pending" {
		t.Errorf("a pending agent is not ready: %+v", plans[1])
	}
	if ids := plans[2].IDs; len(ids) != 2 || ids[0] != a1.AgentID || ids[1] != a2.AgentID {
		t.Errorf("Twice: ids %v", ids)
	}
	if !plans[4].Ready() || !strings.Contains(plans[4].Warning(), `status "training"`) {
		t.Errorf("Late: ready %v, warning %q", plans[4].Ready(), plans[4].Warning())
	}
	if n := srv.Stats().ListCalls; n != 2 {
		t.Errorf("%d list requests for 126 agents, want 2 (one pass)", n)
	}
	if srv.Stats().AgentsCreated != 0 {
		t.Error("plan created an agent")
	}
}

func TestEnsureAgentsCreatesOnlyMissingAndIsIdempotent(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentName: "A", Status: "active", GeneralPrompt: "prompt of A", WebhookEndpoint: "https://hooks.example.com/A"})
	sp := specs("A", "B", "C")
	plans, err := EnsureAgents(context.Background(), c, sp, EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Action != ActionExists || plans[1].Action != ActionCreated || plans[2].Action != ActionCreated {
		t.Errorf("actions: %s %s %s", plans[0].Action, plans[1].Action, plans[2].Action)
	}
	var b sandbox.Agent
	for _, a := range srv.Agents() {
		if a.AgentName == "B" {
			b = a
		}
	}
	if b.GeneralPrompt != "prompt of B" || b.WebhookEndpoint != "https://hooks.example.com/B" || b.WebhookEndpointMethod != "POST" || b.AgentID != plans[1].AgentID {
		t.Errorf("created B = %+v", b)
	}
	if _, err := EnsureAgents(context.Background(), c, sp, EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, n := range countNames(srv) {
		if n != 1 {
			t.Errorf("%d agents named %q after two ensures", n, name)
		}
	}
}

func TestEnsureAgentsRefusesAmbiguous(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentName: "Dup", Status: "active", GeneralPrompt: "x"})
	srv.AddAgent(sandbox.Agent{AgentName: "Dup", Status: "active", GeneralPrompt: "x"})
	_, err := EnsureAgents(context.Background(), c, specs("New", "Dup"), EnsureOptions{})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Name != "Dup" || len(amb.IDs) != 2 {
		t.Fatalf("err = %v", err)
	}
}

// lossyCreates wraps a real client. Its first `lose` creates reach the
// sandbox (the agent is created) but the answer is lost, as with a timeout
// or a connection dropped after the request was written. Its next `fail`
// creates fail without reaching the service.
type lossyCreates struct {
	*apiclient.Client
	lose, fail int32
	creates    atomic.Int32
}

func (l *lossyCreates) CreateAgent(ctx context.Context, a apiclient.NewAgent) (*apiclient.Agent, error) {
	n := l.creates.Add(1)
	if n <= l.fail {
		return nil, errors.New("dial tcp: connection refused")
	}
	created, err := l.Client.CreateAgent(ctx, a)
	if err == nil && n <= l.fail+l.lose {
		return nil, &apiclient.Error{Op: "create agent", StatusCode: 504}
	}
	return created, err
}

func TestEnsureAgentsNeverCreatesANameTwice(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	svc := &lossyCreates{Client: c, lose: 1}
	plans, err := EnsureAgents(context.Background(), svc, specs("Lost"), EnsureOptions{Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := countNames(srv)["Lost"]; n != 1 {
		t.Fatalf("%d agents named Lost, want 1", n)
	}
	if svc.creates.Load() != 1 {
		t.Errorf("%d create requests; the relist should have found the agent", svc.creates.Load())
	}
	if plans[0].AgentID != srv.Agents()[0].AgentID {
		t.Errorf("plan holds id %q", plans[0].AgentID)
	}
}

func TestEnsureAgentsRetriesACreateThatNeverHappened(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	svc := &lossyCreates{Client: c, fail: 2}
	if _, err := EnsureAgents(context.Background(), svc, specs("Retried"), EnsureOptions{Pause: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if n := countNames(srv)["Retried"]; n != 1 {
		t.Fatalf("%d agents named Retried, want 1", n)
	}
	if svc.creates.Load() != 3 {
		t.Errorf("%d create requests, want 3", svc.creates.Load())
	}
	if srv.Stats().ListCalls != 3 {
		t.Errorf("%d lists, want 3: one plan and one before each retry", srv.Stats().ListCalls)
	}
}

func TestEnsureAgentsGivesUpOnRefusal(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	sp := specs("Bad")
	sp[0].Webhook.Method = "PUT" // the sandbox answers 422
	_, err := EnsureAgents(context.Background(), c, sp, EnsureOptions{Pause: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), `creating agent "Bad": the service refused it`) || apiclient.StatusCode(err) != 422 {
		t.Fatalf("err = %v", err)
	}
	if srv.Stats().ListCalls != 1 {
		t.Errorf("a refused create was retried")
	}
}

// activating flips an agent to active on the sandbox after a few lists.
type activating struct {
	*apiclient.Client
	srv   *sandbox.Server
	after int32
	lists atomic.Int32
}

func (a *activating) ListAllAgents(ctx context.Context) ([]apiclient.Agent, error) {
	if a.lists.Add(1) == a.after {
		for _, ag := range a.srv.Agents() {
			a.srv.SetAgentStatus(ag.AgentID, "active")
		}
	}
	return a.Client.ListAllAgents(ctx)
}

func TestWaitReady(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentName: "P", Status: "pending", GeneralPrompt: "prompt of P"})
	svc := &activating{Client: c, srv: srv, after: 3}
	plans, err := PlanAgents(context.Background(), svc, specs("P"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WaitReady(context.Background(), svc, plans, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if !plans[0].Ready() || svc.lists.Load() != 3 {
		t.Errorf("ready %v after %d lists", plans[0].Ready(), svc.lists.Load())
	}
}

func TestWaitReadyTimesOutNamingTheAgent(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentName: "Stuck", Status: "pending", GeneralPrompt: "x"})
	sp := specs("Stuck")
	sp[0].ReadyTimeout = 20 * time.Millisecond
	plans, err := PlanAgents(context.Background(), c, sp)
	if err != nil {
		t.Fatal(err)
	}
	err = WaitReady(context.Background(), c, plans, time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), `agent "Stuck"`) || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("err = %v", err)
	}
}
