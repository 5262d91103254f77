package apiclient

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// readOne reads the one delivery of a request, failing the test on an
// error or on several.
func readOne(t *testing.T, r *http.Request) Delivery {
	t.Helper()
	ds, err := ReadDeliveries(r, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	return ds[0]
}

func post(ctype, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/h", strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	return r
}

func TestReadDeliveryShapes(t *testing.T) {
	t.Parallel()
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("Event", "call.ended")
	mw.WriteField("Phone_Number", "+4915112345678")
	mw.WriteField("agentId", "agent_1")
	mw.WriteField("first_name", "Ada")
	fw, _ := mw.CreateFormFile("recording", "call.mp3")
	fw.Write([]byte("ID3 not text"))
	mw.Close()
	for _, tc := range []struct {
		name string
		r    *http.Request
	}{
		{"GET query", httptest.NewRequest(http.MethodGet, "/h?event=call.ended&phone_number=%2B4915112345678&agent_id=agent_1&first_name=Ada", nil)},
		{"POST form", post("application/x-www-form-urlencoded", "event=call.ended&phone_number=%2B4915112345678&agent_id=agent_1&first_name=Ada")},
		{"POST JSON", post("application/json; charset=utf-8", `{"event":"call.ended","phone_number":"+4915112345678","agent_id":"agent_1","first_name":"Ada"}`)},
		{"POST JSON, no type", post("", ` {"type":"call.ended","phone_number":"+4915112345678","agent_id":"agent_1","first_name":"Ada"}`)},
		{"the documented envelope", post("application/json", `{"event":"call.ended","timestamp":"2024-01-15T10:30:00Z","data":{"call_id":"call_1","agent_id":"agent_1","phone_number":"+4915112345678","first_name":"Ada","duration":180},"signature":"sha256=abc"}`)},
		{"keys in other cases", post("application/json", `{"Event":"call.ended","Phone_Number":"+4915112345678","AgentId":"agent_1","First_Name":"Ada"}`)},
		{"nested under contact and call", post("application/json", `{"event_type":"call.ended","call":{"agent_id":"agent_1"},"contact":{"phone_number":"+4915112345678","first_name":"Ada"}}`)},
		{"multipart", func() *http.Request { return post(mw.FormDataContentType(), mp.String()) }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := readOne(t, tc.r)
			if d.Event != "call.ended" || d.AgentID != "agent_1" || Field(d.Fields, "phone_number") != "+4915112345678" || Field(d.Fields, "first_name") != "Ada" {
				t.Errorf("read %+v", d)
			}
			if json := strings.HasPrefix(strings.TrimSpace(d.Raw), "{"); d.Raw == "" && tc.r.Method == http.MethodGet || json {
				t.Errorf("raw delivery %q: a query's or form's is kept, JSON's fields hold it", d.Raw)
			}
		})
	}
}

func TestReadDeliveryArray(t *testing.T) {
	t.Parallel()
	ds, err := ReadDeliveries(post("application/json", `[{"event":"call.started","phone_number":"+1"},{"event":"call.ended","data":{"phone":"+2"}}]`), ReadOptions{})
	if err != nil || len(ds) != 2 {
		t.Fatalf("%d deliveries, %v", len(ds), err)
	}
	if ds[0].Event != "call.started" || Field(ds[1].Fields, "phone") != "+2" || ds[0].Key() == ds[1].Key() {
		t.Errorf("read %+v", ds)
	}
	for _, body := range []string{`[]`, `[1,2]`, `[{"a":1},"x"]`} {
		if _, err := ReadDeliveries(post("application/json", body), ReadOptions{}); err == nil {
			t.Errorf("%s was read", body)
		}
	}
}

