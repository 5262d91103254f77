package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPGDoNotCallFindsHashedRows writes an erased person's row as an
// erase leaves it (an empty number and the keyed hash) and checks that Has, OnList
// and Add find the person by hash, and that the list fails closed once
// the key is gone.
func TestPGDoNotCallFindsHashedRows(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	l := pgList(p)
	keys := pgMakeKey(t, p)
	const a, b = "+14155550101", "+14155550102"
	h := keys.Hashes(a)[0]
	if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) VALUES ('', $1, now(), false, 'erase', '')`, h); err != nil {
		t.Fatal(err)
	}
	if on, err := l.Has(ctx, a); err != nil || !on {
		t.Fatalf("Has(erased) = %v, %v; want true", on, err)
	}
	if on, err := l.Has(ctx, b); err != nil || on {
		t.Fatalf("Has(other) = %v, %v; want false", on, err)
	}
	// C was on the list by hash and taken off: its last row says removed.
	const c = "+14155550103"
	if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) VALUES ('', $1, now(), false, 'erase', ''), ('', $1, now(), true, 'suppress remove', '')`, keys.Hashes(c)[0]); err != nil {
		t.Fatal(err)
	}
	// A few numbers' hashes are asked for; more than a batch's are looked
	// up among every hash on the list: both answer the same.
	many := []string{a, b, c}
	for i := range pgOnListBatch {
		many = append(many, fmt.Sprintf("+1212%07d", i))
	}
	for _, numbers := range [][]string{{a, b, c}, many} {
		on, err := l.OnList(ctx, numbers)
		if err != nil || !on[a] || on[b] || on[c] || len(on) != 1 {
			t.Fatalf("OnList of %d numbers = %d on (A %v, B %v, C %v), %v; want only A", len(numbers), len(on), on[a], on[b], on[c], err)
		}
	}
	if on, err := l.Has(ctx, c); err != nil || on {
		t.Fatalf("Has(taken off) = %v, %v; want false", on, err)
	}
	wrote, err := l.Add(ctx, []DoNotCallEntry{{Number: a, Source: "import"}})
	if err != nil || len(wrote) != 0 {
		t.Fatalf("Add(erased) wrote %v, %v; want nothing: the person is on the list by hash", wrote, err)
	}
	if _, err := p.pool.Exec(ctx, `DELETE FROM callrun_keys`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Has(ctx, b); !errors.Is(err, ErrErasureKeyMissing) {
		t.Fatalf("Has without the key: %v; want ErrErasureKeyMissing", err)
	}
	for _, numbers := range [][]string{{b}, many} {
		if _, err := l.OnList(ctx, numbers); !errors.Is(err, ErrErasureKeyMissing) {
			t.Fatalf("OnList of %d numbers without the key: %v; want ErrErasureKeyMissing", len(numbers), err)
		}
	}
}

