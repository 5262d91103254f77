package campaign

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// sandboxClient returns a sandbox and a client logged in to it.
func sandboxClient(t *testing.T, opts sandbox.Options) (*sandbox.Server, *apiclient.Client) {
	t.Helper()
	srv := sandbox.NewServer(opts)
	t.Cleanup(srv.Close)
	o := &apiclient.OAuth{BaseURL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret, RedirectURI: "http://127.0.0.1/cb"}
	tokens := apiclient.NewStoredTokenSource(o, TokenStore(&store.TokenFile{Path: filepath.Join(t.TempDir(), "tok.json")}))
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

	plans, _, err := PlanAgents(context.Background(), c, specs("Same", "Drifted", "Twice", "New", "Late"))
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
	if srv.Stats().ListCalls != 7 {
		t.Errorf("%d lists, want 7: two before the first create, two before each of the two retries, one after", srv.Stats().ListCalls)
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
	if srv.Stats().ListCalls != 2 {
		t.Errorf("%d lists, want 2 (plan and confirm): a refused create was retried", srv.Stats().ListCalls)
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
	plans, _, err := PlanAgents(context.Background(), svc, specs("P"))
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
	plans, _, err := PlanAgents(context.Background(), c, sp)
	if err != nil {
		t.Fatal(err)
	}
	err = WaitReady(context.Background(), c, plans, time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), `agent "Stuck"`) || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("err = %v", err)
	}
}

// seedAround adds older agents, then the campaign's agent Alpha (with the
// prompt dtCampaign gives it), then newer ones, and returns Alpha and the
// fillers, oldest first.
func seedAround(srv *sandbox.Server, older, newer int) (sandbox.Agent, []sandbox.Agent) {
	var fillers []sandbox.Agent
	add := func(n int) {
		for range n {
			fillers = append(fillers, srv.AddAgent(sandbox.Agent{AgentName: fmt.Sprintf("filler %03d", len(fillers)), GeneralPrompt: "x"}))
		}
	}
	add(older)
	alpha := srv.AddAgent(sandbox.Agent{AgentName: "Alpha", GeneralPrompt: "Say hello."})
	add(newer)
	return alpha, fillers
}

// TestShiftingListNeverMakesASecondAgent is the two cases: the
// agent list changes between page 1 and page 2 of each listing while
// callrun reads it. Oldest first with an agent removed, Alpha (first on
// page 2) moves to page 1 unseen; newest first with an agent added, Alpha
// (last on page 1) is shown again on page 2. Neither may create a second
// Alpha or refuse Alpha as ambiguous, and every call goes to Alpha.
func TestShiftingListNeverMakesASecondAgent(t *testing.T) {
	for _, tc := range []struct {
		name         string
		newest       bool
		older, newer int
		shift        func(srv *sandbox.Server, fillers []sandbox.Agent, listing int)
		wantListings int // 2: the first listing missed Alpha; 1: it held Alpha (once)
	}{
		{"oldest first, one removed between pages", false, 100, 0,
			func(srv *sandbox.Server, fillers []sandbox.Agent, listing int) {
				srv.RemoveAgent(fillers[listing].AgentID)
			},
			2},
		{"newest first, one added between pages", true, 1, 99,
			func(srv *sandbox.Server, _ []sandbox.Agent, listing int) {
				srv.AddAgent(sandbox.Agent{AgentName: fmt.Sprintf("added %d", listing), GeneralPrompt: "x"})
			},
			1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := dtSandbox(t, sandbox.Options{NewestFirst: tc.newest})
			alpha, fillers := seedAround(srv, tc.older, tc.newer)
			var mu sync.Mutex
			listing := 0
			srv.OnListPage(func(page int) {
				if page != 1 {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				tc.shift(srv, fillers, listing) // every listing, between its page 1 and page 2
				listing++
			})
			e := dtPrepare(t, srv, client, t.TempDir(), dtCampaign(500, 4, ""), map[string]string{"leads.csv": dtSheet(20)})
			if e.agents[0].AgentID != alpha.AgentID || e.agents[0].Action != ActionExists {
				t.Fatalf("agent plan %+v, want Alpha %s found", e.agents[0], alpha.AgentID)
			}
			mu.Lock()
			if listing != tc.wantListings {
				t.Errorf("%d listings before the run, want %d", listing, tc.wantListings)
			}
			mu.Unlock()
			res := e.mustRun(nil)
			if res.Sent != 20 {
				t.Errorf("%d sent, want 20", res.Sent)
			}
			if n := countNames(srv)["Alpha"]; n != 1 || srv.Stats().AgentsCreated != 0 {
				t.Errorf("%d agents named Alpha, %d created; want the one seeded", n, srv.Stats().AgentsCreated)
			}
			placed := map[string]int{}
			for _, c := range srv.Calls() {
				if c.AgentID != alpha.AgentID {
					t.Errorf("ledger #%d went to agent %s, not Alpha %s", c.Seq, c.AgentID, alpha.AgentID)
				}
				if c.Placed {
					placed[c.Form.Get("phone_number")]++
				}
			}
			for i := range 20 {
				if n := placed[dtPhone(i)]; n != 1 {
					t.Errorf("%s placed %d times", dtPhone(i), n)
				}
			}
		})
	}
}