// TestReadDeliveryArrayRefusesElements: an array some of whose elements
// are no delivery (a bare string, null, an empty object) is read for the
// others, in order, with a *RefusedElements naming the rest; signatures
// are the elements' own, each checked against its own element, so an
// element signed by its data alone after a refused one is read from its
// data, and a refused element without a signature does not make
// require_signature refuse the array. An array of nothing else is an
// error with no delivery.
func TestReadDeliveryArrayRefusesElements(t *testing.T) {
	t.Parallel()
	ds, err := ReadDeliveries(post("application/json", `[{"event":"call.started","phone_number":"+1"},"call.ended",{"event":"call.ended","phone_number":"+2","disposition":"do_not_call"},{}]`), ReadOptions{})
	var refused *RefusedElements
	if !errors.As(err, &refused) || len(ds) != 2 || ds[0].Event != "call.started" || Field(ds[1].Fields, "disposition") != "do_not_call" {
		t.Fatalf("read %d deliveries (%+v), %v; want the two objects and the others refused", len(ds), ds, err)
	}
	if refused.Of != 4 || len(refused.Refused) != 2 || refused.Refused[0].Index != 2 || refused.Refused[1].Index != 4 ||
		!strings.Contains(err.Error(), "element 2 of 4") || !strings.Contains(err.Error(), "element 4 of 4: an empty delivery") {
		t.Errorf("refused %+v: %v", refused, err)
	}

	const secret = "whsec_elements"
	signed := func(obj string) string { // obj's signature as its last member
		return obj[:len(obj)-1] + `,"signature":"` + Sign(secret, []byte(obj)) + `"}`
	}
	data := `{"phone_number":"+3","disposition":"do_not_call"}`
	byData := `{"event":"call.ended","phone_number":"+9","data":` + data + `,"signature":"` + Sign(secret, []byte(data)) + `"}`
	body := `[` + signed(`{"event":"call.started","phone_number":"+1"}`) + `,null,` + byData + `]`
	ds, err = ReadDeliveries(post("application/json", body), ReadOptions{SigningSecret: secret, RequireSignature: true})
	if !errors.As(err, &refused) || len(ds) != 2 || refused.Of != 3 || len(refused.Refused) != 1 || refused.Refused[0].Index != 2 {
		t.Fatalf("signed elements around null: %d deliveries, %v", len(ds), err)
	}
	if !ds[0].Signed || !ds[1].Signed || Field(ds[1].Fields, "phone_number") != "+3" || ds[1].Fields["phone_number"] != "" {
		t.Errorf("signed elements: %+v; want both signed, the second read from its data", ds)
	}
	// An element whose signature does not match is a forgery: the
	// array is refused whole, as ever.
	forged := `[` + signed(`{"event":"call.started","phone_number":"+1"}`) + `,null,{"event":"call.ended","phone_number":"+2","signature":"sha256=00"}]`
	if _, err := ReadDeliveries(post("application/json", forged), ReadOptions{SigningSecret: secret}); !errors.Is(err, ErrBadSignature) {
		t.Errorf("an array with a forged element: %v, want ErrBadSignature", err)
	}

	for _, body := range []string{`[1,2]`, `[null,{}]`} {
		ds, err := ReadDeliveries(post("application/json", body), ReadOptions{})
		if err == nil || len(ds) != 0 {
			t.Errorf("%s: %d deliveries, %v; want an error and none", body, len(ds), err)
		}
	}
}

func TestField(t *testing.T) {
	t.Parallel()
	fields := map[string]string{
		"Phone":                        "+1 top",
		"data.phone_number":            "+2",
		"message.call.customer.number": "+3",
		"customer.number":              "+4",
		"analysis.phone":               "not a container",
		"a.b.c.d.phone":                "too deep",
		"empty":                        "",
	}
	for name, want := range map[string]string{
		"phone":                "+1 top",
		"PHONE":                "+1 top",
		"phone-number":         "+2",
		"phoneNumber":          "+2",
		"customer.number":      "+4", // shallower than message.call.customer.number
		"number":               "+4",
		"call.customer.number": "+3",
		"analysis.phone":       "not a container",
		"empty":                "",
		"nothing":              "",
	} {
		if got := Field(fields, name); got != want {
			t.Errorf("Field(%q) = %q, want %q", name, got, want)
		}
	}
	paths, vals := FieldValues(fields, "phone")
	if strings.Join(paths, " ") != "Phone" || len(vals) != 1 {
		t.Errorf("FieldValues(phone): %v %v", paths, vals)
	}
}

