package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServiceStarts: a call start the service made on its own, recorded
// by listen, counts like a run's for every campaign on the store, once
// however often it is recorded; one that own says a journal holds is not
// recorded; and the outcome of a journal's call that names its call id
// (the delivery came before the call start's answer reached the
// journal) gives it back, so that call counts once. With files and with
// PostgreSQL.
func TestServiceStarts(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			open := func(campaign string, limits []PressureLimit) (*Journal, *Pressure) {
				s := sk.open(t, campaign, 0, 1)
				unlock := lockStore(t, s)
				p := pressureFor(t, s, campaign, clock)
				p.Limits = limits
				j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: p})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					j.Close()
					st.Close()
					unlock()
				})
				return j, p
			}
			const n = "+14155550100"
			two := []PressureLimit{{Within: 24 * time.Hour, Max: 2}}
			first, p := open("first", two)
			firstStore := sk.open(t, "first", 0, 1)
			// As listen asks: its index of the journal's call ids, caught
			// up to the journal's end under the starts' lock.
			index := NewCallIndex(firstStore)
			inJournal := func(callID string) func() (bool, error) {
				return func() (bool, error) {
					keys, err := index.Keys(ctx, map[string]bool{callID: true})
					return len(keys) > 0, err
				}
			}
			start := func(callID string, own func() (bool, error)) bool {
				t.Helper()
				added, err := p.Starts.ServiceStarted(ctx, CallStart{Number: n, At: now, ID: ServiceStartID(callID), Campaign: "first", Agent: "A"}, false, own)
				if err != nil {
					t.Fatal(err)
				}
				return added
			}
			// callrun's own call: its intent counts; its delivery came
			// before its answer reached the journal, so listen counts it
			// as the service's too.
			if err := first.Append(Record{Type: TypeIntent, Agent: "A", Phone: n, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
			if !start("call_own", inJournal("call_own")) || start("call_own", inJournal("call_own")) {
				t.Fatal("the service start of call_own: want recorded once")
			}
			if err := first.Append(Record{Type: TypeIntent, Agent: "A", Phone: "+14155550101", Attempt: 1}); err != nil {
				t.Fatal(err)
			}
			if err := first.Append(Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550101", Attempt: 1, Status: OutcomeSent, CallID: "call_other"}); err != nil {
				t.Fatal(err)
			}
			if start("call_other", inJournal("call_other")) {
				t.Fatal("a call the journal holds was recorded as the service's")
			}
			second, _ := open("second", two)
			now = now.Add(time.Hour)
			if err := second.Append(Record{Type: TypeIntent, Agent: "B", Phone: n, Attempt: 1}); !errors.Is(err, ErrHeld) {
				t.Fatalf("with callrun's start and the service's (not given back yet): %v, want held", err)
			}
			// The answer reaches the journal: the service start of its call
			// id is given back, and the call counts once.
			if err := first.Append(Record{Type: TypeOutcome, Agent: "A", Phone: n, Attempt: 1, Status: OutcomeSent, CallID: "call_own"}); err != nil {
				t.Fatal(err)
			}
			if err := second.Append(Record{Type: TypeIntent, Agent: "B", Phone: n, Attempt: 1}); err != nil {
				t.Fatalf("after the journal's outcome named the call: %v, want called (1 start in 24 hours)", err)
			}
			// A redial the service made: counted, and a later campaign
			// with 2 a day is held (callrun's 2 starts and the redial's).
			if !start("call_redial", inJournal("call_redial")) {
				t.Fatal("the redial was not recorded")
			}
			third, _ := open("third", []PressureLimit{{Within: 24 * time.Hour, Max: 3}})
			if err := third.Append(Record{Type: TypeIntent, Agent: "C", Phone: n, Attempt: 1}); !errors.Is(err, ErrHeld) {
				t.Fatalf("after 2 calls and a redial, with 3 a day: %v, want held", err)
			}
			hist, err := p.Starts.History(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			service := 0
			for _, s := range hist {
				if IsServiceStart(s) && !s.Released {
					service++
				}
			}
			if service != 1 {
				t.Errorf("history holds %d service starts not given back, want 1 (the redial): %+v", service, hist)
			}
			callers, err := p.Starts.Callers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range callers {
				if c.Journal == "" || c.Journal == ServiceStartID("call_redial") {
					t.Errorf("Callers names a service start as a journal: %+v", callers)
				}
			}
		})
	}
}

// TestServiceStartErased: erase rewrites a service start as any other
// (its number replaced by its keyed hash); it still counts, and a retry
// of its delivery after the erase records no second one.
func TestServiceStartErased(t *testing.T) {
	ctx := context.Background()
	const a = "+14155550100"
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	home := t.TempDir()
	keys, err := OpenErasureFile(home).MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs := OpenCallStartsFile(home)
	s := CallStart{Number: a, At: now, ID: ServiceStartID("call_redial"), Campaign: "mon", Agent: "A"}
	if added, err := cs.ServiceStarted(ctx, s, false, nil); err != nil || !added {
		t.Fatalf("recording: %t, %v", added, err)
	}
	if _, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, CallStartsFileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(a)) || !bytes.Contains(b, []byte(ServiceStartID("call_redial"))) {
		t.Errorf("after the erase the call starts hold the number, or lost the start:\n%s", b)
	}
	again := OpenCallStartsFile(home)
	if added, err := again.ServiceStarted(ctx, s, false, nil); err != nil || added {
		t.Errorf("a retry after the erase: recorded %t (%v), want not again", added, err)
	}
	counted, err := again.Counted(ctx, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, at := range counted {
		n += len(at)
	}
	if n != 1 {
		t.Errorf("%d starts count after the erase, want the redial's 1: %v", n, counted)
	}
}
