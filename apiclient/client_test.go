package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// staticTokens is a TokenSource that always hands out one token.
type staticTokens struct{ tok *Token }

func (s staticTokens) Token(context.Context) (*Token, error) { return s.tok, nil }
func (s staticTokens) Invalidate(*Token)                     {}

func newTestClient(t *testing.T, h http.HandlerFunc) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, staticTokens{&Token{AccessToken: "at-1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// expectRequest fails the test unless r has the method, path, and headers.
func expectRequest(t *testing.T, r *http.Request, method, path string, headers map[string]string) {
	t.Helper()
	if r.Method != method || r.URL.Path != path {
		t.Errorf("request = %s %s, want %s %s", r.Method, r.URL.Path, method, path)
	}
	for k, want := range headers {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s %s: header %s = %q, want %q", method, path, k, got, want)
		}
	}
}

func TestCreateAgentRequest(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		expectRequest(t, r, "POST", "/api/ai/agent/create", map[string]string{
			"Authorization": "Bearer at-1",
			"Content-Type":  "application/json",
		})
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		want := map[string]any{
			"agent_name":               "Spring Promo",
			"general_prompt":           "Be kind.",
			"weebhook_endpoint":        "https://hooks.example.com/done",
			"weebhook_endpoint_method": "POST",
		}
		if !reflect.DeepEqual(body, want) {
			t.Errorf("body = %v, want %v", body, want)
		}
		w.WriteHeader(http.StatusCreated) // the service contract does not show the code: any 2xx is success
		fmt.Fprint(w, `{"agent_id":"ag_1","agent_name":"Spring Promo","status":"pending"}`)
	})
	got, err := c.CreateAgent(context.Background(), NewAgent{
		Name: "Spring Promo", Prompt: "Be kind.",
		Webhook: "https://hooks.example.com/done", WebhookMethod: "POST",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.AgentID != "ag_1" || got.Name != "Spring Promo" || got.Status != "pending" {
		t.Errorf("agent = %+v", got)
	}
	if calls.Load() != 1 {
		t.Errorf("%d requests, want 1", calls.Load())
	}
}

func TestCreateAgentOmitsEmptyWebhook(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if _, ok := body["weebhook_endpoint"]; ok {
			t.Errorf("weebhook_endpoint sent although empty: %v", body)
		}
		if _, ok := body["weebhook_endpoint_method"]; ok {
			t.Errorf("weebhook_endpoint_method sent although empty: %v", body)
		}
		fmt.Fprint(w, `{"agent_id":"ag_2","agent_name":"A","status":"active"}`)
	})
	if _, err := c.CreateAgent(context.Background(), NewAgent{Name: "A", Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
}

func TestCreateAgentWithoutIDIsAnError(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"agent_name":"A","status":"active"}`)
	})
	if _, err := c.CreateAgent(context.Background(), NewAgent{Name: "A", Prompt: "p"}); err == nil {
		t.Fatal("no error for an answer without agent_id")
	}
}

func TestListAgentsRequest(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		expectRequest(t, r, "GET", "/api/ai/agent/list", map[string]string{"Authorization": "Bearer at-1"})
		if q := r.URL.Query(); q.Get("page") != "3" || q.Get("per_page") != "25" || len(q) != 2 {
			t.Errorf("query = %v, want page=3 per_page=25", q)
		}
		fmt.Fprint(w, `{"data":[{"agent_id":"a","agent_name":"A","status":"active","general_prompt":"p",
			"weebhook_endpoint":"","weebhook_endpoint_method":"POST","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}],
			"current_page":3,"per_page":25,"total":51}`)
	})
	p, err := c.ListAgents(context.Background(), 3, 25)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 51 || p.CurrentPage != 3 || len(p.Agents) != 1 || p.Agents[0].WebhookMethod != "POST" || p.Agents[0].Prompt != "p" {
		t.Errorf("page = %+v", p)
	}
}

func TestListAgentsRefusesOutOfBoundsLocally(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request sent for out-of-bounds paging: %s", r.URL)
	})
	for _, tc := range []struct{ page, per int }{{0, 10}, {1, 0}, {1, 101}} {
		if _, err := c.ListAgents(context.Background(), tc.page, tc.per); err == nil {
			t.Errorf("page %d per_page %d: no error", tc.page, tc.per)
		}
	}
}

// agentPages serves n agents in pages, honouring page and per_page.
func agentPages(t *testing.T, n int, requests *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var page, per int
		fmt.Sscan(r.URL.Query().Get("page"), &page)
		fmt.Sscan(r.URL.Query().Get("per_page"), &per)
		if per != MaxPerPage {
			t.Errorf("per_page = %d, want %d", per, MaxPerPage)
		}
		out := AgentPage{CurrentPage: page, PerPage: per, Total: n, Agents: []Agent{}}
		for i := (page - 1) * per; i < n && i < page*per; i++ {
			out.Agents = append(out.Agents, Agent{AgentID: fmt.Sprint("a", i), Name: fmt.Sprint("A", i)})
		}
		json.NewEncoder(w).Encode(out)
	}
}

func TestListAllAgentsStopsOnTotal(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 100, 101, 250} {
		var reqs atomic.Int32
		c, _ := newTestClient(t, agentPages(t, n, &reqs))
		all, err := c.ListAllAgents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != n {
			t.Errorf("n=%d: got %d agents", n, len(all))
		}
		wantReqs := max(1, (n+MaxPerPage-1)/MaxPerPage)
		if int(reqs.Load()) != wantReqs {
			t.Errorf("n=%d: %d requests, want %d", n, reqs.Load(), wantReqs)
		}
	}
}

// Not parallel: it sets the package's maxListPages, which the parallel
// tests read (they wait until it has put it back).
func TestListAllAgentsGuardsAgainstEndlessServer(t *testing.T) {
	old := maxListPages
	maxListPages = 5
	t.Cleanup(func() { maxListPages = old })
	var reqs atomic.Int32
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n := reqs.Add(1)
		// Always a full page of new agents, and a total that keeps growing.
		out := AgentPage{Total: int(n+1) * MaxPerPage}
		for i := range MaxPerPage {
			out.Agents = append(out.Agents, Agent{AgentID: fmt.Sprint(n, "-", i)})
		}
		json.NewEncoder(w).Encode(out)
	})
	if _, err := c.ListAllAgents(context.Background()); err == nil {
		t.Fatal("no error from a server that never ends")
	}
	if reqs.Load() != 5 {
		t.Errorf("%d requests, want 5", reqs.Load())
	}
}

func TestListAllAgentsDetectsIgnoredPage(t *testing.T) {
	t.Parallel()
	var reqs atomic.Int32
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		out := AgentPage{Total: 1000}
		for i := range MaxPerPage {
			out.Agents = append(out.Agents, Agent{AgentID: fmt.Sprint("same-", i)})
		}
		json.NewEncoder(w).Encode(out)
	})
	_, err := c.ListAllAgents(context.Background())
	if err == nil || !strings.Contains(err.Error(), "page") {
		t.Fatalf("err = %v, want an error about paging", err)
	}
	if reqs.Load() != 2 {
		t.Errorf("%d requests, want 2", reqs.Load())
	}
}

func TestGetCallEndpointRequest(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		expectRequest(t, r, "GET", "/api/ai/agent/call-endpoint", map[string]string{
			"Authorization": "Bearer at-1",
			"Content-Type":  "application/json", // listed as required by the service contract, even on a GET
		})
		if q := r.URL.Query(); q.Get("agent_id") != "ag 1" || len(q) != 1 {
			t.Errorf("query = %v", q)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"endpoint":"http://%s/call/ag1","Method":"POST",
			"form_data":["phone_number","email","first_name","last_name","ghl_contact_id","override_agent_id","local_presence_number (Yes/No)"]}}`, r.Host)
	})
	ep, err := c.GetCallEndpoint(context.Background(), "ag 1")
	if err != nil {
		t.Fatal(err)
	}
	if ep.URL != srv.URL+"/call/ag1" || ep.Method != "POST" {
		t.Errorf("endpoint = %+v", ep)
	}
	want := []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id", "local_presence_number"}
	if got := ep.Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields() = %q, want %q", got, want)
	}
}

