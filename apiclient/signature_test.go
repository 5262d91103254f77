package apiclient

import (
	"errors"
	"strings"
	"testing"
)

// The service's documentation's own example (its webhook page's
// "Event-Specific Data", serialised as its Python verify_signature reads
// a payload: json.dumps with its default separators), signed with the
// secret below by that function: hmac.new(secret.encode(),
// payload.encode(), hashlib.sha256).hexdigest(), prefixed "sha256=". The
// values were computed with Python's hmac module, not with this package.
const (
	docSecret  = "callrun-doc-example-secret"
	docPayload = `{"event": "call.ended", "timestamp": "2024-01-15T10:30:00Z", "data": {"call_id": "call_123456", "agent_id": "agent_789", "caller_number": "+1234567890", "duration": 180, "status": "completed", "transcript": "...", "recording_url": "https://..."}}`
	docSig     = "sha256=7cb5f4f1cc8ba8961c2ae548eaf38c3cf731831def7ce8b71fdafeb0d9b4d578"
	// docBody is the payload with its signature added as the page shows
	// it, a member of the envelope; docBodySig is the HMAC of docBody
	// itself, as a header carries it.
	docBody    = `{"event": "call.ended", "timestamp": "2024-01-15T10:30:00Z", "data": {"call_id": "call_123456", "agent_id": "agent_789", "caller_number": "+1234567890", "duration": 180, "status": "completed", "transcript": "...", "recording_url": "https://..."}, "signature": "sha256=7cb5f4f1cc8ba8961c2ae548eaf38c3cf731831def7ce8b71fdafeb0d9b4d578"}`
	docBodySig = "sha256=101491cd39319317984cd97287b2aef661769fcce87a8f31fd386544a059c6ce"
)

func TestSignatureVector(t *testing.T) {
	t.Parallel()
	if got := Sign(docSecret, []byte(docPayload)); got != docSig {
		t.Fatalf("Sign of the documentation's payload: %s, want %s", got, docSig)
	}
	without, _, sig, ok := BodySigned([]byte(docBody))
	if !ok || sig != docSig || string(without) != docPayload {
		t.Fatalf("BodySigned: %q %q %v, want the payload as signed", without, sig, ok)
	}
	// The signature as a member of the envelope.
	r := post("application/json", docBody)
	ds, err := ReadDeliveries(r, ReadOptions{SigningSecret: docSecret, RequireSignature: true})
	if err != nil || !ds[0].Signed {
		t.Fatalf("the documented envelope, signed: %v %+v", err, ds)
	}
	// The signature in a header, over the body as sent.
	r = post("application/json", docBody)
	r.Header.Set("X-Signature", docBodySig)
	if ds, err := ReadDeliveries(r, ReadOptions{SigningSecret: docSecret}); err != nil || !ds[0].Signed {
		t.Errorf("signed in a header: %v", err)
	}
	// Either rule, with the signature first.
	first := `{"signature": "` + docSig + `", ` + docPayload[1:]
	if ds, err := ReadDeliveries(post("application/json", first), ReadOptions{SigningSecret: docSecret}); err != nil || !ds[0].Signed {
		t.Errorf("signature as the first member: %v", err)
	}
}

func TestSignatureRefused(t *testing.T) {
	t.Parallel()
	o := ReadOptions{SigningSecret: docSecret}
	for name, body := range map[string]string{
		"another secret's":  strings.Replace(docBody, "7cb5", "7cb6", 1),
		"a changed payload": strings.Replace(docBody, `"duration": 180`, `"duration": 181`, 1),
		"not hex":           strings.Replace(docBody, "sha256=7cb5", "sha256=zz", 1),
	} {
		if _, err := ReadDeliveries(post("application/json", body), o); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
	r := post("application/json", docPayload)
	r.Header.Set("X-Webhook-Signature", "sha256=00")
	if _, err := ReadDeliveries(r, o); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a header signature that does not match: %v", err)
	}
	// Unsigned: taken, unless a signature is required.
	ds, err := ReadDeliveries(post("", "event=call.ended&phone_number=%2B1"), o)
	if err != nil || ds[0].Signed {
		t.Errorf("an unsigned form: %v %+v", err, ds)
	}
	o.RequireSignature = true
	if _, err := ReadDeliveries(post("", "event=call.ended&phone_number=%2B1"), o); !errors.Is(err, ErrUnsigned) {
		t.Errorf("an unsigned form, a signature required: %v", err)
	}
	// Without a secret, nothing is checked.
	if _, err := ReadDeliveries(post("application/json", strings.Replace(docBody, "7cb5", "7cb6", 1)), ReadOptions{}); err != nil {
		t.Errorf("no secret: %v", err)
	}
}

// TestSignatureOverDataReadsData: an envelope whose signature covers its
// data member alone, signed in the envelope or by a header over the body
// that does not match it, is read from data and the envelope's event and
// timestamp: members beside data that nobody signed are not its fields.
// Signed whole, every member is.
func TestSignatureOverDataReadsData(t *testing.T) {
	t.Parallel()
	data := `{"call_id":"call_2","phone_number":"+14155550132","status":"completed"}`
	body := `{"event":"call.ended","timestamp":"2024-01-15T10:30:00Z","phone_number":"+12025550143","disposition":"do_not_call","data":` + data + `,"signature":"` + Sign(docSecret, []byte(data)) + `"}`
	o := ReadOptions{SigningSecret: docSecret, RequireSignature: true}
	check := func(name string, ds []Delivery, err error) {
		t.Helper()
		if err != nil || len(ds) != 1 || !ds[0].Signed {
			t.Fatalf("%s: %v %+v", name, err, ds)
		}
		d := ds[0]
		if got := Field(d.Fields, "phone_number"); got != "+14155550132" {
			t.Errorf("%s: phone_number %q, want data's", name, got)
		}
		if got := Field(d.Fields, "disposition"); got != "" {
			t.Errorf("%s: disposition %q, from outside data", name, got)
		}
		if d.Event != EventEnded || d.CallID != "call_2" || d.Fields["timestamp"] == "" {
			t.Errorf("%s: event %q, call %q, fields %v", name, d.Event, d.CallID, d.Fields)
		}
	}
	ds, err := ReadDeliveries(post("application/json", body), o)
	check("signed in the envelope", ds, err)
	r := post("application/json", body)
	r.Header.Set("X-Signature", "sha256=00")
	ds, err = ReadDeliveries(r, o)
	check("a header that does not match, the envelope's signature over data", ds, err)
	ds, err = ReadDeliveries(post("application/json", "["+body+"]"), o)
	check("in an array", ds, err)

	// Signed whole (the members other than signature), every member is the delivery's.
	without := `{"event":"call.ended","phone_number":"+12025550143","disposition":"do_not_call","data":` + data + `}`
	whole := without[:len(without)-1] + `,"signature":"` + Sign(docSecret, []byte(without)) + `"}`
	ds, err = ReadDeliveries(post("application/json", whole), o)
	if err != nil || Field(ds[0].Fields, "disposition") != "do_not_call" || Field(ds[0].Fields, "phone_number") != "+12025550143" {
		t.Errorf("signed whole: %v %+v", err, ds)
	}
}
