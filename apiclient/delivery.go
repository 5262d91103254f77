package apiclient

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// MaxDeliveryBody is the largest webhook delivery body [ReadDeliveries]
// accepts: a delivery may carry a call's whole transcript, and an opt-out
// said in a long call must not be refused for its size. Retell's
// call_ended and call_analyzed carry the transcript as text and again
// word by word with each word's timings (transcript_object,
// transcript_with_tool_calls and its scrubbed copy), over 100 bytes a
// word said: 1 MiB is about an hour of talk, 16 MiB most of a day.
const MaxDeliveryBody = 16 << 20

// maxDeliveryRaw bounds the raw delivery a [Delivery] keeps.
const maxDeliveryRaw = 1 << 10

// maxDeliveryDepth bounds how deep the objects of a JSON delivery are
// read into fields; anything deeper is kept as its JSON text.
const maxDeliveryDepth = 6

// ErrDeliveryTooLarge is what [ReadDeliveries] returns for a body over
// [MaxDeliveryBody]; `callrun listen` answers it 413.
var ErrDeliveryTooLarge = errors.New("webhook delivery over 16 MiB")

// Delivery is one webhook delivery, as callrun reads it: the service's
// account webhooks (call.started, call.answered, call.ended), in either
// shape its documentation shows (a POST form of the contact's fields, or
// a JSON envelope {event, timestamp, data: {...}, signature}); an agent's
// weebhook_endpoint (GET or POST); and the variants real senders write
// (JSON objects nested under contact, customer, call or message, arrays
// of deliveries, multipart forms, keys in any case). `callrun listen`
// reads each request into one or more and stores them.
type Delivery struct {
	// Event is the event the delivery names (its event, event_type or
	// type field, wherever [Field] finds it), empty when it names none.
	Event string `json:"event,omitempty"`
	// AgentID is the agent the delivery names (agent_id), if any.
	AgentID string `json:"agent_id,omitempty"`
	// CallID is the call the delivery names (call_id, or a call's id), if
	// any.
	CallID string `json:"call_id,omitempty"`
	// Fields holds every field of the delivery, one value each (the
	// first): a form's fields by their names, a JSON object's by their
	// paths, the keys of nested objects joined with "." (data.call_id,
	// message.call.customer.number). A JSON value that is neither a
	// string nor an object is kept as its JSON text; null is "". Read
	// them with [Field], which matches keys as senders vary them. Every
	// secret given to [AddSecret] is blanked in them, names and values.
	Fields map[string]string `json:"fields"`
	// Repeated holds every value, in order, of a form's (or query's)
	// field sent more than once (disposition=completed&disposition=do_not_call),
	// or of a JSON object's member named more than once: Fields holds
	// the form field's first alone, the member's last; the key is of
	// them all. Not stored; [Delivery.Values] reads it.
	Repeated map[string][]string `json:"-"`
	// Raw is a form's or query's text as it came, cut at 1 KiB and
	// redacted; empty for JSON, whose fields hold it whole.
	Raw string `json:"raw,omitempty"`
	// Signed: the delivery carried a signature, and it matched
	// ReadOptions.SigningSecret.
	Signed bool `json:"signed,omitempty"`

	// soap: read from a Salesforce Outbound Message, answered with
	// [SalesforceAck].
	soap bool

	// legacy is the key callrun gave this delivery before deliveries
	// were told by their call and event: the hash of every field as that
	// callrun read them (a JSON object's top-level keys, nested values as
	// their JSON text). Empty for a shape that callrun refused.
	legacy string
}

