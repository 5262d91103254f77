package apiclient

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Errors of a delivery's signature, which `callrun listen` answers 401.
var (
	// ErrBadSignature: the delivery carries a signature that does not
	// match its bytes under the signing secret.
	ErrBadSignature = errors.New("the delivery's signature does not match outcomes.signing_secret")
	// ErrUnsigned: the delivery carries no signature, and one is required.
	ErrUnsigned = errors.New("the delivery carries no signature, and outcomes.require_signature is on")
)

// SignatureHeaders are the headers [ReadDeliveries] reads a delivery's
// signature from, the first one present: the service's documentation
// says "the signature header" without its name, and these are the names
// senders that sign the same way give it.
var SignatureHeaders = []string{"X-Signature", "X-Webhook-Signature", "X-Signature-256", "X-Hub-Signature-256"}

// Sign returns the signature of b under secret as the service's
// documentation computes it: "sha256=" and the hex of HMAC-SHA256(secret,
// b).
func Sign(secret string, b []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(b)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// signatureMatches reports whether sig ("sha256=HEX", or the bare hex, in
// any case) is b's signature under secret, in constant time.
func signatureMatches(secret, sig string, b []byte) bool {
	sig = strings.TrimSpace(sig)
	if len(sig) > 7 && strings.EqualFold(sig[:7], "sha256=") {
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(b)
	return hmac.Equal(got, m.Sum(nil))
}

// signatureHeader returns the signature a request's headers carry, or "".
func signatureHeader(h http.Header) string {
	for _, name := range SignatureHeaders {
		if v := h.Get(name); v != "" {
			return v
		}
	}
	return ""
}

// BodySigned returns what the signature a JSON object carries in its own
// top-level "signature" member signs, and that signature: the object's
// bytes as sent with that member cut out, from the comma before it (the
// comma after it and the spaces up to the next key, when it is the first
// member), which is what a sender that signed the object before adding
// the member signed; and the bytes of its "data" member's value as sent.
// ok is false when obj is no object with a string "signature".
func BodySigned(obj []byte) (without, data []byte, sig string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, "", false
	}
	open := dec.InputOffset()
	prev := open
	var cutFrom, cutTo int64 = -1, -1
	first := true
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, "", false
		}
		key, _ := t.(string)
		valStart := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, "", false
		}
		end := dec.InputOffset()
		switch key {
		case "signature":
			if json.Unmarshal(raw, &sig) != nil || cutFrom >= 0 {
				return nil, nil, "", false
			}
			cutFrom, cutTo = prev, end
			if first {
				cutTo = skipComma(obj, end)
			}
		case "data":
			// The value's bytes: after the colon and the spaces around it.
			i := bytes.IndexByte(obj[valStart:end], ':')
			data = bytes.TrimSpace(obj[valStart+int64(i)+1 : end])
		}
		prev, first = end, false
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) || cutFrom < 0 {
		return nil, nil, "", false
	}
	without = append(append([]byte(nil), obj[:cutFrom]...), obj[cutTo:]...)
	return without, data, sig, true
}

// skipComma returns the offset past the comma after offset i of b and the
// spaces after it, or i when no comma follows (the only member).
func skipComma(b []byte, i int64) int64 {
	j := i
	for j < int64(len(b)) && isSpace(b[j]) {
		j++
	}
	if j >= int64(len(b)) || b[j] != ',' {
		return i
	}
	j++
	for j < int64(len(b)) && isSpace(b[j]) {
		j++
	}
	return j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// objectSigned reports whether the JSON object obj carries a signature of
// its own, and whether it matches under secret by either rule of
// [BodySigned]; dataOnly, when it matches the bytes of the "data" member
// alone, not the object's.
func objectSigned(secret string, obj []byte) (carries, matches, dataOnly bool) {
	if !bytes.Contains(obj, []byte(`"signature"`)) {
		return false, false, false
	}
	without, data, sig, ok := BodySigned(obj)
	if !ok {
		return false, false, false
	}
	if signatureMatches(secret, sig, without) {
		return true, true, false
	}
	if data != nil && signatureMatches(secret, sig, data) {
		return true, true, true
	}
	return true, false, false
}

// signedData is d, whose signature covers its "data" member alone, with
// only the fields the signature covers (data and those under it) and the
// envelope's own event and timestamp: a member beside data that nobody
// signed (a phone_number, a disposition) could otherwise say whose
// opt-out it is, or that it is one.
func signedData(d Delivery) Delivery {
	fields := make(map[string]string, len(d.Fields))
	for path, v := range d.Fields {
		if path == "data" || strings.HasPrefix(path, "data.") || path == "event" || path == "timestamp" {
			fields[path] = v
		}
	}
	nd := newDelivery(fields, "")
	nd.legacy, nd.Signed = d.legacy, d.Signed
	return nd
}

// bodyObjects returns the JSON objects of a body that are deliveries: the
// object itself, or each element of an array; none for a form.
func bodyObjects(body []byte) [][]byte {
	if len(body) == 0 {
		return nil
	}
	switch body[0] {
	case '{':
		if lines := ndjsonObjects(body); lines != nil {
			return lines // newline-delimited JSON: each line a delivery
		}
		return [][]byte{body}
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) != nil {
			return nil
		}
		objs := make([][]byte, len(elems))
		for i, e := range elems {
			objs[i] = bytes.TrimSpace(e)
		}
		return objs
	}
	return nil
}

// checkBodySignatures checks the signatures a JSON body's deliveries
// carry in themselves (a JSON object's, or each element's of an array),
// n deliveries in all, and says which are signed, and which of those by
// their "data" member alone; one that does not match is ErrBadSignature.
// A form carries none.
func checkBodySignatures(secret string, body []byte, n int) (signed, dataOnly []bool, err error) {
	signed, dataOnly = make([]bool, n), make([]bool, n)
	for i, obj := range bodyObjects(body) {
		if i >= n {
			break
		}
		carries, ok, data := objectSigned(secret, obj)
		if carries && !ok {
			return nil, nil, ErrBadSignature
		}
		signed[i], dataOnly[i] = carries, data
	}
	return signed, dataOnly, nil
}

// bodySignaturesMatch reports whether every delivery of a JSON body
// carries a signature of its own that matches under secret, and which of
// them match by their "data" member alone.
func bodySignaturesMatch(secret string, body []byte) (dataOnly []bool, ok bool) {
	objs := bodyObjects(body)
	dataOnly = make([]bool, len(objs))
	for i, obj := range objs {
		carries, matches, data := objectSigned(secret, obj)
		if !carries || !matches {
			return nil, false
		}
		dataOnly[i] = data
	}
	return dataOnly, len(objs) > 0
}
