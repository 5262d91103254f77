package apiclient

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadDeliveriesWrapped: an object with no number of its own that
// wraps an array of deliveries is read as them; one whose array is its
// transcript's turns, its call's legs or a list of contacts, or that
// names its own number, is read as one delivery.
func TestReadDeliveriesWrapped(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string // each delivery's phone_number-ish field, in order
	}{
		{"data array", `{"object":"list","data":[{"event":"call.started","phone_number":"+14155550132"},{"event":"call.ended","phone_number":"+14155550133","disposition":"do_not_call"}]}`,
			[]string{"+14155550132", "+14155550133"}},
		{"events of payloads", `{"events":[{"payload":{"event":"call.ended","phone_number":"+14155550134"}}]}`, []string{"+14155550134"}},
		{"payload.items", `{"payload":{"items":[{"to_number":"+14155550135","status":"completed"}]}}`, []string{"+14155550135"}},
		{"a transcript's turns, the number its own", `{"event":"call_ended","call":{"to_number":"+14155550136","transcript_object":[{"role":"agent","content":"Hi"},{"role":"user","content":"Stop calling me"}]}}`, []string{"+14155550136"}},
		{"turns, no number", `{"type":"post_call_transcription","data":{"transcript":[{"role":"agent","message":"Hi"},{"role":"user","message":"Stop"}]}}`, []string{""}},
		{"a list of contacts", `{"contacts":[{"phone":"+14155550137","name":"Ada"},{"phone":"+14155550138","name":"Bob"}]}`, []string{""}},
		{"a string among the elements", `{"data":[{"event":"call.ended","phone_number":"+14155550139"},"call.ended"]}`, []string{""}},
	} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		ds, err := ReadDeliveries(r, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, d := range ds {
			got = append(got, firstField(d.Fields, WrappedNumberFields))
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: read %d deliveries of numbers %q, want %q", c.name, len(ds), got, c.want)
		}
	}
}

// TestReadDeliveriesNDJSON: newline-delimited JSON, each line a delivery,
// is read as a JSON array of them is; one line that is no JSON object
// refuses the body, as before; each line's own signature is checked.
func TestReadDeliveriesNDJSON(t *testing.T) {
	const body = "{\"event\":\"call.started\",\"phone_number\":\"+14155550132\"}\n{\"event\":\"call.ended\",\"phone_number\":\"+14155550133\",\"disposition\":\"do_not_call\"}\n"
	for _, ct := range []string{"application/x-ndjson", "application/json", "application/jsonl"} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
		r.Header.Set("Content-Type", ct)
		ds, err := ReadDeliveries(r, ReadOptions{})
		if err != nil || len(ds) != 2 || ds[1].Fields["disposition"] != "do_not_call" {
			t.Errorf("%s: read %+v, %v; want the two lines", ct, ds, err)
		}
	}
	r := httptest.NewRequest("POST", "/hook", strings.NewReader(body+"not json\n"))
	r.Header.Set("Content-Type", "application/x-ndjson")
	if ds, err := ReadDeliveries(r, ReadOptions{}); err == nil {
		t.Errorf("a line of no JSON: read %+v, want an error", ds)
	}
	// Each line signed in itself: one forged line refuses the body.
	const secret = "whsec_test"
	line := func(s string) string {
		return strings.TrimSuffix(s, "}") + `,"signature":"` + Sign(secret, []byte(s)) + `"}`
	}
	good := line(`{"event":"call.ended","phone_number":"+14155550133"}`) + "\n" + line(`{"event":"call.ended","phone_number":"+14155550134"}`)
	r = httptest.NewRequest("POST", "/hook", strings.NewReader(good))
	r.Header.Set("Content-Type", "application/x-ndjson")
	if ds, err := ReadDeliveries(r, ReadOptions{SigningSecret: secret, RequireSignature: true}); err != nil || len(ds) != 2 || !ds[0].Signed || !ds[1].Signed {
		t.Errorf("signed lines: %+v, %v", ds, err)
	}
	forged := good + "\n" + `{"event":"call.ended","phone_number":"+14155550135","signature":"sha256=00"}`
	r = httptest.NewRequest("POST", "/hook", strings.NewReader(forged))
	r.Header.Set("Content-Type", "application/x-ndjson")
	if _, err := ReadDeliveries(r, ReadOptions{SigningSecret: secret}); err != ErrBadSignature {
		t.Errorf("a forged line: %v, want ErrBadSignature", err)
	}
}

