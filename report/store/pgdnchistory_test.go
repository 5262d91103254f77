package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPGDoNotCallListedMatchesHistory: random histories of numbers put
// on, taken off and put on again, with erased people's hashed rows among
// them and numbers whose text is a prefix of another's, are checked in
// batches of one to twenty numbers (duplicates among them): what listed
// says of each batch, and what Add then writes, is what the history
// says, whichever of the range and the one-by-one look-ups answers.
func TestPGDoNotCallListedMatchesHistory(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	l := pgList(p).(*pgDoNotCall)
	keys := pgMakeKey(t, p)
	er, _ := p.Erasure()
	rng := rand.New(rand.NewPCG(35, 8))
	var pool []string
	for i := range 60 {
		pool = append(pool, fmt.Sprintf("+1415555%04d", 100+i*3))
	}
	pool = append(pool, "+1415555010", "+14155550", "+1415555", "+1", "+19", "+2")
	model := map[string]bool{}
	erased := map[string]bool{}
	ranged := 0
	for step := range 400 {
		// A window of the pool, so that a batch's range is often narrow.
		lo := rng.IntN(len(pool))
		hi := min(len(pool), lo+1+rng.IntN(15))
		n := 1 + rng.IntN(20)
		numbers := make([]string, n)
		for i := range numbers {
			numbers[i] = pool[lo+rng.IntN(hi-lo)]
		}
		// What listed says, in a transaction as Add asks it.
		tx, err := p.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		on := map[string]bool{}
		inRange, err := p.listedInRange(ctx, tx, numbers, map[string]bool{})
		if err == nil {
			err = p.listed(ctx, tx, numbers, on)
		}
		tx.Rollback(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if inRange {
			ranged++
		}
		for _, num := range numbers {
			if on[num] != model[num] {
				t.Fatalf("step %d: listed says %s on=%v, the history says %v (range answered: %v, batch %v)", step, num, on[num], model[num], inRange, numbers)
			}
		}
		switch rng.IntN(6) {
		case 0: // erase one of them
			num := numbers[0]
			h := keys.Hashes(num)[0]
			if _, err := er.AddErased(ctx, []ErasedEntry{{Hash: h, Why: "erase"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.EraseDoNotCall(ctx, []string{num}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys}}); err != nil {
				t.Fatal(err)
			}
			model[num], erased[num] = true, true
		default: // put on or take off, as an import or remove would
			var es []DoNotCallEntry
			var want []string
			m := map[string]bool{}
			for _, num := range numbers {
				removed := rng.IntN(3) == 0
				es = append(es, DoNotCallEntry{Number: num, Removed: removed, Source: "test"})
				cur, seen := m[num]
				if !seen {
					cur = model[num]
				}
				if cur == removed {
					want = append(want, fmt.Sprintf("%s/%v", num, removed))
				}
				m[num] = !removed
			}
			wrote, err := l.Add(ctx, es)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range wrote {
				num := e.Number
				if e.Hash != "" {
					for _, c := range numbers {
						if keys.Hashes(c)[0] == e.Hash {
							num = c
						}
					}
					if e.Number != "" || !erased[num] {
						t.Fatalf("step %d: %+v written with a hash, number %q erased %v", step, e, e.Number, erased[num])
					}
				} else if erased[num] {
					t.Fatalf("step %d: erased %s written in clear", step, num)
				}
				got = append(got, fmt.Sprintf("%s/%v", num, e.Removed))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: Add of %v wrote %v, the history says %v", step, es, got, want)
			}
			for k, v := range m {
				model[k] = v
			}
		}
	}
	t.Logf("the range answered %d of 400 batches", ranged)
	if ranged < 40 {
		t.Fatalf("the range answered only %d batches: the test does not exercise it", ranged)
	}
}
