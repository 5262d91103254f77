package campaign

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// AgentService is the part of the service that agent reconciliation needs.
// *apiclient.Client implements it.
type AgentService interface {
	ListAllAgents(ctx context.Context) ([]apiclient.Agent, error)
	CreateAgent(ctx context.Context, a apiclient.NewAgent) (*apiclient.Agent, error)
	// GetCallEndpoint asks for one agent by its id: whether the service
	// still has an agent callrun created that its list does not show.
	GetCallEndpoint(ctx context.Context, agentID string) (*apiclient.CallEndpoint, error)
}

// AgentMemory is the part of the campaign's store that remembers the
// agents callrun created ([store.Store] implements it): EnsureAgents
// records each agent it creates there, and looks a name its listings lack
// up there before it creates one.
type AgentMemory interface {
	RememberAgent(ctx context.Context, a store.CreatedAgent) error
	CreatedAgents(ctx context.Context) ([]store.CreatedAgent, error)
}

// Agent actions, as plan shows them.
const (
	ActionCreate    = "create"    // no agent of that name: run creates it
	ActionExists    = "exists"    // exactly one agent of that name
	ActionAmbiguous = "ambiguous" // two or more: callrun will not guess
	ActionUnknown   = "unknown"   // offline: the service was not asked
	ActionCreated   = "created"   // created by this ensure
	// ActionRemembered: the service's list lacks the name, but the agent
	// callrun created of that name before, which the store remembers,
	// is still on the service: it is used, its status unknown.
	ActionRemembered = "remembered"
)

// AgentPlan is what callrun knows and will do about one declared agent.
type AgentPlan struct {
	Spec    *AgentSpec
	Action  string
	AgentID string
	Status  string   // the service's status, e.g. active or pending
	Drift   []string // differences between the file and the service's agent
	IDs     []string // every id of that name, when ambiguous
}

// Ready reports whether the agent may be given calls: it exists and its
// status is not pending. A status the service contract does not name counts as ready
// (with a warning from [AgentPlan.Warning]).
func (p *AgentPlan) Ready() bool {
	return p.AgentID != "" && p.Status != "pending"
}

// Warning returns a sentence about a status the service contract does not name, or "".
func (p *AgentPlan) Warning() string {
	switch p.Status {
	case "", "active", "pending":
		return ""
	}
	return fmt.Sprintf("agent %q has status %q, which the service's spec does not name; callrun treats it as ready", p.Spec.Name, p.Status)
}

// PlanAgents lists every agent of the account once and matches each
// declared agent by exact name; it returns the listing too, for
// [UseRemembered]. It changes nothing.
func PlanAgents(ctx context.Context, svc AgentService, specs []AgentSpec) ([]AgentPlan, []apiclient.Agent, error) {
	existing, err := svc.ListAllAgents(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("listing agents: %w", err)
	}
	return matchAgents(specs, existing), existing, nil
}

// OfflineAgents is PlanAgents without the service: every action unknown.
func OfflineAgents(specs []AgentSpec) []AgentPlan {
	plans := make([]AgentPlan, len(specs))
	for i := range specs {
		plans[i] = AgentPlan{Spec: &specs[i], Action: ActionUnknown}
	}
	return plans
}

// matchAgents matches each declared agent to the listed agents of its
// exact name.
func matchAgents(specs []AgentSpec, existing []apiclient.Agent) []AgentPlan {
	byName := map[string][]apiclient.Agent{}
	for _, a := range existing {
		byName[a.Name] = append(byName[a.Name], a)
	}
	plans := make([]AgentPlan, len(specs))
	for i := range specs {
		s := &specs[i]
		found := byName[s.Name]
		p := AgentPlan{Spec: s}
		switch len(found) {
		case 0:
			p.Action = ActionCreate
		case 1:
			p.Action, p.AgentID, p.Status = ActionExists, found[0].AgentID, found[0].Status
			p.Drift = drift(s, found[0])
		default:
			p.Action = ActionAmbiguous
			for _, a := range found {
				p.IDs = append(p.IDs, a.AgentID)
			}
		}
		plans[i] = p
	}
	return plans
}

