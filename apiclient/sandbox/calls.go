package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Call is one ledger entry: a call-start request that reached a valid call
// endpoint, whatever its fate.
type Call struct {
	Seq        int         `json:"seq"` // 1-based position in the ledger
	AgentID    string      `json:"agent_id"`
	Method     string      `json:"method"`
	Form       url.Values  `json:"form"`   // the form fields sent (nil if the body was not a form)
	Header     http.Header `json:"header"` // Authorization, if any, is "Bearer <redacted>"
	ReceivedAt time.Time   `json:"received_at"`
	Placed     bool        `json:"placed"`
	CallID     string      `json:"call_id,omitempty"` // set when Placed
	Status     int         `json:"status"`            // HTTP status answered; 0 when dropped or not answered yet
	// Outcome is "received" (still being handled), "placed", "429", "503",
	// "500-after-placing", "dropped-after-placing", "dropped-before-placing",
	// "placed-stall" (placed; 200 and a body that stalls), one of the odd
	// answers given instead of placing ("200-html", "200-error",
	// "202-error", "403-limit") or "rejected: <reason>".
	Outcome string `json:"outcome"`
}

// Webhook is one completion webhook, delivered or skipped.
type Webhook struct {
	AgentID   string    `json:"agent_id"`
	CallID    string    `json:"call_id"`
	URL       string    `json:"url"`
	Method    string    `json:"method"`
	Delivered bool      `json:"delivered"`         // the receiver answered 2xx
	Status    int       `json:"status,omitempty"`  // the receiver's HTTP status
	Err       string    `json:"error,omitempty"`   // why delivery failed
	Skipped   string    `json:"skipped,omitempty"` // why no request was made
	At        time.Time `json:"at"`
}

// webhookEvent is the completion payload: a JSON body for POST, query
// parameters for GET.
type webhookEvent struct {
	Event           string `json:"event"`
	CallID          string `json:"call_id"`
	AgentID         string `json:"agent_id"`
	PhoneNumber     string `json:"phone_number"`
	Status          string `json:"status"`
	DurationSeconds int    `json:"duration_seconds"`
	CompletedAt     string `json:"completed_at"`
}

// handleCall serves a call-start request to an agent's call endpoint.
func (s *Server) handleCall(w http.ResponseWriter, r *http.Request, agentID, token string) {
	s.mu.Lock()
	a := s.byID[agentID]
	s.mu.Unlock()
	if a == nil || !equalSecret(token, a.token) { // token never changes
		apiError(w, http.StatusNotFound, "not_found", "no such call endpoint")
		return
	}
	var form url.Values
	var formErr error
	if hasMediaType(r, "application/x-www-form-urlencoded") {
		form, formErr = readForm(w, r)
	}
	// Record first: the ledger holds every request, whatever happens next.
	idx := s.recordCall(r, agentID, form)
	d := s.decide(r, ScopeCalls)
	if s.faultBefore(w, idx, d) {
		return
	}

	s.mu.Lock()
	status, code, msg := s.checkCallLocked(r, a, form, formErr)
	if status != 0 {
		if status == http.StatusUnauthorized {
			s.stats.Unauthorized++
		}
		s.calls[idx].Status, s.calls[idx].Outcome = status, "rejected: "+msg
		s.mu.Unlock()
		rejectCall(w, status, code, msg)
		return
	}
	if s.overActiveLocked() {
		s.calls[idx].Status, s.calls[idx].Outcome = http.StatusForbidden, oddLimit
		s.mu.Unlock()
		answerOdd(w, oddLimit)
		return
	}
	s.stats.CallsPlaced++
	callID := "call_" + strconv.Itoa(s.stats.CallsPlaced)
	c := &s.calls[idx]
	c.Placed, c.CallID = true, callID
	switch {
	case d.odd == oddStall:
		c.Status, c.Outcome = http.StatusOK, oddStall
		s.stats.Faults.Stalled++
	case d.after == 0:
		c.Status, c.Outcome = http.StatusOK, "placed"
	case d.after == dropped:
		c.Outcome = "dropped-after-placing"
	default:
		c.Status, c.Outcome = d.after, "500-after-placing"
	}
	s.scheduleWebhookLocked(a.Agent, callID, form.Get("phone_number"))
	s.scheduleDeliveriesLocked(callID, agentID, form)
	s.mu.Unlock()

	if d.odd == oddStall {
		s.stallBody(w, r)
		return
	}
	if !s.answerAfter(w, d) {
		answer := map[string]string{"status": cmp.Or(s.opts.AnswerStatus, "success"), "call_id": callID, "agent_id": agentID}
		if s.opts.AnswerWithoutCallID {
			delete(answer, "call_id")
		}
		writeJSON(w, http.StatusOK, answer)
	}
}

