package store

import (
	"runtime"
	"sync"
)

// inOrderBatch is how many items one worker of inOrder takes at a time:
// enough that handing a batch over costs little beside working on it.
const inOrderBatch = 512

// inOrder reads items with next until it says there are no more, applies
// fn to each on every core, and hands each item with fn's result to emit
// on the calling goroutine, in the order next gave them. It is the pass
// of an erase over a million stored deliveries, each decoded and its
// numbers read, on two cores rather than one. next and emit run on one
// goroutine each; fn on several at once. The batches in flight are
// bounded, so memory follows the cores, not the items. It returns the
// first error of emit, of fn (after emitting the items before it), or of
// next (after emitting the items it gave), once every goroutine it
// started has stopped.
func inOrder[T, R any](next func() (T, bool, error), fn func(T) (R, error), emit func(T, R) error) error {
	type batch struct {
		in   []T
		out  []R
		err  error // fn's, at item at
		at   int
		done chan struct{}
		last bool // the last batch
	}
	workers := runtime.GOMAXPROCS(0)
	var (
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		jobs    = make(chan *batch, workers)
		order   = make(chan *batch, 2*workers)
		readErr error // next's; read once order is closed
	)
	wg.Go(func() {
		defer close(order)
		defer close(jobs)
		for {
			b := &batch{in: make([]T, 0, inOrderBatch), done: make(chan struct{})}
			for len(b.in) < inOrderBatch {
				t, ok, err := next()
				if err != nil {
					readErr = err
				}
				if err != nil || !ok {
					b.last = true
					break
				}
				b.in = append(b.in, t)
			}
			select {
			case order <- b:
			case <-stop:
				return
			}
			select {
			case jobs <- b:
			case <-stop:
				return
			}
			if b.last {
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for b := range jobs {
				b.out = make([]R, len(b.in))
				b.at = len(b.in)
				for i, t := range b.in {
					r, err := fn(t)
					if err != nil {
						b.err, b.at = err, i
						break
					}
					b.out[i] = r
				}
				close(b.done)
			}
		})
	}
	var err error
	for b := range order {
		<-b.done
		for i := 0; i < b.at && err == nil; i++ {
			err = emit(b.in[i], b.out[i])
		}
		if err == nil {
			err = b.err
		}
		if err != nil || b.last {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err == nil {
		err = readErr
	}
	return err
}
