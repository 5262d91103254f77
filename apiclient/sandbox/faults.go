package sandbox

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Fault scopes: which requests Faults apply to. The token endpoints, the
// authorize endpoint and /_sandbox are never faulted by the scoped faults;
// ShareRefresh500 alone applies to the refresh endpoint, whatever the
// scope.
const (
	ScopeCalls = "calls" // call-start requests to the per-agent call endpoints
	ScopeAPI   = "api"   // agent create, list and call-endpoint requests
	ScopeAll   = "all"   // both
)

// Faults describes injected failures. The zero value injects none.
//
// For each request in scope the server applies, in order: Latency; the
// RateLimit token bucket (429); then one uniform random draw, seeded by Seed,
// picks at most one of the share faults. The shares partition [0, 1) in the
// order Share429, Share503, ShareDropBefore, Share500, ShareDrop,
// Share200HTML, Share200Error, Share202Error, Share403Limit, ShareStall: with
// Share429 = 0.2 and Share503 = 0.1, draws in [0, 0.2) answer 429, draws in
// [0.2, 0.3) answer 503, and the rest proceed. When the shares add up to more
// than 1, the later kinds get what is left. 429, 503, ShareDropBefore and
// the odd answers (Share200HTML, Share200Error, Share202Error,
// Share403Limit) act before the request does anything: nothing is placed.
// Share500, ShareDrop and ShareStall act after the call is placed (or, in
// the API scope, after the agent is created or the answer computed). The
// odd answers and MaxActive apply to call starts alone.
//
// MaxActive, checked on a call start that would be placed, refuses it with
// 403 {"error":"concurrency limit reached"} while MaxActive placed calls
// are in progress: a call is in progress for CallLength from its placing,
// on the sandbox's clock (Options.Now).
//
// ShareRefresh500 applies to POST /oauth/token/refresh alone, whatever the
// Scope, with a draw of its own (so it does not change which other requests
// are faulted): that share is answered 500 before acting, so the refresh
// token sent stays valid and no token is issued.
type Faults struct {
	Scope           string        `json:"scope"`             // ScopeCalls (default when empty), ScopeAPI or ScopeAll
	Latency         time.Duration `json:"latency"`           // added before answering
	RateLimit       float64       `json:"rate_limit"`        // >0: token bucket of this many requests/second, burst 1, across the scope
	Share429        float64       `json:"share_429"`         // share answered 429 with Retry-After, before acting
	RetryAfter      time.Duration `json:"retry_after"`       // Retry-After of Share429 and Share503 (whole seconds, rounded up, min 1); 0 -> 1s
	Share503        float64       `json:"share_503"`         // share answered 503 with Retry-After, before acting
	Share500        float64       `json:"share_500"`         // share answered 500 after acting (the call IS placed)
	ShareDrop       float64       `json:"share_drop"`        // share whose connection is closed with no answer after acting
	ShareDropBefore float64       `json:"share_drop_before"` // share whose connection is closed with no answer before acting
	ShareRefresh500 float64       `json:"share_refresh_500"` // share of refresh requests answered 500 before acting, whatever Scope says
	Seed            int64         `json:"seed"`              // seed of the fault choice; 0 -> 1

	Share200HTML  float64       `json:"share_200_html"`  // share answered 200 with an HTML maintenance page, before acting
	Share200Error float64       `json:"share_200_error"` // share answered 200 {"status":"error",...}, before acting
	Share202Error float64       `json:"share_202_error"` // share answered 202 {"error":...}, before acting
	Share403Limit float64       `json:"share_403_limit"` // share answered 403 {"error":"concurrency limit reached"}, before acting
	ShareStall    float64       `json:"share_stall"`     // share placed, answered 200, and whose body then stalls until the client leaves
	MaxActive     int           `json:"max_active"`      // >0: at most this many placed calls in progress; more are answered 403 concurrency limit
	CallLength    time.Duration `json:"call_length"`     // how long a placed call is in progress, for MaxActive; 0 -> Options.CallDuration
}

// Validate reports whether f is usable: a known scope, no negative durations
// or rates, and every share within [0, 1].
func (f Faults) Validate() error {
	switch f.Scope {
	case "", ScopeCalls, ScopeAPI, ScopeAll:
	default:
		return fmt.Errorf("faults: unknown scope %q (want %q, %q or %q)", f.Scope, ScopeCalls, ScopeAPI, ScopeAll)
	}
	if f.Latency < 0 || f.RetryAfter < 0 || f.CallLength < 0 || f.MaxActive < 0 {
		return errors.New("faults: latency, retry_after, call_length and max_active must not be negative")
	}
	if !(f.RateLimit >= 0) || math.IsInf(f.RateLimit, 0) {
		return fmt.Errorf("faults: rate_limit must be a finite number >= 0, got %v", f.RateLimit)
	}
	for _, s := range []struct {
		name string
		v    float64
	}{{"share_429", f.Share429}, {"share_503", f.Share503}, {"share_500", f.Share500},
		{"share_drop", f.ShareDrop}, {"share_drop_before", f.ShareDropBefore}, {"share_refresh_500", f.ShareRefresh500},
		{"share_200_html", f.Share200HTML}, {"share_200_error", f.Share200Error}, {"share_202_error", f.Share202Error},
		{"share_403_limit", f.Share403Limit}, {"share_stall", f.ShareStall}} {
		if !(s.v >= 0 && s.v <= 1) { // also rejects NaN
			return fmt.Errorf("faults: %s must be between 0 and 1, got %v", s.name, s.v)
		}
	}
	return nil
}