func TestGetCallEndpointRejectsBadEndpoint(t *testing.T) {
	t.Parallel()
	for _, ep := range []string{"", "/relative", "ftp://x/y", "http://calls.example.com/x"} {
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"status":"success","data":{"endpoint":%q,"Method":"POST","form_data":[]}}`, ep)
		})
		// The test server is http on loopback; pretend the service is https
		// so that an http:// endpoint elsewhere counts as a downgrade.
		c.base.Scheme = "https"
		if _, err := c.GetCallEndpoint(context.Background(), "a"); err == nil {
			t.Errorf("endpoint %q: no error", ep)
		}
	}
}

// liveLocalPresence is the last form_data element of the live service's
// call-endpoint answer, exactly as its public API reference shows it.
const liveLocalPresence = "local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"

func TestParseFormField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in              string
		name, def, hint string
	}{
		{liveLocalPresence, "local_presence_number", "No", "(Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"},
		{"local_presence_number=Yes (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]", "local_presence_number", "Yes", "(Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"},
		{"local_presence_number=Yes", "local_presence_number", "Yes", ""},
		{"local_presence_number=No<br>", "local_presence_number", "No", "<br>"},
		{"local_presence_number = No (Yes/No)", "local_presence_number", "No", "(Yes/No)"},
		{"local_presence_number (Yes/No)", "local_presence_number", "", "(Yes/No)"}, // the service contract's reading
		{"local_presence_number(Yes/No)", "local_presence_number", "", "(Yes/No)"},
		{"local_presence_number<br> [If Yes, then the call will be made from AI local presence number]", "local_presence_number", "", "<br> [If Yes, then the call will be made from AI local presence number]"},
		{"local_presence_number", "local_presence_number", "", ""},  // no hint
		{"local_presence_number ", "local_presence_number", "", ""}, // a trailing space
		{"local_presence_number=No ", "local_presence_number", "No", ""},
		{"  email ", "email", "", ""},
		{"phone_number1", "phone_number1", "", ""},
		{"zip_code=", "zip_code", "", ""},
		{"<br>", "", "", "<br>"}, // HTML only: no field
		{"(Yes/No)", "", "", "(Yes/No)"},
		{"=No", "", "", "=No"},
		{"", "", "", ""},
	} {
		got := ParseFormField(tc.in)
		if want := (FormField{Name: tc.name, Default: tc.def, Hint: tc.hint}); got != want {
			t.Errorf("ParseFormField(%q) = %+v, want %+v", tc.in, got, want)
		}
	}
}

func TestIsFieldName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"city": true, "zip_code": true, "phone_number1": true, "Custom_Field_2": true,
		"": false, "zip code": false, "local_presence_number=No": false, "city ": false, "e-mail": false, "straße": false,
	} {
		if got := IsFieldName(in); got != want {
			t.Errorf("IsFieldName(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestGetCallEndpointLiveFormat reads a call-endpoint answer as the live
// service writes it: account fields among the seven, and the last element
// with its default and an HTML hint.
func TestGetCallEndpointLiveFormat(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{
			"endpoint": "http://" + r.Host + "/call/agent_07a9005357b35d0943f7359ad9", "Method": "POST",
			"form_data": []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id",
				"city", "zip_code", liveLocalPresence}}})
		w.Write(body)
	})
	ep, err := c.GetCallEndpoint(context.Background(), "agent_07a9005357b35d0943f7359ad9")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id", "city", "zip_code", "local_presence_number"}
	if got := ep.Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields() = %q, want %q", got, want)
	}
	fields := ep.FormFields()
	if last := fields[len(fields)-1]; last.Name != "local_presence_number" || last.Default != "No" {
		t.Errorf("last field = %+v, want local_presence_number with default No", last)
	}
	for _, f := range fields[:len(fields)-1] {
		if f.Default != "" || f.Hint != "" {
			t.Errorf("field %+v: want no default and no hint", f)
		}
	}
}

func TestStartCallSameOriginCarriesFormAndToken(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		expectRequest(t, r, "POST", "/call/ag1", map[string]string{
			"Authorization":   "Bearer at-1",
			"Content-Type":    "application/x-www-form-urlencoded",
			"Idempotency-Key": "", // net/http would re-send on a dead connection
		})
		if err := r.ParseForm(); err != nil {
			t.Fatal(err)
		}
		want := url.Values{"phone_number": {"+14155550132"}, "first_name": {"Ada"}, "local_presence_number": {"No"}}
		if !reflect.DeepEqual(r.PostForm, want) {
			t.Errorf("form = %v, want %v", r.PostForm, want)
		}
		w.Write([]byte(`{"status":"success"}`))
	})
	ep := &CallEndpoint{URL: srv.URL + "/call/ag1", Method: "POST"}
	resp, err := c.StartCall(context.Background(), ep, url.Values{
		"phone_number": {"+14155550132"}, "first_name": {"Ada"}, "local_presence_number": {"No"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Body != `{"status":"success"}` {
		t.Errorf("response = %+v", resp)
	}
}

func TestStartCallOtherOriginGetsNoToken(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "" {
			t.Errorf("call endpoint on another origin got Authorization %q", got)
		}
		r.ParseForm()
		if r.PostForm.Get("phone_number") != "+14155550132" {
			t.Errorf("form = %v", r.PostForm)
		}
	}))
	defer other.Close()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("service origin got a request: %s", r.URL)
	})
	ep := &CallEndpoint{URL: other.URL + "/call/x", Method: "POST"}
	if _, err := c.StartCall(context.Background(), ep, url.Values{"phone_number": {"+14155550132"}}); err != nil {
		t.Fatal(err)
	}
}

func TestStartCallWithGETSendsQuery(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Query().Get("phone_number") != "+14155550132" || r.URL.Query().Get("k") != "v" {
			t.Errorf("request = %s %s", r.Method, r.URL)
		}
	})
	ep := &CallEndpoint{URL: srv.URL + "/call/x?k=v", Method: "GET"}
	if _, err := c.StartCall(context.Background(), ep, url.Values{"phone_number": {"+14155550132"}}); err != nil {
		t.Fatal(err)
	}
}

// TestClassify runs call starts against servers that misbehave in each way
// the at-most-once promise cares about, and checks the outcome.
func TestClassify(t *testing.T) {
	t.Parallel()
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"message":"status %d"}`, code)
		}
	}
	hangUp := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the request arrived whole...
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Fatal(err)
		}
		conn.Close() // ...and the answer never comes
	}
	// answer503 answers 503 as a proxy or platform in front of the
	// service does, with body of type ctype and no Retry-After.
	answer503 := func(ctype, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    Outcome
	}{
		{"200", status(200), Sent},
		// A 503 that is not the service's own answer may follow the
		// request passed on: the call may have started.
		{"503 of Envoy after a reset", answer503("text/plain", "upstream connect error or disconnect/reset before headers. reset reason: connection termination"), Uncertain},
		{"503 of Heroku's request timeout", answer503("text/html; charset=utf-8", `<!DOCTYPE html><html><head><title>Application Error</title></head><body><iframe src="//www.herokucdn.com/error-pages/application-error.html"></iframe></body></html>`), Uncertain},
		{"503 with no body", answer503("", ""), Uncertain},
		{"503 of the service, JSON without Retry-After", answer503("application/json", `{"error":"service_unavailable","message":"the service is temporarily unavailable"}`), Retryable},
		{"202", status(202), Sent},
		{"429", status(429), Retryable},
		{"503", status(503), Retryable},
		{"500", status(500), Uncertain},
		{"502", status(502), Uncertain},
		{"504", status(504), Uncertain},
		{"302", status(302), Uncertain},
		{"400", status(400), Failed},
		{"404", status(404), Failed},
		{"422", status(422), Failed},
		{"dropped after write", hangUp, Uncertain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := newTestClient(t, tc.handler)
			_, err := c.StartCall(context.Background(), &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
			if got := Classify(err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tc.want)
			}
			if tc.name == "503" || tc.name == "429" { // the answers that carry a Retry-After
				var e *Error
				if !errors.As(err, &e) || e.RetryAfter != 7*time.Second {
					t.Errorf("Retry-After not carried: %#v", err)
				}
			}
		})
	}
}

