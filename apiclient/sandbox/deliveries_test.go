package sandbox

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook receiver that refuses the first attempts of each
// delivery and records the forms it acknowledged.
type receiver struct {
	mu     sync.Mutex
	refuse int            // attempts refused per event and phone
	tries  map[string]int // by event and phone
	acked  []url.Values
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Header.Get("Content-Type") != formType {
		http.Error(w, "not a form", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	k := r.PostForm.Get("event") + " " + r.PostForm.Get("phone_number")
	rc.tries[k]++
	if rc.tries[k] <= rc.refuse {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	rc.acked = append(rc.acked, r.PostForm)
}

func (rc *receiver) events() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, f := range rc.acked {
		out = append(out, f.Get("event"))
	}
	return out
}

func startReceiver(t *testing.T, refuse int) (*receiver, string) {
	rc := &receiver{refuse: refuse, tries: map[string]int{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL + "/hook/s3cret"
}

func TestAccountWebhooksRetried(t *testing.T) {
	t.Parallel()
	rc, hook := startReceiver(t, 2)
	e := newEnv(t, Options{CallDuration: 20 * time.Millisecond,
		AccountWebhook: AccountWebhook{URL: hook, Retry: time.Millisecond, MaxRetry: 4 * time.Millisecond}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}, "first_name": {"Ada"}, "local_presence_number": {"No"}}), 200, "")
	// The receiver records a delivery before its answer reaches the
	// sandbox's ledger: wait for the sandbox.
	if err := e.srv.WaitWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := rc.events(); got[0] != EventStarted || got[1] != EventAnswered || got[2] != EventEnded {
		t.Errorf("events in order %v", got)
	}
	for _, f := range rc.acked {
		if f.Get("phone_number") != phone || f.Get("first_name") != "Ada" || f.Has("local_presence_number") {
			t.Errorf("delivered form %v", f)
		}
	}
	ds := e.srv.Deliveries()
	if len(ds) != 3 {
		t.Fatalf("ledger %+v", ds)
	}
	for _, d := range ds {
		if !d.Acked || d.Attempts != 3 || d.Status != 200 || d.CallID != "call_1" {
			t.Errorf("ledger entry %+v", d)
		}
	}
}

func TestAccountWebhooksGiveUp(t *testing.T) {
	t.Parallel()
	rc, hook := startReceiver(t, 100)
	e := newEnv(t, Options{CallDuration: 2 * time.Millisecond,
		AccountWebhook: AccountWebhook{URL: hook, Retry: time.Millisecond, MaxRetry: time.Millisecond, Attempts: 3}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")
	eventually(t, "three deliveries given up", func() bool {
		ds := e.srv.Deliveries()
		return len(ds) == 3 && ds[2].Attempts == 3
	})
	for _, d := range e.srv.Deliveries() {
		if d.Acked || d.Status != 503 || d.Err == "" {
			t.Errorf("ledger entry %+v", d)
		}
	}
	if n := len(rc.events()); n != 0 {
		t.Errorf("%d acknowledged", n)
	}
}

func TestAccountWebhooksFaults(t *testing.T) {
	t.Parallel()
	rc, hook := startReceiver(t, 0)
	e := newEnv(t, Options{CallDuration: 2 * time.Millisecond,
		AccountWebhook: AccountWebhook{URL: hook, OutOfOrder: true, ShareDuplicate: 1}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")
	eventually(t, "six acknowledged deliveries", func() bool { return len(rc.events()) == 6 })
	want := []string{EventEnded, EventEnded, EventAnswered, EventAnswered, EventStarted, EventStarted}
	got := rc.events()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
	dups := 0
	for _, d := range e.srv.Deliveries() {
		if d.Duplicate {
			dups++
		}
	}
	if dups != 3 {
		t.Errorf("%d duplicates in the ledger, want 3", dups)
	}
}

func TestAccountWebhookNotLoopback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{CallDuration: time.Millisecond, AccountWebhook: AccountWebhook{URL: "http://hooks.example.com/x"}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")
	eventually(t, "a refused delivery", func() bool { ds := e.srv.Deliveries(); return len(ds) == 3 && ds[2].Err != "" })
	for _, d := range e.srv.Deliveries() {
		if d.Acked || d.Attempts != 1 {
			t.Errorf("ledger entry %+v", d)
		}
	}
}

// TestAccountWebhooksLateForgedOptOut: late deliveries still arrive, and
// WaitWebhooks returns only once they have; a forged delivery goes once
// to a wrong secret and is refused; an opted-out call's call.ended says so.
func TestAccountWebhooksLateForgedOptOut(t *testing.T) {
	t.Parallel()
	rc := &receiver{tries: map[string]int{}}
	forged := make(chan string, 10)
	mux := http.NewServeMux()
	mux.Handle("/hook/s3cret-0123456789abcdef", rc)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		forged <- r.URL.Path
		http.NotFound(w, r)
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	e := newEnv(t, Options{CallDuration: 5 * time.Millisecond,
		AccountWebhook: AccountWebhook{URL: hs.URL + "/hook/s3cret-0123456789abcdef", ShareLate: 1, LateBy: 30 * time.Millisecond,
			ShareForged: 1, ShareOptOut: 1}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	e.want(e.call(ep, url.Values{"phone_number": {phone}}), 200, "")
	if err := e.srv.WaitWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.PendingWebhooks(); n != 0 {
		t.Errorf("%d webhooks pending after WaitWebhooks", n)
	}
	if got := rc.events(); len(got) != 3 {
		t.Fatalf("acknowledged after WaitWebhooks: %v", got)
	}
	for _, f := range rc.acked {
		if f.Get("status") == "forged" {
			t.Errorf("the forged delivery reached the right secret: %v", f)
		}
		if optedOut := f.Get("disposition") == "dnc"; optedOut != (f.Get("event") == EventEnded) {
			t.Errorf("opt-out on the wrong event: %v", f)
		}
	}
	var nForged int
	for _, d := range e.srv.Deliveries() {
		switch {
		case d.Forged:
			nForged++
			if d.Acked || d.Attempts != 1 || d.Status != 404 || d.Form.Get("status") != "forged" || d.Event != EventEnded {
				t.Errorf("forged ledger entry %+v", d)
			}
		case !d.Late || !d.Acked:
			t.Errorf("ledger entry %+v, want late and acknowledged", d)
		}
	}
	if nForged != 1 {
		t.Errorf("%d forged deliveries in the ledger, want 1", nForged)
	}
	select {
	case p := <-forged:
		if strings.Contains(p, "s3cret") || len(p) != len("/hook/s3cret-0123456789abcdef") {
			t.Errorf("forged to %q", p)
		}
	default:
		t.Error("the forger sent nothing")
	}
}

func TestAccountWebhookFaultsChecked(t *testing.T) {
	t.Parallel()
	for _, aw := range []AccountWebhook{{ShareLate: 2}, {ShareForged: -0.1}, {ShareOptOut: 1.5}, {LateBy: -time.Second}} {
		if err := checkAccountWebhook(&aw); err == nil {
			t.Errorf("%+v accepted", aw)
		}
	}
	var aw AccountWebhook
	if err := checkAccountWebhook(&aw); err != nil || aw.OptOutField != "disposition" || aw.OptOutValue != "dnc" || aw.LateBy != 2*time.Second {
		t.Errorf("defaults %+v, %v", aw, err)
	}
}