// TestDeliveryKey: a retry has its delivery's key, whatever changes from
// one attempt to the next; distinct deliveries have distinct keys; and a
// form's legacy key is the key callrun gave it before.
func TestDeliveryKey(t *testing.T) {
	t.Parallel()
	key := func(body string) Delivery {
		t.Helper()
		ctype := "application/x-www-form-urlencoded"
		if strings.HasPrefix(body, "{") {
			ctype = "application/json"
		}
		return readOne(t, post(ctype, body))
	}
	a := key("event=call.ended&phone_number=%2B1&timestamp=1")
	if b := key("phone_number=%2B1&timestamp=2&event=call.ended"); a.Key() != b.Key() || a.LegacyKey() == b.LegacyKey() {
		t.Errorf("a retry with another timestamp: keys %s %s, legacy %s %s", a.Key(), b.Key(), a.LegacyKey(), b.LegacyKey())
	}
	if c := key("event=call.started&phone_number=%2B1&timestamp=1"); a.Key() == c.Key() {
		t.Error("two events share a key")
	}
	// The key callrun gave a form before: its fields, all of them.
	if d := key("event=call.ended&phone_number=%2B1"); d.LegacyKey() != hashKey(map[string]string{"event": "call.ended", "phone_number": "+1"}) || d.Key() != d.LegacyKey() {
		t.Errorf("a form without volatile fields: key %s, legacy %s", d.Key(), d.LegacyKey())
	}
	// An envelope: by its fields, whatever its timestamp, signature or
	// id; another call is another delivery.
	e1 := key(`{"id":"evt_1","event":"call.started","timestamp":"2024-01-15T10:30:00Z","data":{"call_id":"call_1","caller_number":"+1"},"signature":"sha256=aa"}`)
	e2 := key(`{"id":"evt_2","event":"call.started","timestamp":"2024-01-15T10:30:09Z","data":{"call_id":"call_1","caller_number":"+1"},"signature":"sha256=bb"}`)
	e3 := key(`{"event":"call.started","data":{"call_id":"call_2","caller_number":"+1"}}`)
	if e1.Key() != e2.Key() || e1.Key() == e3.Key() || e1.CallID != "call_1" {
		t.Errorf("envelopes: %s %s %s (call %q)", e1.Key(), e2.Key(), e3.Key(), e1.CallID)
	}
	// An envelope without a call id: its fields less the volatile ones.
	n1 := key(`{"id":"evt_1","event":"call.started","timestamp":"1","data":{"phone":"+1"}}`)
	n2 := key(`{"id":"evt_2","event":"call.started","timestamp":"2","data":{"phone":"+1"}}`)
	if n1.Key() != n2.Key() {
		t.Error("an envelope's retry without a call id has another key")
	}
	// A relay's payload, a string that holds JSON, kept as text beside
	// its members: a retry whose payload has another timestamp is the
	// same delivery, as its members say; another disposition is not.
	p1 := key(`{"payload":"{\"event\":\"call.ended\",\"phone_number\":\"+1\",\"timestamp\":1}"}`)
	p2 := key(`{"payload":"{\"event\":\"call.ended\",\"phone_number\":\"+1\",\"timestamp\":2}"}`)
	p3 := key(`{"payload":"{\"event\":\"call.ended\",\"phone_number\":\"+1\",\"timestamp\":1,\"disposition\":\"do_not_call\"}"}`)
	f1 := key("payload=" + url.QueryEscape(`{"event":"call.ended","phone_number":"+1","timestamp":1}`))
	f2 := key("payload=" + url.QueryEscape(`{"event":"call.ended","phone_number":"+1","timestamp":2}`))
	if p1.Key() != p2.Key() || p1.Key() == p3.Key() || f1.Key() != f2.Key() {
		t.Errorf("a payload string's retry: keys %s %s, another disposition %s; a form's %s %s", p1.Key(), p2.Key(), p3.Key(), f1.Key(), f2.Key())
	}
	// The legacy key of a JSON object: its top-level keys, nested ones as
	// their JSON text, as callrun read them.
	if j := key(`{"event":"call.ended","data":{"x":1},"n":5,"z":null}`); j.LegacyKey() != hashKey(map[string]string{"event": "call.ended", "data": `{"x":1}`, "n": "5", "z": ""}) {
		t.Errorf("legacy key of a JSON object: %s", j.LegacyKey())
	}
}