func TestClassifyTimeoutAfterWriteIsUncertain(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-release
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if got := Classify(err); got != Uncertain {
		t.Errorf("Classify(%v) = %v, want uncertain", err, got)
	}
}

func TestClassifyRefusedConnectionIsRetryable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := New("http://"+addr, staticTokens{&Token{AccessToken: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartCall(context.Background(), &CallEndpoint{URL: "http://" + addr + "/call", Method: "POST"}, url.Values{"phone_number": {"+1"}})
	if got := Classify(err); got != Retryable {
		t.Errorf("Classify(%v) = %v, want retryable", err, got)
	}
}

func TestClassifyCancelledBeforeSendIsRetryable(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		t.Error("request reached the server")
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.StartCall(ctx, &CallEndpoint{URL: srv.URL + "/call", Method: "POST"}, url.Values{})
	if got := Classify(err); got != Retryable {
		t.Errorf("Classify(%v) = %v, want retryable", err, got)
	}
}

func TestClassifyUnknownErrorIsUncertain(t *testing.T) {
	t.Parallel()
	if got := Classify(errors.New("something odd")); got != Uncertain {
		t.Errorf("got %v", got)
	}
}

func TestErrorCarriesBoundedExcerpt(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(422)
		fmt.Fprint(w, strings.Repeat("bad field ", 1000))
	})
	_, err := c.ListAgents(context.Background(), 1, 1)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %T %v", err, err)
	}
	if e.StatusCode != 422 || len(e.Body) > ExcerptLen+len("…") || !strings.HasPrefix(e.Body, "bad field bad field") {
		t.Errorf("error = %d %q", e.StatusCode, e.Body)
	}
	if strings.Contains(err.Error(), "per_page") {
		t.Errorf("error repeats the query string: %v", err)
	}
}

