package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestPostgresPushMergeSettlesNoLess: a journal added with merge settles
// no contact less than the database did: another machine's try that was
// never placed (retry, skipped) or refused (failed) does not undo a call
// (sent), nor hide an uncertain one (an intent with no outcome, or an
// uncertain outcome). Where it says more that a number may have been
// called, or as much (a refusal and a try never placed), it wins.
func TestPostgresPushMergeSettlesNoLess(t *testing.T) {
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), JournalFile)
	ja, _ := openJournal(t, a)
	mustAppend(t, ja,
		intent("a", "+15550001"), outcome("a", "+15550001", OutcomeSent),
		intent("a", "+15550002"), // killed: uncertain
		intent("a", "+15550003"), outcome("a", "+15550003", OutcomeUncertain),
		intent("a", "+15550004"), outcome("a", "+15550004", OutcomeFailed),
		intent("a", "+15550005"), outcome("a", "+15550005", OutcomeRetry))
	ja.Close()
	b := filepath.Join(t.TempDir(), JournalFile)
	jb, _ := openJournal(t, b)
	mustAppend(t, jb,
		intent("a", "+15550001"), outcome("a", "+15550001", OutcomeRetry),
		intent("a", "+15550002"), outcome("a", "+15550002", OutcomeSkipped),
		intent("a", "+15550003"), outcome("a", "+15550003", OutcomeFailed),
		intent("a", "+15550004"), outcome("a", "+15550004", OutcomeRetry),
		intent("a", "+15550005"), outcome("a", "+15550005", OutcomeSent))
	jb.Close()

	p := openPostgres(t, pgURL(t), "merge", 0, 1)
	unlock := lockStore(t, p)
	if _, err := p.Push(ctx, false, a); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Push(ctx, true, b); err != nil || n != 10 {
		t.Fatalf("Push with merge = %d, %v; want the 10 records of the journal", n, err)
	}
	unlock()
	st, err := p.ReadState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for phone, want := range map[string]Status{
		"+15550001": Sent, "+15550002": Uncertain, "+15550003": Uncertain, "+15550004": Pending, "+15550005": Sent,
	} {
		if got, _ := st.Status(Key{Agent: "a", Phone: phone}); got != want {
			t.Errorf("%s after the merge: %s, want %s", phone, got, want)
		}
	}
	if e, _ := st.Lookup(Key{Agent: "a", Phone: "+15550002"}); e.Reason == "" {
		t.Errorf("the uncertain contact's entry says nothing of why: %+v", e)
	}
}