// TestDeliveryKeySameCall: two deliveries of one call and event that say
// different things (a call.ended that says completed, then one that says
// do_not_call; an analysis sent later) have two keys, in an envelope and
// in a form; a retry, the same body or one that differs only in volatile
// fields at its top or nested in its containers (message.timestamp,
// data.attempt), has one.
func TestDeliveryKeySameCall(t *testing.T) {
	t.Parallel()
	read := func(body string) Delivery {
		t.Helper()
		ctype := "application/x-www-form-urlencoded"
		if strings.HasPrefix(body, "{") {
			ctype = "application/json"
		}
		return readOne(t, post(ctype, body))
	}
	const (
		completed = `{"event":"call.ended","timestamp":"2025-03-01T17:11:00Z","data":{"call_id":"call_1","agent_id":"agent_1","caller_number":"+14155550132","duration":65,"status":"completed","disposition":"completed"},"signature":"sha256=aa"}`
		dnc       = `{"event":"call.ended","timestamp":"2025-03-01T17:11:00Z","data":{"call_id":"call_1","agent_id":"agent_1","caller_number":"+14155550132","duration":65,"status":"completed","disposition":"do_not_call"},"signature":"sha256=aa"}`
		analysed  = `{"event":"call.ended","timestamp":"2025-03-01T17:11:00Z","data":{"call_id":"call_1","agent_id":"agent_1","caller_number":"+14155550132","duration":65,"status":"completed","disposition":"completed","analysis":{"summary":"asked not to be called","timestamp":"2025-03-01T17:12:00Z"}},"signature":"sha256=aa"}`
		// The same as completed, sent again: stamped, signed, numbered anew,
		// at the top and inside its containers.
		retried = `{"id":"evt_2","event":"call.ended","timestamp":"2025-03-01T17:11:09Z","data":{"call_id":"call_1","agent_id":"agent_1","caller_number":"+14155550132","duration":65,"status":"completed","disposition":"completed","attempt":2,"Sent-At":"2025-03-01T17:11:09Z"},"signature":"sha256=bb","delivery_id":"d_2"}`
	)
	base := read(completed)
	if base.CallID != "call_1" || base.Event != "call.ended" {
		t.Fatalf("read as call %q event %q", base.CallID, base.Event)
	}
	for _, c := range []struct {
		name, body string
		same       bool
	}{
		{"the same body again", completed, true},
		{"a retry stamped, signed and counted anew, at the top and in data", retried, true},
		{"a retry counted by attemptNumber (HubSpot's)", strings.Replace(completed, `"event":"call.ended"`, `"event":"call.ended","attemptNumber":1`, 1), true},
		{"a retry counted by attempt_number", strings.Replace(completed, `"disposition":"completed"}`, `"disposition":"completed","attempt_number":2}`, 1), true},
		{"the same call and event saying do_not_call", dnc, false},
		{"the same call and event with its analysis", analysed, false},
	} {
		if got := read(c.body).Key(); (got == base.Key()) != c.same {
			t.Errorf("%s: key %s, first %s; want the same %v", c.name, got, base.Key(), c.same)
		}
	}
	// A timestamp of what a delivery reports, not of its sending, tells
	// two deliveries apart: data.analysis is no container.
	later := strings.Replace(analysed, `"timestamp":"2025-03-01T17:12:00Z"`, `"timestamp":"2025-03-01T17:15:00Z"`, 1)
	if read(later).Key() == read(analysed).Key() {
		t.Error("two analyses at two times share a key")
	}
	// A message envelope (Vapi's shape) whose own timestamp changes.
	m1 := read(`{"message":{"type":"end-of-call-report","timestamp":1740849060000,"call":{"id":"call_9","customer":{"number":"+14155550132"}},"endedReason":"customer-ended-call"}}`)
	m2 := read(`{"message":{"type":"end-of-call-report","timestamp":1740849069000,"call":{"id":"call_9","customer":{"number":"+14155550132"}},"endedReason":"customer-ended-call"}}`)
	m3 := read(`{"message":{"type":"end-of-call-report","timestamp":1740849069000,"call":{"id":"call_9","customer":{"number":"+14155550132"}},"endedReason":"customer-did-not-want-calls"}}`)
	if m1.CallID != "call_9" || m1.Key() != m2.Key() || m1.Key() == m3.Key() {
		t.Errorf("message envelopes (call %q): %s %s %s; want the first two the same, the third another", m1.CallID, m1.Key(), m2.Key(), m3.Key())
	}
	// A delivery naming no call, stamped and counted inside its data.
	if n1, n2 := read(`{"event":"contact.updated","data":{"phone":"+14155550132","timestamp":"1","attempt":1}}`), read(`{"event":"contact.updated","data":{"phone":"+14155550132","timestamp":"2","attempt":2}}`); n1.Key() != n2.Key() {
		t.Error("a retry naming no call, stamped anew in its data, has another key")
	}
	// A form naming its call.
	f1 := read("event=call.ended&call_id=call_1&phone_number=%2B14155550132&disposition=completed&timestamp=1")
	f2 := read("event=call.ended&call_id=call_1&phone_number=%2B14155550132&disposition=completed&timestamp=2")
	f3 := read("event=call.ended&call_id=call_1&phone_number=%2B14155550132&disposition=do_not_call&timestamp=1")
	if f1.Key() != f2.Key() || f1.Key() == f3.Key() {
		t.Errorf("forms of call_1: %s %s %s; want the first two the same, the third another", f1.Key(), f2.Key(), f3.Key())
	}
}

