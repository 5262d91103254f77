package store

import (
	"fmt"
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