// TestReadDeliveriesBracketedForm: a form's fields nested in brackets,
// as PHP, Rails and Mailchimp's webhooks write them, are read at their
// paths, so that data[phone_number] is the number.
func TestReadDeliveriesBracketedForm(t *testing.T) {
	const body = "type=profile&fired_at=2009-03-26+21%3A31%3A21&data%5Bid%5D=8a25ff1d98&data%5Bmerges%5D%5BPHONE%5D=%2B14155550132&data%5Bphone_number%5D=%2B14155550133&tags%5B%5D=lead&tags%5B%5D=dnc&odd%5Bx=1"
	r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ds, err := ReadDeliveries(r, ReadOptions{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("read %+v, %v", ds, err)
	}
	f := ds[0].Fields
	if Field(f, "phone_number") != "+14155550133" || f["data.merges.PHONE"] != "+14155550132" || f["odd[x"] != "1" {
		t.Errorf("fields %v: want data.phone_number, data.merges.PHONE, and odd[x as sent", f)
	}
	if vs := ds[0].Values("tags"); len(vs) != 2 || vs[1] != "dnc" {
		t.Errorf("tags[] read as %v, want both values", vs)
	}
}

// TestReadDeliveriesWrappedOwnNumber: a delivery that names its number
// where the campaign reads it but not by a field of WrappedNumberFields
// (the service's own envelope's data.caller_number, service-api as
// /work/shared/design.md gives it: {event, timestamp, data: {call_id,
// agent_id, caller_number, duration, status, transcript, ...}}; a field
// outcomes.phone_field names), or its call's id, is a delivery itself:
// an array of its call's legs is not read in its place, which would lose its own
// opt-out (its disposition) and its number.
func TestReadDeliveriesWrappedOwnNumber(t *testing.T) {
	for _, c := range []struct {
		name, body, phoneField string
	}{
		{"the service's envelope", `{"event":"call.ended","timestamp":"2026-11-29T10:00:00Z","data":{"call_id":"c1","caller_number":"+14155550140","status":"completed","disposition":"do_not_call","legs":[{"to":"+14155550199","status":"completed"}]}}`, ""},
		{"outcomes.phone_field", `{"event":"call.ended","lead_cell":"+14155550141","disposition":"do_not_call","legs":[{"to":"+14155550199","status":"completed"}]}`, "lead_cell"},
		// No number at all, but the call's id, by which listen finds the
		// person callrun called in the journal; its legs name the number a
		// transfer went to.
		{"its call's id", `{"event":"call.ended","data":{"call_id":"c9","disposition":"do_not_call","legs":[{"to":"+14155550199","status":"completed"}]}}`, ""},
	} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		ds, err := ReadDeliveries(r, ReadOptions{PhoneField: c.phoneField})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(ds) != 1 || Field(ds[0].Fields, "disposition") != "do_not_call" {
			t.Errorf("%s: read %d deliveries %+v; want the one delivery, its disposition do_not_call", c.name, len(ds), ds)
		}
	}
}

// TestReadDeliveriesNDJSONEmptyLine: a line of newline-delimited JSON
// that is an empty object (a batching sender's keep-alive) is refused as
// an empty element of an array is, and the other lines are read: refused
// whole, the body would be answered 400 on every retry and the opt-out
// on its other line lost.
func TestReadDeliveriesNDJSONEmptyLine(t *testing.T) {
	const body = "{}\n{\"event\":\"call.ended\",\"phone_number\":\"+14155550133\",\"disposition\":\"do_not_call\"}\n"
	r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-ndjson")
	ds, err := ReadDeliveries(r, ReadOptions{})
	var refused *RefusedElements
	if len(ds) != 1 || ds[0].Fields["disposition"] != "do_not_call" || !errors.As(err, &refused) || refused.Of != 2 || len(refused.Refused) != 1 || refused.Refused[0].Index != 1 {
		t.Errorf("read %+v, %v; want the second line, and the first refused as element 1 of 2", ds, err)
	}
}
