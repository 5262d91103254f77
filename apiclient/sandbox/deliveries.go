package sandbox

import (
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The account webhooks' events, in the order a call goes through them.
const (
	EventStarted  = "call.started"
	EventAnswered = "call.answered"
	EventEnded    = "call.ended"
)

// AccountWebhook configures the account webhooks (Setup > Webhooks on the
// live service): after a call is placed, its events call.started,
// call.answered and call.ended are POSTed as a form to URL with the
// contact's fields (the call start's form, less local_presence_number
// and override_agent_id) and event. A delivery the receiver does not
// answer 2xx is sent again after Retry, doubled each time up to MaxRetry,
// Attempts times in all. The zero value delivers nothing.
type AccountWebhook struct {
	URL      string
	Retry    time.Duration // first wait after a failed delivery; 0 -> 100ms
	MaxRetry time.Duration // longest wait; 0 -> 5s
	Attempts int           // attempts per delivery; 0 -> 20
	// ShareDuplicate is the share of acknowledged deliveries sent once
	// more, as a service does whose acknowledgement was lost.
	ShareDuplicate float64
	// OutOfOrder sends each call's events after it ended, last first
	// (call.ended, call.answered, call.started).
	OutOfOrder bool
	Seed       int64 // seed of the duplicate draws; 0 -> 1
}

// Delivery is one account webhook delivery in the deliveries ledger, with
// its attempts.
type Delivery struct {
	Seq       int        `json:"seq"` // 1-based, in order of the first attempt
	CallID    string     `json:"call_id"`
	Event     string     `json:"event"`
	Form      url.Values `json:"form"`
	Duplicate bool       `json:"duplicate,omitempty"` // a second sending of an acknowledged delivery
	Attempts  int        `json:"attempts"`
	Status    int        `json:"status,omitempty"` // the last answer's status
	Acked     bool       `json:"acked"`            // the receiver answered 2xx
	Err       string     `json:"error,omitempty"`  // the last failure
	At        time.Time  `json:"at"`               // the last attempt
}

// Deliveries returns a copy of the account webhook deliveries, in order of
// their first attempt.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.deliveries))
	for i, d := range s.deliveries {
		d.Form = cloneValues(d.Form)
		out[i] = d
	}
	return out
}

// scheduleDeliveriesLocked arranges the account webhooks of a placed call.
func (s *Server) scheduleDeliveriesLocked(callID string, form url.Values) {
	if s.opts.AccountWebhook.URL == "" || s.closed {
		return
	}
	contact := url.Values{}
	for k, v := range form {
		if k != "local_presence_number" && k != "override_agent_id" && len(v) > 0 {
			contact.Set(k, v[0])
		}
	}
	s.hooks.Add(1)
	go s.deliverEvents(callID, contact)
}

// deliverEvents sends a call's three events: call.started at once,
// call.answered halfway through, call.ended when it ends; or, with
// OutOfOrder, all three after it ended, last first.
func (s *Server) deliverEvents(callID string, contact url.Values) {
	defer s.hooks.Done()
	half := s.opts.CallDuration / 2
	steps := []struct {
		event string
		wait  time.Duration
	}{{EventStarted, 0}, {EventAnswered, half}, {EventEnded, s.opts.CallDuration - half}}
	if s.opts.AccountWebhook.OutOfOrder {
		steps = []struct {
			event string
			wait  time.Duration
		}{{EventEnded, s.opts.CallDuration}, {EventAnswered, 0}, {EventStarted, 0}}
	}
	for _, st := range steps {
		if !s.sleep(st.wait) {
			return
		}
		form := cloneValues(contact)
		form.Set("event", st.event)
		if s.sendDelivery(callID, st.event, form, false) && s.drawDuplicate() {
			s.sendDelivery(callID, st.event, form, true)
		}
	}
}

// sleep waits d, or until the server closes; it reports whether d passed.
func (s *Server) sleep(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

func (s *Server) drawDuplicate() bool {
	share := s.opts.AccountWebhook.ShareDuplicate
	if share <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rngHook.Float64() < share
}

// sendDelivery sends one delivery until the receiver acknowledges it, the
// attempts run out or the server closes, recording each attempt in the
// deliveries ledger. It reports whether the delivery was acknowledged.
func (s *Server) sendDelivery(callID, event string, form url.Values, dup bool) bool {
	aw := s.opts.AccountWebhook
	s.mu.Lock()
	idx := len(s.deliveries)
	s.deliveries = append(s.deliveries, Delivery{Seq: idx + 1, CallID: callID, Event: event, Form: cloneValues(form), Duplicate: dup})
	s.mu.Unlock()
	u, err := url.Parse(aw.URL)
	if err != nil || !isHTTPURL(aw.URL) {
		s.noteDelivery(idx, 0, "invalid webhook URL")
		return false
	}
	if !s.opts.AllowExternalWebhooks && !isLoopbackHost(u.Hostname()) {
		s.noteDelivery(idx, 0, "not a loopback host and AllowExternalWebhooks is off")
		return false
	}
	wait := aw.Retry
	for attempt := 1; attempt <= aw.Attempts; attempt++ {
		if attempt > 1 {
			if !s.sleep(wait) {
				return false
			}
			wait = min(2*wait, aw.MaxRetry)
		}
		status, problem := s.post(aw.URL, form)
		s.noteDelivery(idx, status, problem)
		if problem == "" {
			s.logf("sandbox: account webhook %s for %s -> %d", event, callID, status)
			return true
		}
	}
	s.logf("sandbox: account webhook %s for %s given up after %d attempts", event, callID, aw.Attempts)
	return false
}

// post sends one attempt; problem is empty when it was acknowledged.
func (s *Server) post(target string, form url.Values) (status int, problem string) {
	ctx, cancel := context.WithTimeout(s.ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "callrun-sandbox")
	resp, err := s.hookClient.Do(req)
	if err != nil {
		return 0, "not delivered: " + redactURLError(err.Error(), target)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, "receiver answered " + resp.Status
	}
	return resp.StatusCode, ""
}

// redactURLError keeps the webhook URL, whose path may hold a secret, out
// of an error text.
func redactURLError(msg, target string) string {
	return strings.ReplaceAll(msg, target, "the account webhook URL")
}

func (s *Server) noteDelivery(idx, status int, problem string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.deliveries[idx]
	d.Attempts++
	d.Status, d.Err, d.At = status, problem, s.now()
	d.Acked = problem == ""
}

// checkAccountWebhook fills AccountWebhook's defaults and checks it.
func checkAccountWebhook(aw *AccountWebhook) error {
	if aw.Retry < 0 || aw.MaxRetry < 0 || aw.Attempts < 0 || !(aw.ShareDuplicate >= 0 && aw.ShareDuplicate <= 1) {
		return fmt.Errorf("account webhook: negative retry, attempts or a share of duplicates outside [0, 1]")
	}
	if aw.Retry == 0 {
		aw.Retry = 100 * time.Millisecond
	}
	if aw.MaxRetry == 0 {
		aw.MaxRetry = 5 * time.Second
	}
	if aw.Attempts == 0 {
		aw.Attempts = 20
	}
	return nil
}

func newHookRand(seed int64) *mrand.Rand {
	if seed == 0 {
		seed = 1
	}
	return mrand.New(mrand.NewPCG(uint64(seed), 0x1d2c3b4a))
}
