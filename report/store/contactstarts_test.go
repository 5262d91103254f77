package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestContactStartsSayWhatTheJournalRefuses: plan reads the contacts the
// call starts name (ContactStarts) to say a run would stop, so they must
// say what a journal's check refuses, no more, no less: a counted start
// of the same campaign's contact from another journal, not one given
// back (refused, provably not sent), not another campaign's, not another
// agent's or occurrence's.
func TestContactStartsSayWhatTheJournalRefuses(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	open := func(campaign, dir string) *Journal {
		t.Helper()
		p := &Pressure{Starts: OpenCallStartsFile(home), Campaign: campaign, Now: clock} // no limits: only the check
		j, st, err := OpenJournal(filepath.Join(dir, JournalFile), JournalOptions{Pressure: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			j.Close()
			st.Close()
		})
		return j
	}
	const sent, refused, other = "+14155550101", "+14155550102", "+14155550103"
	first := func(number string) Record {
		return Record{Type: TypeIntent, Agent: "A", Phone: number, Attempt: 1}
	}
	a, o := open("twin", t.TempDir()), open("other", t.TempDir())
	for _, r := range []Record{
		first(sent), {Type: TypeOutcome, Agent: "A", Phone: sent, Attempt: 1, Status: OutcomeSent},
		first(refused), {Type: TypeOutcome, Agent: "A", Phone: refused, Attempt: 1, Status: OutcomeFailed, HTTP: 422},
	} {
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Append(first(other)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)

	cs, err := OpenCallStartsFile(home).CampaignStarts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	b := open("twin", t.TempDir()) // the same campaign from a second state directory
	for _, tc := range []struct {
		campaign, agent, number string
		n                       int
	}{
		{"twin", "A", sent, 0}, {"twin", "A", refused, 0}, {"twin", "A", other, 0},
		{"twin", "B", sent, 0}, {"twin", "A", sent, 1}, {"other", "A", other, 0}, {"", "A", sent, 0},
	} {
		at, said := cs.Started(tc.campaign, tc.agent, tc.number, tc.n)
		if tc.campaign != "twin" {
			if want := tc.campaign == "other"; said != want {
				t.Errorf("Started(%q, %s, %s, %d) = %v, want %v", tc.campaign, tc.agent, tc.number, tc.n, said, want)
			}
			continue
		}
		err := b.Append(Record{Type: TypeIntent, Agent: tc.agent, Phone: tc.number, N: tc.n, Attempt: 1})
		var fe *ForeignStartError
		refuses := errors.As(err, &fe)
		if err != nil && !refuses {
			t.Fatalf("the second directory's intent for %s %s %d: %v", tc.agent, tc.number, tc.n, err)
		}
		if said != refuses {
			t.Errorf("Started(twin, %s, %s, %d) = %v, but the journal's check refuses it: %v (%v)", tc.agent, tc.number, tc.n, said, refuses, err)
		}
		if said && !fe.At.Equal(at) {
			t.Errorf("Started(twin, %s, %s, %d) at %s, the journal's check says %s", tc.agent, tc.number, tc.n, at, fe.At)
		}
	}
	if at, ok := cs.Started("twin", "A", sent, 0); !ok || !at.Equal(now.Add(-time.Hour)) {
		t.Errorf("Started(twin, A, %s) = %s, %v; want the first run's start, %s", sent, at, ok, now.Add(-time.Hour))
	}
}
