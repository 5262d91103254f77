package sandbox

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The shapes an account webhook delivery can take on the wire
// (AccountWebhook.Shape). The service's documentation shows the first three
// in its two versions; the variants are how other senders write the same
// fields.
const (
	// ShapeForm is a POST form of the contact's fields and event: what
	// the sandbox sent before shapes were settable, and its default.
	ShapeForm = "form"
	// ShapeContactOnly is a POST form of the contact's fields alone, with
	// no event and no call id: the account webhooks as one version of
	// the documentation shows them. A call's three deliveries are then
	// alike but for the opt-out field.
	ShapeContactOnly = "contact-only"
	// ShapeEnvelope is the JSON envelope of the other version:
	// {"event", "timestamp", "data": {"call_id", "agent_id",
	// "caller_number", "duration", "status", "transcript",
	// "recording_url"}, "signature"}.
	ShapeEnvelope = "envelope"
	// ShapeArray is a JSON array holding the delivery as its one
	// element, an object of the contact's fields and event.
	ShapeArray = "variant-array"
	// ShapeMultipart is multipart/form-data of the contact's fields and
	// event.
	ShapeMultipart = "variant-multipart"
	// ShapeCase is a POST form whose keys are written in another case:
	// call.started in camelCase (phoneNumber), call.answered in kebab
	// case (phone-number), call.ended in Title_Snake case
	// (Phone_Number, Event, Disposition).
	ShapeCase = "variant-case"
	// ShapeNested is a JSON object with the event and call_id at the top
	// and the contact's fields, the opt-out among them, under "contact".
	ShapeNested = "variant-nested"
	// ShapeMixed draws one of the shapes above for each delivery, with
	// the seed of the deliveries' faults: a receiver that takes only
	// some of them loses deliveries.
	ShapeMixed = "mixed"
)

// Shapes lists the shapes AccountWebhook.Shape takes, ShapeMixed last.
var Shapes = []string{ShapeForm, ShapeContactOnly, ShapeEnvelope, ShapeArray, ShapeMultipart, ShapeCase, ShapeNested, ShapeMixed}

// SignatureField is the envelope's member that carries its signature,
// "sha256=" and the hex HMAC-SHA256, under AccountWebhook.SigningSecret, of
// the envelope's bytes without that member. See SignEnvelope.
const SignatureField = "signature"

