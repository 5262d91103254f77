package campaign

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestPlanHeldText: the opt-outs held on the store make the plan say RUN
// WOULD STOP, name each held delivery and its reason, and give the
// commands that resolve one (with --sandbox for a rehearsal's list, and
// a word that another campaign's hold is resolved with its own file);
// Refusal returns the run's own error ([store.ErrOptOutHeld]) first.
func TestPlanHeldText(t *testing.T) {
	f, sup := loadMessy(t)
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	held := []store.OptOutHold{
		{Campaign: f.Name, Key: "k-own", At: at, Reason: "its only number, +14155550123 (caller_number), is no contact's of the campaign"},
		{Campaign: "other", Key: "k-other", At: at.Add(time.Minute), Reason: "its number does not read"},
	}
	for _, tc := range []struct {
		name      string
		held      []store.OptOutHold
		rehearsal bool
		want      []string
	}{
		{"own", held[:1], false, []string{"RUN WOULD STOP", "delivery k-own of campaign " + f.Name, "+14155550123 (caller_number)",
			"callrun outcomes show spring.yaml k-own", "callrun suppress add spring.yaml NUMBER", `callrun outcomes resolve --note "NUMBER, by NAME" spring.yaml k-own`}},
		{"two campaigns", held, false, []string{"Opt-outs held on the list here: 2", "delivery k-other of campaign other", "callrun outcomes resolve --note \"NUMBER, by NAME\" spring.yaml KEY", "that campaign's file"}},
		{"rehearsal", held[:1], true, []string{"callrun outcomes resolve --sandbox --note \"NUMBER, by NAME\" spring.yaml k-own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: at,
				Held: tc.held, HeldWhere: "list here", Path: "spring.yaml", Rehearsal: tc.rehearsal})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := plan.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("the plan does not say %q:\n%s", w, text.String())
				}
			}
			err = plan.Refusal()
			if !errors.Is(err, store.ErrOptOutHeld) || !strings.Contains(err.Error(), "k-own") || !strings.Contains(err.Error(), "callrun outcomes resolve") {
				t.Errorf("Refusal: %v", err)
			}
		})
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: at})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "Opt-outs held") || plan.Refusal() != nil {
		t.Errorf("a plan with no hold speaks of one, or refuses (%v):\n%s", plan.Refusal(), text.String())
	}
}
