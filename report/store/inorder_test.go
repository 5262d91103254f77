package store

import (
	"errors"
	"fmt"
	"testing"
)

// counter is a next for inOrder that gives 0, 1, ... n-1, and then err
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

func TestInOrder(t *testing.T) {
	const n = 10*inOrderBatch + 7
	square := func(i int) (int, error) { return i * i, nil }
	t.Run("order kept", func(t *testing.T) {
		var got []int
		err := inOrder(counter(n, nil), square, func(i, sq int) error {
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
		if err := inOrder(counter(0, nil), square, func(int, int) error { return errors.New("emitted") }); err != nil {
			t.Fatal(err)
		}
	})
	bad := errors.New("bad")
	t.Run("fn fails", func(t *testing.T) {
		emitted := 0
		err := inOrder(counter(n, nil), func(i int) (int, error) {
			if i == 3*inOrderBatch+5 {
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
		if !errors.Is(err, bad) || emitted != 3*inOrderBatch+5 {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, 3*inOrderBatch+5)
		}
	})
	t.Run("emit fails", func(t *testing.T) {
		emitted := 0
		err := inOrder(counter(n, nil), square, func(i, _ int) error {
			if i == 2*inOrderBatch {
				return bad
			}
			emitted++
			return nil
		})
		if !errors.Is(err, bad) || emitted != 2*inOrderBatch {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, 2*inOrderBatch)
		}
	})
	t.Run("next fails", func(t *testing.T) {
		emitted := 0
		err := inOrder(counter(inOrderBatch+3, bad), square, func(int, int) error {
			emitted++
			return nil
		})
		if !errors.Is(err, bad) || emitted != inOrderBatch+3 {
			t.Fatalf("err %v after %d items; want %v after %d", err, emitted, bad, inOrderBatch+3)
		}
	})
}