// SignEnvelope returns the signature of an envelope whose bytes, without
// its signature member, are unsigned: "sha256=" and the lowercase hex
// HMAC-SHA256 of unsigned under secret, as the documentation's
// verify_signature computes it.
func SignEnvelope(unsigned []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(unsigned)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// wire is one delivery as it goes over the wire.
type wire struct {
	contentType string
	body        []byte
}

// encode writes delivery d in its shape, as sent at time at: an envelope
// takes at as its timestamp and is signed anew, so two sendings of one
// delivery differ in their timestamp and signature alone.
func (s *Server) encode(d Delivery, at time.Time) (wire, error) {
	switch d.Shape {
	case ShapeEnvelope:
		return s.envelope(d, at)
	case ShapeArray:
		b, err := json.Marshal([]map[string]string{flatten(d.Form)})
		return wire{jsonType, b}, err
	case ShapeMultipart:
		return multipartOf(d)
	case ShapeCase:
		return wire{formType, []byte(restyle(d.Form, caseStyleOf(d.Event)).Encode())}, nil
	case ShapeNested:
		contact := flatten(d.Form)
		delete(contact, "event")
		b, err := json.Marshal(struct {
			Event   string            `json:"event"`
			CallID  string            `json:"call_id"`
			Contact map[string]string `json:"contact"`
		}{d.Event, d.CallID, contact})
		return wire{jsonType, b}, err
	default: // ShapeForm, ShapeContactOnly: Form already holds or lacks the event
		return wire{formType, []byte(d.Form.Encode())}, nil
	}
}

const (
	formType = "application/x-www-form-urlencoded"
	jsonType = "application/json"
)

// envelope writes d as the documented JSON envelope. data holds the seven
// documented fields (transcript and recording_url on call.ended alone)
// and, on an opted-out call.ended, the opt-out field.
func (s *Server) envelope(d Delivery, at time.Time) (wire, error) {
	aw := s.opts.AccountWebhook
	data := map[string]any{
		"call_id":       d.CallID,
		"agent_id":      d.AgentID,
		"caller_number": cmp.Or(aw.CallerNumber, d.Form.Get("phone_number")),
		"duration":      0,
		"status":        map[string]string{EventStarted: "ringing", EventAnswered: "in-progress", EventEnded: "completed"}[d.Event],
	}
	if d.Event == EventEnded {
		data["duration"] = wholeSeconds(s.opts.CallDuration)
		data["transcript"] = transcript(aw.TranscriptBytes)
		data["recording_url"] = "https://recordings.sandbox.invalid/" + d.CallID + ".mp3"
	}
	if v := d.Form.Get(aw.OptOutField); v != "" {
		data[aw.OptOutField] = v
	}
	if d.Forged {
		data["status"] = "forged"
	}
	dataJSON, err := json.Marshal(data)
	if err != nil {
		return wire{}, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"event":%s,"timestamp":%s,"data":%s}`, strconv.Quote(d.Event), strconv.Quote(formatTime(at)), dataJSON)
	if aw.SigningSecret != "" {
		sig := SignEnvelope(b.Bytes(), aw.SigningSecret)
		b.Truncate(b.Len() - 1)
		fmt.Fprintf(&b, `,%q:%q}`, SignatureField, sig)
	}
	return wire{jsonType, b.Bytes()}, nil
}

// transcript returns a call's transcript, a short dialogue repeated to n
// bytes when n is larger.
func transcript(n int) string {
	const turn = "Agent: Hello, this is the sandbox calling about your enquiry.\nCustomer: Thanks, go on.\n"
	if n <= len(turn) {
		return turn
	}
	return strings.Repeat(turn, n/len(turn)+1)[:n]
}

// flatten turns a form into a JSON object of its first values.
func flatten(form url.Values) map[string]string {
	out := make(map[string]string, len(form))
	for k, vs := range form {
		if len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// multipartOf writes d's fields as multipart/form-data, in the order of
// their names, with a boundary made of its call and event, so that every
// sending of one delivery is the same bytes.
func multipartOf(d Delivery) (wire, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.SetBoundary("callrun-sandbox-" + d.CallID + "-" + d.Event); err != nil {
		return wire{}, err
	}
	for _, k := range slices.Sorted(maps.Keys(d.Form)) {
		if err := w.WriteField(k, d.Form.Get(k)); err != nil {
			return wire{}, err
		}
	}
	if err := w.Close(); err != nil {
		return wire{}, err
	}
	return wire{w.FormDataContentType(), b.Bytes()}, nil
}

// The key styles of ShapeCase.
const (
	styleCamel      = "camel"       // phoneNumber
	styleKebab      = "kebab"       // phone-number
	styleTitleSnake = "title-snake" // Phone_Number
)

// caseStyleOf is the key style ShapeCase gives an event's deliveries.
func caseStyleOf(event string) string {
	switch event {
	case EventStarted:
		return styleCamel
	case EventAnswered:
		return styleKebab
	default:
		return styleTitleSnake
	}
}

// restyle returns form with every snake_case key written in style.
func restyle(form url.Values, style string) url.Values {
	out := make(url.Values, len(form))
	for k, vs := range form {
		out[restyleKey(k, style)] = slices.Clone(vs)
	}
	return out
}

func restyleKey(k, style string) string {
	words := strings.Split(k, "_")
	if style == styleKebab {
		return strings.Join(words, "-")
	}
	for i, w := range words {
		if w != "" && (style == styleTitleSnake || i > 0) {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	if style == styleCamel {
		return strings.Join(words, "")
	}
	return strings.Join(words, "_")
}

// pickShape draws a shape for a delivery under ShapeMixed from rng, which
// the caller guards; any other shape is itself.
func pickShape(shape string, rng *mrand.Rand) string {
	if shape == ShapeMixed {
		return Shapes[rng.IntN(len(Shapes)-1)]
	}
	return shape
}
