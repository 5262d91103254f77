package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"slices"
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
// call.answered and call.ended are POSTed to URL with the contact's fields
// (the call start's form, less local_presence_number and
// override_agent_id) and event, as a form unless Shape says otherwise. A
// delivery the receiver does not answer 2xx is sent again after Retry,
// doubled each time up to MaxRetry, Attempts times in all. The zero value
// delivers nothing.
type AccountWebhook struct {
	URL      string
	Retry    time.Duration // first wait after a failed delivery; 0 -> 100ms
	MaxRetry time.Duration // longest wait; 0 -> 5s
	Attempts int           // attempts per delivery; 0 -> 20
	// Shape is how the deliveries are written: one of Shapes; empty is
	// ShapeForm.
	Shape string
	// SigningSecret, when set, signs every envelope (ShapeEnvelope, and
	// ShapeMixed's envelopes) in its SignatureField; see SignEnvelope.
	// Without it an envelope has no signature member. It is an error
	// with a shape that never sends an envelope.
	SigningSecret string
	// CallerNumber, when set, is the envelope's data.caller_number, as a
	// service that writes there the line it calls from; empty writes
	// the contact's phone_number there.
	CallerNumber string
	// TranscriptBytes is the length of the transcript an envelope's
	// call.ended carries; 0 is a two-line dialogue. A large one makes
	// the bodies of hundreds of KiB real services send.
	TranscriptBytes int
	// ShareDuplicate is the share of acknowledged deliveries sent once
	// more, as a service does whose acknowledgement was lost.
	ShareDuplicate float64
	// OutOfOrder sends each call's events after it ended, last first
	// (call.ended, call.answered, call.started).
	OutOfOrder bool
	// ShareLate is the share of deliveries held back LateBy (0 -> 2s)
	// before their first attempt, while the call's other events go on:
	// a late call.started comes after its call.ended.
	ShareLate float64
	LateBy    time.Duration
	// ShareForged is the share of placed calls for which a forger also
	// POSTs a call.ended, with status=forged, to URL with its last path
	// segment (the secret) replaced: once, never retried. A receiver
	// must refuse and never store it.
	ShareForged float64
	// ShareOptOut is the share of placed calls whose person asks not to
	// be called again: their call.ended carries OptOutField=OptOutValue
	// (0 -> disposition=dnc), what a campaign's outcomes.opt_out matches.
	ShareOptOut              float64
	OptOutField, OptOutValue string
	Seed                     int64 // seed of the fault draws; 0 -> 1
}

