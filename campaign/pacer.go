package campaign

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/callrun/callrun/report/store"
	"golang.org/x/time/rate"
)

// paceState is what may hold a call start back at one moment of a run;
// a zero field holds nothing. Run's producer fills in now, window and
// until before it hands out a contact, its workers the rest before each
// call start (pacer.next).
type paceState struct {
	now        time.Time
	broken     error         // the breaker's error, once it is open
	window     *Window       // hours:; one in each contact's zone holds nothing here
	until      time.Time     // --until: a window that opens only after it ends the run
	pauseUntil time.Time     // the end of the pause the service asked for (a 429)
	noTurn     bool          // the start has no turn at the rate limiter yet
	turn       time.Time     // when its turn comes
	unread     bool          // the deliveries stored since its turn came are not read
	slotWait   time.Duration // until a slot among the calls in progress may be free
	poll       time.Duration // with deliveries followed, how often to look again for a slot
}

// hold is what holds a call start back, in the order pace weighs them.
type hold int

const (
	holdNone  hold = iota // nothing: it may go
	holdHours             // the campaign's calling window is closed
	holdPause             // the service asked every call start to wait
	needTurn              // take a turn at the rate limiter, then ask again
	holdTurn              // its turn has not come
	needRead              // read the deliveries, then ask again
	holdSlot              // every place among the calls in progress is held
)

var errNeverOpens = errors.New("the calling window never opens: check hours: in the campaign file")

// pace decides from s alone, as vegeta's Pacer does for its attacker,
// whether a call start may go now: it returns what holds it and how long
// to wait before asking again, or stop, which ends every call start.
func pace(s paceState) (h hold, wait time.Duration, stop error) {
	if s.broken != nil {
		return holdNone, 0, s.broken
	}
	if w := s.window; w != nil && !w.Contact && !w.OpenHere(s.now) {
		next := w.NextChangeHere(s.now)
		switch {
		case next.IsZero():
			return holdHours, 0, errNeverOpens
		case !s.until.IsZero() && next.After(s.until):
			return holdHours, 0, ErrOutsideHours
		}
		return holdHours, next.Sub(s.now), nil
	}
	switch {
	case s.now.Before(s.pauseUntil):
		return holdPause, s.pauseUntil.Sub(s.now), nil
	case s.noTurn:
		return needTurn, 0, nil
	case s.now.Before(s.turn):
		return holdTurn, s.turn.Sub(s.now), nil
	case s.unread:
		return needRead, 0, nil
	case s.slotWait > 0 && s.poll > 0:
		return holdSlot, min(s.slotWait, s.poll), nil
	case s.slotWait > 0:
		return holdSlot, s.slotWait, nil
	}
	return holdNone, 0, nil
}

// pacer is the state pace decides from, which Run's workers share under
// one lock, and the rate limiter of every worker and agent.
type pacer struct {
	mu         sync.Mutex
	limiter    *rate.Limiter
	pauseUntil time.Time
	brk        breaker
	active     *activeCalls  // pace.max_active_calls; nil: no limit
	poll       time.Duration // DefaultDeliveryPoll with deliveries followed, else 0
}

// start is one call start on its way through the pacer.
type start struct {
	turn time.Time // when its turn at the rate limiter comes; zero: none
	read bool      // the deliveries were read since it came, or are not followed
	slot int       // its slot among the calls in progress; 0: none
	// written is set once its intent is on disk: a pause is then not
	// waited out, as its call start already counts from when the intent
	// was written; await sets paused instead, and the intent is written
	// again once the pause is over.
	written, paused bool
	// intended is when its intent began to be written (the intent's
	// time), which its start in contact pressure counts from or after.
	intended time.Time
}

// next asks pace about st at now, and takes st a turn at the rate limiter
// when it has none, and a slot when it may go. A turn is good until its
// call starts; a wait for the pause or for a slot spends it.
func (p *pacer) next(now time.Time, st *start, phone, agentID string) (h hold, wait time.Duration, stop error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := paceState{now: now, broken: p.brk.open(), pauseUntil: p.pauseUntil, noTurn: st.turn.IsZero(), turn: st.turn, unread: !st.read, poll: p.poll}
	if st.slot == 0 {
		s.slotWait = p.active.wait(now)
	}
	if h, wait, stop = pace(s); h == needTurn {
		res := p.limiter.ReserveN(now, 1)
		if !res.OK() {
			return holdNone, 0, fmt.Errorf("rate: Wait(n=1) exceeds limiter's burst %d", p.limiter.Burst())
		}
		st.turn = now.Add(res.DelayFrom(now))
		s.noTurn, s.turn = false, st.turn
		h, wait, stop = pace(s)
	}
	switch {
	case stop != nil:
	case h == holdPause:
		st.turn = time.Time{}
	case h == holdSlot:
		st.turn, st.read = time.Time{}, p.poll == 0
	case h == holdNone && st.slot == 0:
		st.slot, _ = p.active.take(now, phone, agentID)
	}
	return h, wait, stop
}

// pause holds every call start back until now plus d, unless a later
// pause does; it returns the end and whether it moved.
func (p *pacer) pause(now time.Time, d time.Duration) (until time.Time, longer bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	until = now.Add(d)
	if longer = until.After(p.pauseUntil); longer {
		p.pauseUntil = until
	}
	return until, longer
}

// settled, started, release and ended are breaker's and activeCalls',
// under the pacer's lock.
func (p *pacer) settled(rec *store.Record, said string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.brk.settled(rec, said)
}

func (p *pacer) started(slot int, at time.Time, callID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active.started(slot, at, callID)
}

func (p *pacer) release(slot int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active.release(slot)
}

func (p *pacer) ended(callID, phone, agentID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active.ended(callID, phone, agentID)
}
