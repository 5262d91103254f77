package campaign

import (
	"fmt"
	"sync"
	"time"
)

// activeCalls keeps the calls a run has in progress, for
// pace.max_active_calls: Run's workers take a slot before each call start
// and give it back when the call was not placed. A call holds its slot
// from its start for pace.call_length; its start is taken to be the time
// its answer came, the latest it can have been placed, so a run never
// counts a call as ended before the service does. A nil *activeCalls
// holds no limit.
type activeCalls struct {
	mu     sync.Mutex
	max    int
	length time.Duration
	starts map[int]time.Time // by slot; zero while the call start is in flight
	next   int
}

func newActiveCalls(max int, length time.Duration) *activeCalls {
	if max <= 0 {
		return nil
	}
	return &activeCalls{max: max, length: length, starts: map[int]time.Time{}}
}

// take takes a slot at now and returns its id; when all are held it
// returns 0 and how long until the first call in progress ends.
func (a *activeCalls) take(now time.Time) (slot int, wait time.Duration) {
	if a == nil {
		return 0, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var first time.Time
	for id, start := range a.starts {
		if start.IsZero() {
			continue // in flight: held until its answer
		}
		end := start.Add(a.length)
		if !end.After(now) {
			delete(a.starts, id)
		} else if first.IsZero() || end.Before(first) {
			first = end
		}
	}
	if len(a.starts) < a.max {
		a.next++
		a.starts[a.next] = time.Time{}
		return a.next, 0
	}
	if first.IsZero() {
		// Every slot is a call start in flight: its answer frees or
		// starts it. Ask again shortly.
		return 0, min(a.length, time.Second)
	}
	return 0, first.Sub(now)
}

// started records that the call of slot may have been placed, as of at:
// it holds the slot until at plus the call's length.
func (a *activeCalls) started(slot int, at time.Time) {
	if a == nil || slot == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.starts[slot] = at
}

// release gives back the slot of a call that was not placed.
func (a *activeCalls) release(slot int) {
	if a == nil || slot == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.starts, slot)
}

// answerNotes counts what the service answered that a person should read
// in the run's summary (a 2xx that said error, a page that was not the
// service's, an answer cut off), one line per kind, in the order first
// seen. Run's workers add to it; RunResult.Notes holds its lines.
type answerNotes struct {
	mu    sync.Mutex
	order []string
	n     map[string]int
}

func (a *answerNotes) add(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	if a.n[what] == 0 {
		a.order = append(a.order, what)
	}
	a.n[what]++
}

func (a *answerNotes) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, what := range a.order {
		out = append(out, fmt.Sprintf("%d call start(s) %s", a.n[what], what))
	}
	return out
}