func TestReadDeliveryRefuses(t *testing.T) {
	t.Parallel()
	big := "phone_number=" + strings.Repeat("1", MaxDeliveryBody)
	r := post("application/x-www-form-urlencoded", big)
	if _, err := ReadDeliveries(r, ReadOptions{}); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("oversized body: %v", err)
	}
	r = post("", big)
	r.ContentLength = -1 // chunked: the length is learnt by reading
	if _, err := ReadDeliveries(r, ReadOptions{}); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("oversized chunked body: %v", err)
	}
	// Under the bound, a transcript of hundreds of KiB is read whole.
	ok := `{"event":"call.ended","phone_number":"+1","transcript":"` + strings.Repeat("a", 900<<10) + `"}`
	if d := readOne(t, post("application/json", ok)); len(d.Fields["transcript"]) != 900<<10 || d.LegacyKey() != "" {
		t.Errorf("a 900 KiB delivery: transcript of %d bytes, legacy key %q", len(d.Fields["transcript"]), d.LegacyKey())
	}
	if _, err := ReadDeliveries(post("application/json", `{"phone_number":`), ReadOptions{}); err == nil {
		t.Error("a broken JSON body was read")
	}
	if _, err := ReadDeliveries(post("application/pdf", `%PDF`), ReadOptions{}); err == nil {
		t.Error("a PDF was read")
	}
	if _, err := ReadDeliveries(httptest.NewRequest(http.MethodPut, "/h", nil), ReadOptions{}); err == nil {
		t.Error("a PUT was read")
	}
}

