package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Agent is an AI calling agent as the list endpoint returns it.
// CreatedAt and UpdatedAt are RFC 3339 strings.
type Agent struct {
	AgentID               string `json:"agent_id"`
	AgentName             string `json:"agent_name"`
	Status                string `json:"status"`
	GeneralPrompt         string `json:"general_prompt"`
	WebhookEndpoint       string `json:"weebhook_endpoint"`
	WebhookEndpointMethod string `json:"weebhook_endpoint_method"`
	CreatedAt             string `json:"created_at"`
	UpdatedAt             string `json:"updated_at"`
}

// agentRecord is an agent with the server's private data about it.
type agentRecord struct {
	Agent
	token        string    // secret part of the call endpoint path
	pendingUntil time.Time // non-zero: pending until then, then active
	created      bool      // created over HTTP, not seeded
}

// specFields are the call endpoint's form fields the service's contract names,
// local_presence_number last.
var specFields = []string{"phone_number", "email", "first_name", "last_name",
	"ghl_contact_id", "override_agent_id", "local_presence_number"}

// LocalPresenceElement is the last element of data.form_data as the live
// service writes it: the field name, its default and a hint for people,
// with HTML in it.
const LocalPresenceElement = "local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"

// formData returns data.form_data as the live service lists it: the six
// plain fields of the service contract, the account's own fields
// (Options.AccountFields), then local_presence_number with its hint.
func (s *Server) formData() []string {
	fd := append([]string{}, specFields[:len(specFields)-1]...)
	fd = append(fd, s.opts.AccountFields...)
	return append(fd, LocalPresenceElement)
}

// CheckAccountFields checks names for Options.AccountFields: each one
// letters, digits and underscores only, none of the service contract's seven fields,
// none twice. `callrun sandbox --account-fields` reports its error.
func CheckAccountFields(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "":
			return fmt.Errorf("account field %q: a field name holds only letters, digits and _", n)
		case slices.Contains(specFields, n):
			return fmt.Errorf("account field %q is one of the call endpoint's own fields", n)
		case seen[n]:
			return fmt.Errorf("account field %q is given twice", n)
		}
		seen[n] = true
	}
	return nil
}

// AddAgent seeds an agent, as if it had been created earlier, and returns
// it. An empty AgentID, Status ("active"), WebhookEndpointMethod ("POST"),
// CreatedAt or UpdatedAt is filled in. The status given is kept as is,
// whatever it is, until SetAgentStatus. AddAgent panics if the id is taken.
func (s *Server) AddAgent(a Agent) Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.AgentID == "" {
		a.AgentID = "agent_" + randomHex(8)
	}
	if _, taken := s.byID[a.AgentID]; taken {
		panic("sandbox: AddAgent: agent_id " + a.AgentID + " already exists")
	}
	if a.Status == "" {
		a.Status = "active"
	}
	if a.WebhookEndpointMethod == "" {
		a.WebhookEndpointMethod = http.MethodPost
	}
	if a.CreatedAt == "" {
		a.CreatedAt = formatTime(s.now())
	}
	if a.UpdatedAt == "" {
		a.UpdatedAt = a.CreatedAt
	}
	s.addLocked(&agentRecord{Agent: a})
	return a
}

// SetAgentStatus sets the status of an agent, ending any pending period,
// and reports whether the agent exists.
func (s *Server) SetAgentStatus(agentID, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.byID[agentID]
	if a == nil {
		return false
	}
	a.Status, a.pendingUntil, a.UpdatedAt = status, time.Time{}, formatTime(s.now())
	return true
}

// CallEndpoint returns the call endpoint URL of an agent, as the
// call-endpoint request would, and whether the agent exists.
func (s *Server) CallEndpoint(agentID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.byID[agentID]
	if a == nil {
		return "", false
	}
	return s.URL + callPath(a), true
}

// RemoveAgent deletes an agent, as someone using the service's dashboard
// would, and reports whether it existed. Its call endpoint answers 404
// from then on.
func (s *Server) RemoveAgent(agentID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[agentID] == nil {
		return false
	}
	delete(s.byID, agentID)
	s.agents = slices.DeleteFunc(s.agents, func(a *agentRecord) bool { return a.AgentID == agentID })
	return true
}