// TestPGJournalRefusesIntentsOfHashedNumbers: the database refuses, in the
// intent's own INSERT, the intent of a number whose keyed hash is on the
// list, including a hash written after the journal opened, and refuses to
// write any intent once a hashed row's key is gone.
func TestPGJournalRefusesIntentsOfHashedNumbers(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "spring", 0, 1)
	l := pgList(p)
	keys := pgMakeKey(t, p)
	addHashed := func(number string) {
		t.Helper()
		if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) VALUES ('', $1, now(), false, 'erase', '')`, keys.Hashes(number)[0]); err != nil {
			t.Fatal(err)
		}
	}
	j := openListedJournal(t, p, l)
	if err := j.Append(intent("A", "+14155550101")); err != nil {
		t.Fatalf("an intent with nothing hashed on the list: %v", err)
	}
	addHashed("+14155550100")
	if err := j.Append(intent("A", "+14155550100")); !errors.Is(err, ErrDoNotCall) {
		t.Fatalf("an intent of a number on the list by hash: %v, want ErrDoNotCall", err)
	}
	if err := j.Append(intent("A", "+14155550102")); err != nil {
		t.Fatalf("an intent of a number not on the list: %v", err)
	}
	addHashed("+14155550103")
	if err := j.Append(intent("A", "+14155550103")); !errors.Is(err, ErrDoNotCall) {
		t.Fatalf("an intent of a number hashed since the journal read the keys: %v, want ErrDoNotCall", err)
	}
	if _, err := p.pool.Exec(ctx, `DELETE FROM callrun_keys`); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(intent("A", "+14155550104")); !errors.Is(err, ErrErasureKeyMissing) {
		t.Fatalf("an intent with the list's key gone: %v, want ErrErasureKeyMissing", err)
	}
}

// TestPGDoNotCallWritesTheErasedAsHashes: a person in the erased set (one
// erased with --allow-contact, so not on the list) who opts out later
// goes on the list as their hash, and comes off it so; Each shows each
// hashed entry, the current ones by hash, and no number.
func TestPGDoNotCallWritesTheErasedAsHashes(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	l := pgList(p)
	const a, b = "+14155550111", "+14155550112"
	keys := eraseFromStore(t, p, a)
	if wrote, err := l.Add(ctx, []DoNotCallEntry{{Number: a, Source: "delivery k"}, {Number: b, Source: "delivery k2"}}); err != nil || len(wrote) != 2 || wrote[0].Number != "" || wrote[0].Hash != keys.Hashes(a)[0] || wrote[1].Number != b {
		t.Fatalf("Add: %+v, %v; want A as its hash, B as its number", wrote, err)
	}
	if on, err := l.Has(ctx, a); err != nil || !on {
		t.Fatalf("Has(A) = %v, %v; want true", on, err)
	}
	var current []DoNotCallEntry
	if err := l.Each(ctx, true, func(e DoNotCallEntry) error { current = append(current, e); return nil }); err != nil || len(current) != 2 || current[0].Hash == "" || current[0].Number != "" {
		t.Fatalf("Each current: %+v, %v; want A's hashed entry and B's", current, err)
	}
	if wrote, err := l.Add(ctx, []DoNotCallEntry{{Number: a, Removed: true, Source: "suppress remove", Reason: "asked"}}); err != nil || len(wrote) != 1 || wrote[0].Number != "" || wrote[0].Reason != "" {
		t.Fatalf("removal: %+v, %v; want A's hash, no reason", wrote, err)
	}
	if on, err := l.Has(ctx, a); err != nil || on {
		t.Fatalf("Has(A) after the removal = %v, %v; want false", on, err)
	}
	var text string
	if err := p.pool.QueryRow(ctx, `SELECT string_agg(d::text, ' ') FROM callrun_do_not_call d`).Scan(&text); err != nil || strings.Contains(text, a[1:]) {
		t.Errorf("the table: %s, %v; want A in no form", text, err)
	}
}

// TestOnListSeesAnEraseBetweenItsReads: an erase that turns a
// listed number into its keyed hash while OnList runs must leave the
// person on the list, whichever of OnList's reads it falls between.
// Reading the list's hashes first and the numbers after, an erase
// committed in between was seen by neither read. The erase is held
// between the two by a lock on callrun_keys, which OnList reads after
// the hashes (the list holds an earlier erased person's hash), and is
// the UPDATE of pgDoNotCall's erase.
func TestOnListSeesAnEraseBetweenItsReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	l := pgList(p)
	keys := pgMakeKey(t, p)
	const earlier, x = "+14155550100", "+14155550101"
	if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) VALUES ('', $1, now(), false, 'erase', '')`, keys.Hashes(earlier)[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: x, Source: "import"}}); err != nil {
		t.Fatal(err)
	}

	erase, err := p.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer erase.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := erase.Exec(ctx, `LOCK TABLE callrun_keys IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		on  map[string]bool
		err error
	}
	got := make(chan answer, 1)
	go func() {
		on, err := l.OnList(ctx, []string{x})
		got <- answer{on, err}
	}()
	// Wait until OnList waits for the keys: it has read what it reads
	// before them.
	for {
		var waiting int
		if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE relation = 'callrun_keys'::regclass AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case a := <-got:
			t.Fatalf("OnList answered (%v, %v) without waiting for the keys: the test no longer holds it between its reads", a.on, a.err)
		default:
		}
	}
	if _, err := erase.Exec(ctx, `
UPDATE callrun_do_not_call d SET number = '', hash = u.h, reason = ''
FROM unnest($1::text[], $2::text[]) AS u(n, h) WHERE d.number = u.n`, []string{x}, []string{keys.Hashes(x)[0]}); err != nil {
		t.Fatal(err)
	}
	if err := erase.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !a.on[x] {
		t.Errorf("OnList(%s) = %v: a person on the do-not-call list, erased while OnList read it, is not on it", x, a.on)
	}
	if on, err := l.Has(ctx, x); err != nil || !on {
		t.Fatalf("Has(%s) after the erase = %v, %v; want true", x, on, err)
	}
}

// pgMakeKey makes the erasure key of the database p is in, as a first
// erase does, and returns the keys.
func pgMakeKey(t testing.TB, p *Postgres) *ErasureKeys {
	t.Helper()
	er, err := p.Erasure()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := er.MakeKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
