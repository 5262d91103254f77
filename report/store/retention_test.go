package store

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSplitByLast: the numbers whose every contact's last record is
// older than the cutoff, apart from those with a record since, found at
// every cutoff, with a few reads of the journal.
func TestSplitByLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	j, _ := openJournal(t, path)
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	// +1000 ... +1009 each called on day i; +1003 again under a second
	// agent on day 20; +1005 has an intent and no outcome.
	for i := range 10 {
		phone := fmt.Sprintf("+1415555%04d", 1000+i)
		at := t0.Add(time.Duration(i) * day)
		rec := intent("a", phone)
		rec.At = at
		must(t, j.Append(rec))
		if i != 5 {
			rec = outcome("a", phone, OutcomeSent)
			rec.At = at.Add(time.Minute)
			must(t, j.Append(rec))
		}
	}
	late := intent("b", "+14155551003")
	late.At = t0.Add(20 * day)
	must(t, j.Append(late))
	must(t, j.Close())
	s := readState(t, path)
	for _, c := range []struct {
		cutoff        time.Duration
		before, since int
	}{
		{0, 0, 10},
		{5 * day, 4, 6},                // 1000-1004, less 1003
		{5*day + time.Minute, 5, 5},    // and 1005, whose intent is its last record
		{10 * day, 9, 1},               // all but 1003
		{30 * day, 10, 0},              // everyone
		{-time.Hour, 0, 10},            // before the first record
		{5*day + 30*time.Second, 5, 5}, // between 1005's intent and 1006's
	} {
		before, since, err := s.SplitByLast(t0.Add(c.cutoff))
		if err != nil {
			t.Fatal(err)
		}
		if len(before) != c.before || len(since) != c.since {
			t.Errorf("cutoff %s: before %v, since %v; want %d and %d", c.cutoff, before, since, c.before, c.since)
		}
		if c.cutoff >= 5*day && c.cutoff < 20*day && (slices.Contains(before, "+14155551003") || !slices.Contains(since, "+14155551003")) {
			t.Errorf("cutoff %s: +14155551003, called on day 20 under a second agent, is due", c.cutoff)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallIDsOf: the call ids the sent calls' outcomes give, of the
// numbers asked and no others, from a journal in files and in
// PostgreSQL.
func TestCallIDsOf(t *testing.T) {
	const a, b = "+14155550101", "+14155550102"
	stores := map[string]Store{"files": Files{Dir: t.TempDir()}, "postgres": openPostgres(t, pgURL(t), "calls", 0, 1)}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			unlock := lockStore(t, s)
			defer unlock()
			j, st := openStoreJournal(t, s)
			for i, r := range []Record{
				intent("x", a), {Type: TypeOutcome, Agent: "x", Phone: a, Attempt: 1, Status: OutcomeSent, CallID: "call-a1"},
				intent("x", b), {Type: TypeOutcome, Agent: "x", Phone: b, Attempt: 1, Status: OutcomeSent, CallID: "call-b1"},
				intent("y", a), {Type: TypeOutcome, Agent: "y", Phone: a, Attempt: 1, Status: OutcomeSent, CallID: "call-a2"},
			} {
				if r.Type == TypeIntent {
					r.Attempt = 1
				}
				if err := j.Append(r); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			st.Close()
			j.Close()
			got, err := CallIDsOf(context.Background(), s, []string{a})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || !got["call-a1"] || !got["call-a2"] {
				t.Errorf("A's calls: %v; want call-a1 and call-a2", got)
			}
		})
	}
}

// TestCallKeysOf: the contact of each call id asked that a sent call's
// outcome gives, and of no id it does not (a plain id, one that JSON
// escapes, one never placed), from a journal in files and in
// PostgreSQL: listen lists an opt-out naming a call under its contact.
func TestCallKeysOf(t *testing.T) {
	const a, b = "+14155550101", "+14155550102"
	stores := map[string]Store{"files": Files{Dir: t.TempDir()}, "postgres": openPostgres(t, pgURL(t), "calls", 0, 1)}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			unlock := lockStore(t, s)
			defer unlock()
			j, st := openStoreJournal(t, s)
			for i, r := range []Record{
				intent("x", a), {Type: TypeOutcome, Agent: "x", Phone: a, Attempt: 1, Status: OutcomeSent, CallID: "call-a1"},
				intent("x", b), {Type: TypeOutcome, Agent: "x", Phone: b, Attempt: 1, Status: OutcomeSent, CallID: `call "b1"`},
			} {
				if r.Type == TypeIntent {
					r.Attempt = 1
				}
				if err := j.Append(r); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			st.Close()
			j.Close()
			for _, ids := range []map[string]bool{{"call-a1": true, "call-none": true}, {`call "b1"`: true, "call-a1": true}} {
				got, err := CallKeysOf(context.Background(), s, ids)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]Key{"call-a1": {Agent: "x", Phone: a}}
				if ids[`call "b1"`] {
					want[`call "b1"`] = Key{Agent: "x", Phone: b}
				}
				if !maps.Equal(got, want) {
					t.Errorf("CallKeysOf(%v) = %v, want %v", ids, got, want)
				}
			}
		})
	}
}

// TestSplitByLastClockSetBack: a record written while the clock was set
// back (a VM restored from a snapshot) makes nobody due who was called
// within the limit: the split found by searching the journal's order is
// checked against each contact's own last record.
func TestSplitByLastClockSetBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	j, _ := openJournal(t, path)
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		phone string
		at    time.Time
	}{
		{"+14155551000", now.Add(-100 * day)}, // due
		{"+14155551001", now.Add(-1 * day)},   // called yesterday: not due
		{"+14155551002", now.Add(-400 * day)}, // the clock was set back a year for this one
		{"+14155551003", now.Add(-1 * day)},   // called yesterday, clock right again
	} {
		rec := intent("a", c.phone)
		rec.At = c.at
		must(t, j.Append(rec))
		rec = outcome("a", c.phone, OutcomeSent)
		rec.At = c.at.Add(time.Minute)
		must(t, j.Append(rec))
	}
	must(t, j.Close())
	before, since, err := readState(t, path).SplitByLast(now.Add(-90 * day))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"+14155551001", "+14155551003"} {
		if slices.Contains(before, n) || !slices.Contains(since, n) {
			t.Errorf("before %v, since %v: %s, called a day ago, is due for a 90-day retention", before, since, n)
		}
	}
	if !slices.Contains(before, "+14155551000") {
		t.Errorf("before %v: +14155551000, called 100 days ago, is not due", before)
	}
}