// drift lists how the service's agent differs from the file. The service
// has no update endpoint, so drift is reported, never "fixed".
func drift(s *AgentSpec, a apiclient.Agent) []string {
	var d []string
	if strings.TrimSpace(s.Prompt) != strings.TrimSpace(a.Prompt) {
		d = append(d, "its prompt differs from the file's")
	}
	wantURL, wantMethod := "", ""
	if s.Webhook != nil {
		wantURL, wantMethod = s.Webhook.URL, s.Webhook.Method
	}
	gotMethod := a.WebhookMethod
	if gotMethod == "" {
		gotMethod = http.MethodPost
	}
	switch {
	case wantURL != a.Webhook && strings.HasSuffix(wantURL, "/"+AgentPathSuffix) && strings.TrimSuffix(wantURL, "/"+AgentPathSuffix) == strings.TrimRight(a.Webhook, "/"):
		// Created by a callrun before agents' webhooks had a path of
		// their own: listen still takes it, as the account webhooks'.
		d = append(d, "its webhook is the outcomes URL without /"+AgentPathSuffix+" at its end (a callrun before this one created it), so listen cannot tell its deliveries from the account webhooks': one that names no event counts as reported, not as the call's end, and frees no call slot before pace.call_length; set its webhook in the service's dashboard to the outcomes URL with /"+AgentPathSuffix+" at its end")
	case wantURL != a.Webhook:
		// Redacted: an outcomes url's path holds its secret.
		d = append(d, fmt.Sprintf("its webhook is %q, the file says %q", apiclient.Redact(a.Webhook), apiclient.Redact(wantURL)))
	case wantURL != "" && wantMethod != gotMethod:
		d = append(d, fmt.Sprintf("its webhook method is %s, the file says %s", gotMethod, wantMethod))
	}
	return d
}

// DriftAdvice is what plan and run say after listing drift.
const DriftAdvice = "the service cannot update an agent: to use the file's version, rename the agent in the file (a new one is created), or change it in the service's dashboard"

// AmbiguousError reports an agent name that two or more agents share.
// Created is set when one of them is the agent callrun has just created:
// the list hid the other one (it changed while callrun read it) or
// another program created one at the same time.
type AmbiguousError struct {
	Name    string
	IDs     []string
	Created string
}

func (e *AmbiguousError) Error() string {
	if e.Created != "" {
		return fmt.Sprintf("agent name %q now matches %d agents on the service (ids %s): callrun created %s just now, as two listings in a row showed no agent of that name (the list changed while it was read, or another program created one at the same time); no call was started: delete all but one of them on the service (%s, just created, unless you prefer it), then run again",
			e.Name, len(e.IDs), strings.Join(e.IDs, ", "), e.Created, e.Created)
	}
	return fmt.Sprintf("agent name %q matches %d agents on the service (ids %s); callrun will not guess which to use: rename one of them on the service, or give this agent another name in the campaign file",
		e.Name, len(e.IDs), strings.Join(e.IDs, ", "))
}

// EnsureOptions tunes [EnsureAgents]. The zero value is sane.
type EnsureOptions struct {
	// Attempts bounds the create attempts per agent; 0 means 5.
	Attempts int
	// Pause is the first pause between attempts, doubled each time with
	// jitter; 0 means one second.
	Pause time.Duration
	// Logf, if set, is told about creates and retries.
	Logf func(format string, args ...any)
	// Warnf, if set, is warned of an agent used as remembered; nil: Logf.
	Warnf func(format string, args ...any)
	// Memory, if set, is the campaign's store: each agent created is
	// remembered there, and a name the listings lack is looked up there
	// before it is created.
	Memory AgentMemory
	// Run says which run remembers the agents it creates: its process
	// and host.
	Run string
}