// OnListPage sets f to be called with the page number each time the list
// endpoint has read a page of agents, before it answers. f may call
// AddAgent or RemoveAgent: tests use it to shift the list between the page
// requests of one listing, as another user of the account does when they
// add or delete an agent while a client reads the list. nil removes it.
func (s *Server) OnListPage(f func(page int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listHook = f
}

func (s *Server) addLocked(a *agentRecord) {
	a.token = randomHex(8)
	s.agents = append(s.agents, a)
	s.byID[a.AgentID] = a
}

// agentLocked returns the current view of a, first turning a pending agent
// active once its pending period is over.
func (s *Server) agentLocked(a *agentRecord) Agent {
	if !a.pendingUntil.IsZero() && !s.now().Before(a.pendingUntil) {
		a.Status, a.UpdatedAt = "active", formatTime(a.pendingUntil)
		a.pendingUntil = time.Time{}
	}
	return a.Agent
}

// handleCreate creates an agent.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	d := s.decide(r, ScopeAPI)
	if answerBefore(w, d) || !s.requireBearer(w, r) {
		return
	}
	if !hasMediaType(r, "application/json") {
		apiError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		return
	}
	if readErr != nil {
		apiError(w, http.StatusBadRequest, "invalid_json", "unreadable body: "+readErr.Error())
		return
	}
	a, status, msg := parseCreate(body)
	if status != 0 {
		code := "validation_failed"
		if status == http.StatusBadRequest {
			code = "invalid_json"
		}
		apiError(w, status, code, msg)
		return
	}

	s.mu.Lock()
	now := s.now()
	a.AgentID, a.Status = "agent_"+randomHex(8), "active"
	a.CreatedAt, a.UpdatedAt = formatTime(now), formatTime(now)
	rec := &agentRecord{Agent: a, created: true}
	if s.opts.PendingFor > 0 {
		rec.Status, rec.pendingUntil = "pending", now.Add(s.opts.PendingFor)
	}
	s.addLocked(rec)
	s.stats.AgentsCreated++
	resp := map[string]string{"agent_id": rec.AgentID, "agent_name": rec.AgentName, "status": rec.Status}
	s.mu.Unlock()

	if !s.answerAfter(w, d) {
		writeJSON(w, http.StatusCreated, resp)
	}
}

