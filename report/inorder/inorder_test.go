package inorder

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// counter is a next for Items that gives 0, 1, ... n-1, and then err
// (none: the end).
func counter(n int, err error) func() (int, bool, error) {
	i := 0
	return func() (int, bool, error) {
		if i == n {
			return 0, false, err
		}
		i++
		return i - 1, true, nil
	}
}

func TestItems(t *testing.T) {
	const n = 10*itemBatch + 7
	square := func(i int) (int, error) { return i * i, nil }
	t.Run("order kept", func(t *testing.T) {
		var got []int
		err := Items(counter(n, nil), square, func(i, sq int) error {
			if sq != i*i {
				return fmt.Errorf("item %d came with %d", i, sq)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d items emitted, want %d", len(got), n)
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("item %d emitted at %d", v, i)
			}
		}
	})
	t.Run("nothing", func(t *testing.T) {
		if err := Items(counter(0, nil), square, func(int, int) error { return errors.New("emitted") }); err != nil {
			t.Fatal(err)
		}
	})
	bad := errors.New("bad")
	t.Run("fn fails", func(t *testing.T) {
		emitted := 0
		err := Items(counter(n, nil), func(i int) (int, error) {
			if i == 3*itemBatch+5 {
				return 0, bad
			}
			return i, nil
		}, func(i, _ int) error {
			if i != emitted {
				return fmt.Errorf("item %d emitted at %d", i, emitted)
			}
			emitted++
			return nil
		})
		if !errors.Is(err, bad) || emitted != 3*itemBatch+5 {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, 3*itemBatch+5)
		}
	})
	t.Run("emit fails", func(t *testing.T) {
		emitted := 0
		err := Items(counter(n, nil), square, func(i, _ int) error {
			if i == 2*itemBatch {
				return bad
			}
			emitted++
			return nil
		})
		if !errors.Is(err, bad) || emitted != 2*itemBatch {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, 2*itemBatch)
		}
	})
	t.Run("next fails", func(t *testing.T) {
		emitted := 0
		err := Items(counter(itemBatch+3, bad), square, func(int, int) error {
			emitted++
			return nil
		})
		if !errors.Is(err, bad) || emitted != itemBatch+3 {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, itemBatch+3)
		}
	})
}

// ints is a batch for Run: the numbers read into it, and what its worker
// made of them.
type ints struct {
	in, out []int
	id      int // which newBatch made it
}

// TestRun runs Run with one worker and with several over batches of
// numbers that a read error or a settle error may end, and finds every
// batch settled in order, worked on, the errors returned after the
// batches before them, and the batches read again once settled, so that
// no more are made than are in flight.
func TestRun(t *testing.T) {
	const per, batches = 5, 40
	bad := errors.New("bad")
	for _, workers := range []int{1, 4} {
		for _, tc := range []struct {
			name      string
			readErr   bool // read fails with the last batch
			settleBad int  // settle fails on this batch; -1 never
			settled   int  // batches settled
		}{
			{"to the end", false, -1, batches},
			{"read fails", true, -1, batches},
			{"settle fails", false, 7, 7},
		} {
			t.Run(fmt.Sprintf("%d workers, %s", workers, tc.name), func(t *testing.T) {
				made, read, settled := 0, 0, 0
				newBatch := func() *ints {
					made++
					return &ints{in: make([]int, 0, per), id: made}
				}
				readFn := func(b *ints) (bool, error) {
					b.in = b.in[:0]
					for range per {
						b.in = append(b.in, read*per+len(b.in))
					}
					read++
					if read < batches {
						return false, nil
					}
					if tc.readErr {
						return true, bad
					}
					return true, nil
				}
				work := func(b *ints, _ *struct{}) {
					b.out = b.out[:0]
					for _, v := range b.in {
						b.out = append(b.out, v*v)
					}
				}
				settle := func(b *ints) error {
					if settled == tc.settleBad {
						return bad
					}
					for i, v := range b.in {
						if want := settled*per + i; v != want || len(b.out) != len(b.in) || b.out[i] != want*want {
							return fmt.Errorf("batch %d settled with item %d = %d (worked %v), want %d", settled, i, v, b.out, want)
						}
					}
					settled++
					return nil
				}
				err := Run(workers, newBatch, readFn, work, settle)
				if tc.readErr || tc.settleBad >= 0 {
					if !errors.Is(err, bad) {
						t.Fatalf("Run returned %v, want %v", err, bad)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if settled != tc.settled {
					t.Errorf("%d batches settled, want %d", settled, tc.settled)
				}
				if limit := 3*workers + 2; made > limit {
					t.Errorf("%d batches made for %d workers; at most %d are ever in flight", made, workers, limit)
				}
			})
		}
	}
	t.Run("a scratch a worker", func(t *testing.T) {
		// The first batch's worker waits until the second batch's has
		// started, so that two work at once. Each scratch lists the
		// batches its worker took: one shared by both would list the
		// first batch in the second's worker, and be written by two
		// goroutines at once, which the race detector reports too.
		// Batches are known by the read that filled them (in), not by
		// id: Run hands a settled batch back to be read again, and the
		// third read may fill the first or second batch made.
		second := make(chan struct{})
		read := 0
		newBatch := func() *ints { return &ints{} }
		readFn := func(b *ints) (bool, error) { read++; b.in = []int{read}; return read == 4, nil }
		work := func(b *ints, took *[]int) {
			*took = append(*took, b.in[0])
			switch b.in[0] {
			case 1:
				<-second
			case 2:
				b.out = slices.Clone(*took)
				close(second)
			}
		}
		settle := func(b *ints) error {
			if b.in[0] == 2 && slices.Contains(b.out, 1) {
				return fmt.Errorf("the second batch's worker took batches %v: its scratch is the first's", b.out)
			}
			return nil
		}
		if err := Run(2, newBatch, readFn, work, settle); err != nil {
			t.Fatal(err)
		}
	})
}
