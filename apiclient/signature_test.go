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
