package campaign

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestPace: what holds a call start back, how long, and what stops every
// call start, from the state alone, in the order pace weighs them: the
// breaker, the campaign's window, the service's pause, the turn at the
// rate limiter, the deliveries to read, the places among the calls in
// progress.
func TestPace(t *testing.T) {
	ny := dtNewYork(t)
	weekdays := &Window{Loc: ny, days: [7]bool{false, true, true, true, true, true, false}, start: 9 * 60, end: 17 * 60}
	never := &Window{Loc: ny}
	saturday := time.Date(2025, 1, 4, 12, 0, 0, 0, ny)
	monday := time.Date(2025, 1, 6, 9, 0, 0, 0, ny)
	now := monday.Add(time.Hour) // open
	broken := errors.New("the breaker is open")
	for _, tc := range []struct {
		name string
		s    paceState
		hold hold
		wait time.Duration
		stop error
	}{
		{"nothing holds it", paceState{now: now}, holdNone, 0, nil},
		{"a turn that came, a place free", paceState{now: now, turn: now}, holdNone, 0, nil},
		{"the breaker stops it before any wait", paceState{now: saturday, broken: broken, window: weekdays, pauseUntil: saturday.Add(time.Minute), noTurn: true}, holdNone, 0, broken},
		{"the window closed: until it opens", paceState{now: saturday, window: weekdays}, holdHours, monday.Sub(saturday), nil},
		{"the window opens before --until", paceState{now: saturday, window: weekdays, until: monday}, holdHours, monday.Sub(saturday), nil},
		{"the window opens past --until", paceState{now: saturday, window: weekdays, until: monday.Add(-time.Minute)}, holdHours, 0, ErrOutsideHours},
		{"a window that never opens", paceState{now: saturday, window: never}, holdHours, 0, errNeverOpens},
		{"a window kept in each contact's zone", paceState{now: saturday, window: &Window{Contact: true}}, holdNone, 0, nil},
		{"an open window", paceState{now: now, window: weekdays}, holdNone, 0, nil},
		{"the window before the pause", paceState{now: saturday, window: weekdays, pauseUntil: monday.Add(time.Hour)}, holdHours, monday.Sub(saturday), nil},
		{"the service's pause", paceState{now: now, pauseUntil: now.Add(7 * time.Second), noTurn: true}, holdPause, 7 * time.Second, nil},
		{"a pause that ended", paceState{now: now, pauseUntil: now}, holdNone, 0, nil},
		{"no turn yet", paceState{now: now, noTurn: true, unread: true, slotWait: time.Minute}, needTurn, 0, nil},
		{"its turn to come", paceState{now: now, turn: now.Add(20 * time.Millisecond), unread: true, slotWait: time.Minute}, holdTurn, 20 * time.Millisecond, nil},
		{"the deliveries to read", paceState{now: now, turn: now, unread: true, slotWait: time.Minute}, needRead, 0, nil},
		{"every place held", paceState{now: now, turn: now, slotWait: 20 * time.Second}, holdSlot, 20 * time.Second, nil},
		{"every place held, deliveries followed", paceState{now: now, turn: now, slotWait: 20 * time.Second, poll: time.Second}, holdSlot, time.Second, nil},
		{"a place frees before the next look", paceState{now: now, turn: now, slotWait: 300 * time.Millisecond, poll: time.Second}, holdSlot, 300 * time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hold, wait, stop := pace(tc.s)
			if hold != tc.hold || wait != tc.wait || !errors.Is(stop, tc.stop) || (stop == nil) != (tc.stop == nil) {
				t.Errorf("pace = %d, %v, %v; want %d, %v, %v", hold, wait, stop, tc.hold, tc.wait, tc.stop)
			}
		})
	}
}

// TestPacerSpendsTurns: a start takes one turn at the limiter, keeps it
// while it waits for it, and spends it when it waits for the service's
// pause or for a place: it then takes a new one, so that the starts held
// back do not all go at once when the pause ends. One that goes takes a
// place among the calls in progress.
func TestPacerSpendsTurns(t *testing.T) {
	t0 := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	interval := 20 * time.Millisecond
	p := &pacer{limiter: rate.NewLimiter(rate.Every(interval), 1), active: newActiveCalls(1, time.Minute)}
	next := func(now time.Time, st *start) (hold, time.Duration) {
		t.Helper()
		h, wait, stop := p.next(now, st, "+12122010001", "agent_a")
		if stop != nil {
			t.Fatal(stop)
		}
		return h, wait
	}

	var a, b start
	a.read, b.read = true, true
	if h, _ := next(t0, &a); h != holdNone || a.slot == 0 {
		t.Fatalf("the first start: %d, slot %d; want it to go with a place", h, a.slot)
	}
	if h, wait := next(t0, &b); h != holdTurn || wait != interval {
		t.Fatalf("the second start: %d, %v; want its turn in %v", h, wait, interval)
	}
	turn := b.turn
	if h, wait := next(t0.Add(interval/2), &b); h != holdTurn || wait != interval/2 || b.turn != turn {
		t.Fatalf("halfway to its turn: %d, %v, turn %v; want the same turn, %v on", h, wait, b.turn, interval/2)
	}
	if h, wait := next(t0.Add(interval), &b); h != holdSlot || wait != time.Second || !b.turn.IsZero() {
		t.Fatalf("its turn came with the one place held: %d, %v, turn %v; want a wait for the place, the turn spent", h, wait, b.turn)
	}

	p.release(a.slot)
	if until, longer := p.pause(t0.Add(interval), 7*time.Second); !longer || !until.Equal(t0.Add(interval+7*time.Second)) {
		t.Fatalf("pause: %v, %v", until, longer)
	}
	if h, wait := next(t0.Add(2*interval), &b); h != holdPause || wait != 7*time.Second-interval {
		t.Fatalf("during the pause: %d, %v", h, wait)
	}
	end := t0.Add(interval + 7*time.Second)
	if h, _ := next(end, &b); h != holdNone || b.slot == 0 {
		t.Fatalf("at the pause's end: %d, slot %d; want it to go", h, b.slot)
	}
	// The start whose intent is on disk goes at once, unless a pause
	// began meanwhile: then it waits the pause out and takes a new turn.
	if h, _ := next(end, &b); h != holdNone {
		t.Fatalf("again with its turn: %d", h)
	}
	p.pause(end, interval/4)
	if h, _ := next(end, &b); h != holdPause || !b.turn.IsZero() {
		t.Fatalf("a pause after its turn: %d, turn %v; want the pause, the turn spent", h, b.turn)
	}
	if h, wait := next(end.Add(interval/4), &b); h != holdTurn || wait != interval*3/4 {
		t.Fatalf("after that pause: %d, %v; want a new turn, %v on", h, wait, interval*3/4)
	}
}
