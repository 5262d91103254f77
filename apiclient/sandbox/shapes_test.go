package sandbox

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireRequest is one request a receiver got, as it came.
type wireRequest struct {
	contentType string
	body        []byte
}

// wireReceiver records every request it acknowledges; it refuses with 503
// the first refuse attempts of each distinct body, so a retry is taken
// only if it is the same bytes.
type wireReceiver struct {
	mu     sync.Mutex
	refuse int
	tries  map[string]int
	got    []wireRequest
}

func (rc *wireReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.tries[string(body)]++
	if rc.tries[string(body)] <= rc.refuse {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	rc.got = append(rc.got, wireRequest{r.Header.Get("Content-Type"), body})
}

func (rc *wireReceiver) requests() []wireRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// shapeRun places one call to phone with first_name Ada through a sandbox
// whose account webhook is aw, delivered to a wireReceiver, and returns
// what the receiver took, the ledger of deliveries and the call start's
// answer, once every webhook is done.
func shapeRun(t *testing.T, opts Options, refuse int) ([]wireRequest, []Delivery, result) {
	t.Helper()
	rc := &wireReceiver{refuse: refuse, tries: map[string]int{}}
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	opts.AccountWebhook.URL = hs.URL + "/hook/s3cret"
	opts.AccountWebhook.Retry, opts.AccountWebhook.MaxRetry = time.Millisecond, time.Millisecond
	opts.AccountWebhook.Attempts = 3
	if opts.CallDuration == 0 {
		opts.CallDuration = 2 * time.Millisecond
	}
	e := newEnv(t, opts)
	a, ep := e.seededEndpoint(Agent{AgentName: "a"})
	answer := e.call(ep, url.Values{"phone_number": {phone}, "first_name": {"Ada"}, "local_presence_number": {"No"}})
	e.want(answer, 200, "")
	if err := e.srv.WaitWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	ds := e.srv.Deliveries()
	for _, d := range ds {
		if d.AgentID != a.AgentID || d.CallID != "call_1" {
			t.Errorf("ledger entry %+v: want agent %s, call_1", d, a.AgentID)
		}
	}
	return rc.requests(), ds, answer
}

// ticking returns a clock for Options.Now that moves a second at every
// reading, so each sending of an envelope has a timestamp of its own.
func ticking() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func TestShapeFormIsTheDefault(t *testing.T) {
	t.Parallel()
	got, ds, answer := shapeRun(t, Options{}, 0)
	want := []string{
		"event=call.started&first_name=Ada&phone_number=%2B15551234567",
		"event=call.answered&first_name=Ada&phone_number=%2B15551234567",
		"event=call.ended&first_name=Ada&phone_number=%2B15551234567",
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.contentType != formType || string(r.body) != want[i] {
			t.Errorf("request %d: %s %q, want %s %q", i, r.contentType, r.body, formType, want[i])
		}
	}
	for _, d := range ds {
		if d.Shape != ShapeForm {
			t.Errorf("ledger shape %q, want %q", d.Shape, ShapeForm)
		}
	}
	if answer.Body["call_id"] != "call_1" {
		t.Errorf("answer %s: want call_id call_1", answer.Raw)
	}
}

func TestShapeContactOnly(t *testing.T) {
	t.Parallel()
	got, ds, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeContactOnly, ShareOptOut: 1}}, 0)
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	contact := "first_name=Ada&phone_number=%2B15551234567"
	for i, want := range []string{contact, contact, "disposition=dnc&" + contact} {
		if got[i].contentType != formType || string(got[i].body) != want {
			t.Errorf("request %d: %s %q, want %q: the contact's fields alone, no event, no id", i, got[i].contentType, got[i].body, want)
		}
	}
	for i, d := range ds {
		if d.Shape != ShapeContactOnly || d.Event != []string{EventStarted, EventAnswered, EventEnded}[i] || d.Form.Has("event") {
			t.Errorf("ledger entry %d: %+v", i, d)
		}
	}
}