// faultsJSON is the JSON form of Faults, used by /_sandbox/faults: its
// fields by their json names, the durations as [jsonDuration]s in place
// of the plain numbers of nanoseconds.
type faultsJSON struct {
	*plainFaults
	Latency    *jsonDuration `json:"latency"`
	RetryAfter *jsonDuration `json:"retry_after"`
	CallLength *jsonDuration `json:"call_length"`
}

// plainFaults is Faults without its JSON methods.
type plainFaults Faults

func (f *Faults) json() faultsJSON {
	return faultsJSON{(*plainFaults)(f), (*jsonDuration)(&f.Latency), (*jsonDuration)(&f.RetryAfter), (*jsonDuration)(&f.CallLength)}
}

// MarshalJSON encodes f with snake_case names and durations as Go duration
// strings such as "1.5s".
func (f Faults) MarshalJSON() ([]byte, error) { return json.Marshal(f.json()) }

// UnmarshalJSON decodes the form written by MarshalJSON. Durations may also
// be given as numbers of milliseconds. Unknown fields are an error; absent
// fields are zero.
func (f *Faults) UnmarshalJSON(b []byte) error {
	var j Faults
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	jj := j.json()
	if err := dec.Decode(&jj); err != nil {
		return err
	}
	*f = j
	return nil
}

// jsonDuration is a time.Duration written as "250ms" and read from either
// such a string or a number of milliseconds.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		*d = jsonDuration(v)
		return err
	}
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration must be a string like \"250ms\" or a number of milliseconds, got %s", b)
	}
	*d = jsonDuration(ms * float64(time.Millisecond))
	return nil
}

// SetFaults replaces the fault injection at run time. It also re-seeds the
// fault choice and refills the rate limiter. It panics if f is invalid; see
// Faults.Validate.
func (s *Server) SetFaults(f Faults) {
	if err := f.Validate(); err != nil {
		panic("sandbox: " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setFaultsLocked(f)
}

func (s *Server) setFaultsLocked(f Faults) {
	if f.Scope == "" {
		f.Scope = ScopeCalls
	}
	seed := f.Seed
	if seed == 0 {
		seed = 1
	}
	s.faults = f
	s.rng = mrand.New(mrand.NewPCG(uint64(seed), 0x5a4db0c5))
	s.rngToken = mrand.New(mrand.NewPCG(uint64(seed), 0x7e3f1a29))
	s.bucket = bucket{}
	s.active = nil
}

// refreshFault reports whether a refresh request is to be answered 500
// (Faults.ShareRefresh500), and counts it.
func (s *Server) refreshFault() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if share := s.faults.ShareRefresh500; share > 0 && s.rngToken.Float64() < share {
		s.stats.Faults.Refresh500++
		s.stats.TokenErrors++
		return true
	}
	return false
}

// dropped is the status of a decision whose connection is closed with no
// answer.
const dropped = -1

// Odd answers a call start can get (decision.odd), each one way real
// services answer: all but oddStall come instead of placing the call.
// They are also the ledger's Outcome of such a call start.
const (
	oddHTML     = "200-html"     // 200 with an HTML maintenance page
	odd200Error = "200-error"    // 200 {"status":"error",...}
	odd202Error = "202-error"    // 202 {"error":...}
	oddLimit    = "403-limit"    // 403 {"error":"concurrency limit reached"}
	oddStall    = "placed-stall" // placed, 200, then a body that never comes
)

// decision is the fault chosen for one request. before (429, 503 or
// dropped) is answered instead of acting; after (500 or dropped) is applied
// once the request has acted. 0 means no fault.
type decision struct {
	before, after int
	retryAfter    time.Duration
	odd           string // one of the odd answers, for call starts
}

// decide waits the injected latency and picks the fault for a request to
// target (ScopeCalls or ScopeAPI). Faults chosen to act before are counted
// here, those that act after by answerAfter.
func (s *Server) decide(r *http.Request, target string) decision {
	s.mu.Lock()
	f := s.faults
	if f.Scope != target && f.Scope != ScopeAll {
		s.mu.Unlock()
		return decision{}
	}
	if f.Latency > 0 {
		s.stats.Faults.Latency++
	}
	s.mu.Unlock()
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		t.Stop()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.rng.Float64() // always drawn, so the choice does not depend on timing
	if f.RateLimit > 0 {
		if wait, ok := s.bucket.take(s.now(), f.RateLimit); !ok {
			s.stats.Faults.RateLimited++
			return decision{before: http.StatusTooManyRequests, retryAfter: wait}
		}
	}
	retryAfter := f.RetryAfter
	if retryAfter == 0 {
		retryAfter = time.Second
	}
	fs := &s.stats.Faults
	var edge float64
	for _, c := range []struct {
		share   float64
		result  decision
		counter *int
	}{
		{f.Share429, decision{before: http.StatusTooManyRequests, retryAfter: retryAfter}, &fs.Injected429},
		{f.Share503, decision{before: http.StatusServiceUnavailable, retryAfter: retryAfter}, &fs.Injected503},
		{f.ShareDropBefore, decision{before: dropped}, &fs.DroppedBefore},
		{f.Share500, decision{after: http.StatusInternalServerError}, nil},
		{f.ShareDrop, decision{after: dropped}, nil},
		{f.Share200HTML, decision{odd: oddHTML}, &fs.HTML200},
		{f.Share200Error, decision{odd: odd200Error}, &fs.Error200},
		{f.Share202Error, decision{odd: odd202Error}, &fs.Error202},
		{f.Share403Limit, decision{odd: oddLimit}, &fs.Limit403},
		{f.ShareStall, decision{odd: oddStall}, nil},
	} {
		if edge += c.share; x < edge {
			if c.counter != nil {
				*c.counter++
			}
			return c.result
		}
	}
	return decision{}
}

// answerBefore answers the before-acting fault of d, if any, and reports
// whether it did.
func answerBefore(w http.ResponseWriter, d decision) bool {
	switch d.before {
	case 0:
		return false
	case dropped:
		dropConnection(w)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(wholeSeconds(d.retryAfter)))
		apiError(w, d.before, "service_unavailable", "the service is temporarily unavailable")
	default:
		w.Header().Set("Retry-After", strconv.Itoa(wholeSeconds(d.retryAfter)))
		apiError(w, d.before, "rate_limited", "too many requests; retry later")
	}
	return true
}

