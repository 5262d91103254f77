package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// ptSheet is a sheet of the contacts dtPhone(from) to dtPhone(to-1).
func ptSheet(from, to int) string {
	var b strings.Builder
	b.WriteString("Phone,First Name\n")
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%s,Name %d\n", dtPhone(i), i)
	}
	return b.String()
}

// ptStore starts a contact pressure test on store kind (one of
// dtStores): a clock at Monday 2 November 2026, 09:00 UTC, an
// environment whose sandbox the campaigns share, and where their call
// starts are kept: home (files), or the database at url (PostgreSQL; ""
// for files).
func ptStore(t *testing.T, kind string) (clock *dtClock, base *dtEnv, home, url string) {
	t.Helper()
	clock = &dtClock{now: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	base = newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(1)})
	home = t.TempDir()
	if kind == "postgres" {
		url = pgtest.URL(t)
	}
	return clock, base, home, url
}

// ptEnv prepares campaign name (shard index of count) on the shared
// sandbox srv, calling the contacts of sheet, with the contact
// pressure of the call starts in home (files) or in the database at
// pgURL, read over clock.
func ptEnv(t *testing.T, srv *sandbox.Server, e0 *dtEnv, name string, index, count int, sheet, home, pgURL string, clock func() time.Time) *dtEnv {
	t.Helper()
	yaml := strings.Replace(dtCampaign(1000, 4, ""), "name: dispatch-test", "name: "+name, 1)
	e := dtPrepare(t, srv, e0.client, t.TempDir(), yaml, map[string]string{"leads.csv": sheet})
	if count > 1 {
		e.f.SetShard(Shard{Index: index, Count: count})
		dir := store.ShardDir(e.f.Path(e.f.StateDir), index, count)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		e.journal = filepath.Join(dir, store.JournalFile)
	}
	var starts store.CallStarts = store.OpenCallStartsFile(home)
	if pgURL != "" {
		p, err := store.OpenPostgres(context.Background(), pgURL, name, index, max(count, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		e.pg, e.pgURL = p, pgURL
		starts, _ = p.CallStarts()
	}
	e.pressure = &store.Pressure{Limits: store.DefaultPressure, Starts: starts, Campaign: name, Now: clock}
	return e
}

// TestRunPressureThreeCampaignsInTurn: Monday's campaign calls ten
// numbers; Tuesday's, three hours later, and Wednesday's, 23 hours after
// Monday's, overlap five of them: they call their own five and hold the
// shared five back, pending, with the hour Monday's calls are a day old.
// At that hour Tuesday's run calls them; Wednesday's, run again, holds
// them back for a day from then. The sandbox's ledger: no number placed
// twice within 24 hours.
func TestRunPressureThreeCampaignsInTurn(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) {
			clock, base, home, url := ptStore(t, kind)
			mon := ptEnv(t, base.srv, base, "monday", 0, 1, ptSheet(0, 10), home, url, clock.Now)
			tue := ptEnv(t, base.srv, base, "tuesday", 0, 1, ptSheet(5, 15), home, url, clock.Now)
			wed := ptEnv(t, base.srv, base, "wednesday", 0, 1, ptSheet(5, 10)+strings.TrimPrefix(ptSheet(15, 20), "Phone,First Name\n"), home, url, clock.Now)
			run := func(e *dtEnv) *RunResult {
				return e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			}
			t0 := clock.Now()
			if res := run(mon); res.Sent != 10 || res.Held != 0 {
				t.Fatalf("monday: %+v", res)
			}
			day := t0.Add(24 * time.Hour)
			for _, step := range []struct {
				e     *dtEnv
				after time.Duration
			}{{tue, 3 * time.Hour}, {wed, 23 * time.Hour}} {
				clock.mu.Lock()
				clock.now = t0.Add(step.after)
				clock.mu.Unlock()
				res := run(step.e)
				if res.Sent != 5 || res.Held != 5 || res.Pending != 5 || !near(res.HeldUntil, day) {
					t.Fatalf("%s, %s after monday: %+v; want 5 sent, 5 held until %s", step.e.f.Name, step.after, res, day)
				}
				if _, ok := step.e.entry(dtPhone(5)); ok {
					t.Errorf("%s: a held contact has a journal entry", step.e.f.Name)
				}
				// The report says why each held contact is pending, and when
				// it may be called.
				starts, err := step.e.pressure.Starts.Counted(context.Background(), clock.Now().Add(-14*24*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				step.e.sup.SetPressure(&PlanPressure{Limits: store.DefaultPressure, Starts: starts}, clock.Now())
				dir := t.TempDir()
				if err := WriteReport(context.Background(), step.e.f, step.e.state(), step.e.sup, nil, dir, &report.Summary{Campaign: step.e.f.Name}); err != nil {
					t.Fatal(err)
				}
				rows := dtReportRows(t, filepath.Join(dir, ReportCSV))
				if r := rows[dtPhone(5)]; r["status"] != "pending" || !strings.Contains(r["reason"], "held back") || !strings.Contains(r["reason"], "may be called again from 2026-11-03T09:00:00Z") {
					t.Errorf("%s: report row of a held contact: %v", step.e.f.Name, r)
				}
				sent := 0
				for _, r := range rows {
					if r["status"] == "sent" {
						sent++
					}
				}
				if sent != 5 {
					t.Errorf("%s: %d report rows sent, want 5", step.e.f.Name, sent)
				}
			}
			clock.mu.Lock()
			clock.now = day.Add(time.Second) // monday's calls went out over a few (fake) milliseconds
			clock.mu.Unlock()
			if res := run(tue); res.Sent != 5 || res.Held != 0 {
				t.Fatalf("tuesday again when monday's calls are a day old: %+v; want the 5 held called", res)
			}
			res := run(wed)
			if next := day.Add(25 * time.Hour); res.Sent != 0 || res.Held != 5 || !near(res.HeldUntil, next.Add(-time.Hour+time.Second)) {
				t.Fatalf("wednesday again: %+v; want the 5 held until %s", res, next.Add(-time.Hour+time.Second))
			}
			placed := map[string][]time.Time{}
			for _, c := range base.srv.Placed() {
				p := c.Form.Get("phone_number")
				placed[p] = append(placed[p], c.ReceivedAt)
			}
			for p, at := range placed {
				for i := 1; i < len(at); i++ {
					if at[i].Sub(at[i-1]) < 24*time.Hour {
						t.Errorf("%s placed at %v: twice within 24 hours", p, at)
					}
				}
			}
			if len(placed[dtPhone(5)]) != 2 || len(placed[dtPhone(12)]) != 1 || len(placed[dtPhone(0)]) != 1 {
				t.Errorf("ledger: %v", placed)
			}
		})
	}
}

// near reports whether at is want or up to a second after it: the fake
// clock moves on by the rate limiter's waits while a run calls.
func near(at, want time.Time) bool {
	return !at.Before(want) && at.Sub(want) < time.Second
}

// TestRunPressureCampaignsAtOnce: two campaigns whose sheets share 30
// numbers run at once, each in two shards (four runs, four workers each,
// on one store): the sandbox's ledger shows every number placed exactly
// once, and the 30 shared numbers are held by whichever run came second.
func TestRunPressureCampaignsAtOnce(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) {
			clock, base, home, url := ptStore(t, kind)
			var envs []*dtEnv
			for _, c := range []struct {
				name     string
				from, to int
			}{{"spring", 0, 60}, {"summer", 30, 90}} {
				for shard := range 2 {
					envs = append(envs, ptEnv(t, base.srv, base, c.name, shard, 2, ptSheet(c.from, c.to), home, url, clock.Now))
				}
			}
			results := make([]*RunResult, len(envs))
			var wg sync.WaitGroup
			for i, e := range envs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.run(context.Background(), func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
					if err != nil {
						t.Errorf("%s shard %d: %v", e.f.Name, e.f.Shard.Index, err)
					}
					results[i] = res
				}()
			}
			wg.Wait()
			sent, held := 0, 0
			for _, r := range results {
				if r != nil {
					sent += r.Sent
					held += r.Held
				}
			}
			placed := dtPlaced(base.srv)
			if len(placed) != 90 || sent != 90 || held != 30 {
				t.Errorf("%d numbers placed, %d sent, %d held; want 90, 90, 30", len(placed), sent, held)
			}
			for p, n := range placed {
				if n != 1 {
					t.Errorf("%s placed %d times at one instant", p, n)
				}
			}
		})
	}
}

