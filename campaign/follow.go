package campaign

import (
	"fmt"
	"sync"
	"time"

	"github.com/callrun/callrun/report/store"
)

// DeliveryFeed returns the webhook deliveries stored since it was last
// called (since the run began, the first time): how a run learns, while
// it runs, of the deliveries `callrun listen` (another process) stores.
// A store's FollowDeliveries makes one.
type DeliveryFeed func() ([]store.Delivery, error)

// DefaultDeliveryWait is how long after a run's first call start a
// campaign that collects outcomes waits for a delivery before callrun
// says that its webhook URL is probably wrong.
const DefaultDeliveryWait = 15 * time.Minute

// DefaultDeliveryPoll is how often a run asks its DeliveryFeed for new
// deliveries, at most.
const DefaultDeliveryPoll = time.Second

// DeliveryQuiet is the one rule by which callrun decides that calls were
// started but no webhook delivery came: it keeps the latest delivery and
// the first call start after it (a delivery at the same instant as a
// call start answers it), and that call start is overdue once it is the
// wait old with still no delivery. A run (its follower), status and
// listen each keep one, noting deliveries and call starts in the order
// they came, or every delivery first. The zero DeliveryQuiet has seen
// neither.
type DeliveryQuiet struct {
	delivered time.Time // the latest delivery; zero when none came
	waiting   time.Time // the first call start after it; zero when none
}

// Delivered notes a delivery at at: the call starts before it were
// answered.
func (q *DeliveryQuiet) Delivered(at time.Time) {
	if at.After(q.delivered) {
		q.delivered = at
	}
	if !q.waiting.After(q.delivered) {
		q.waiting = time.Time{}
	}
}

// Started notes a call start at at.
func (q *DeliveryQuiet) Started(at time.Time) {
	if at.After(q.delivered) && (q.waiting.IsZero() || at.Before(q.waiting)) {
		q.waiting = at
	}
}

// Overdue returns the call start that has waited wait or more at now
// with no delivery after it; zero when none has.
func (q *DeliveryQuiet) Overdue(now time.Time, wait time.Duration) time.Time {
	if q.waiting.IsZero() || now.Sub(q.waiting) < wait {
		return time.Time{}
	}
	return q.waiting
}

// Warning is what callrun says when a call start is Overdue at now: that
// the webhook URL is probably wrong or unreachable; "" when none is.
func (q *DeliveryQuiet) Warning(now time.Time, wait time.Duration) string {
	since := q.Overdue(now, wait)
	if since.IsZero() {
		return ""
	}
	return fmt.Sprintf("no webhook delivery has come in the %s since a call started at %s: the webhook URL is probably wrong or unreachable. Check that outcomes.url is the account webhook and the agents' webhook on the service, that the service can reach it, and that callrun listen is running behind it",
		now.Sub(since).Round(time.Minute), since.UTC().Format(time.RFC3339))
}

// follower is a run's reading of its DeliveryFeed: it gives back the
// slots of calls whose end was delivered (pace.max_active_calls), and
// says so, once, when no delivery comes for DefaultDeliveryWait after a call start
// (the run's first, or the first after the last delivery). Run's workers
// share it.
type follower struct {
	mu     sync.Mutex
	r      *runner
	feed   DeliveryFeed
	polled time.Time // the run's clock at the last poll
	// quiet has the call starts and the deliveries the run saw, each at
	// the run's clock when it saw it.
	quiet  DeliveryQuiet
	warned bool // the warning was logged, since the last delivery
	broken bool // the feed failed: the run goes on without it
}

// callStarting notes a call about to start at now, and polls the feed
// when it is due.
func (fl *follower) callStarting(now time.Time) {
	if fl == nil {
		return
	}
	fl.mu.Lock()
	fl.quiet.Started(now)
	fl.mu.Unlock()
	fl.poll(now, false)
}

// poll reads the deliveries stored since the last poll, if
// DefaultDeliveryPoll has passed since it (or always, with force), and gives back the slots
// of the calls they end; it logs the no-delivery warning when it is due.
func (fl *follower) poll(now time.Time, force bool) {
	if fl == nil {
		return
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.broken || !force && !fl.polled.IsZero() && now.Sub(fl.polled) < DefaultDeliveryPoll {
		return
	}
	fl.polled = now
	ds, err := fl.feed()
	if err != nil {
		fl.broken = true
		fl.r.opts.Warnf("reading the webhook deliveries failed (%v): the run goes on, counting each call in progress for pace.call_length", err)
	}
	if len(ds) > 0 {
		fl.quiet.Delivered(now)
		fl.warned = false
	}
	for _, d := range ds {
		if !endsCall(d) {
			continue
		}
		fl.r.pace.ended(d.CallID, fl.r.f.DeliveryNumber(d.Fields).E164, d.AgentID)
	}
	if w := fl.warning(now); w != "" && !fl.warned {
		fl.warned = true
		fl.r.opts.Warnf("%s", w)
	}
}

// warning is the no-delivery warning at now, if it is due. The caller
// holds fl.mu.
func (fl *follower) warning(now time.Time) string {
	if fl.broken {
		return ""
	}
	return fl.quiet.Warning(now, DefaultDeliveryWait)
}

// end reads the feed once more at the run's end and returns the
// no-delivery warning if it holds then.
func (fl *follower) end(now time.Time) string {
	if fl == nil {
		return ""
	}
	fl.poll(now, true)
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.warning(now)
}

// endsCall reports whether delivery d says its call ended, by the rule the
// report shares (deliveryRank): a call.ended (or completed) event, or an
// agent webhook's delivery that names no event. An account webhook's
// contact-only delivery never ends a call: the call holds its slot until
// pace.call_length.
func endsCall(d store.Delivery) bool { return deliveryRank(d) == rankEnded }
