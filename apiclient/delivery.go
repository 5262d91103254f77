package apiclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
)

// MaxDeliveryBody is the largest webhook delivery body [ReadDelivery]
// accepts: the service sends a contact's form fields and an event, far
// less than this.
const MaxDeliveryBody = 64 << 10

// maxDeliveryRaw bounds the raw delivery a [Delivery] keeps.
const maxDeliveryRaw = 4 << 10

// ErrDeliveryTooLarge is what [ReadDelivery] returns for a body over
// [MaxDeliveryBody]; `callrun listen` answers it 413.
var ErrDeliveryTooLarge = errors.New("webhook delivery over 64 KiB")

// Delivery is one webhook delivery from the service, as callrun reads it:
// the account webhooks (events call.started, call.answered, call.ended,
// always a POST form with the contact's fields) and an agent's
// weebhook_endpoint (GET or POST, its payload undocumented). `callrun
// listen` reads each request into one and stores it.
type Delivery struct {
	// Event is the event the delivery names (its event, event_type or
	// type field), empty when it names none.
	Event string `json:"event,omitempty"`
	// AgentID is the agent the delivery names (agent_id), if any.
	AgentID string `json:"agent_id,omitempty"`
	// Fields holds every field of the delivery, one value each (the
	// first): the contact's form fields (phone_number, email,
	// first_name, last_name, ghl_contact_id, the account's own) and
	// whatever else the service sent. A JSON value that is not a string
	// is kept as its JSON text.
	Fields map[string]string `json:"fields"`
	// Raw is the query or body as it came, cut at 4 KiB and redacted.
	Raw string `json:"raw,omitempty"`
}

// Phone returns the delivery's phone_number, as the service wrote it.
func (d Delivery) Phone() string { return d.Fields["phone_number"] }

// Key names the delivery by its content: the same fields give the same
// key, however they were encoded, so a retry of one delivery is recorded
// once.
func (d Delivery) Key() string {
	b, _ := json.Marshal(d.Fields) // map keys sorted; a map of strings always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// ReadDelivery reads one webhook delivery from r: the query of a GET, the
// body of a POST as a form (application/x-www-form-urlencoded) or as a
// JSON object (application/json, or any body that starts with "{"). A
// body over [MaxDeliveryBody] is [ErrDeliveryTooLarge]; a body that is
// neither is an error saying so.
func ReadDelivery(r *http.Request) (Delivery, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return deliveryOf(r.URL.Query(), r.URL.RawQuery, false), nil
	}
	if r.Method != http.MethodPost {
		return Delivery{}, fmt.Errorf("method %s: a delivery is a GET or a POST", r.Method)
	}
	if r.ContentLength > MaxDeliveryBody {
		return Delivery{}, ErrDeliveryTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxDeliveryBody+1))
	if err != nil {
		return Delivery{}, fmt.Errorf("reading the delivery: %w", err)
	}
	if len(body) > MaxDeliveryBody {
		return Delivery{}, ErrDeliveryTooLarge
	}
	raw, cut := string(body), false
	if len(raw) > maxDeliveryRaw {
		raw, cut = raw[:maxDeliveryRaw], true
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	trimmed := bytes.TrimSpace(body)
	switch {
	case mt == "application/json" || (mt != "application/x-www-form-urlencoded" && bytes.HasPrefix(trimmed, []byte("{"))):
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return Delivery{}, errors.New("the delivery's body is not a JSON object")
		}
		vals := url.Values{}
		for k, v := range obj {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
				if s == "null" {
					s = ""
				}
			}
			vals.Set(k, s)
		}
		return deliveryOf(vals, raw, cut), nil
	case mt == "application/x-www-form-urlencoded" || mt == "" || mt == "text/plain":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return Delivery{}, errors.New("the delivery's body is not a form")
		}
		return deliveryOf(vals, raw, cut), nil
	default:
		return Delivery{}, fmt.Errorf("the delivery's Content-Type %s is neither a form nor JSON", strconv.Quote(mt))
	}
}

// deliveryOf makes a Delivery of the fields read and the raw text.
func deliveryOf(vals url.Values, raw string, cut bool) Delivery {
	d := Delivery{Fields: make(map[string]string, len(vals))}
	for k, vs := range vals {
		if len(vs) > 0 {
			d.Fields[k] = vs[0]
		}
	}
	for _, k := range []string{"event", "event_type", "type"} {
		if v := d.Fields[k]; v != "" {
			d.Event = v
			break
		}
	}
	d.AgentID = d.Fields["agent_id"]
	if len(raw) > maxDeliveryRaw {
		raw, cut = raw[:maxDeliveryRaw], true
	}
	d.Raw = redactCut(raw, cut)
	return d
}
