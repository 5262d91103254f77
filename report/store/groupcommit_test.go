package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestGroupCommit: items queued while a commit runs share the next one,
// in order, and each caller is answered only once its commit returned;
// a failed commit fails its callers alone, or, sticky (the journal's),
// every later queue; close commits what is queued and refuses more.
func TestGroupCommit(t *testing.T) {
	for _, sticky := range []bool{false, true} {
		t.Run(fmt.Sprint("sticky=", sticky), func(t *testing.T) {
			entered := make(chan []int)
			release := make(chan error)
			var committed [][]int
			c := newGroupCommit(func(b *[]int) error {
				entered <- *b
				err := <-release
				if err == nil {
					committed = append(committed, *b)
				}
				return err
			}, sticky, time.Hour, 1)
			add := func(n int) func(*[]int) (int, error) {
				return func(b *[]int) (int, error) { *b = append(*b, n); return len(*b) - 1, nil }
			}
			first, _, err := c.queue(true, add(0))
			if err != nil {
				t.Fatal(err)
			}
			<-entered // the writer commits 0 alone
			var waits sync.WaitGroup
			errs := make([]error, 4)
			for n := 1; n <= 3; n++ { // queued in order while 0 commits
				b, _, err := c.queue(true, add(n))
				if err != nil {
					t.Fatal(err)
				}
				waits.Go(func() { errs[n] = c.wait(b) })
			}
			select {
			case <-first.done:
				t.Fatal("answered before its commit returned")
			default:
			}
			boom := errors.New("disk full")
			release <- boom
			if err := c.wait(first); err != boom {
				t.Fatalf("the failed commit's caller got %v", err)
			}
			if sticky {
				answered := make(chan struct{})
				go func() { waits.Wait(); close(answered) }()
				select {
				case got := <-entered:
					release <- nil
					<-answered
					t.Fatalf("sticky: %v committed after a failed commit", got)
				case <-answered:
				}
				for n := 1; n <= 3; n++ {
					if errs[n] != boom {
						t.Errorf("sticky: item %d queued after the failure got %v", n, errs[n])
					}
				}
				if _, _, err := c.queue(true, add(4)); err != boom {
					t.Errorf("sticky: a queue after the failure got %v", err)
				}
			} else {
				if got := <-entered; fmt.Sprint(got) != "[1 2 3]" {
					t.Errorf("the next commit holds %v, want [1 2 3] together", got)
				}
				release <- nil
				waits.Wait()
				for n := 1; n <= 3; n++ {
					if errs[n] != nil {
						t.Errorf("item %d: %v", n, errs[n])
					}
				}
				if _, _, err := c.queue(false, add(4)); err != nil { // lazy: close commits it
					t.Fatal(err)
				}
				go func() { <-entered; release <- nil }()
			}
			if ok, _ := c.close(); !ok {
				t.Error("close said it was closed before")
			}
			if _, _, err := c.queue(true, add(5)); err != errGroupClosed {
				t.Errorf("a queue after close got %v", err)
			}
			if want := "[[1 2 3] [4]]"; !sticky && fmt.Sprint(committed) != want {
				t.Errorf("committed %v, want %s", committed, want)
			}
		})
	}
}