// EnsureAgents makes every declared agent exist and returns their plans;
// `callrun run` calls it before any call. It refuses an ambiguous name.
//
// The agent list can change while it is read page by page, so that one
// listing may miss an agent that exists; creation is not idempotent on the
// service, so a second agent of the name would make every later run
// refuse it. EnsureAgents therefore creates an agent only when two full
// listings in a row agree that its name is absent; after a create whose
// outcome is unclear (a timeout, a 5xx, a dropped connection) it lists
// again, twice, before creating again; and after creating it lists once
// more and stops with an [AmbiguousError] if the name now matches two
// agents, before any call goes to either.
//
// A service's list may also never show an agent callrun created (it
// leaves out pending agents, or lags). So, with opts.Memory, each agent is
// remembered as soon as it is created, and a name the two listings lack
// whose agent callrun created before is not created again while the
// service still answers for that agent's id ([UseRemembered]).
func EnsureAgents(ctx context.Context, svc AgentService, specs []AgentSpec, opts EnsureOptions) ([]AgentPlan, error) {
	plans, _, err := PlanAgents(ctx, svc, specs)
	if err != nil {
		return nil, err
	}
	if err := refuseAmbiguous(plans); err != nil {
		return plans, err
	}
	if !AnyToCreate(plans) {
		return plans, nil
	}
	listed, err := relist(ctx, svc, plans)
	if err != nil {
		return plans, fmt.Errorf("listing agents again, to confirm which are missing: %w", err)
	}
	if err := refuseAmbiguous(plans); err != nil {
		return plans, err
	}
	if opts.Memory != nil && AnyToCreate(plans) {
		remembered, err := opts.Memory.CreatedAgents(ctx)
		if err != nil {
			return plans, fmt.Errorf("reading the agents callrun created before, to create none twice (no agent was created and no call was started; run again): %w", err)
		}
		warnf := opts.Warnf
		if warnf == nil {
			warnf = opts.Logf
		}
		if err := UseRemembered(ctx, svc, plans, remembered, listed, warnf); err != nil {
			return plans, err
		}
	}
	created := false
	for i := range plans {
		if plans[i].Action == ActionCreate {
			if err := createOnce(ctx, svc, &plans[i], opts); err != nil {
				return plans, err
			}
			created = true
		}
	}
	if created {
		if err := checkCreatedOnce(ctx, svc, plans); err != nil {
			return plans, err
		}
	}
	return plans, nil
}

// AnyToCreate reports whether a plan is still to create: EnsureAgents
// lists again and plan reads the agents callrun remembers only then.
func AnyToCreate(plans []AgentPlan) bool {
	for _, p := range plans {
		if p.Action == ActionCreate {
			return true
		}
	}
	return false
}

// refuseAmbiguous returns an [AmbiguousError] for the first ambiguous plan.
func refuseAmbiguous(plans []AgentPlan) error {
	for _, p := range plans {
		if p.Action == ActionAmbiguous {
			return &AmbiguousError{Name: p.Spec.Name, IDs: p.IDs}
		}
	}
	return nil
}

// relist lists the agents again and updates every plan still to create
// whose name the new listing shows: it exists after all (a shifting list
// hid it), or is ambiguous. It returns the listing.
func relist(ctx context.Context, svc AgentService, plans []AgentPlan) ([]apiclient.Agent, error) {
	existing, err := svc.ListAllAgents(ctx)
	if err != nil {
		return nil, err
	}
	var specs []AgentSpec
	var idx []int
	for i := range plans {
		if plans[i].Action == ActionCreate {
			specs, idx = append(specs, *plans[i].Spec), append(idx, i)
		}
	}
	for j, m := range matchAgents(specs, existing) {
		if m.Action != ActionCreate {
			m.Spec = plans[idx[j]].Spec
			plans[idx[j]] = m
		}
	}
	return existing, nil
}

// checkCreatedOnce lists the agents after creates and refuses a name that
// now matches an agent besides the one created.
func checkCreatedOnce(ctx context.Context, svc AgentService, plans []AgentPlan) error {
	existing, err := svc.ListAllAgents(ctx)
	if err != nil {
		return fmt.Errorf("checking that each agent created exists once: listing agents: %w; run again to check before any call", err)
	}
	for _, p := range plans {
		if p.Action != ActionCreated {
			continue
		}
		ids := []string{p.AgentID}
		for _, a := range existing {
			if a.Name == p.Spec.Name && a.AgentID != p.AgentID {
				ids = append(ids, a.AgentID)
			}
		}
		if len(ids) > 1 {
			return &AmbiguousError{Name: p.Spec.Name, IDs: ids, Created: p.AgentID}
		}
	}
	return nil
}