// answerOdd answers one of the odd answers that come instead of placing
// the call (all but oddStall).
func answerOdd(w http.ResponseWriter, odd string) {
	switch odd {
	case oddHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, maintenancePage) //nolint:errcheck
	case odd200Error:
		writeJSON(w, http.StatusOK, map[string]string{"status": "error", "message": "the call could not be started"})
	case odd202Error:
		writeJSON(w, http.StatusAccepted, map[string]string{"error": "the call could not be queued"})
	default:
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "concurrency limit reached"})
	}
}

// maintenancePage is the page of Faults.Share200HTML, as a proxy in front
// of a service under maintenance serves it.
const maintenancePage = `<!DOCTYPE html>
<html><head><title>Down for maintenance</title></head>
<body><h1>We'll be back soon</h1><p>The service is down for scheduled maintenance.</p></body></html>
`

// stallBody answers 200 with the start of a JSON body and holds the rest
// back until the client leaves or the server closes: a placed call whose
// answer never completes (Faults.ShareStall).
func (s *Server) stallBody(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, `{"status":`)       //nolint:errcheck
	http.NewResponseController(w).Flush() //nolint:errcheck
	select {
	case <-r.Context().Done():
	case <-s.ctx.Done():
	}
}

// overActiveLocked reports whether a call placed now would make more than
// Faults.MaxActive in progress; if not, it counts the call as in progress.
func (s *Server) overActiveLocked() bool {
	k := s.faults.MaxActive
	if k <= 0 {
		return false
	}
	now := s.now()
	live := s.active[:0]
	for _, end := range s.active {
		if end.After(now) {
			live = append(live, end)
		}
	}
	s.active = live
	if len(live) >= k {
		s.stats.Faults.OverActive++
		return true
	}
	s.active = append(s.active, now.Add(cmp.Or(s.faults.CallLength, s.opts.CallDuration)))
	return false
}

// answerAfter applies the after-acting fault of d, if any, and reports
// whether it answered.
func (s *Server) answerAfter(w http.ResponseWriter, d decision) bool {
	if d.after == 0 {
		return false
	}
	s.mu.Lock()
	if d.after == dropped {
		s.stats.Faults.DroppedAfter++
	} else {
		s.stats.Faults.Injected500++
	}
	s.mu.Unlock()
	if d.after == dropped {
		dropConnection(w)
	} else {
		apiError(w, d.after, "internal_error", "simulated internal error")
	}
	return true
}

// dropConnection closes the client's connection without writing a response.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // makes net/http abort the response
	}
	conn.Close()
}

// bucket is a token bucket with a burst of 1. The zero value is full.
type bucket struct {
	used   bool
	tokens float64
	last   time.Time
}

// take takes a token at time now with the given refill rate per second. If
// none is available it returns how long until one is.
func (b *bucket) take(now time.Time, rate float64) (time.Duration, bool) {
	if !b.used {
		b.used, b.tokens, b.last = true, 1, now
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(1, b.tokens+elapsed.Seconds()*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
}