// TestPlanCountsHeld: an online plan counts in held, not to_call, a
// contact whose number the store counts as called within the day, and a
// repeat of a number the campaign calls already (dedupe: none); each row
// lands in exactly one bucket, and the plan says when the first held one
// may be called.
func TestPlanCountsHeld(t *testing.T) {
	dir := t.TempDir()
	sheet := ptSheet(0, 4) + dtPhone(2) + ",Again\n"
	dtWrite(t, filepath.Join(dir, "leads.csv"), sheet)
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, dtCampaign(10, 1, "dedupe: none\n"))
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	starts := map[string][]time.Time{
		dtPhone(0): {now.Add(-2 * time.Hour)},  // held until 22 hours from now
		dtPhone(1): {now.Add(-25 * time.Hour)}, // a day ago: free
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Agents: OfflineAgents(f.Agents), Now: now,
		Pressure: &PlanPressure{Limits: f.PressureLimits(), Starts: starts}})
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Totals
	if c.Rows != 5 || c.ToCall != 3 || c.Held != 2 || plan.HeldRepeats != 1 || c.Invalid+c.Duplicate+c.Suppressed+c.Done+c.ToCall+c.Held != c.Rows {
		t.Fatalf("totals %+v, %d repeats held; want 5 rows: 3 to call, 2 held (1 a repeat)", c, plan.HeldRepeats)
	}
	if want := now.Add(22 * time.Hour).Format(time.RFC3339); plan.HeldUntil != want {
		t.Errorf("held_until %q, want %q", plan.HeldUntil, want)
	}
	var text strings.Builder
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 to call", "2 held", "Held back by contact pressure: 2 contact(s)", "repeat a number this campaign calls (dedupe: none)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the plan does not say %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"held":2`) || !strings.Contains(string(js), `"held_until":"2026-11-03T07:00:00Z"`) {
		t.Errorf("the JSON plan lacks held or held_until: %s", js)
	}
	// Off: nobody held, and the plan warns.
	dtWrite(t, path, dtCampaign(10, 1, "dedupe: none\npressure: {off: true}\n"))
	if f, err = Load(path, LoadOptions{Offline: true}); err != nil {
		t.Fatal(err)
	}
	if f.PressureLimits() != nil {
		t.Fatal("pressure off has limits")
	}
	plan, err = BuildPlan(context.Background(), f, PlanOptions{Agents: OfflineAgents(f.Agents), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.Held != 0 || plan.Totals.ToCall != 5 || !strings.Contains(strings.Join(plan.Warnings, "\n"), "pressure: {off: true}") {
		t.Errorf("pressure off: %+v, warnings %q", plan.Totals, plan.Warnings)
	}
}

// TestPressureSetting: pressure: tightens, loosens and presets the
// limits, and refuses what it cannot mean.
func TestPressureSetting(t *testing.T) {
	day, week, fortnight := 24*time.Hour, 7*24*time.Hour, 14*24*time.Hour
	for _, c := range []struct {
		yaml string
		want string // the limits, or the problem
	}{
		{"", fmt.Sprint([]store.PressureLimit{{Within: day, Max: 1}, {Within: fortnight, Max: 14}})},
		{"pressure: {per_day: 2, per_14_days: 5}\n", fmt.Sprint([]store.PressureLimit{{Within: day, Max: 2}, {Within: fortnight, Max: 5}})},
		{"pressure: {preset: reg_f, per_day: 3}\n", fmt.Sprint([]store.PressureLimit{{Within: day, Max: 3}, {Within: fortnight, Max: 14}, {Within: week, Max: 7}})},
		{"pressure: {per_day: 0}\n", "per_day is 0"},
		{"pressure: {preset: tcpa}\n", `preset is "tcpa"`},
		{"pressure: {off: true, per_day: 2}\n", "cannot go with per_day"},
	} {
		dir := t.TempDir()
		dtWrite(t, filepath.Join(dir, "leads.csv"), ptSheet(0, 1))
		path := filepath.Join(dir, "campaign.yaml")
		dtWrite(t, path, dtCampaign(10, 1, c.yaml))
		f, err := Load(path, LoadOptions{Offline: true})
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = fmt.Sprint(f.PressureLimits())
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%q: %s, want %s", c.yaml, got, c.want)
		}
	}
}

// TestPlanHoldsAfterConversation: with `preset: reg_f` an online plan
// counts held a contact whose number had a conversation on the store
// within 7 days, though its call starts are past every limit, and says
// when the week is over; without the preset, conversations hold nothing.
func TestPlanHoldsAfterConversation(t *testing.T) {
	dir := t.TempDir()
	dtWrite(t, filepath.Join(dir, "leads.csv"), ptSheet(0, 3))
	path := filepath.Join(dir, "campaign.yaml")
	now := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	talked := map[string]time.Time{
		dtPhone(0): now.Add(-3 * 24 * time.Hour),          // held 4 days more
		dtPhone(1): now.Add(-store.RegFAfterConversation), // the week is over
		dtPhone(9): now.Add(-time.Hour),                   // not in the sheet
	}
	starts := map[string][]time.Time{dtPhone(0): {now.Add(-3*24*time.Hour - time.Minute)}}
	for _, c := range []struct {
		yaml string
		held int
	}{{"pressure: {preset: reg_f}\n", 1}, {"", 0}} {
		dtWrite(t, path, dtCampaign(10, 1, c.yaml))
		f, err := Load(path, LoadOptions{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		pp := &PlanPressure{Limits: f.PressureLimits(), Starts: starts, AfterConversation: f.PressureAfterConversation(), Conversations: talked}
		plan, err := BuildPlan(context.Background(), f, PlanOptions{Agents: OfflineAgents(f.Agents), Now: now, Pressure: pp})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Totals.Held != c.held || plan.Totals.ToCall != 3-c.held {
			t.Errorf("%q: %+v, want %d held", c.yaml, plan.Totals, c.held)
		}
		if want := now.Add(4 * 24 * time.Hour).Format(time.RFC3339); c.held == 1 && plan.HeldUntil != want {
			t.Errorf("held_until %q, want %q", plan.HeldUntil, want)
		}
		if h := pp.hold(dtPhone(0), now); c.held == 1 && (h == nil || !strings.Contains(h.Error(), "a conversation on 2026-11-02")) {
			t.Errorf("the reason a held contact's row gives: %v", h)
		}
		if warned := strings.Contains(strings.Join(plan.Warnings, "\n"), "no outcomes: block"); warned != (c.held == 1) {
			t.Errorf("%q: warnings %q; want the one of reg_f without outcomes: exactly with reg_f", c.yaml, plan.Warnings)
		}
	}
}