// TestEnsureAgentsStopsWhenTheNameNowMatchesTwo: the list keeps hiding
// Alpha (newest first, an agent removed between page 1 and page 2 of
// every listing and one added after page 2), so two listings in a row
// agree it is absent and callrun creates it; the listing after the create
// shows both, and EnsureAgents stops, naming the name, both ids and what
// to do, before any call.
func TestEnsureAgentsStopsWhenTheNameNowMatchesTwo(t *testing.T) {
	srv, client := dtSandbox(t, sandbox.Options{NewestFirst: true})
	alpha, fillers := seedAround(srv, 49, 100) // Alpha first on page 2
	var mu sync.Mutex
	newest := len(fillers) - 1
	srv.OnListPage(func(page int) {
		mu.Lock()
		defer mu.Unlock()
		switch page {
		case 1: // someone deletes a newer agent: Alpha moves up to page 1, unseen
			srv.RemoveAgent(fillers[newest].AgentID)
			newest--
		case 2: // and adds one: Alpha is first on page 2 again
			fillers = append(fillers, srv.AddAgent(sandbox.Agent{AgentName: "added", GeneralPrompt: "x"}))
			newest = len(fillers) - 1
		}
	})
	plans, err := EnsureAgents(context.Background(), client, specs("Alpha"), EnsureOptions{Pause: time.Millisecond})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Created == "" || amb.Created != plans[0].AgentID {
		t.Fatalf("err = %v, want an AmbiguousError naming the agent just created", err)
	}
	msg := err.Error()
	for _, want := range []string{`"Alpha"`, alpha.AgentID, amb.Created, "created " + amb.Created + " just now", "no call was started", "delete"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if n := countNames(srv)["Alpha"]; n != 2 || srv.Stats().AgentsCreated != 1 {
		t.Errorf("%d agents named Alpha, %d created; want the seeded one and one created", n, srv.Stats().AgentsCreated)
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("calls reached the service: %v", srv.Calls())
	}
}

// TestEnsureAgentsCreatesOnlyOnTwoListings: a name is created only after
// a second listing, and a listing after the create checks it.
func TestEnsureAgentsCreatesOnlyOnTwoListings(t *testing.T) {
	srv, client := dtSandbox(t, sandbox.Options{})
	var mu sync.Mutex
	lists := 0
	srv.OnListPage(func(int) {
		mu.Lock()
		defer mu.Unlock()
		lists++
		if lists == 1 { // another program creates it while the first listing is read
			srv.AddAgent(sandbox.Agent{AgentName: "Late", GeneralPrompt: "prompt of Late"})
		}
	})
	plans, err := EnsureAgents(context.Background(), client, specs("Fresh", "Late"), EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Action != ActionCreated || plans[1].Action != ActionExists {
		t.Errorf("actions %s, %s; want created, exists", plans[0].Action, plans[1].Action)
	}
	if st := srv.Stats(); st.AgentsCreated != 1 || st.ListCalls != 3 {
		t.Errorf("%d created, %d lists; want 1 created after 2 lists, then 1 list", st.AgentsCreated, st.ListCalls)
	}
	for name, n := range countNames(srv) {
		if n != 1 {
			t.Errorf("%d agents named %q", n, name)
		}
	}
}

// TestWaitReadyOutlastsOneListingThatMissesTheAgent: while callrun waits
// for a pending agent, one listing misses it (an agent removed between
// page 1 and page 2 moved it to page 1 unseen). That is no reason to stop;
// two listings in a row without it are.
func TestWaitReadyOutlastsOneListingThatMissesTheAgent(t *testing.T) {
	srv, c := sandboxClient(t, sandbox.Options{})
	_, fillers := seedAround(srv, 100, 0)
	for _, a := range srv.Agents() {
		if a.AgentName == "Alpha" {
			srv.SetAgentStatus(a.AgentID, "pending") // first on page 2
		}
	}
	plans, _, err := PlanAgents(context.Background(), c, specs("Alpha"))
	if err != nil || plans[0].Status != "pending" {
		t.Fatalf("plan %+v, %v", plans, err)
	}
	var mu sync.Mutex
	shifted := false
	srv.OnListPage(func(page int) {
		mu.Lock()
		defer mu.Unlock()
		if page == 1 && !shifted {
			shifted = true
			srv.RemoveAgent(fillers[0].AgentID)
		}
	})
	svc := &activating{Client: c, srv: srv, after: 2}
	if err := WaitReady(context.Background(), svc, plans, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if !plans[0].Ready() || svc.lists.Load() != 2 {
		t.Errorf("ready %v after %d listings, want ready after 2", plans[0].Ready(), svc.lists.Load())
	}

	// Gone for good: two listings in a row lack it.
	srv.SetAgentStatus(plans[0].AgentID, "pending")
	plans[0].Status = "pending"
	srv.RemoveAgent(plans[0].AgentID)
	svc = &activating{Client: c, srv: srv}
	err = WaitReady(context.Background(), svc, plans, time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "no longer on the service's list") || svc.lists.Load() != 2 {
		t.Fatalf("err = %v after %d listings", err, svc.lists.Load())
	}
}