// Key names the delivery by what it says: its fields less the ones a
// sender changes from one attempt to the next ([VolatileFields]: a
// timestamp, a signature, a delivery id, an attempt count), at its top or
// inside its [Containers] (message.timestamp, data.attempt), however they
// were encoded, and every value of a form field sent more than once. A
// retry of one delivery has its key, so it is recorded once; two
// deliveries of one call and event that say different things (a
// call.ended that says completed, then one that says do_not_call; an
// analysis sent later) have two, and both are stored. `callrun listen`
// stores a delivery under it, and the outcomes report names it.
func (d Delivery) Key() string {
	kept := make(map[string]string, len(d.Fields))
	envelope := false
	for k := range d.Fields {
		if i := strings.IndexByte(k, '.'); i > 0 && isContainerSeg(k[:i]) {
			envelope = true
			break
		}
	}
	// A string that holds a JSON object, kept beside the members read
	// from it (payload.event, ...), is told by those members: its text
	// holds the volatile fields they leave out (a relay's payload
	// serialised again, with a new timestamp, for each retry).
	parents := map[string]bool{}
	for k := range d.Fields {
		for i := strings.IndexByte(k, '.'); i > 0; {
			parents[k[:i]] = true
			j := strings.IndexByte(k[i+1:], '.')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	for k, v := range d.Fields {
		if isVolatile(k) || envelope && normKey(k) == "id" {
			continue
		}
		if parents[k] && strings.HasPrefix(strings.TrimSpace(v), "{") {
			continue
		}
		kept[k] = v
	}
	if len(d.Repeated) == 0 {
		return hashKey(kept)
	}
	// A field sent more than once is told by all its values: a second
	// value may be the opt-out.
	b, _ := json.Marshal(struct {
		Fields   map[string]string   `json:"fields"`
		Repeated map[string][]string `json:"repeated"`
	}{kept, d.Repeated})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// isVolatile reports whether a field's path names one of
// [VolatileFields]: its last segment does, and every segment before it is
// one of [Containers], up to three (timestamp, message.timestamp,
// data.attempt; not data.transcript.timestamp).
func isVolatile(path string) bool {
	segs := strings.Split(path, ".")
	if len(segs)-1 > maxContainers || !volatile[normKey(segs[len(segs)-1])] {
		return false
	}
	for _, seg := range segs[:len(segs)-1] {
		if !isContainerSeg(seg) {
			return false
		}
	}
	return true
}

// LegacyKey is the key callrun gave this delivery before deliveries were
// told by their call and event (every field, as that callrun read them),
// or "" when that callrun could not read it or gave it the key of another
// delivery (a form field sent more than once, keyed by its first value):
// a retry that straddles an upgrade is looked for under both, so a
// delivery stored under it is this one, sent again.
func (d Delivery) LegacyKey() string { return d.legacy }

// hashKey is the key of a set of fields: the first 16 bytes of the
// SHA-256 of their JSON (keys sorted), in hex.
func hashKey(fields map[string]string) string {
	b, _ := json.Marshal(fields) // map keys sorted; a map of strings always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// VolatileFields are the fields a sender may change from one attempt of
// a delivery to the next, which [Delivery.Key] leaves out, at the top of
// the delivery or inside its [Containers] (as [Field] matches them: any
// case, with or without _ or -); and, at its top, an envelope's own id.
var VolatileFields = []string{"timestamp", "signature", "delivery_id", "webhook_id", "event_id", "request_id", "message_id", "idempotency_key", "attempt", "attempts", "attempt_number", "delivery_attempt", "retry", "retry_count", "retry_number", "sent_at"}

var volatile = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range VolatileFields {
		m[normKey(k)] = true
	}
	return m
}()

// Containers are the objects whose fields [Field] reads as the
// delivery's own: the envelope's data (and payload), and the contact,
// customer, lead, call or message a sender nests them under, and
// HighLevel's customData, up to three deep (message.call.customer.number).
var Containers = []string{"data", "payload", "contact", "customer", "lead", "call", "message", "customdata"}

const maxContainers = 3

// normKey is a key as [Field] compares it: lower case, without _, - or
// spaces, so that phone_number, Phone-Number, phoneNumber and
// PHONE_NUMBER are one key.
func normKey(k string) string {
	var b strings.Builder
	b.Grow(len(k))
	for i := 0; i < len(k); i++ {
		if c, ok := normByte(k[i]); ok {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// normByte is byte c of a key as normKey keeps it, lower case; false for
// one it leaves out (_, - and space).
func normByte(c byte) (byte, bool) {
	switch {
	case c == '_' || c == '-' || c == ' ':
		return 0, false
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A', true
	}
	return c, true
}

// fieldMatch is one field a name matched: its path, value and the
// containers between the top and it.
type fieldMatch struct {
	path, value string
	depth       int
}

// matches returns the fields of fields that name matches, shallowest
// first (then by path): a field whose path ends in name's segments
// (compared as normKey does) and whose other segments are all
// [Containers], at most three. It allocates nothing for a field that
// does not match: a delivery's fields are looked up a score of times.
func matches(fields map[string]string, name string) []fieldMatch {
	want := strings.Split(name, ".")
	for i := range want {
		want[i] = normKey(want[i])
	}
	var out []fieldMatch
	for path, v := range fields {
		rest, ok := path, true
		for i := len(want) - 1; i >= 0 && ok; i-- {
			seg := rest
			if j := strings.LastIndexByte(rest, '.'); j >= 0 {
				seg, rest = rest[j+1:], rest[:j]
			} else {
				rest = ""
				ok = i == 0 // the path has fewer segments than name
			}
			ok = ok && normEqual(seg, want[i])
		}
		if !ok {
			continue
		}
		depth := 0
		for rest != "" && ok {
			seg := rest
			if j := strings.LastIndexByte(rest, '.'); j >= 0 {
				seg, rest = rest[j+1:], rest[:j]
			} else {
				rest = ""
			}
			depth++
			ok = depth <= maxContainers && isContainerSeg(seg)
		}
		if ok {
			out = append(out, fieldMatch{path, v, depth})
		}
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b fieldMatch) int {
			if a.depth != b.depth {
				return a.depth - b.depth
			}
			return strings.Compare(a.path, b.path)
		})
	}
	return out
}

// normEqual reports whether key, compared as normKey compares keys, is
// norm (a key normKey made).
func normEqual(key, norm string) bool {
	j := 0
	for i := 0; i < len(key); i++ {
		c, ok := normByte(key[i])
		if !ok {
			continue
		}
		if j >= len(norm) || norm[j] != c {
			return false
		}
		j++
	}
	return j == len(norm)
}

// isContainerSeg reports whether a path's segment is one of [Containers].
func isContainerSeg(seg string) bool {
	for _, c := range Containers {
		if normEqual(seg, c) {
			return true
		}
	}
	return false
}

// SentAt returns when the sender says it sent d, by its timestamp field
// (the service's envelope, Twilio's Timestamp, Vapi's message.timestamp)
// as RFC 3339, RFC 1123 or Unix seconds, milliseconds, microseconds or
// nanoseconds; ok is false when it has none that reads. listen compares
// it with its own clock
// ([campaign.Intake]): the sender's clock, a second opinion that listen,
// which asks the service nothing, has no other way to get.
func (d Delivery) SentAt() (t time.Time, ok bool) {
	v := strings.TrimSpace(Field(d.Fields, "timestamp"))
	if v == "" {
		return time.Time{}, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		switch { // 2001 onwards in each unit
		case n >= 1e18:
			return time.Unix(0, int64(n)).UTC(), true
		case n >= 1e15:
			return time.UnixMicro(int64(n)).UTC(), true
		case n >= 1e12:
			return time.UnixMilli(int64(n)).UTC(), true
		}
		return time.Unix(int64(n), 0).UTC(), true
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC1123Z, time.RFC1123} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Field returns the value of the field name in fields (a delivery's),
// matched as senders vary keys: in any case, with or without _ or -
// (phone_number, Phone_Number, phoneNumber), at the top or inside the
// [Containers] (data.phone_number, contact.phone_number). A dotted name
// (customer.number) matches those segments in order. Of several
// matches the shallowest wins; "" when none has a value.
func Field(fields map[string]string, name string) string {
	for _, m := range matches(fields, name) {
		if m.value != "" {
			return m.value
		}
	}
	return ""
}

// FieldValues returns every non-empty value that name matches in fields,
// as [Field] matches them, shallowest first, each with its path.
func FieldValues(fields map[string]string, name string) (paths, values []string) {
	for _, m := range matches(fields, name) {
		if m.value != "" {
			paths, values = append(paths, m.path), append(values, m.value)
		}
	}
	return paths, values
}

// Values returns every non-empty value that name matches in the
// delivery's fields, as [FieldValues] matches them, shallowest first: a
// form field sent more than once with each of its values.
func (d Delivery) Values(name string) []string {
	var out []string
	for _, m := range matches(d.Fields, name) {
		if vs, ok := d.Repeated[m.path]; ok {
			for _, v := range vs {
				if v != "" {
					out = append(out, v)
				}
			}
		} else if m.value != "" {
			out = append(out, m.value)
		}
	}
	return out
}

// ShallowestValues is FieldValues of the shallowest matches that have a
// value alone: a key that is the delivery's own (message.customer.number)
// hides the same key of an object nested deeper (message.call.customer.number).
func ShallowestValues(fields map[string]string, name string) (paths, values []string) {
	depth := -1
	for _, m := range matches(fields, name) {
		if m.value == "" || depth >= 0 && m.depth > depth {
			continue
		}
		depth = m.depth
		paths, values = append(paths, m.path), append(values, m.value)
	}
	return paths, values
}

// The service's account webhook events.
const (
	EventStarted  = "call.started"
	EventAnswered = "call.answered"
	EventEnded    = "call.ended"
)

// ServiceEvent returns event as the service names it when it is one of
// its three, however a sender writes it (CALL.ENDED, call_ended,
// Call-Ended); any other event as sent.
func ServiceEvent(event string) string {
	trimmed := strings.TrimSpace(event)
	if len(trimmed) > len(EventAnswered) {
		return event
	}
	folded := strings.Map(func(r rune) rune {
		switch {
		case r == '_' || r == '-' || r == ' ':
			return '.'
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, trimmed)
	switch folded {
	case EventStarted, EventAnswered, EventEnded:
		return folded
	}
	return event
}

// The fields a delivery names its event, agent and call by, in order of
// preference.
var (
	eventFields  = []string{"event", "event_type", "type"}
	agentFields  = []string{"agent_id"}
	callIDFields = []string{"call_id", "call.id"}
)

func firstField(fields map[string]string, names []string) string {
	for _, n := range names {
		if v := Field(fields, n); v != "" {
			return v
		}
	}
	return ""
}

// ReadOptions are how [ReadDeliveries] reads a campaign's deliveries.
type ReadOptions struct {
	// SigningSecret, when set, is the secret the deliveries' HMAC-SHA256
	// signatures are checked with ([CheckSignature]).
	SigningSecret string
	// RequireSignature refuses a delivery that carries no signature.
	RequireSignature bool
	// PhoneField is the campaign's outcomes.phone_field: a delivery that
	// names a number there is a delivery itself, never the wrapper of
	// an array of them ([unwrap]).
	PhoneField string
	// KeepWhole, when set, is asked of an object that wraps an array of
	// deliveries ([unwrap]), given the object's own fields: the object
	// without the arrays it would be read as. When it says yes (the
	// object's own fields say its person asked not to be called: a
	// CRM's record whose do_not_call is set beside an array of its
	// phones, say), the object is read as one delivery, its arrays
	// fields of it, so that its sign is never dropped with the wrapper.
	KeepWhole func(own Delivery) bool
}

// ReadDeliveries reads the webhook deliveries of one request: the query
// of a GET, or of a POST with no body; the body of a POST as a form (application/x-www-form-urlencoded),
// a multipart form (multipart/form-data: its text parts), a JSON object
// (application/json, or any body that starts with "{") or a JSON array of
// objects, each a delivery. A body sent with Content-Encoding: gzip is
// decompressed first, and a leading UTF-8 byte order mark cut; a body
// sent as a form that is JSON (it starts with "{" or "[" and parses) is
// read as JSON, and one sent as JSON that is a form (and does not start
// with "{" or "[") is read as a form. A body over [MaxDeliveryBody], compressed or once
// decompressed, is [ErrDeliveryTooLarge]; with o.SigningSecret, a signature that does not
// match is [ErrBadSignature] and, with o.RequireSignature, none at all
// [ErrUnsigned]; a body that is none of these is an error saying so.
//
// A JSON array some of whose elements are no delivery (not an object, or
// an empty one) is read for the rest: ReadDeliveries returns the
// deliveries of the others, in order, with a *[RefusedElements] that
// names each element refused and why; `callrun listen` stores those it
// read and answers for the refused ones. An element without a signature
// is not one o.RequireSignature refuses the array for when it is refused
// already. An array none of whose elements is a delivery is an error, as
// a body that is none.
//
// A JSON object that names no number of its own and wraps an array of
// deliveries (a batching sender's {"data": [...]}, {"events": [...]},
// {"batch": [...]}: see [unwrap]) is read as those deliveries, each
// signed as the object was.
func ReadDeliveries(r *http.Request, o ReadOptions) ([]Delivery, error) {
	ds, err := readDeliveries(r, o)
	if len(ds) > 0 {
		ds = unwrapAll(ds, o)
	}
	return ds, err
}

// readDeliveries is [ReadDeliveries] but for the arrays an object wraps.
func readDeliveries(r *http.Request, o ReadOptions) ([]Delivery, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if o.SigningSecret != "" && o.RequireSignature {
			return nil, ErrUnsigned // a query has no body to sign
		}
		return []Delivery{formDelivery(decodeValues(r.URL.Query(), nil), r.URL.RawQuery)}, nil
	}
	if r.Method != http.MethodPost {
		return nil, fmt.Errorf("method %s: a delivery is a GET or a POST", r.Method)
	}
	if r.ContentLength > MaxDeliveryBody {
		return nil, ErrDeliveryTooLarge
	}
	body, err := readBody(r)
	if err != nil {
		return nil, fmt.Errorf("reading the delivery: %w", err)
	}
	if len(body) > MaxDeliveryBody {
		return nil, ErrDeliveryTooLarge
	}
	if len(bytes.TrimSpace(body)) == 0 && r.URL.RawQuery != "" {
		// A POST with its fields in the URL's query and no body (an
		// agent's completion sent so): read as the GET it stands for.
		if o.SigningSecret != "" && o.RequireSignature {
			return nil, ErrUnsigned // a query has no body to sign
		}
		return []Delivery{formDelivery(decodeValues(r.URL.Query(), nil), r.URL.RawQuery)}, nil
	}
	wire := body // what a header's signature may sign
	if body, err = decodeBody(r.Header, body); err != nil {
		return nil, err
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	enc := charsetOf(params)
	sigBody := bytes.TrimSpace(body) // what a signature in the body signs
	if mt != "application/x-www-form-urlencoded" && !strings.HasPrefix(mt, "multipart/") {
		// A body in another charset than UTF-8, as its Content-Type
		// names it (UTF-16 by its byte order mark): read as the text it
		// is, or its non-ASCII words (a "ne m’appelez plus") are lost.
		body = decodeCharset(body, enc)
	}
	trimmed := bytes.TrimSpace(body)
	if mt != "application/x-www-form-urlencoded" && !strings.HasPrefix(mt, "multipart/") {
		trimmed = unquoteJSON(trimmed)
	}
	looksJSON := bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("["))
	headerSig := signatureHeader(r.Header)
	var ds []Delivery
	// The JSON array's elements: at[i] is the place in the array of
	// ds[i] (nil: ds[i] is its i-th object, or the body's only one), and
	// refused the elements read as no delivery.
	var at []int
	var refused *RefusedElements
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt != "application/x-www-form-urlencoded" && !strings.HasPrefix(mt, "multipart/") && looksJSON:
		if ds, at, refused, err = jsonDeliveries(trimmed, len(body) <= legacyMaxBody); err != nil {
			// A form sent as JSON (a Content-Type set by hand on a form's
			// webhook), the mirror of JSON sent as a form: read as a form
			// when it is one, never when it looks like JSON.
			vals, ferr := url.ParseQuery(string(trimmed))
			if looksJSON || ferr != nil || !bytes.ContainsRune(trimmed, '=') || !anyValue(vals) {
				return nil, err
			}
			d := formDelivery(decodeValues(vals, enc), string(body))
			d.legacy = "" // refused before
			ds = []Delivery{d}
		}
	case mt == "application/x-www-form-urlencoded" && looksJSON && jsonParses(trimmed, &ds, &at, &refused):
		// JSON sent as a form, a common misconfiguration of senders: read
		// as a form it would be one key of garbage, and its opt-out lost.
	case mt == "text/xml" || mt == "application/xml" || mt == "application/soap+xml" ||
		(mt == "" || mt == "text/plain") && bytes.HasPrefix(trimmed, []byte("<")):
		// A Salesforce Outbound Message: SOAP, its notifications each a
		// record's fields (a Lead's DoNotCall). Refused, Salesforce would
		// send it again for a day and then drop it, its opt-out lost.
		if ds, err = soapDeliveries(trimmed); err != nil {
			return nil, err
		}
	case strings.HasPrefix(mt, "multipart/"):
		vals, err := multipartValues(body, params["boundary"])
		if err != nil {
			return nil, err
		}
		d := formDelivery(decodeValues(vals, enc), string(body))
		d.legacy = "" // refused before
		ds = []Delivery{d}
	case mt == "application/x-www-form-urlencoded" || mt == "" || mt == "text/plain":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("the delivery's body is not a form")
		}
		d := formDelivery(decodeValues(vals, enc), string(body))
		if len(body) > legacyMaxBody {
			d.legacy = ""
		}
		ds = []Delivery{d}
	default:
		return nil, fmt.Errorf("the delivery's Content-Type %s is neither a form nor JSON", strconv.Quote(mt))
	}
	// elem is the place in the body's objects of delivery i.
	elem := func(i int) int {
		if at == nil {
			return i
		}
		return at[i]
	}
	if o.SigningSecret == "" {
		return ds, refused.orNil()
	}
	// A delivery whose signature covers its "data" member alone is read
	// from what it signs (signedData).
	if headerSig != "" {
		// The body as sent, or as its sender wrote it before compressing it.
		var dataOnly []bool
		if !signatureMatches(o.SigningSecret, headerSig, wire) && (bytes.Equal(wire, body) || !signatureMatches(o.SigningSecret, headerSig, body)) {
			var ok bool
			if dataOnly, ok = bodySignaturesMatch(o.SigningSecret, sigBody); !ok {
				return nil, ErrBadSignature
			}
		}
		for i := range ds {
			ds[i].Signed = true
			if e := elem(i); e < len(dataOnly) && dataOnly[e] {
				ds[i] = signedData(ds[i])
			}
		}
		return ds, refused.orNil()
	}
	n := len(ds)
	if refused != nil {
		n = refused.Of
	}
	signed, dataOnly, err := checkBodySignatures(o.SigningSecret, sigBody, n)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		e := elem(i)
		ds[i].Signed = signed[e]
		if !signed[e] && o.RequireSignature {
			return nil, ErrUnsigned
		}
		if dataOnly[e] {
			ds[i] = signedData(ds[i])
		}
	}
	return ds, refused.orNil()
}

// unquoteJSON returns body, when it is a JSON string whose text is a
// JSON object or array (JSON encoded twice, as a relay that stringifies
// what it forwards sends it), that text; else body as it is.
func unquoteJSON(body []byte) []byte {
	if !bytes.HasPrefix(body, []byte(`"`)) {
		return body
	}
	var text string
	if json.Unmarshal(body, &text) != nil {
		return body
	}
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return []byte(t)
	}
	return body
}

// charsetOf returns the encoding of the charset a Content-Type's
// parameters name, nil for UTF-8 (or US-ASCII), none or one unknown.
func charsetOf(params map[string]string) encoding.Encoding {
	switch cs := strings.ToLower(strings.TrimSpace(params["charset"])); cs {
	case "", "utf-8", "utf8", "us-ascii":
		return nil
	default:
		e, err := htmlindex.Get(cs)
		if err != nil {
			return nil
		}
		return e
	}
}

// decodeCharset returns body, a JSON body, as UTF-8: decoded from enc,
// the charset its Content-Type names, or from UTF-16 when it starts with
// UTF-16's byte order mark; as it is when neither (or when it does not
// decode). A body that is UTF-8 already, without a NUL (which UTF-16's
// text has, and JSON in UTF-8 never), is kept as it is whatever charset
// its Content-Type names: JSON is UTF-8, and a sender that labels it
// ISO-8859-1 by default still sends UTF-8, whose "m’appelez" read from
// ISO-8859-1 would be "mâ€™appelez", no opt-out.
func decodeCharset(body []byte, enc encoding.Encoding) []byte {
	switch {
	case bytes.HasPrefix(body, []byte("\xff\xfe")), bytes.HasPrefix(body, []byte("\xfe\xff")):
		enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	case enc == nil:
		return body
	case utf8.Valid(body) && bytes.IndexByte(body, 0) < 0:
		return body
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return bytes.TrimPrefix(out, utf8BOM)
}

// decodeValues returns a form's fields with each key and value that is
// not UTF-8 decoded from enc, the charset its Content-Type names, or,
// when it names none, from Windows-1252, as browsers read such a form
// (a percent-escape of a Latin-1 byte, m%E1s, is not UTF-8): a value's
// words are read for an opt-out.
func decodeValues(vals url.Values, enc encoding.Encoding) url.Values {
	if enc == nil {
		enc = charmap.Windows1252
	}
	dec := func(s string) string {
		if utf8.ValidString(s) {
			return s
		}
		if out, err := enc.NewDecoder().String(s); err == nil {
			return out
		}
		return s
	}
	out := make(url.Values, len(vals))
	for k, vs := range vals {
		k = dec(k)
		for _, v := range vs {
			out[k] = append(out[k], dec(v))
		}
	}
	return out
}

// anyValue reports whether a form has a field with a value.
func anyValue(vals url.Values) bool {
	for _, vs := range vals {
		for _, v := range vs {
			if v != "" {
				return true
			}
		}
	}
	return false
}

// RefusedElements is what [ReadDeliveries] returns, beside the
// deliveries it read, for a JSON array some of whose elements are no
// delivery: which elements it refused and why. `callrun listen` stores
// the others and answers 400 naming these.
type RefusedElements struct {
	// Of is how many elements the array has.
	Of int
	// Refused are the elements refused, in order.
	Refused []RefusedElement
}

// RefusedElement is one element of a JSON array of deliveries that is no
// delivery.
type RefusedElement struct {
	// Index is its place in the array, from 1.
	Index int
	// Err says why it is no delivery.
	Err error
}

func (e *RefusedElements) Error() string {
	parts := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		parts[i] = fmt.Sprintf("element %d of %d: %v", r.Index, e.Of, r.Err)
	}
	return "the delivery's array has elements that are no delivery: " + strings.Join(parts, "; ")
}

// orNil is e as an error: nil when e is nil, so that a nil
// *RefusedElements is no error.
func (e *RefusedElements) orNil() error {
	if e == nil {
		return nil
	}
	return e
}

// readBody reads r's body, up to one byte over MaxDeliveryBody, in one
// buffer of its Content-Length when it gives one.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= MaxDeliveryBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, MaxDeliveryBody+1))
}

// utf8BOM is the byte order mark some senders put before a UTF-8 body.
var utf8BOM = []byte("\xef\xbb\xbf")

// decodeBody returns the body of a request with headers h as its sender
// wrote it, before what its sending did to it: a gzip Content-Encoding
// decompressed, to no more than [MaxDeliveryBody] (more, a gzip bomb say,
// is [ErrDeliveryTooLarge]), and a leading UTF-8 byte order mark cut. A
// body with another Content-Encoding is left as it came.
func decodeBody(h http.Header, body []byte) ([]byte, error) {
	switch enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding"))); enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("the delivery's gzip body: %w", err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, MaxDeliveryBody+1))
		if err != nil {
			return nil, fmt.Errorf("the delivery's gzip body: %w", err)
		}
		if len(plain) > MaxDeliveryBody {
			return nil, ErrDeliveryTooLarge
		}
		body = plain
	}
	return bytes.TrimPrefix(body, utf8BOM), nil
}

// jsonParses reports whether body reads as JSON deliveries, and puts
// them, where each was in an array and the elements refused, in ds, at
// and refused when it does.
func jsonParses(body []byte, ds *[]Delivery, at *[]int, refused **RefusedElements) bool {
	got, where, bad, err := jsonDeliveries(body, len(body) <= legacyMaxBody)
	if err != nil {
		return false
	}
	*ds, *at, *refused = got, where, bad
	return true
}

// legacyMaxBody is the largest body callrun read before deliveries were
// told by their call and event: bigger ones it refused, so they have no
// legacy key.
const legacyMaxBody = 64 << 10

// jsonDeliveries reads a JSON object, or an array of them, each a
// delivery. legacy says whether callrun before could have read it (an
// object within its bound). Of an array, the elements that are no
// delivery (not an object, or an empty one) are left out and named in
// refused, and at says where in the array each delivery read was (nil
// when none was left out); an array none of whose elements is a
// delivery, or that is no JSON, is an error.
func jsonDeliveries(body []byte, legacy bool) (ds []Delivery, at []int, refused *RefusedElements, err error) {
	if len(body) > 0 && body[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil {
			return nil, nil, nil, errors.New("the delivery's body is not JSON")
		}
		if len(elems) == 0 {
			return nil, nil, nil, errors.New("the delivery's body is an empty JSON array")
		}
		out := make([]Delivery, 0, len(elems))
		where := make([]int, 0, len(elems))
		for i, e := range elems {
			d, err := jsonDelivery(bytes.TrimSpace(e), false)
			if err == nil && len(d.Fields) == 0 {
				err = errors.New("an empty delivery")
			}
			if err != nil {
				if refused == nil {
					refused = &RefusedElements{Of: len(elems)}
				}
				refused.Refused = append(refused.Refused, RefusedElement{Index: i + 1, Err: err})
				continue
			}
			out = append(out, d)
			where = append(where, i)
		}
		if refused == nil {
			return out, nil, nil, nil
		}
		if len(out) == 0 {
			return nil, nil, nil, refused
		}
		return out, where, refused, nil
	}
	d, err := jsonDelivery(body, legacy)
	if err != nil {
		// Newline-delimited JSON (application/x-ndjson, JSON Lines): a
		// batching sender's deliveries one a line, read as the elements
		// of an array are, a line that is no delivery (an empty object)
		// refused as such an element is. Refused whole, its sender would
		// retry it for ever and every opt-out in it be lost.
		if lines := ndjsonObjects(body); lines != nil {
			out := make([]Delivery, 0, len(lines))
			where := make([]int, 0, len(lines))
			for i, l := range lines {
				ld, lerr := jsonDelivery(l, false)
				if lerr == nil && len(ld.Fields) == 0 {
					lerr = errors.New("an empty delivery")
				}
				if lerr != nil {
					if refused == nil {
						refused = &RefusedElements{Of: len(lines)}
					}
					refused.Refused = append(refused.Refused, RefusedElement{Index: i + 1, Err: lerr})
					continue
				}
				out, where = append(out, ld), append(where, i)
			}
			switch {
			case refused == nil:
				return out, nil, nil, nil
			case len(out) == 0:
				return nil, nil, nil, refused
			}
			return out, where, refused, nil
		}
		return nil, nil, nil, err
	}
	return []Delivery{d}, nil, nil, nil
}

// ndjsonObjects returns the lines of body, newline-delimited JSON, each a
// JSON object (blank lines left out), when there are two or more and
// each is valid JSON; else nil.
func ndjsonObjects(body []byte) [][]byte {
	if !bytes.Contains(body, []byte("\n")) || json.Valid(body) {
		return nil
	}
	var out [][]byte
	for _, l := range bytes.Split(body, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if l[0] != '{' || !json.Valid(l) {
			return nil
		}
		out = append(out, l)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// jsonDelivery reads one JSON object into a delivery, its nested objects
// into fields by their paths, in one pass over its bytes. legacy: also
// the key callrun gave it before (its top-level members, nested ones as
// their JSON text as sent).
func jsonDelivery(obj []byte, legacy bool) (Delivery, error) {
	bad := errors.New("the delivery's body is not a JSON object")
	// A bytes.Buffer the decoder reads in place, without a copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(obj), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return Delivery{}, bad
	}
	fields := map[string]string{}
	var old map[string]string
	if legacy {
		old = map[string]string{}
	}
	repeated := map[string][]string{}
	if err := readMembers(dec, obj, "", 1, fields, old, repeated); err != nil {
		return Delivery{}, bad
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return Delivery{}, bad // more after the object
	}
	d := newDelivery(fields, "")
	switch {
	case len(repeated) > 0:
		// A member named twice ("disposition": "do_not_call", then
		// "completed") is told by all its values, as a form field sent
		// twice is: a value before the last may be the opt-out. Before,
		// the last alone was read, keyed as another delivery may be.
		d.Repeated = redactRepeated(repeated)
	case old != nil:
		d.legacy = hashKey(old)
	}
	return d, nil
}

// readMembers reads the members of the object whose '{' dec has just
// read, up to and with its '}', into fields under prefix: an object's
// members under prefix.key, down to maxDeliveryDepth; a string as its
// text, null as "", anything else as its JSON text. src is what dec
// reads. old, when set, gets each member as callrun read it before: a
// nested object as its JSON text as sent. repeated gets every value, in
// order, of a member the object names more than once; fields keeps its
// last.
func readMembers(dec *jsontext.Decoder, src []byte, prefix string, depth int, fields, old map[string]string, repeated map[string][]string) error {
	for {
		switch dec.PeekKind() {
		case '}':
			_, err := dec.ReadToken()
			return err
		case 0:
			_, err := dec.ReadToken()
			return cmp.Or(err, errors.New("not JSON"))
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		key := tok.String()
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		var v string
		switch k := dec.PeekKind(); {
		case k == '{' && depth < maxDeliveryDepth:
			start := valueStart(src, dec.InputOffset())
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
			if err := readMembers(dec, src, path, depth+1, fields, nil, repeated); err != nil {
				return err
			}
			if old != nil {
				old[key] = string(src[start:dec.InputOffset()])
			}
			continue
		case k == '"':
			t, err := dec.ReadToken()
			if err != nil {
				return err
			}
			v = t.String()
			if depth < maxDeliveryDepth {
				// Its members are read under path, and the string is
				// kept too: its words are still the field's (a summary
				// whose text is a JSON object still says what it says).
				readJSONString(v, path, depth+1, fields, repeated)
			}
		case k == 'n':
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
		default:
			raw, err := dec.ReadValue()
			if err != nil {
				return err
			}
			v = string(raw)
		}
		setField(fields, repeated, path, v)
		if old != nil {
			old[key] = v
		}
	}
}

// readJSONString reads v, a string value at path, into fields (and
// repeated) as the object it holds when it is the text of a JSON object
// (a relay's "payload": "{\"event\": ...}", an Amazon SNS
// notification's Message, a form's payload field), its members under
// path at depth, as if it were that object. The caller keeps the string
// at path as it is either way.
func readJSONString(v, path string, depth int, fields map[string]string, repeated map[string][]string) {
	trimmed := strings.TrimSpace(v)
	if !strings.HasPrefix(trimmed, "{") || !strings.HasSuffix(trimmed, "}") {
		return
	}
	src := []byte(trimmed)
	dec := jsontext.NewDecoder(bytes.NewBuffer(src), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return
	}
	got, rep := map[string]string{}, map[string][]string{}
	if err := readMembers(dec, src, path, depth, got, nil, rep); err != nil {
		return
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return
	}
	for p, x := range got {
		setField(fields, repeated, p, x)
	}
	for p, xs := range rep {
		repeated[p] = append(repeated[p], xs...)
	}
}

// setField sets fields[path] to v; a path set before keeps every value,
// in order, in repeated.
func setField(fields map[string]string, repeated map[string][]string, path, v string) {
	if prev, ok := fields[path]; ok {
		if repeated[path] == nil {
			repeated[path] = []string{prev}
		}
		repeated[path] = append(repeated[path], v)
	}
	fields[path] = v
}

// valueStart is where the value of an object member starts in src, given
// the offset just after its name: past the spaces and the colon.
func valueStart(src []byte, off int64) int64 {
	for off < int64(len(src)) && (isSpace(src[off]) || src[off] == ':') {
		off++
	}
	return off
}

// multipartValues reads the text parts of a multipart/form-data body; a
// file part (a recording, say) is left out.
func multipartValues(body []byte, boundary string) (url.Values, error) {
	if boundary == "" {
		return nil, errors.New("the delivery's multipart body has no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	vals := url.Values{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return vals, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the delivery's multipart body: %w", err)
		}
		if p.FormName() == "" || p.FileName() != "" {
			continue
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("the delivery's multipart body: %w", err)
		}
		vals.Add(p.FormName(), string(b))
	}
}

// formDelivery makes a Delivery of a form's (or query's) fields, the
// first value of each, every value of one sent more than once, and the
// raw text.
func formDelivery(vals url.Values, raw string) Delivery {
	fields := make(map[string]string, len(vals))
	var repeated map[string][]string
	for k, vs := range vals {
		if len(vs) > 0 {
			fields[k] = vs[0]
		}
		if len(vs) > 1 {
			if repeated == nil {
				repeated = map[string][]string{}
			}
			repeated[k] = vs
		}
	}
	legacy := ""
	if repeated == nil {
		// Before, a field sent more than once was keyed by its first
		// value alone: that key may be another delivery's.
		legacy = hashKey(fields)
	}
	// A field nested in brackets, as PHP and Rails write a form
	// (data[phone_number], data[merges][PHONE]: Mailchimp's webhooks),
	// is read at its path, data.phone_number, as a JSON object's
	// member is: in brackets its number does not read.
	renameBracketed(fields, repeated)
	// A field whose value is a JSON object (payload={"event": ...}) is
	// read as that object, as a JSON member whose string holds one is.
	var objects []string // the fields whose value may be a JSON object
	for k, v := range fields {
		if _, many := repeated[k]; !many && strings.HasPrefix(strings.TrimSpace(v), "{") {
			objects = append(objects, k)
		}
	}
	slices.Sort(objects)
	for _, k := range objects {
		if repeated == nil {
			repeated = map[string][]string{}
		}
		// The field keeps its text too: its words are still its own (a
		// summary whose text is a JSON object).
		readJSONString(fields[k], k, 2, fields, repeated)
	}
	if len(repeated) == 0 {
		repeated = nil
	}
	d := newDelivery(fields, raw)
	d.Repeated = redactRepeated(repeated)
	d.legacy = legacy
	return d
}

// redactFields blanks every secret given to [AddSecret] in fields' names
// and values, in place, and returns fields: listen stores a delivery's
// fields whole, and the report and `callrun outcomes` show them, so a
// secret the sender echoes (listen's path in a webhook URL, a token) is
// blanked there as in its raw text. A name blanked into one the delivery
// has already keeps that one's value.
func redactFields(fields map[string]string) map[string]string {
	for k, v := range fields {
		rk, rv := Redact(k), Redact(v)
		if rk == k {
			if rv != v {
				fields[k] = rv
			}
			continue
		}
		delete(fields, k)
		if _, ok := fields[rk]; !ok {
			fields[rk] = rv
		}
	}
	return fields
}

// redactRepeated is redactFields for the values of fields sent more than
// once.
func redactRepeated(repeated map[string][]string) map[string][]string {
	for k, vs := range repeated {
		for i, v := range vs {
			vs[i] = Redact(v)
		}
		if rk := Redact(k); rk != k {
			delete(repeated, k)
			repeated[rk] = append(repeated[rk], vs...)
		}
	}
	return repeated
}

// newDelivery makes a Delivery of its fields and raw text: its event,
// agent and call as [Field] finds them.
func newDelivery(fields map[string]string, raw string) Delivery {
	d := Delivery{Fields: redactFields(fields)}
	d.Event = ServiceEvent(firstField(fields, eventFields))
	d.AgentID = firstField(fields, agentFields)
	d.CallID = firstField(fields, callIDFields)
	cut := false
	if len(raw) > maxDeliveryRaw {
		raw, cut = raw[:maxDeliveryRaw], true
	}
	d.Raw = redactCut(raw, cut)
	return d
}

// renameBracketed moves each field of fields (and repeated) whose name
// is nested in brackets, a[b][c], to its path a.b.c, unless that path is
// a field already; a[] (a PHP list) is a.
func renameBracketed(fields map[string]string, repeated map[string][]string) {
	for k, v := range fields {
		p, ok := bracketPath(k)
		if !ok {
			continue
		}
		if _, taken := fields[p]; taken {
			continue
		}
		delete(fields, k)
		fields[p] = v
		if vs, many := repeated[k]; many {
			delete(repeated, k)
			repeated[p] = vs
		}
	}
}

// bracketPath returns the path of a form field's name nested in
// brackets (data[phone_number] is data.phone_number; a[] is a); ok is
// false for a name that is not so nested.
func bracketPath(k string) (string, bool) {
	i := strings.IndexByte(k, '[')
	if i <= 0 || !strings.HasSuffix(k, "]") {
		return "", false
	}
	segs := []string{k[:i]}
	rest := k[i:]
	for rest != "" {
		if rest[0] != '[' {
			return "", false
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return "", false
		}
		seg := rest[1:j]
		if strings.ContainsAny(seg, "[.") {
			return "", false
		}
		if seg != "" {
			segs = append(segs, seg)
		}
		rest = rest[j+1:]
	}
	return strings.Join(segs, "."), true
}