func TestReadDeliveryRedacts(t *testing.T) {
	t.Parallel()
	AddSecret("hook-secret-4711")
	d := readOne(t, post("application/x-www-form-urlencoded", "phone_number=%2B1&note=hook-secret-4711"))
	if strings.Contains(d.Raw, "4711") {
		t.Errorf("raw delivery keeps the secret: %s", d.Raw)
	}
	if d = readOne(t, post("", "phone_number=%2B1&note="+strings.Repeat("x", 5000))); len(d.Raw) > maxDeliveryRaw+len(Redacted) {
		t.Errorf("raw delivery not bounded: %d bytes", len(d.Raw))
	}
}

// TestReadDeliveryRedactsFields: a secret a delivery echoes (listen's own
// path in a webhook URL the service sends back, a token) is blanked in
// its fields, which listen stores whole and the report and `callrun
// outcomes` show, as in its raw text: in a form's field, a JSON member, a
// nested one, a form field holding JSON, and base64.
func TestReadDeliveryRedactsFields(t *testing.T) {
	t.Parallel()
	const secret = "hook-secret-8812-fields"
	AddSecret(secret)
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	for _, c := range []struct{ what, ctype, body string }{
		{"form", "application/x-www-form-urlencoded", "phone_number=%2B14155550100&note=" + secret},
		{"form, its JSON payload", "application/x-www-form-urlencoded", "payload=" + url.QueryEscape(`{"event":"call.ended","agent":{"webhook_url":"https://h.example.com/callrun/`+secret+`/agent"}}`)},
		{"JSON", "application/json", `{"event":"call.ended","phone_number":"+14155550100","webhook_url":"https://h.example.com/callrun/` + secret + `"}`},
		{"JSON, nested", "application/json", `{"event":"call.ended","data":{"agent":{"webhook_url":"https://h.example.com/callrun/` + secret + `/agent"},"token":"` + b64 + `"}}`},
		{"JSON, a member named by it", "application/json", `{"event":"call.ended","` + secret + `":"x"}`},
	} {
		d := readOne(t, post(c.ctype, c.body))
		if len(d.Fields) == 0 {
			t.Errorf("%s: no fields", c.what)
		}
		for k, v := range d.Fields {
			if strings.Contains(k+"="+v, "8812") || strings.Contains(k+"="+v, b64) {
				t.Errorf("%s: field %d bytes long keeps the secret", c.what, len(k))
			}
		}
		for k, vs := range d.Repeated {
			if strings.Contains(k+"="+strings.Join(vs, ","), "8812") {
				t.Errorf("%s: a repeated field keeps the secret", c.what)
			}
		}
	}
}

// TestServiceEvent: the service's three events however a sender writes
// them; any other as sent.
func TestServiceEvent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"call.ended": "call.ended", "CALL.ENDED": "call.ended", "call_ended": "call.ended", "Call-Started": "call.started",
		" call answered ": "call.answered", "call_analyzed": "call_analyzed", "end-of-call-report": "end-of-call-report", "": "",
	} {
		if got := ServiceEvent(in); got != want {
			t.Errorf("ServiceEvent(%q) = %q, want %q", in, got, want)
		}
	}
}