// recordCall adds a call start to the ledger, its token redacted, and returns its index.
func (s *Server) recordCall(r *http.Request, agentID string, form url.Values) int {
	header := r.Header.Clone()
	if header.Get("Authorization") != "" {
		header.Set("Authorization", "Bearer <redacted>")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := len(s.calls)
	s.calls = append(s.calls, Call{Seq: idx + 1, AgentID: agentID, Method: r.Method, Form: cloneValues(form),
		Header: header, ReceivedAt: s.now(), Outcome: "received"})
	s.stats.CallsReceived++
	return idx
}

// faultBefore answers and records call idx's fault d that acts before placing; false if none.
func (s *Server) faultBefore(w http.ResponseWriter, idx int, d decision) bool {
	if d.odd != "" && d.odd != oddStall {
		s.mu.Lock()
		s.calls[idx].Status, _ = strconv.Atoi(d.odd[:3])
		s.calls[idx].Outcome = d.odd
		s.mu.Unlock()
		answerOdd(w, d.odd)
		return true
	}
	if d.before != 0 {
		s.mu.Lock()
		if d.before == dropped {
			s.calls[idx].Outcome = "dropped-before-placing"
		} else {
			s.calls[idx].Status, s.calls[idx].Outcome = d.before, strconv.Itoa(d.before)
		}
		s.mu.Unlock()
		answerBefore(w, d)
		return true
	}
	return false
}

// rejectCall answers a call start that checkCallLocked rejected.
func rejectCall(w http.ResponseWriter, status int, code, msg string) {
	switch status {
	case http.StatusUnauthorized:
		unauthorized(w, msg)
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
		apiError(w, status, code, msg)
	default:
		apiError(w, status, code, msg)
	}
}

// checkCallLocked validates a call-start request. It returns a zero status
// if the call may be placed, else the status, error code and message.
func (s *Server) checkCallLocked(r *http.Request, a *agentRecord, form url.Values, formErr error) (int, string, string) {
	const invalid = "validation_failed"
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "method_not_allowed", "method " + r.Method + " not allowed; use POST"
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if problem := s.bearerProblemLocked(h); problem != "" {
			return http.StatusUnauthorized, "invalid_token", problem
		}
	}
	if !hasMediaType(r, "application/x-www-form-urlencoded") {
		return http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/x-www-form-urlencoded"
	}
	if formErr != nil {
		return http.StatusBadRequest, "invalid_request", "unreadable form body"
	}
	for k, vs := range form {
		if !s.knownFormField(k) {
			return http.StatusUnprocessableEntity, invalid, fmt.Sprintf("unknown form field %q", k)
		}
		if len(vs) > 1 {
			return http.StatusUnprocessableEntity, invalid, k + " is given more than once"
		}
	}
	phone := form.Get("phone_number")
	if phone == "" {
		return http.StatusUnprocessableEntity, invalid, "phone_number is required"
	}
	if !isE164(phone) {
		return http.StatusUnprocessableEntity, invalid, "phone_number must be in E.164 form (+ then 8 to 15 digits)"
	}
	if lp, ok := form["local_presence_number"]; ok && lp[0] != "Yes" && lp[0] != "No" {
		return http.StatusUnprocessableEntity, invalid, "local_presence_number must be Yes or No"
	}
	if st := s.agentLocked(a).Status; st == "pending" {
		return http.StatusConflict, "agent_not_active", "agent " + a.AgentID + " is pending and cannot place calls yet"
	}
	return 0, "", ""
}

