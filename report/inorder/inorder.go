// Package inorder works on a stream in batches on every core and hands
// the batches back in the order they were read: a sheet's rows, judged
// by the contact reader and the pass over its do-not-call columns
// (package campaign), and the stored lines an erase rewrites (package
// store). It imports nothing of callrun's.
package inorder

import (
	"runtime"
	"sync"
)

// itemBatch is how many items one worker of Items takes at a time:
// enough that handing a batch over costs little beside working on it.
const itemBatch = 512

// Run reads batches with read on one goroutine, has work work on each on
// workers goroutines at once, each with a scratch S of its own (its zero
// value to start), and hands the batches to settle one at a time, in the
// order read filled them, on the calling goroutine. workers 0 means
// GOMAXPROCS; with one, each batch is read, worked on and settled in turn
// on the calling goroutine.
//
// read fills a batch made by newBatch, or one settle is done with, and
// says whether it is the last: at the end of the stream, or at the error
// that ended the reading, which it returns too. At most a few batches per
// worker are in flight, so memory follows the workers, not the stream.
// Run returns the first error of settle, or of read once the batch it
// ended on is settled, after every goroutine it started has stopped.
func Run[B, S any](workers int, newBatch func() B, read func(B) (last bool, err error), work func(B, *S), settle func(B) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		var s S
		b := newBatch()
		for {
			last, readErr := read(b)
			work(b, &s)
			if err := settle(b); err != nil {
				return err
			}
			if last {
				return readErr
			}
		}
	}
	// A slot is a batch on its way, with what read said of it.
	type slot struct {
		b       B
		last    bool
		readErr error
		worked  chan struct{}
	}
	var (
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		jobs  = make(chan *slot, workers)
		order = make(chan *slot, 2*workers)
		free  = make(chan *slot, 3*workers+2)
	)
	// The reader: each batch goes in order to the settling loop below,
	// and to a worker.
	wg.Go(func() {
		defer close(order)
		defer close(jobs)
		for {
			var sl *slot
			select {
			case sl = <-free:
			default:
				sl = &slot{b: newBatch(), worked: make(chan struct{}, 1)}
			}
			sl.last, sl.readErr = read(sl.b)
			select {
			case order <- sl:
			case <-stop:
				return
			}
			select {
			case jobs <- sl:
			case <-stop:
				return
			}
			if sl.last {
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			var s S
			for sl := range jobs {
				work(sl.b, &s)
				sl.worked <- struct{}{}
			}
		})
	}
	var err error
	for sl := range order {
		<-sl.worked
		if err = settle(sl.b); err == nil && sl.last {
			err = sl.readErr
		}
		if err != nil || sl.last {
			break
		}
		select {
		case free <- sl:
		default:
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// Items reads items with next until it says there are no more, applies
// fn to each on every core, and hands each item with fn's result to emit
// on the calling goroutine, in the order next gave them: an erase's pass
// over a million stored lines, each decoded and its numbers read, on two
// cores rather than one. next and emit run on one goroutine each; fn on
// several at once. It returns the first error of emit, of fn (after
// emitting the items before it), or of next (after emitting the items it
// gave), once every goroutine it started has stopped.
func Items[T, R any](next func() (T, bool, error), fn func(T) (R, error), emit func(T, R) error) error {
	type batch struct {
		in  []T
		out []R
		err error // fn's, at item at
		at  int
	}
	newBatch := func() *batch {
		return &batch{in: make([]T, 0, itemBatch), out: make([]R, itemBatch)}
	}
	read := func(b *batch) (bool, error) {
		b.in = b.in[:0]
		for len(b.in) < itemBatch {
			t, ok, err := next()
			if err != nil || !ok {
				return true, err
			}
			b.in = append(b.in, t)
		}
		return false, nil
	}
	work := func(b *batch, _ *struct{}) {
		b.err, b.at = nil, len(b.in)
		for i, t := range b.in {
			r, err := fn(t)
			if err != nil {
				b.err, b.at = err, i
				return
			}
			b.out[i] = r
		}
	}
	settle := func(b *batch) error {
		for i := range b.at {
			if err := emit(b.in[i], b.out[i]); err != nil {
				return err
			}
		}
		return b.err
	}
	return Run(0, newBatch, read, work, settle)
}