// envelopeOf decodes an envelope and checks its signature member, if any,
// is the last and signs the bytes before it; it returns the envelope and
// its signature ("" when unsigned).
func envelopeOf(t *testing.T, body []byte, secret string) (env struct {
	Event     string         `json:"event"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
	Signature string         `json:"signature"`
}, sig string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("envelope %s: %v", body, err)
	}
	m := regexp.MustCompile(`,"signature":"(sha256=[0-9a-f]{64})"}$`).FindSubmatchIndex(body)
	if m == nil {
		if env.Signature != "" {
			t.Errorf("signature %q not the last member of %s", env.Signature, body)
		}
		return env, ""
	}
	sig = string(body[m[2]:m[3]])
	unsigned := append(slices.Clone(body[:m[0]]), '}')
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(unsigned)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); sig != want || env.Signature != sig {
		t.Errorf("signature %s over %s: want %s", sig, unsigned, want)
	}
	return env, sig
}

func TestShapeEnvelope(t *testing.T) {
	t.Parallel()
	const secret = "whsec_sandbox_test"
	got, ds, answer := shapeRun(t, Options{Now: ticking(),
		AccountWebhook: AccountWebhook{Shape: ShapeEnvelope, SigningSecret: secret, ShareOptOut: 1, ShareDuplicate: 1}}, 0)
	if len(got) != 6 || len(ds) != 6 {
		t.Fatalf("%d requests, %d in the ledger; want 6: three events, each sent twice", len(got), len(ds))
	}
	sigs := map[string]string{} // by event
	stamps := map[string]string{}
	for i, r := range got {
		if r.contentType != jsonType {
			t.Errorf("request %d: Content-Type %s", i, r.contentType)
		}
		env, sig := envelopeOf(t, r.body, secret)
		if sig == "" {
			t.Errorf("request %d unsigned: %s", i, r.body)
		}
		event := []string{EventStarted, EventStarted, EventAnswered, EventAnswered, EventEnded, EventEnded}[i]
		d := env.Data
		if env.Event != event || d["call_id"] != answer.Body["call_id"] || d["agent_id"] != ds[i].AgentID || d["caller_number"] != phone {
			t.Errorf("request %d: %s; want %s of call %v", i, r.body, event, answer.Body["call_id"])
		}
		if _, err := time.Parse(time.RFC3339, env.Timestamp); err != nil {
			t.Errorf("request %d: timestamp %q", i, env.Timestamp)
		}
		ended := event == EventEnded
		if _, has := d["transcript"]; has != ended || (d["recording_url"] != nil) != ended || (d["disposition"] == "dnc") != ended {
			t.Errorf("request %d (%s): transcript, recording and opt-out on call.ended alone: %s", i, event, r.body)
		}
		if want := map[string]any{EventStarted: "ringing", EventAnswered: "in-progress", EventEnded: "completed"}[event]; d["status"] != want {
			t.Errorf("request %d: status %v, want %v", i, d["status"], want)
		}
		if want := map[bool]float64{true: 1, false: 0}[ended]; d["duration"] != want {
			t.Errorf("request %d: duration %v, want %v (whole seconds, at least 1, on call.ended)", i, d["duration"], want)
		}
		if i%2 == 1 { // the duplicate: another timestamp and signature, nothing else
			if sig == sigs[event] || env.Timestamp == stamps[event] {
				t.Errorf("duplicate %d has its first sending's timestamp or signature: %s", i, r.body)
			}
			first := regexp.MustCompile(`"timestamp":"[^"]*"|"signature":"[^"]*"`)
			if a, b := first.ReplaceAll(got[i-1].body, nil), first.ReplaceAll(r.body, nil); !bytes.Equal(a, b) {
				t.Errorf("duplicate differs beyond timestamp and signature:\n%s\n%s", a, b)
			}
		}
		sigs[event], stamps[event] = sig, env.Timestamp
	}
	for _, d := range ds {
		if d.Shape != ShapeEnvelope {
			t.Errorf("ledger shape %q", d.Shape)
		}
	}
}

func TestShapeEnvelopeUnsignedCallerNumberTranscript(t *testing.T) {
	t.Parallel()
	got, _, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeEnvelope,
		CallerNumber: "+14155550100", TranscriptBytes: 200 << 10}}, 0)
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	for i, r := range got {
		env, sig := envelopeOf(t, r.body, "")
		if sig != "" || bytes.Contains(r.body, []byte(`"signature"`)) {
			t.Errorf("request %d signed without a secret: %s", i, r.body)
		}
		if env.Data["caller_number"] != "+14155550100" || bytes.Contains(r.body, []byte(phone)) {
			t.Errorf("request %d: caller_number %v, and the contact's number nowhere", i, env.Data["caller_number"])
		}
	}
	ended, _ := envelopeOf(t, got[2].body, "")
	if n := len(ended.Data["transcript"].(string)); n != 200<<10 || len(got[2].body) < 200<<10 {
		t.Errorf("transcript %d bytes in a body of %d, want 200 KiB", n, len(got[2].body))
	}
}

// The documentation's verify_signature, run on its own example payload
// with this secret, gives this signature: SignEnvelope computes the same.
func TestSignEnvelopeDocumentationVector(t *testing.T) {
	t.Parallel()
	payload := `{"event":"call.ended","timestamp":"2024-01-15T10:30:00Z","data":{"call_id":"call_123456","agent_id":"agent_789","duration":180,"status":"completed"}}`
	const want = "sha256=eea822af7a9de0503ff10286ea49611d9c67f3eeb72fac613ac3d9b55e153519"
	if got := SignEnvelope([]byte(payload), "whsec_callrun_example"); got != want {
		t.Errorf("SignEnvelope = %s, want %s", got, want)
	}
}

func TestShapeVariants(t *testing.T) {
	t.Parallel()
	fields := func(t *testing.T, r wireRequest) map[string]string {
		t.Helper()
		out := map[string]string{}
		mt, params, _ := mime.ParseMediaType(r.contentType)
		switch mt {
		case formType:
			v, err := url.ParseQuery(string(r.body))
			if err != nil {
				t.Fatal(err)
			}
			for k := range v {
				out[k] = v.Get(k)
			}
		case "multipart/form-data":
			mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
			f, err := mr.ReadForm(1 << 20)
			if err != nil {
				t.Fatalf("multipart body %q: %v", r.body, err)
			}
			for k, vs := range f.Value {
				out[k] = vs[0]
			}
		default:
			t.Fatalf("Content-Type %s", r.contentType)
		}
		return out
	}
	t.Run("array", func(t *testing.T) {
		got, _, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeArray}}, 0)
		for i, r := range got {
			var arr []map[string]string
			if r.contentType != jsonType || json.Unmarshal(r.body, &arr) != nil || len(arr) != 1 {
				t.Fatalf("request %d: %s %s, want a JSON array of one delivery", i, r.contentType, r.body)
			}
			if want := []string{EventStarted, EventAnswered, EventEnded}[i]; arr[0]["event"] != want || arr[0]["phone_number"] != phone || arr[0]["first_name"] != "Ada" {
				t.Errorf("request %d: %s", i, r.body)
			}
		}
	})
	t.Run("multipart, each retry the same bytes", func(t *testing.T) {
		got, ds, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeMultipart, ShareOptOut: 1}}, 1)
		if len(got) != 3 {
			t.Fatalf("%d requests taken, want 3", len(got))
		}
		for i, r := range got {
			if !strings.HasPrefix(r.contentType, "multipart/form-data; boundary=") || ds[i].Attempts != 2 {
				t.Errorf("request %d: %s after %d attempts, want multipart taken at the second", i, r.contentType, ds[i].Attempts)
			}
			f := fields(t, r)
			if f["event"] != ds[i].Event || f["phone_number"] != phone || f["first_name"] != "Ada" || (f["disposition"] == "dnc") != (i == 2) {
				t.Errorf("request %d: fields %v", i, f)
			}
		}
	})
	t.Run("case", func(t *testing.T) {
		got, _, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeCase, ShareOptOut: 1}}, 0)
		want := []map[string]string{
			{"event": EventStarted, "phoneNumber": phone, "firstName": "Ada"},
			{"event": EventAnswered, "phone-number": phone, "first-name": "Ada"},
			{"Event": EventEnded, "Phone_Number": phone, "First_Name": "Ada", "Disposition": "dnc"},
		}
		for i, r := range got {
			if f := fields(t, r); !equalMaps(f, want[i]) {
				t.Errorf("request %d: %v, want %v", i, f, want[i])
			}
		}
	})
	t.Run("nested", func(t *testing.T) {
		got, _, _ := shapeRun(t, Options{AccountWebhook: AccountWebhook{Shape: ShapeNested, ShareOptOut: 1}}, 0)
		for i, r := range got {
			var n struct {
				Event   string            `json:"event"`
				CallID  string            `json:"call_id"`
				Contact map[string]string `json:"contact"`
			}
			dec := json.NewDecoder(bytes.NewReader(r.body))
			dec.DisallowUnknownFields()
			if r.contentType != jsonType || dec.Decode(&n) != nil {
				t.Fatalf("request %d: %s %s", i, r.contentType, r.body)
			}
			want := map[string]string{"phone_number": phone, "first_name": "Ada"}
			if i == 2 {
				want["disposition"] = "dnc"
			}
			if n.Event != []string{EventStarted, EventAnswered, EventEnded}[i] || n.CallID != "call_1" || !equalMaps(n.Contact, want) {
				t.Errorf("request %d: %s", i, r.body)
			}
		}
	})
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestShapeMixed: over twenty calls every shape is sent, and each request
// is written as its ledger entry's shape says.
func TestShapeMixed(t *testing.T) {
	t.Parallel()
	rc := &wireReceiver{tries: map[string]int{}}
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	e := newEnv(t, Options{CallDuration: time.Millisecond, AccountWebhook: AccountWebhook{URL: hs.URL + "/hook/s3cret",
		Shape: ShapeMixed, SigningSecret: "whsec_mixed", Seed: 7}})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	for i := range 20 {
		e.want(e.call(ep, url.Values{"phone_number": {fmt.Sprintf("+1415555%04d", i)}}), 200, "")
	}
	if err := e.srv.WaitWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	ds := e.srv.Deliveries()
	seen := map[string]int{}
	for _, d := range ds {
		seen[d.Shape]++
	}
	for _, s := range Shapes[:len(Shapes)-1] {
		if seen[s] == 0 {
			t.Errorf("no delivery of shape %s among %d: %v", s, len(ds), seen)
		}
	}
	// Every request the receiver took is one a delivery of its shape
	// writes: match them by their bytes, the envelope's timestamp and
	// signature aside.
	volatile := regexp.MustCompile(`"timestamp":"[^"]*"|,"signature":"[^"]*"`)
	written := map[string]string{}
	for _, d := range ds {
		w, err := e.srv.encode(d, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		written[string(volatile.ReplaceAll(w.body, nil))] = d.Shape
	}
	got := rc.requests()
	if len(got) != len(ds) {
		t.Fatalf("%d requests, %d deliveries", len(got), len(ds))
	}
	for _, r := range got {
		if _, ok := written[string(volatile.ReplaceAll(r.body, nil))]; !ok {
			t.Errorf("request %s %q matches no delivery", r.contentType, r.body)
		}
		if strings.HasPrefix(string(r.body), `{"event"`) && strings.Contains(string(r.body), `"data"`) {
			envelopeOf(t, r.body, "whsec_mixed")
		}
	}
}

func TestAnswerWithoutCallID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{AnswerWithoutCallID: true})
	_, ep := e.seededEndpoint(Agent{AgentName: "a"})
	r := e.call(ep, url.Values{"phone_number": {phone}})
	e.want(r, 200, "")
	if _, has := r.Body["call_id"]; has || r.Body["status"] != "success" {
		t.Errorf("answer %s: want success without call_id", r.Raw)
	}
	if c := e.srv.Calls(); len(c) != 1 || c[0].CallID != "call_1" {
		t.Errorf("ledger %+v: the call keeps its id", c)
	}
}

func TestAccountWebhookShapeChecked(t *testing.T) {
	t.Parallel()
	for _, aw := range []AccountWebhook{{Shape: "xml"}, {SigningSecret: "s"}, {Shape: ShapeCase, SigningSecret: "s"}, {Shape: ShapeEnvelope, TranscriptBytes: -1}} {
		if err := checkAccountWebhook(&aw); err == nil {
			t.Errorf("%+v accepted", aw)
		}
	}
	for _, s := range Shapes {
		aw := AccountWebhook{Shape: s}
		if err := checkAccountWebhook(&aw); err != nil {
			t.Errorf("shape %s: %v", s, err)
		}
	}
}
