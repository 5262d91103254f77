package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxPerPage is the largest page size the list endpoint accepts.
const MaxPerPage = 100

// maxListPages bounds how many pages ListAllAgents reads, so a server whose
// total never stops growing cannot keep callrun busy forever. A variable so
// tests can lower it.
var maxListPages = 10000

// Agent is an AI calling agent as the list endpoint returns it.
// The create endpoint returns only AgentID, Name and Status.
type Agent struct {
	AgentID       string `json:"agent_id"`
	Name          string `json:"agent_name"`
	Status        string `json:"status"`
	Prompt        string `json:"general_prompt,omitempty"`
	Webhook       string `json:"weebhook_endpoint,omitempty"`
	WebhookMethod string `json:"weebhook_endpoint_method,omitempty"`
	CreatedAt     string `json:"created_at,omitempty"`
	UpdatedAt     string `json:"updated_at,omitempty"`
}

// NewAgent is the body of a create-agent request. The field names
// on the wire are the service contract's, including its spelling of weebhook_endpoint.
type NewAgent struct {
	Name          string `json:"agent_name"`
	Prompt        string `json:"general_prompt"`
	Webhook       string `json:"weebhook_endpoint,omitempty"`
	WebhookMethod string `json:"weebhook_endpoint_method,omitempty"`
}

// AgentPage is one page of the agent list.
type AgentPage struct {
	Agents      []Agent `json:"data"`
	CurrentPage int     `json:"current_page"`
	PerPage     int     `json:"per_page"`
	Total       int     `json:"total"`
}

// CallEndpoint describes how to start calls with one agent.
type CallEndpoint struct {
	URL      string   `json:"endpoint"`
	Method   string   `json:"Method"`
	FormData []string `json:"form_data"`
}

// Fields returns the form field names of the descriptor, in its order:
// the name at the start of each form_data element (see [ParseFormField]).
// Elements that hold no name are left out.
func (e *CallEndpoint) Fields() []string {
	names := make([]string, 0, len(e.FormData))
	for _, f := range e.FormFields() {
		names = append(names, f.Name)
	}
	return names
}

// FormFields returns the form_data elements of the descriptor read as
// fields, in its order. Elements that hold no name are left out. plan
// shows them (with their defaults); plan and run check a campaign's
// fields against them.
func (e *CallEndpoint) FormFields() []FormField {
	fields := make([]FormField, 0, len(e.FormData))
	for _, el := range e.FormData {
		if f := ParseFormField(el); f.Name != "" {
			fields = append(fields, f)
		}
	}
	return fields
}

// FormField is one element of a call endpoint's data.form_data, read. The
// live service writes the last one as
//
//	local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]
//
// which is the field local_presence_number, with the default No and the
// rest as a hint for people.
type FormField struct {
	Name    string // the leading run of name characters (see [IsFieldName])
	Default string // the value after "=" right after the name, if any
	Hint    string // what follows the name and default, trimmed; HTML left as it is
}

// ParseFormField reads one form_data element: the field's name is the
// leading run of letters, digits and underscores (after leading spaces);
// "=value" right after it (spaces allowed around the "=") is its default,
// which ends at a space, "(", "<" or "["; whatever follows is a hint. An
// element that starts with anything else has no name.
func ParseFormField(element string) FormField {
	s := strings.TrimSpace(element)
	n := nameLen(s)
	f := FormField{Name: s[:n]}
	rest := strings.TrimLeft(s[n:], " \t")
	if f.Name != "" && strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], " \t")
		end := strings.IndexAny(rest, " \t(<[")
		if end < 0 {
			end = len(rest)
		}
		f.Default, rest = rest[:end], rest[end:]
	}
	f.Hint = strings.TrimSpace(rest)
	return f
}

// IsFieldName reports whether s is a plain form field name, as a call
// endpoint's form_data names them: one or more letters, digits and
// underscores, and nothing else. The campaign file's fields: and set:
// keys must be.
func IsFieldName(s string) bool {
	return s != "" && nameLen(s) == len(s)
}

// nameLen is the length of the run of name characters ([A-Za-z0-9_]) at
// the start of s.
func nameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return i
		}
	}
	return len(s)
}

// CallResponse is the service's answer to a call start. The service contract does not
// show its shape, so only the status, an excerpt of the body and the call
// id it may give are kept.
type CallResponse struct {
	StatusCode int
	Body       string // excerpt, at most ExcerptLen bytes
	// Cut, when set, says why the body did not arrive whole: it stalled or
	// broke off after the 2xx status line. The call is placed all the
	// same; Cut is the note a report shows.
	Cut string
	// CallID is the call id the answer gives (call_id), "" when it gives
	// none: the deliveries of the call name it.
	CallID string
}

// DefaultBodyWait is how long a [Client] waits for the body of a 2xx
// call-start answer whose BodyWait is zero.
const DefaultBodyWait = 5 * time.Second