// Delivery is one account webhook delivery in the deliveries ledger, with
// its attempts.
type Delivery struct {
	Seq     int    `json:"seq"` // 1-based, in order of the first attempt
	CallID  string `json:"call_id"`
	AgentID string `json:"agent_id"`
	Event   string `json:"event"`
	// Shape is how the delivery went over the wire, one of Shapes but
	// ShapeMixed.
	Shape string `json:"shape"`
	// Form holds the delivery's fields: the contact's, the event (but
	// in ShapeContactOnly), and the opt-out and forged status where
	// they apply. Shape says how they were written.
	Form      url.Values `json:"form"`
	Duplicate bool       `json:"duplicate,omitempty"` // a second sending of an acknowledged delivery
	Late      bool       `json:"late,omitempty"`      // held back AccountWebhook.LateBy
	Forged    bool       `json:"forged,omitempty"`    // sent to a wrong secret path, once
	Attempts  int        `json:"attempts"`
	Status    int        `json:"status,omitempty"` // the last answer's status
	Acked     bool       `json:"acked"`            // the receiver answered 2xx
	Err       string     `json:"error,omitempty"`  // the last failure
	At        time.Time  `json:"at"`               // the last attempt
	// Sent is when the last attempt was sent (At is when it was
	// answered): a receiver cannot have seen it before.
	Sent time.Time `json:"sent"`
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

// scheduleDeliveriesLocked arranges the account webhooks of a call placed
// with agent agentID.
func (s *Server) scheduleDeliveriesLocked(callID, agentID string, form url.Values) {
	aw := s.opts.AccountWebhook
	if aw.URL == "" || s.closed {
		return
	}
	contact := url.Values{}
	for k, v := range form {
		if k != "local_presence_number" && k != "override_agent_id" && len(v) > 0 {
			contact.Set(k, v[0])
		}
	}
	optOut := drawShare(s.rngHook, aw.ShareOptOut)
	forged := drawShare(s.rngHook, aw.ShareForged)
	s.hookStartLocked()
	go s.deliverEvents(Delivery{CallID: callID, AgentID: agentID}, contact, optOut, forged)
}

// deliverEvents sends the three events of call (its CallID and AgentID):
// call.started at once, call.answered halfway through, call.ended when it
// ends; or, with OutOfOrder, all three after it ended, last first. A late
// one goes on its own after LateBy. With optOut, call.ended says the
// person opted out; with forged, a forger sends a call.ended to a wrong
// secret once the call ended. Each delivery takes its shape here.
func (s *Server) deliverEvents(call Delivery, contact url.Values, optOut, forged bool) {
	defer s.hookDone()
	aw := s.opts.AccountWebhook
	half := s.opts.CallDuration / 2
	steps := []struct {
		event string
		wait  time.Duration
	}{{EventStarted, 0}, {EventAnswered, half}, {EventEnded, s.opts.CallDuration - half}}
	if aw.OutOfOrder {
		steps = []struct {
			event string
			wait  time.Duration
		}{{EventEnded, s.opts.CallDuration}, {EventAnswered, 0}, {EventStarted, 0}}
	}
	for _, st := range steps {
		if !s.sleep(st.wait) {
			return
		}
		d := s.delivery(call, st.event, contact)
		if st.event == EventEnded && optOut {
			d.Form.Set(aw.OptOutField, aw.OptOutValue)
		}
		if !s.draw(aw.ShareLate) {
			s.sendWithDuplicate(d)
			continue
		}
		d.Late = true
		s.mu.Lock()
		s.hookStartLocked()
		s.mu.Unlock()
		go func() {
			defer s.hookDone()
			if s.sleep(aw.LateBy) {
				s.sendWithDuplicate(d)
			}
		}()
	}
	if forged {
		d := s.delivery(call, EventEnded, contact)
		d.Form.Set("status", "forged")
		d.Forged = true
		s.sendDelivery(d)
	}
}

// delivery makes the delivery of event for call, with the contact's
// fields, in the shape AccountWebhook.Shape gives it.
func (s *Server) delivery(call Delivery, event string, contact url.Values) Delivery {
	s.mu.Lock()
	call.Shape = pickShape(s.opts.AccountWebhook.Shape, s.rngHook)
	s.mu.Unlock()
	call.Event, call.Form = event, cloneValues(contact)
	if call.Shape != ShapeContactOnly {
		call.Form.Set("event", event)
	}
	return call
}

// sendWithDuplicate sends d, and once more, as a duplicate, for the share
// ShareDuplicate of those acknowledged.
func (s *Server) sendWithDuplicate(d Delivery) {
	if s.sendDelivery(d) && s.draw(s.opts.AccountWebhook.ShareDuplicate) {
		d.Duplicate = true
		s.sendDelivery(d)
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

// draw reports, at random, whether an event of this share happens.
func (s *Server) draw(share float64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return drawShare(s.rngHook, share)
}

// drawShare draws from rng, which the caller guards.
func drawShare(rng *mrand.Rand, share float64) bool {
	return share > 0 && rng.Float64() < share
}

// sendDelivery sends one delivery until the receiver acknowledges it, the
// attempts run out or the server closes, recording each attempt in the
// deliveries ledger; a forged one is sent once, to a wrong secret. It
// reports whether the delivery was acknowledged.
func (s *Server) sendDelivery(d Delivery) bool {
	aw := s.opts.AccountWebhook
	target, attempts := aw.URL, aw.Attempts
	s.mu.Lock()
	if d.Forged {
		target, attempts = forgeURL(aw.URL, s.rngHook), 1
	}
	idx := len(s.deliveries)
	d.Seq, d.Form = idx+1, cloneValues(d.Form)
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	u, err := url.Parse(target)
	if err != nil || !isHTTPURL(target) {
		s.noteDelivery(idx, 0, "invalid webhook URL", time.Time{})
		return false
	}
	if !s.opts.AllowExternalWebhooks && !isLoopbackHost(u.Hostname()) {
		s.noteDelivery(idx, 0, "not a loopback host and AllowExternalWebhooks is off", time.Time{})
		return false
	}
	wait := aw.Retry
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			if !s.sleep(wait) {
				return false
			}
			wait = min(2*wait, aw.MaxRetry)
		}
		sent := s.now()
		status, problem := s.post(target, d)
		s.noteDelivery(idx, status, problem, sent)
		if problem == "" {
			s.logf("sandbox: account webhook %s for %s -> %d%s", d.Event, d.CallID, status, forgedNote(d.Forged))
			return true
		}
	}
	s.logf("sandbox: account webhook %s for %s given up after %d attempt(s)%s", d.Event, d.CallID, attempts, forgedNote(d.Forged))
	return false
}

func forgedNote(forged bool) string {
	if forged {
		return " (forged, to a wrong secret)"
	}
	return ""
}

// forgeURL returns target with its last path segment replaced by as many
// random hex digits (at least 16): the secret guessed wrong.
func forgeURL(target string, rng *mrand.Rand) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	dir, secret := path.Split(u.Path)
	const hexDigits = "0123456789abcdef"
	guess := make([]byte, max(len(secret), 16))
	for {
		for i := range guess {
			guess[i] = hexDigits[rng.IntN(len(hexDigits))]
		}
		if string(guess) != secret {
			break
		}
	}
	u.Path, u.RawPath = dir+string(guess), ""
	return u.String()
}

