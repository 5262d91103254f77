package campaign

import (
	"fmt"
	"sync"
	"time"
)

// activeCalls keeps the calls a run has in progress, for
// pace.max_active_calls: Run's workers take a slot before each call start
// and give it back when the call was not placed. A call holds its slot
// from its start until its end is delivered (the run follows the
// deliveries `callrun listen` stores, with outcomes:) or for
// pace.call_length, whichever comes first; its start is taken to be the
// time its answer came, the latest it can have been placed, so a run
// never counts a call as ended before the service does. A nil
// *activeCalls holds no limit. The pacer's lock guards it.
type activeCalls struct {
	max    int
	length time.Duration
	calls  map[int]*activeCall // by slot
	next   int
	// over are the ids of the calls whose end was delivered: a second
	// delivery of one call's end (it says something more, and is stored
	// beside the first) frees no other call's slot.
	over map[string]bool
}

// activeCall is one slot's call.
type activeCall struct {
	phone   string // E.164
	agentID string
	callID  string    // the call id the service's answer gave; "" when none
	start   time.Time // zero while the call start is in flight
	ended   bool      // its end was delivered while its start was in flight
}

func newActiveCalls(max int, length time.Duration) *activeCalls {
	if max <= 0 {
		return nil
	}
	return &activeCalls{max: max, length: length, calls: map[int]*activeCall{}, over: map[string]bool{}}
}

// wait returns how long from now until the first call in progress ends
// at the latest, while every slot is held; 0 when one is free. It forgets
// the calls that ended by now.
func (a *activeCalls) wait(now time.Time) time.Duration {
	if a == nil {
		return 0
	}
	var first time.Time
	for id, c := range a.calls {
		if c.start.IsZero() {
			continue // in flight: held until its answer
		}
		end := c.start.Add(a.length)
		if !end.After(now) {
			delete(a.calls, id)
		} else if first.IsZero() || end.Before(first) {
			first = end
		}
	}
	switch {
	case len(a.calls) < a.max:
		return 0
	case first.IsZero():
		// Every slot is a call start in flight: its answer frees or
		// starts it. Ask again shortly.
		return min(a.length, time.Second)
	}
	return first.Sub(now)
}

// take takes a slot at now for a call to phone through agent agentID and
// returns its id; when all are held it returns 0 and wait's wait.
func (a *activeCalls) take(now time.Time, phone, agentID string) (slot int, wait time.Duration) {
	if wait = a.wait(now); a == nil || wait > 0 {
		return 0, wait
	}
	a.next++
	a.calls[a.next] = &activeCall{phone: phone, agentID: agentID}
	return a.next, 0
}

// started records that the call of slot may have been placed, as of at,
// with the call id callID the service's answer gave (or ""): it holds the
// slot until its end is delivered, or until at plus the call's length. A
// call whose end came while its start was in flight gives its slot back
// now.
func (a *activeCalls) started(slot int, at time.Time, callID string) {
	if a == nil || slot == 0 {
		return
	}
	c := a.calls[slot]
	if c == nil {
		return
	}
	if c.ended {
		delete(a.calls, slot)
		return
	}
	c.start, c.callID = at, callID
}

// release gives back the slot of a call that was not placed.
func (a *activeCalls) release(slot int) {
	if a == nil || slot == 0 {
		return
	}
	delete(a.calls, slot)
}

// ended gives back the slot of a call whose end was delivered: the call
// callID names, when one in progress has that id; else a call to phone
// (through agentID, when the delivery names one), of several the one that
// started first (a call whose start is in flight started last), but never
// one whose id is another; a call whose end was delivered already frees
// nothing more. It reports whether a slot was freed.
func (a *activeCalls) ended(callID, phone, agentID string) bool {
	if a == nil {
		return false
	}
	if callID != "" {
		if a.over[callID] {
			return false
		}
		a.over[callID] = true
		for id, c := range a.calls {
			if c.callID == callID {
				delete(a.calls, id)
				return true
			}
		}
	}
	best := 0
	for id, c := range a.calls {
		if phone == "" || c.phone != phone || c.ended || agentID != "" && c.agentID != agentID || callID != "" && c.callID != "" {
			continue
		}
		if b := a.calls[best]; best == 0 || startedBefore(c, b) || !startedBefore(b, c) && id < best {
			best = id
		}
	}
	if best == 0 {
		return false
	}
	if a.calls[best].start.IsZero() {
		a.calls[best].ended = true
	} else {
		delete(a.calls, best)
	}
	return true
}

// startedBefore reports whether call c started before call b; a call
// whose start is in flight started after every other.
func startedBefore(c, b *activeCall) bool {
	switch {
	case c.start.IsZero():
		return false
	case b.start.IsZero():
		return true
	}
	return c.start.Before(b.start)
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