// DefaultRequestTimeout bounds each request of a [Client] (and each token
// request of an [OAuth]) whose Timeout is zero.
const DefaultRequestTimeout = time.Minute

// Client is a typed client for the agent endpoints of the service and for
// the per-agent call endpoints. It is safe for concurrent use.
type Client struct {
	// Timeout bounds each request end to end: connecting, sending, waiting
	// for the answer and reading its body, so that a service whose answer
	// stalls halfway cannot hold a command (and its lock) forever. Zero
	// means DefaultRequestTimeout. Set it before the first request.
	Timeout time.Duration
	// BodyWait bounds the wait for the body of a 2xx call-start answer
	// once its status line is in: the call is placed, so a body that
	// stalls must not hold the run for the rest of Timeout. Zero means
	// DefaultBodyWait. Set it before the first request.
	BodyWait time.Duration

	base  *url.URL
	hc    *http.Client // agent endpoints
	calls *http.Client // call starts, through a [callTransport]
	clock *ServiceClock
}

// New returns a client for the service at baseURL. Requests to the service's
// own origin carry a bearer token from tokens; requests to any other origin
// (a call endpoint hosted elsewhere) carry none. A nil base uses
// [DefaultTransport].
func New(baseURL string, tokens TokenSource, base http.RoundTripper) (*Client, error) {
	u, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = DefaultTransport()
	}
	clock := NewServiceClock(nil)
	client := func(rt http.RoundTripper) *http.Client {
		return &http.Client{
			Transport: &Transport{Source: tokens, Origin: u, Base: rt, Clock: clock},
			// A redirect of a POST becomes a GET in net/http: never follow
			// one silently, show it to the caller instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Client{base: u, hc: client(base), calls: client(newCallTransport(base)), clock: clock}, nil
}

// Clock returns how far this machine's clock is from the service's, as
// the answers to the client's requests so far tell it.
func (c *Client) Clock() *ServiceClock { return c.clock }

// CloseIdleConnections closes the connections the client keeps open
// between requests.
func (c *Client) CloseIdleConnections() {
	c.hc.CloseIdleConnections()
	c.calls.CloseIdleConnections()
}

// BaseURL returns the service's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// DefaultTransport returns the transport callrun uses: net/http's defaults
// with bounded dial and header timeouts and room for a pool of workers.
func DefaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 60 * time.Second
	t.MaxIdleConnsPerHost = 64
	return t
}

// ParseBaseURL checks a service base URL: absolute, http or https, and
// https unless the host is on loopback, so that tokens never cross a
// network in clear text.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("service base_url %q is not an absolute http(s) URL", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("service base_url %q must not carry credentials, a query or a fragment", redactURL(raw))
	}
	if u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("service base_url %q uses http:// on a non-loopback host; use https:// so tokens are not sent in clear text", raw)
	}
	return u, nil
}

// IsLoopbackHost reports whether host is "localhost" or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CreateAgent creates an agent. Creation is not idempotent on the
// service: a caller that gets an error whose outcome is uncertain must list
// agents before trying again.
func (c *Client) CreateAgent(ctx context.Context, a NewAgent) (*Agent, error) {
	body, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, http.MethodPost, "/api/ai/agent/create", nil, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	var out Agent
	if err := c.do(req, "create agent "+strconv.Quote(a.Name), &out); err != nil {
		return nil, err
	}
	if out.AgentID == "" {
		return nil, fmt.Errorf("create agent %q: the service answered without an agent_id", a.Name)
	}
	return &out, nil
}

// ListAgents reads one page of the agent list. page starts at 1;
// perPage is 1 to [MaxPerPage]. Both are always sent.
func (c *Client) ListAgents(ctx context.Context, page, perPage int) (*AgentPage, error) {
	if page < 1 || perPage < 1 || perPage > MaxPerPage {
		return nil, fmt.Errorf("list agents: page %d, per_page %d out of bounds (page >= 1, per_page 1..%d)", page, perPage, MaxPerPage)
	}
	q := url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(perPage)}}
	req, err := c.newRequest(ctx, http.MethodGet, "/api/ai/agent/list", q, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Agents      *[]Agent `json:"data"`
		CurrentPage int      `json:"current_page"`
		PerPage     int      `json:"per_page"`
		Total       int      `json:"total"`
	}
	if err := c.do(req, "list agents", &out); err != nil {
		return nil, err
	}
	// An answer with no list in it ({}, a proxy's JSON) is not an empty
	// account: read as one, it would make run create every agent again,
	// a second of the name at each run.
	if out.Agents == nil {
		return nil, fmt.Errorf("list agents: GET %s answered without a list of agents (no \"data\"), which is not the service's answer: check base_url", redactURL(req.URL.String()))
	}
	return &AgentPage{Agents: *out.Agents, CurrentPage: out.CurrentPage, PerPage: out.PerPage, Total: out.Total}, nil
}