// UseRemembered gives each plan still to create the agent of its name
// that callrun created last (of remembered, the store's record, oldest
// first) when the service still answers for that agent's id: the
// service's list does not show it, and creating another would leave two
// of the name. When the service says the agent is not there (404) or gone
// (410), or listed (the listing read last) shows it under another name
// (renamed on the service), the plan stays to create. Any other answer is
// an error: nothing must be created on an answer that does not say the
// agent is gone. EnsureAgents and plan call it after their listings; logf, if set,
// is told of each remembered agent used or passed over.
func UseRemembered(ctx context.Context, svc AgentService, plans []AgentPlan, remembered []store.CreatedAgent, listed []apiclient.Agent, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	last := map[string]store.CreatedAgent{}
	for _, a := range remembered {
		last[a.Name] = a
	}
	names := map[string]string{} // listed agent id -> its name
	for _, a := range listed {
		names[a.AgentID] = a.Name
	}
	for i := range plans {
		p := &plans[i]
		a, ok := last[p.Spec.Name]
		if p.Action != ActionCreate || !ok {
			continue
		}
		on := a.At.Format("2 Jan 2006 15:04 MST")
		if name, ok := names[a.ID]; ok {
			logf("agent %q (id %s), created by callrun on %s, is named %q on the service now: a new one is created", p.Spec.Name, a.ID, on, name)
			continue
		}
		_, err := svc.GetCallEndpoint(ctx, a.ID)
		switch {
		case err == nil:
			p.Action, p.AgentID, p.Status = ActionRemembered, a.ID, ""
			logf("the service's list does not show agent %q (id %s), created by callrun on %s; it is used as remembered, its status unknown (while it is pending the service refuses its calls)", p.Spec.Name, a.ID, on)
		case apiclient.StatusCode(err) == http.StatusNotFound, apiclient.StatusCode(err) == http.StatusGone:
			logf("agent %q (id %s), created by callrun on %s, is no longer on the service: it is created again", p.Spec.Name, a.ID, on)
		default:
			return fmt.Errorf("agent %q is not on the service's list, and asking the service for agent %s, which callrun created of that name on %s, failed: %w; no agent was created and no call was started: run again (if the agent is gone for good, or belongs to another account or service, take its line out of agents-created.jsonl in the campaign's state directory, or its row out of the table callrun_agents_created, and a new one is created)", p.Spec.Name, a.ID, on, err)
		}
	}
	return nil
}

// remember records p's agent, just created, in opts.Memory, even as ctx
// ends: the agent exists.
func remember(ctx context.Context, p *AgentPlan, opts EnsureOptions) error {
	if opts.Memory == nil {
		return nil
	}
	a := store.CreatedAgent{Name: p.Spec.Name, ID: p.AgentID, At: time.Now().UTC(), Run: opts.Run}
	if err := opts.Memory.RememberAgent(context.WithoutCancel(ctx), a); err != nil {
		return fmt.Errorf("agent %q was created (id %s), but callrun could not remember it, and a run whose listing does not show it would create another; no call was started: %w", p.Spec.Name, p.AgentID, err)
	}
	return nil
}