func TestParseBaseURL(t *testing.T) {
	t.Parallel()
	good := []string{"https://api.example.com", "https://api.example.com/v1/", "http://127.0.0.1:8089", "http://localhost:1", "http://[::1]:80"}
	bad := []string{"http://api.example.com", "http://10.0.0.1", "ftp://x", "api.example.com", "", "https://user:pw@x.com", "https://x.com?a=b"}
	for _, s := range good {
		if _, err := ParseBaseURL(s); err != nil {
			t.Errorf("ParseBaseURL(%q): %v", s, err)
		}
	}
	for _, s := range bad {
		_, err := ParseBaseURL(s)
		if err == nil {
			t.Errorf("ParseBaseURL(%q): no error", s)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("error shows credentials: %v", err)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"-1":                            0,
		"junk":                          0,
		"99999999":                      24 * time.Hour,
		"Sat, 21 Nov 2026 12:00:30 GMT": 30 * time.Second,
		"Sat, 21 Nov 2026 11:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	if got := Excerpt("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("got %q", got)
	}
	if got := Excerpt("ééééé", 3); got != "é…" {
		t.Errorf("got %q, want a cut on a rune boundary", got)
	}
}

// TestStartCallErrorsNameOnlyTheOrigin: a call endpoint's path is unique to
// its agent and may be enough to start calls, so no error repeats it.
func TestStartCallErrorsNameOnlyTheOrigin(t *testing.T) {
	t.Parallel()
	const secretPath = "/call/agent_1/5ecre7t0ken"
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusBadRequest)
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, base := range []string{srv.URL, dead} {
		_, err := c.StartCall(context.Background(), &CallEndpoint{URL: base + secretPath + "?k=v", Method: "POST"}, url.Values{})
		if err == nil || strings.Contains(err.Error(), "5ecre7t0ken") || strings.Contains(err.Error(), "agent_1") {
			t.Errorf("error shows the endpoint's path: %v", err)
		}
		if !strings.Contains(err.Error(), base) {
			t.Errorf("error does not name the origin %s: %v", base, err)
		}
	}
}