// parseCreate checks a create body strictly. On failure it returns the
// status (400 for malformed JSON, 422 otherwise) and a message.
func parseCreate(body []byte) (Agent, int, string) {
	var in struct {
		AgentName             string `json:"agent_name"`
		GeneralPrompt         string `json:"general_prompt"`
		WebhookEndpoint       string `json:"weebhook_endpoint"`
		WebhookEndpointMethod string `json:"weebhook_endpoint_method"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return Agent{}, http.StatusUnprocessableEntity, "body must be a JSON object"
	case errors.As(err, &typeErr):
		return Agent{}, http.StatusUnprocessableEntity, typeErr.Field + " must be a string"
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		return Agent{}, http.StatusUnprocessableEntity, strings.TrimPrefix(err.Error(), "json: ")
	case err != nil:
		return Agent{}, http.StatusBadRequest, "body is not valid JSON: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return Agent{}, http.StatusBadRequest, "body has data after the JSON value"
	}
	a := Agent{AgentName: in.AgentName, GeneralPrompt: in.GeneralPrompt,
		WebhookEndpoint: in.WebhookEndpoint, WebhookEndpointMethod: in.WebhookEndpointMethod}
	switch {
	case strings.TrimSpace(a.AgentName) == "": // absent, null or blank
		return a, http.StatusUnprocessableEntity, "agent_name is required and must not be empty"
	case strings.TrimSpace(a.GeneralPrompt) == "":
		return a, http.StatusUnprocessableEntity, "general_prompt is required and must not be empty"
	case a.WebhookEndpoint != "" && !isHTTPURL(a.WebhookEndpoint):
		return a, http.StatusUnprocessableEntity, "weebhook_endpoint must be an absolute http or https URL"
	}
	switch a.WebhookEndpointMethod {
	case "":
		a.WebhookEndpointMethod = http.MethodPost
	case http.MethodGet, http.MethodPost:
	default:
		return a, http.StatusUnprocessableEntity, "weebhook_endpoint_method must be GET or POST"
	}
	return a, 0, ""
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// handleList lists agents page by page.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	d := s.decide(r, ScopeAPI)
	if answerBefore(w, d) || !s.requireBearer(w, r) {
		return
	}
	q := r.URL.Query()
	page, msg := intParam(q, "page", 1, 1, 0)
	perPage, perPageMsg := intParam(q, "per_page", 100, 1, 100)
	if msg == "" {
		msg = perPageMsg
	}
	if msg != "" {
		apiError(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}

	s.mu.Lock()
	listed := s.agents
	if s.opts.ListHidesCreated {
		listed = slices.DeleteFunc(slices.Clone(listed), func(a *agentRecord) bool { return a.created })
	}
	total := len(listed)
	data := []Agent{}
	if start := page - 1; start < (total+perPage-1)/perPage {
		for i := start * perPage; i < min(total, (start+1)*perPage); i++ {
			a := listed[i]
			if s.opts.NewestFirst {
				a = listed[total-1-i]
			}
			data = append(data, s.agentLocked(a))
		}
	}
	s.stats.ListCalls++
	hook := s.listHook
	s.mu.Unlock()
	if hook != nil {
		hook(page)
	}

	if !s.answerAfter(w, d) {
		writeJSON(w, http.StatusOK, map[string]any{"data": data, "current_page": page, "per_page": perPage, "total": total})
	}
}

// intParam reads an integer query parameter with a default and bounds
// (hi 0 means no upper bound). It returns a message on failure.
func intParam(q url.Values, name string, def, lo, hi int) (int, string) {
	vs, ok := q[name]
	if !ok {
		return def, ""
	}
	bound := fmt.Sprintf("%s must be an integer >= %d", name, lo)
	if hi > 0 {
		bound = fmt.Sprintf("%s must be an integer from %d to %d", name, lo, hi)
	}
	if len(vs) > 1 {
		return 0, name + " is given more than once; " + bound
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || n < lo || (hi > 0 && n > hi) {
		return 0, fmt.Sprintf("%s, got %q", bound, vs[0])
	}
	return n, ""
}

// handleCallEndpoint returns the call endpoint descriptor of an agent.
func (s *Server) handleCallEndpoint(w http.ResponseWriter, r *http.Request) {
	d := s.decide(r, ScopeAPI)
	if answerBefore(w, d) || !s.requireBearer(w, r) {
		return
	}
	if !hasMediaType(r, "application/json") {
		apiError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			"Content-Type: application/json is required on this endpoint")
		return
	}
	id := r.URL.Query().Get("agent_id")
	if id == "" {
		apiError(w, http.StatusBadRequest, "invalid_request", "agent_id is required")
		return
	}
	s.mu.Lock()
	a := s.byID[id]
	var path string
	if a != nil {
		path = callPath(a)
		s.stats.EndpointReads++
	}
	base := s.URL
	s.mu.Unlock()
	if a == nil {
		apiError(w, http.StatusNotFound, "not_found", "no agent with agent_id "+strconv.Quote(id))
		return
	}
	if base == "" {
		base = "http://" + r.Host
	}
	if !s.answerAfter(w, d) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": map[string]any{
			"endpoint": base + path, "Method": http.MethodPost, "form_data": s.formData()}})
	}
}

// callPath is the path of an agent's call endpoint.
func callPath(a *agentRecord) string {
	return "/call/" + url.PathEscape(a.AgentID) + "/" + a.token
}

// parseCallPath splits an escaped /call/<agent_id>/<token> path.
func parseCallPath(escaped string) (agentID, token string, ok bool) {
	rest, found := strings.CutPrefix(escaped, "/call/")
	if !found {
		return "", "", false
	}
	id, token, found := strings.Cut(rest, "/")
	if !found || id == "" || token == "" || strings.Contains(token, "/") {
		return "", "", false
	}
	agentID, err := url.PathUnescape(id)
	return agentID, token, err == nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