// createOnce creates p's agent, retrying a create whose outcome is unclear
// only after two listings in a row still lack the name.
func createOnce(ctx context.Context, svc AgentService, p *AgentPlan, opts EnsureOptions) error {
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	pause := opts.Pause
	if pause <= 0 {
		pause = time.Second
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	na := apiclient.NewAgent{Name: p.Spec.Name, Prompt: p.Spec.Prompt}
	if w := p.Spec.Webhook; w != nil {
		na.Webhook, na.WebhookMethod = w.URL, w.Method
	}
	for attempt := 1; ; attempt++ {
		created, err := svc.CreateAgent(ctx, na)
		if err == nil {
			p.Action, p.AgentID, p.Status = ActionCreated, created.AgentID, created.Status
			if err := remember(ctx, p, opts); err != nil {
				return err
			}
			logf("created agent %q (id %s, status %s)", p.Spec.Name, created.AgentID, created.Status)
			return nil
		}
		if s := apiclient.StatusCode(err); s >= 400 && s < 500 && s != http.StatusTooManyRequests {
			return fmt.Errorf("creating agent %q: the service refused it: %w", p.Spec.Name, err)
		}
		if attempt >= attempts {
			return fmt.Errorf("creating agent %q: gave up after %d attempts: %w", p.Spec.Name, attempt, err)
		}
		wait := max(apiclient.RetryAfter(err), jitter(pause<<(attempt-1)))
		logf("creating agent %q failed (%v); checking the list before trying again in %s", p.Spec.Name, err, wait.Round(time.Millisecond))
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		// The create may have happened: look, twice, before creating again.
		one := []AgentPlan{*p}
		for range 2 {
			if _, lerr := relist(ctx, svc, one); lerr != nil {
				return fmt.Errorf("creating agent %q: the create's outcome is unknown and listing agents failed (%v); run again to check before anything is created: %w", p.Spec.Name, lerr, err)
			}
			if err := refuseAmbiguous(one); err != nil {
				return err
			}
			if one[0].Action == ActionExists {
				p.Action, p.AgentID, p.Status, p.Drift = ActionCreated, one[0].AgentID, one[0].Status, nil
				if err := remember(ctx, p, opts); err != nil {
					return err
				}
				logf("agent %q was created after all (id %s)", p.Spec.Name, p.AgentID)
				return nil
			}
		}
	}
}

// WaitReady polls the agent list, with backoff, until no agent in plans is
// pending, or until an agent's ReadyTimeout passes: then it fails with an
// error naming the agent. An agent used as remembered (ActionRemembered)
// is not waited for: its status is unknown, and the list, the only place
// the service says it, does not show it.
func WaitReady(ctx context.Context, svc AgentService, plans []AgentPlan, pause time.Duration, logf func(string, ...any)) error {
	if pause <= 0 {
		pause = 2 * time.Second
	}
	start := time.Now()
	missed := map[string]int{} // agent id -> listings in a row that lacked it
	for attempt := 0; ; attempt++ {
		var waiting []*AgentPlan
		for i := range plans {
			if plans[i].AgentID != "" && plans[i].Status == "pending" {
				waiting = append(waiting, &plans[i])
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		for _, p := range waiting {
			if time.Since(start) > p.Spec.ReadyTimeout {
				return fmt.Errorf("agent %q (id %s) is still pending after %s; raise agents[].ready_timeout or check the agent on the service", p.Spec.Name, p.AgentID, p.Spec.ReadyTimeout)
			}
		}
		if logf != nil && attempt == 0 {
			logf("waiting for %d pending agent(s) to become active", len(waiting))
		}
		if err := sleep(ctx, jitter(min(pause<<min(attempt, 5), time.Minute))); err != nil {
			return err
		}
		existing, err := svc.ListAllAgents(ctx)
		if err != nil {
			return fmt.Errorf("checking whether agents are active: %w", err)
		}
		byID := map[string]apiclient.Agent{}
		for _, a := range existing {
			byID[a.AgentID] = a
		}
		for _, p := range waiting {
			a, ok := byID[p.AgentID]
			if !ok {
				// One listing can miss an agent that exists (the list
				// shifted while it was read); two in a row hardly can.
				if missed[p.AgentID]++; missed[p.AgentID] >= 2 {
					return fmt.Errorf("agent %q (id %s) is no longer on the service's list (two listings in a row lack it)", p.Spec.Name, p.AgentID)
				}
				continue
			}
			missed[p.AgentID] = 0
			p.Status = a.Status
		}
	}
}

// jitter returns d plus or minus up to a fifth of it.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - d/5 + time.Duration(rand.Int64N(int64(d)*2/5+1))
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
