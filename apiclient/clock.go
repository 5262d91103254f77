package apiclient

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxClockOffset is how far this machine's clock may be from the
// service's before a run starts no call: the run reads the called
// person's hours and contact pressure by this machine's clock. An
// answer's Date has whole seconds, and its trip takes a few more.
const MaxClockOffset = time.Minute

// ServiceClock is how far this machine's clock is from the service's, as
// the Date header of the service's answers tells it (with Age added, for
// an answer a cache kept). A [Client] keeps one, from the answers to
// every request it sends; a run checks it before each call start
// ([ServiceClock.Check]).
type ServiceClock struct {
	now    func() time.Time // this machine's clock
	mu     sync.Mutex
	offset time.Duration // this machine's clock less the service's, at the last answer with a Date
	at     time.Time     // the service's clock then
	seen   bool
}

// NewServiceClock returns a ServiceClock that reads this machine's clock
// with now (nil: time.Now).
func NewServiceClock(now func() time.Time) *ServiceClock {
	if now == nil {
		now = time.Now
	}
	return &ServiceClock{now: now}
}

// observe notes the offset resp's Date says, if it has one that reads.
func (c *ServiceClock) observe(resp *http.Response) {
	if c == nil || resp == nil {
		return
	}
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return
	}
	if age, err := strconv.ParseInt(resp.Header.Get("Age"), 10, 32); err == nil && age > 0 {
		date = date.Add(time.Duration(age) * time.Second)
	}
	off := c.now().Sub(date)
	c.mu.Lock()
	c.offset, c.at, c.seen = off, date, true
	c.mu.Unlock()
}

// Offset returns this machine's clock less the service's, as of the last
// answer with a Date; ok is false when no answer had one.
func (c *ServiceClock) Offset() (offset time.Duration, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, c.seen
}

// Check returns an error when the last answer with a Date put this
// machine's clock more than max from the service's, saying by how much
// and what to do; nil when it did not, or no answer had a Date (nothing
// to compare with).
func (c *ServiceClock) Check(max time.Duration) error {
	c.mu.Lock()
	off, at, seen := c.offset, c.at, c.seen
	c.mu.Unlock()
	if !seen || off.Abs() <= max {
		return nil
	}
	way := "ahead of"
	if off < 0 {
		way = "behind"
	}
	// A Date has whole seconds: past ten minutes, say the minutes.
	by := off.Abs().Round(time.Second)
	if by >= 10*time.Minute {
		by = by.Round(time.Minute)
	}
	return fmt.Errorf("this machine's clock is %s %s the voice service's (its last answer was dated %s, this machine read %s): callrun reads the called person's calling hours and contact pressure by this machine's clock, so it starts no call while the two are more than %s apart; set this machine's clock right (turn on automatic time sync) and run again",
		by, way, at.UTC().Format(time.RFC3339), at.Add(off).UTC().Format(time.RFC3339), max)
}