// knownFormField reports whether name is a field data.form_data lists:
// one of the service contract's or of Options.AccountFields.
func (s *Server) knownFormField(name string) bool {
	return slices.Contains(specFields, name) || slices.Contains(s.opts.AccountFields, name)
}

// isE164 reports whether p is "+" followed by 8 to 15 digits.
func isE164(p string) bool {
	digits, ok := strings.CutPrefix(p, "+")
	if !ok || len(digits) < 8 || len(digits) > 15 {
		return false
	}
	return strings.Trim(digits, "0123456789") == ""
}

// scheduleWebhookLocked arranges the completion webhook of a placed call.
func (s *Server) scheduleWebhookLocked(a Agent, callID, phone string) {
	if a.WebhookEndpoint == "" {
		return
	}
	hook := Webhook{AgentID: a.AgentID, CallID: callID, URL: a.WebhookEndpoint, Method: a.WebhookEndpointMethod}
	if s.closed {
		hook.Skipped, hook.At = "server closed", s.now()
		s.webhooks = append(s.webhooks, hook)
		return
	}
	s.hookStartLocked()
	go s.deliver(hook, phone)
}

// deliver waits for the simulated call to end, then sends its webhook.
func (s *Server) deliver(hook Webhook, phone string) {
	defer s.hookDone()
	t := time.NewTimer(s.opts.CallDuration)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
		hook.Skipped = "canceled: server closed before the call completed"
		s.recordWebhook(hook)
		return
	}
	u, err := url.Parse(hook.URL)
	switch {
	case err != nil || !isHTTPURL(hook.URL):
		hook.Err = "invalid webhook URL"
		s.recordWebhook(hook)
		return
	case !s.opts.AllowExternalWebhooks && !isLoopbackHost(u.Hostname()):
		hook.Skipped = "not a loopback host and AllowExternalWebhooks is off"
		s.recordWebhook(hook)
		return
	}

	ev := webhookEvent{Event: "call.completed", CallID: hook.CallID, AgentID: hook.AgentID, PhoneNumber: phone,
		Status: "completed", DurationSeconds: wholeSeconds(s.opts.CallDuration), CompletedAt: formatTime(s.now())}
	ctx, cancel := context.WithTimeout(context.Background(), webhookTimeout)
	defer cancel()
	var body io.Reader
	if hook.Method == http.MethodGet {
		q := u.Query()
		q.Set("event", ev.Event)
		q.Set("call_id", ev.CallID)
		q.Set("agent_id", ev.AgentID)
		q.Set("phone_number", ev.PhoneNumber)
		q.Set("status", ev.Status)
		q.Set("duration_seconds", strconv.Itoa(ev.DurationSeconds))
		q.Set("completed_at", ev.CompletedAt)
		u.RawQuery = q.Encode()
	} else {
		b, _ := json.Marshal(ev)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, hook.Method, u.String(), body)
	if err != nil {
		hook.Err = err.Error()
		s.recordWebhook(hook)
		return
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "callrun-sandbox")
	resp, err := s.hookClient.Do(req)
	if err != nil {
		hook.Err = err.Error()
	} else {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck
		resp.Body.Close()
		hook.Status = resp.StatusCode
		hook.Delivered = resp.StatusCode >= 200 && resp.StatusCode < 300
		if !hook.Delivered {
			hook.Err = "receiver answered " + resp.Status
		}
	}
	s.recordWebhook(hook)
}

func (s *Server) recordWebhook(hook Webhook) {
	s.mu.Lock()
	hook.At = s.now()
	s.webhooks = append(s.webhooks, hook)
	s.mu.Unlock()
	result := hook.Skipped
	switch {
	case hook.Status != 0:
		result = strconv.Itoa(hook.Status)
	case hook.Err != "":
		result = "error"
	}
	// Log only scheme, host and path: a webhook query may hold secrets.
	where := hook.URL
	if u, err := url.Parse(hook.URL); err == nil {
		where = u.Scheme + "://" + u.Host + u.Path
	}
	s.logf("sandbox: webhook %s %s for %s -> %s", hook.Method, where, hook.CallID, result)
}

// isLoopbackHost reports whether host is localhost or a loopback IP. It
// does not resolve names.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