// ListAllAgents reads every page of the agent list. It stops when it holds
// total agents (when the answer gives a total) or a page comes back empty,
// and gives up with an error on a
// server that keeps answering past any sane bound.
//
// The list can change between two page requests (someone adds or deletes
// an agent meanwhile): an agent that two pages show is kept once, by id,
// and one that moved to a page already read is missing. So one listing
// proves that an agent exists, never that it does not.
func (c *Client) ListAllAgents(ctx context.Context) ([]Agent, error) {
	var all []Agent
	seen := map[string]bool{}
	prevFirst := ""
	for page := 1; ; page++ {
		if page > maxListPages {
			return nil, fmt.Errorf("list agents: still more after %d pages; the service's total does not add up", maxListPages)
		}
		p, err := c.ListAgents(ctx, page, MaxPerPage)
		if err != nil {
			return nil, err
		}
		if len(p.Agents) == 0 {
			return all, nil
		}
		if page > 1 && p.Agents[0].AgentID == prevFirst {
			return nil, fmt.Errorf("list agents: page %d repeats page %d; the service seems to ignore the page parameter", page, page-1)
		}
		prevFirst = p.Agents[0].AgentID
		for _, a := range p.Agents {
			if a.AgentID != "" && seen[a.AgentID] {
				continue
			}
			seen[a.AgentID] = true
			all = append(all, a)
		}
		// A list without a total (0 beside agents: a proxy's or another
		// version's answer) is read to its first empty page: taken for
		// the whole list, its first page would hide the agents after it,
		// and run would create one of their names again.
		if p.Total > 0 && len(all) >= p.Total {
			return all, nil
		}
	}
}

// GetCallEndpoint reads the call endpoint descriptor of an agent.
func (c *Client) GetCallEndpoint(ctx context.Context, agentID string) (*CallEndpoint, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/api/ai/agent/call-endpoint", url.Values{"agent_id": {agentID}}, nil)
	if err != nil {
		return nil, err
	}
	// The service contract lists this header as required on this GET; send it.
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Status string       `json:"status"`
		Data   CallEndpoint `json:"data"`
	}
	op := "get call endpoint of agent " + agentID
	if err := c.do(req, op, &out); err != nil {
		return nil, err
	}
	ep := out.Data
	if ep.Method == "" {
		ep.Method = http.MethodPost // "typically POST"; the service contract names no other default
	}
	ep.Method = strings.ToUpper(ep.Method)
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s: data.endpoint is not an absolute http(s) URL (it starts %q)", op, Excerpt(originOf(ep.URL), 40))
	}
	if u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) && c.base.Scheme == "https" {
		return nil, fmt.Errorf("%s: data.endpoint on %s uses http:// while the service uses https://; refusing to send contact data in clear text", op, originOf(ep.URL))
	}
	return &ep, nil
}

// UserAgent is sent on every request.
var UserAgent = "callrun"

func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	if q != nil {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	return req, nil
}

// do sends req and decodes a 2xx JSON answer into out, all within the
// client's Timeout.
func (c *Client) do(req *http.Request, op string, out any) error {
	ctx, cancel := c.bound(req.Context())
	defer cancel()
	resp, err := c.hc.Do(req.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s: %w", op, c.timedOut(ctx, req.Context(), unwrapURLError(err)))
	}
	if err := checkResponse(op, resp); err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := decodeAnswer(req, resp.Body, out); err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, c.timedOut(ctx, req.Context(), err))
	}
	return nil
}

// decodeAnswer decodes the JSON answer body of req into out, reading at
// most maxBodyRead bytes of it. An answer cut off by that limit is said to
// be too large, naming the endpoint and the limit, rather than left as
// the decoder's "unexpected EOF". Client.do and the token request use it.
func decodeAnswer(req *http.Request, body io.Reader, out any) error {
	lr := &io.LimitedReader{R: body, N: maxBodyRead + 1} // one byte past the limit tells a cut from an end
	err := json.NewDecoder(lr).Decode(out)
	if err != nil && lr.N == 0 {
		return fmt.Errorf("the answer of %s %s %w", req.Method, redactURL(req.URL.String()), errAnswerTooLarge)
	}
	return err
}

// errAnswerTooLarge is the end of decodeAnswer's message for an answer cut
// off by its limit.
var errAnswerTooLarge = fmt.Errorf("is larger than %d MiB, the most callrun reads of one answer", maxBodyRead>>20)

// bound returns ctx with the client's Timeout as its deadline (or an
// earlier one ctx has), and its cancel function.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout())
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultRequestTimeout
}

// timedOut says so when err came of bounded's deadline, not of the
// caller's ctx: the service's answer did not arrive whole in time.
func (c *Client) timedOut(bounded, ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(bounded.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within %s: %w", c.timeout(), err)
	}
	return err
}

// unwrapURLError drops the *url.Error wrapper, whose message repeats the full
// URL (query string included), keeping the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
