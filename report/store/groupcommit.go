package store

import (
	"errors"
	"sync"
	"time"
)

// errGroupClosed is what groupCommit.queue returns once close began.
var errGroupClosed = errors.New("closed")

// groupCommit is the group commit that the [Journal] and the
// [Deliveries] share: callers queue items into the batch being gathered,
// and writer goroutines take every item waiting and commit them with one
// call (one write and one fsync, or one INSERT), then release their
// callers. A busy store so costs one fsync for many items, and no caller
// is answered before the commit that holds its item is durable. With one
// writer, batches are committed in the order they were gathered.
//
// B is what a batch holds (the journal's lines, the deliveries); commit
// runs on a writer goroutine, one batch at a time per writer.
type groupCommit[B any] struct {
	commit func(*B) error
	// sticky: a failed commit fails every later one, and queue refuses
	// with its error (the journal: whether the failed records reached
	// the disk is unknown).
	sticky  bool
	linger  time.Duration // how long a lazy item waits for a commit to ride along with
	writers sync.WaitGroup

	mu     sync.Mutex
	cur    *commitBatch[B]
	kick   chan struct{} // wakes a writer to commit now; closed by close
	lazy   chan struct{} // tells the writer a batch holds only items that can wait
	closed bool
	err    error // with sticky, the first commit's failure
}

// commitBatch is one batch of a groupCommit: what it holds, and how its
// commit went once done is closed.
type commitBatch[B any] struct {
	data B
	n    int           // items queued into data
	done chan struct{} // closed when err is set
	err  error
}

// newGroupCommit starts writers goroutines that commit batches with
// commit.
func newGroupCommit[B any](commit func(*B) error, sticky bool, linger time.Duration, writers int) *groupCommit[B] {
	c := &groupCommit[B]{
		commit: commit,
		sticky: sticky,
		linger: linger,
		cur:    &commitBatch[B]{done: make(chan struct{})},
		kick:   make(chan struct{}, 1),
		lazy:   make(chan struct{}, 1),
	}
	for range writers {
		c.writers.Go(c.run)
	}
	return c
}

// queue has add put one item in the batch being gathered, under the
// batch's lock, and returns the batch and add's index for the item.
// urgent wakes a writer at once; otherwise the batch is committed within
// linger. It fails with errGroupClosed after close, with the sticky
// error after a failed commit, or with add's error (nothing queued).
func (c *groupCommit[B]) queue(urgent bool, add func(b *B) (int, error)) (*commitBatch[B], int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, 0, errGroupClosed
	}
	if c.err != nil {
		return nil, 0, c.err
	}
	b := c.cur
	i, err := add(&b.data)
	if err != nil {
		return nil, 0, err
	}
	b.n++
	switch {
	case urgent:
		wake(c.kick)
	case b.n == 1:
		wake(c.lazy)
	}
	return b, i, nil
}

// wait has b committed now if it is still waiting, and returns once it
// is durable, or with the error that kept it from being so.
func (c *groupCommit[B]) wait(b *commitBatch[B]) error {
	select {
	case <-b.done:
	default:
		c.mu.Lock()
		if !c.closed { // close commits it anyway
			wake(c.kick)
		}
		c.mu.Unlock()
		<-b.done
	}
	return b.err
}

// wake signals a writer on ch without blocking: a signal already pending
// is enough. The caller holds c.mu and c is not closed.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run is a writer goroutine: it commits whatever is waiting, until close.
func (c *groupCommit[B]) run() {
	linger := time.NewTimer(c.linger)
	linger.Stop()
	for {
		open := true
		select {
		case _, open = <-c.kick:
		case <-c.lazy:
			// An item that need not be durable yet: commit it within
			// linger, with an urgent one if one comes sooner.
			linger.Reset(c.linger)
			continue
		case <-linger.C:
		}
		c.mu.Lock()
		var b *commitBatch[B]
		if c.cur.n > 0 {
			b = c.cur
			c.cur = &commitBatch[B]{done: make(chan struct{})}
		}
		err := c.err
		c.mu.Unlock()
		if b != nil {
			if err == nil {
				err = c.commit(&b.data)
			}
			if err != nil && c.sticky {
				c.mu.Lock()
				c.err = err // so no later batch commits past a failed one
				c.mu.Unlock()
			}
			b.err = err
			close(b.done)
		}
		if !open {
			return
		}
	}
}

// close commits the items already queued, stops the writers and returns
// the sticky error, if there was one; false if close was called before.
func (c *groupCommit[B]) close() (bool, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false, nil
	}
	c.closed = true
	close(c.kick)
	c.mu.Unlock()
	c.writers.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return true, c.err
}