// TestOverSizeAnswerSaysSo: a JSON answer larger than the client reads is
// reported as too large, naming the endpoint and the limit, not as the
// decoder's "unexpected EOF"; one just under the limit is read.
func TestOverSizeAnswerSaysSo(t *testing.T) {
	t.Parallel()
	// agentList is a valid agent list page of about size bytes.
	agentList := func(size int) string {
		prompt := strings.Repeat("p", 1000)
		var b strings.Builder
		b.WriteString(`{"data":[`)
		for i := 0; b.Len() < size-1200; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"agent_id":"a%d","agent_name":"A%d","status":"active","general_prompt":%q}`, i, i, prompt)
		}
		b.WriteString(`],"current_page":1,"per_page":100,"total":1}`)
		return b.String()
	}
	var body atomic.Value
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body.Load().(string))
	})
	body.Store(agentList(maxBodyRead - 100))
	if p, err := c.ListAgents(context.Background(), 1, 100); err != nil || len(p.Agents) == 0 {
		t.Fatalf("an answer under the limit: %v", err)
	}
	body.Store(agentList(3 * maxBodyRead))
	_, err := c.ListAgents(context.Background(), 1, 100)
	const want = "list agents: reading the answer: the answer of GET http://127.0.0.1:"
	const limit = "/api/ai/agent/list is larger than 1 MiB, the most callrun reads of one answer"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), limit) {
		t.Errorf("over-size agent list: error %v; want %q...%q", err, want, limit)
	}

	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"access_token":"a","token_type":"Bearer","expires_in":60,"padding":%q}`, strings.Repeat("x", 2*maxBodyRead))
	}))
	defer tokens.Close()
	o := &OAuth{BaseURL: tokens.URL, ClientID: "c", ClientSecret: "s", RedirectURI: testRedirect}
	_, err = o.Exchange(context.Background(), "code")
	if err == nil || !strings.Contains(err.Error(), "the answer of POST "+tokens.URL+"/oauth/token is larger than 1 MiB") {
		t.Errorf("over-size token answer: error %v", err)
	}
}

// TestListAgentsRefusesAnAnswerWithoutAList: a 200 whose JSON holds no
// agent list ({}, a proxy's or a gateway's JSON) is no empty account;
// read as one, run created every agent again at each run, two of a name.
func TestListAgentsRefusesAnAnswerWithoutAList(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"data":null,"total":0}`, `{"status":"ok","message":"Welcome"}`} {
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, body)
		})
		if p, err := c.ListAgents(context.Background(), 1, 100); err == nil || !strings.Contains(err.Error(), "without a list of agents") {
			t.Errorf("%s: page %+v, error %v; want an error saying there is no list", body, p, err)
		}
	}
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[],"current_page":1,"per_page":100,"total":0}`)
	})
	if p, err := c.ListAgents(context.Background(), 1, 100); err != nil || len(p.Agents) != 0 {
		t.Errorf("an empty list: %+v, %v", p, err)
	}
}