// gzipped is body compressed with gzip.
func gzipped(t testing.TB, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadDeliveryBodiesAsSent: what senders do to a body on its way is
// undone before it is read: a gzip Content-Encoding (in any case), a
// UTF-8 byte order mark, JSON sent as a form; a body that is none of
// these is read as before, a form that is not JSON as a form.
func TestReadDeliveryBodiesAsSent(t *testing.T) {
	const js = `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":"do_not_call"}}`
	const form = "event=call.ended&phone_number=%2B442079460123&disposition=do_not_call"
	gz := func(ctype, enc string, body string) *http.Request {
		r := post(ctype, string(gzipped(t, []byte(body))))
		r.Header.Set("Content-Encoding", enc)
		return r
	}
	for _, c := range []struct {
		name string
		r    *http.Request
	}{
		{"JSON as a form", post("application/x-www-form-urlencoded", js)},
		{"JSON as a form, spaced", post("application/x-www-form-urlencoded; charset=utf-8", "\n  "+js+"\n")},
		{"JSON with a BOM, no type", post("", "\xef\xbb\xbf"+js)},
		{"JSON with a BOM", post("application/json", "\xef\xbb\xbf"+js)},
		{"form with a BOM", post("application/x-www-form-urlencoded", "\xef\xbb\xbf"+form)},
		{"gzip form", gz("application/x-www-form-urlencoded", "gzip", form)},
		{"gzip JSON", gz("application/json", "gzip", js)},
		{"gzip JSON as a form", gz("application/x-www-form-urlencoded", "GZIP", js)},
		{"x-gzip JSON, no type", gz("", "x-gzip", "\xef\xbb\xbf"+js)},
	} {
		d := readOne(t, c.r)
		if d.Event != EventEnded || Field(d.Fields, "phone_number") != "+442079460123" || Field(d.Fields, "disposition") != "do_not_call" {
			t.Errorf("%s: read %+v", c.name, d)
		}
	}
	// A form that only starts like JSON is still a form.
	d := readOne(t, post("application/x-www-form-urlencoded", "{x=1&event=call.ended"))
	if d.Event != EventEnded || d.Fields["{x"] != "1" {
		t.Errorf("a form that is not JSON: %+v", d)
	}
}

// TestReadDeliveryGzipBounded: a gzip body is decompressed to
// MaxDeliveryBody at most: one that decompresses to exactly that is
// read, one byte more (a gzip bomb, say) is ErrDeliveryTooLarge, and a
// body that is not gzip is an error.
func TestReadDeliveryGzipBounded(t *testing.T) {
	prefix := "event=call.ended&phone_number=%2B442079460123&transcript="
	full := prefix + strings.Repeat("a", MaxDeliveryBody-len(prefix))
	send := func(plain []byte) error {
		r := post("application/x-www-form-urlencoded", string(gzipped(t, plain)))
		r.Header.Set("Content-Encoding", "gzip")
		_, err := ReadDeliveries(r, ReadOptions{})
		return err
	}
	if err := send([]byte(full)); err != nil {
		t.Errorf("a gzip body of exactly MaxDeliveryBody: %v", err)
	}
	if err := send([]byte(full + "a")); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("a gzip body one byte over: %v, want ErrDeliveryTooLarge", err)
	}
	bomb := gzipped(t, make([]byte, 32<<20)) // 32 MiB of zeros in 32 KiB
	if len(bomb) > MaxDeliveryBody {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	r := post("application/json", string(bomb))
	r.Header.Set("Content-Encoding", "gzip")
	if _, err := ReadDeliveries(r, ReadOptions{}); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("a gzip bomb: %v, want ErrDeliveryTooLarge", err)
	}
	r = post("application/json", `{"event":"call.ended"}`)
	r.Header.Set("Content-Encoding", "gzip")
	if _, err := ReadDeliveries(r, ReadOptions{}); err == nil || errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("a body that is not gzip: %v, want an error", err)
	}
}

// TestReadDeliveryGzipSigned: a header's signature of a gzip body is
// checked over the body as sent and as its sender wrote it, before
// compressing it; another is refused.
func TestReadDeliveryGzipSigned(t *testing.T) {
	const secret = "whsec_gzip"
	plain := []byte(`{"event":"call.ended","data":{"phone_number":"+442079460123"}}`)
	wire := gzipped(t, plain)
	for _, c := range []struct {
		name string
		sig  string
		want error
	}{
		{"over the body as written", Sign(secret, plain), nil},
		{"over the body as sent", Sign(secret, wire), nil},
		{"over something else", Sign(secret, []byte("{}")), ErrBadSignature},
	} {
		r := post("application/json", string(wire))
		r.Header.Set("Content-Encoding", "gzip")
		r.Header.Set("X-Signature", c.sig)
		ds, err := ReadDeliveries(r, ReadOptions{SigningSecret: secret})
		if !errors.Is(err, c.want) || err == nil && !ds[0].Signed {
			t.Errorf("%s: %v (%+v), want %v", c.name, err, ds, c.want)
		}
	}
}

