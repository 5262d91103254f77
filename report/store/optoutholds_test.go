package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOptOutHolds: a hold is seen by another handle at once, and while it
// is open Has says no number may be called; a retry of the held delivery
// holds nothing more, not even once it was resolved; a resolution of a
// hold not open writes nothing; the resolution lets Has answer again.
func TestOptOutHolds(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			a, b := k.open(t), k.open(t)
			if _, err := a.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "test"}}); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			h := OptOutHold{Campaign: "spring", Key: "k1", At: at, Reason: "two of its fields give different numbers"}
			if wrote, err := a.Hold(ctx, h); err != nil || !wrote {
				t.Fatalf("Hold: %v, %v", wrote, err)
			}
			if wrote, err := b.Hold(ctx, h); err != nil || wrote {
				t.Fatalf("holding the same delivery again: %v, %v", wrote, err)
			}
			held, err := b.Held(ctx)
			if err != nil || len(held) != 1 || held[0].Key != "k1" || held[0].Campaign != "spring" || !held[0].At.Equal(at) || held[0].Reason != h.Reason {
				t.Fatalf("Held: %+v, %v", held, err)
			}
			_, err = b.Has(ctx, "+14155550199")
			var he *OptOutHeldError
			if !errors.As(err, &he) || !errors.Is(err, ErrOptOutHeld) || len(he.Holds) != 1 {
				t.Fatalf("Has while held: %v", err)
			}
			for _, want := range []string{"delivery k1 of campaign spring", "callrun suppress add", "callrun outcomes resolve"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the held error lacks %q: %v", want, err)
				}
			}
			if ok, err := b.Resolve(ctx, "spring", "k2", "no such"); err != nil || ok {
				t.Fatalf("resolving a delivery not held: %v, %v", ok, err)
			}
			if ok, err := b.Resolve(ctx, "autumn", "k1", "another campaign's"); err != nil || ok {
				t.Fatalf("resolving another campaign's: %v, %v", ok, err)
			}
			if ok, err := b.Resolve(ctx, "spring", "k1", "+14155550123 added by Ada"); err != nil || !ok {
				t.Fatalf("Resolve: %v, %v", ok, err)
			}
			if on, err := a.Has(ctx, "+14155550100"); err != nil || !on {
				t.Fatalf("Has after the resolution: %v, %v", on, err)
			}
			if held, err := a.Held(ctx); err != nil || len(held) != 0 {
				t.Fatalf("Held after the resolution: %+v, %v", held, err)
			}
			// A retry of the resolved delivery holds nothing again.
			if wrote, err := a.Hold(ctx, h); err != nil || wrote {
				t.Fatalf("a retry of a resolved delivery: %v, %v", wrote, err)
			}
			if ok, err := a.Resolve(ctx, "spring", "k1", "twice"); err != nil || ok {
				t.Fatalf("resolving twice: %v, %v", ok, err)
			}
		})
	}
}

// TestJournalRefusesIntentsWhileHeld: while an opt-out is held on the
// list a journal is opened with, it writes no intent (Append says
// OptOutHeldError), whatever the number, and writes the other records;
// once the hold is resolved, intents are written again.
func TestJournalRefusesIntentsWhileHeld(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			s, l := storeAndList(t, sk.open)
			j := openListedJournal(t, s, l)
			if err := j.Append(intent("A", "+14155550101")); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Hold(ctx, OptOutHold{Campaign: "autumn", Key: "k9", Reason: "no number"}); err != nil {
				t.Fatal(err)
			}
			q1, _ := j.Submit(intent("A", "+14155550102"))
			q2, _ := j.Submit(Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550101", Attempt: 1, Status: OutcomeSent})
			if err := q1.Wait(); !errors.Is(err, ErrOptOutHeld) || !strings.Contains(err.Error(), "delivery k9 of campaign autumn") {
				t.Fatalf("an intent while an opt-out is held: %v, want it refused, naming the hold", err)
			}
			if err := q2.Wait(); err != nil {
				t.Fatalf("an outcome while an opt-out is held: %v", err)
			}
			if ok, err := l.Resolve(ctx, "autumn", "k9", "done"); err != nil || !ok {
				t.Fatal(ok, err)
			}
			if err := j.Append(intent("A", "+14155550103")); err != nil {
				t.Fatalf("an intent after the resolution: %v", err)
			}
			replayClosed(t, s, j, map[string]Status{"+14155550101": Sent, "+14155550102": "", "+14155550103": Uncertain})
		})
	}
}