// post sends one attempt of d, written in its shape as now; problem is
// empty when it was acknowledged.
func (s *Server) post(target string, d Delivery) (status int, problem string) {
	w, err := s.encode(d, s.now())
	if err != nil {
		return 0, "encoding the delivery: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(s.ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(w.body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", w.contentType)
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

func (s *Server) noteDelivery(idx, status int, problem string, sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.deliveries[idx]
	d.Attempts++
	d.Status, d.Err, d.At, d.Sent = status, problem, s.now(), sent
	d.Acked = problem == ""
}

// Validate reports whether aw is usable: no negative durations, counts or
// lengths, shares within [0, 1], a known shape, and a signing secret only
// with a shape that sends envelopes. `callrun sandbox` checks its flags
// with it; NewServer and Listen check the same.
func (aw AccountWebhook) Validate() error {
	share := func(x float64) bool { return x >= 0 && x <= 1 }
	if aw.Retry < 0 || aw.MaxRetry < 0 || aw.Attempts < 0 || aw.LateBy < 0 {
		return fmt.Errorf("account webhook: negative retry, attempts or delay of late deliveries")
	}
	if !share(aw.ShareDuplicate) || !share(aw.ShareLate) || !share(aw.ShareForged) || !share(aw.ShareOptOut) {
		return fmt.Errorf("account webhook: a share of duplicate, late, forged deliveries or of opt-outs outside [0, 1]")
	}
	if aw.Shape != "" && !slices.Contains(Shapes, aw.Shape) {
		return fmt.Errorf("account webhook: unknown shape %q (want one of %s)", aw.Shape, strings.Join(Shapes, ", "))
	}
	if aw.SigningSecret != "" && aw.Shape != ShapeEnvelope && aw.Shape != ShapeMixed {
		return fmt.Errorf("account webhook: a signing secret signs envelopes, and shape %q sends none (use %s or %s)", cmp.Or(aw.Shape, ShapeForm), ShapeEnvelope, ShapeMixed)
	}
	if aw.TranscriptBytes < 0 {
		return fmt.Errorf("account webhook: negative transcript length")
	}
	return nil
}

// checkAccountWebhook checks aw and fills its defaults.
func checkAccountWebhook(aw *AccountWebhook) error {
	if err := aw.Validate(); err != nil {
		return err
	}
	if aw.Shape == "" {
		aw.Shape = ShapeForm
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
	if aw.LateBy == 0 {
		aw.LateBy = 2 * time.Second
	}
	if aw.OptOutField == "" {
		aw.OptOutField = "disposition"
	}
	if aw.OptOutValue == "" {
		aw.OptOutValue = "dnc"
	}
	return nil
}

func newHookRand(seed int64) *mrand.Rand {
	if seed == 0 {
		seed = 1
	}
	return mrand.New(mrand.NewPCG(uint64(seed), 0x1d2c3b4a))
}