// TestDeliveryValuesRepeated: Values gives every value of a form field
// sent more than once, in order, in a form, a query and a multipart form,
// while Fields keeps its first; the key is of every value (the second may
// be the opt-out), and there is no legacy key, the one callrun gave it
// before being the first value's, which another delivery may have.
func TestDeliveryValuesRepeated(t *testing.T) {
	const q = "event=call.ended&phone_number=%2B442079460123&Disposition=completed&Disposition=do_not_call"
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	for _, kv := range [][2]string{{"event", "call.ended"}, {"phone_number", "+442079460123"}, {"Disposition", "completed"}, {"Disposition", "do_not_call"}} {
		mw.WriteField(kv[0], kv[1]) //nolint:errcheck
	}
	mw.Close() //nolint:errcheck
	once := readOne(t, post("application/x-www-form-urlencoded", "event=call.ended&phone_number=%2B442079460123&Disposition=completed"))
	for _, c := range []struct {
		name string
		r    *http.Request
	}{
		{"form", post("application/x-www-form-urlencoded", q)},
		{"query", httptest.NewRequest(http.MethodGet, "/h?"+q, nil)},
		{"multipart", post(mw.FormDataContentType(), mp.String())},
	} {
		d := readOne(t, c.r)
		if got := d.Values("disposition"); len(got) != 2 || got[0] != "completed" || got[1] != "do_not_call" {
			t.Errorf("%s: Values %q, want [completed do_not_call]", c.name, got)
		}
		if d.Fields["Disposition"] != "completed" || d.Key() == once.Key() || d.LegacyKey() != "" {
			t.Errorf("%s: fields %v, key %s (legacy %q), want the first value's fields and a key other than %s", c.name, d.Fields, d.Key(), d.LegacyKey(), once.Key())
		}
		if again := readOne(t, post("application/x-www-form-urlencoded", q+"&timestamp=2")); again.Key() != d.Key() {
			t.Errorf("%s: a retry stamped anew has another key", c.name)
		}
	}
	if got := once.Values("disposition"); len(got) != 1 || got[0] != "completed" {
		t.Errorf("a field sent once: Values %q", got)
	}
}

// TestDeliverySentAt: the sender's timestamp, in the forms senders write
// it, at the top or in a container; none when it does not read.
func TestDeliverySentAt(t *testing.T) {
	want := time.Date(2025, 3, 1, 17, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		fields map[string]string
		ok     bool
	}{
		{"RFC 3339 (the service's envelope)", map[string]string{"timestamp": "2025-03-01T17:10:00Z"}, true},
		{"RFC 3339 with an offset", map[string]string{"timestamp": "2025-03-01T18:10:00+01:00"}, true},
		{"RFC 1123 (Twilio's Timestamp)", map[string]string{"Timestamp": "Sat, 01 Mar 2025 17:10:00 +0000"}, true},
		{"Unix milliseconds (Vapi's message.timestamp)", map[string]string{"message.timestamp": "1740849000000"}, true},
		{"Unix seconds", map[string]string{"data.timestamp": "1740849000"}, true},
		{"Unix microseconds", map[string]string{"timestamp": "1740849000000000"}, true},
		{"Unix nanoseconds", map[string]string{"timestamp": "1740849000000000000"}, true},
		{"none", map[string]string{"event": "call.ended"}, false},
		{"unreadable", map[string]string{"timestamp": "yesterday"}, false},
	} {
		got, ok := Delivery{Fields: tc.fields}.SentAt()
		if ok != tc.ok || (ok && !got.Equal(want)) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, want, tc.ok)
		}
	}
}
