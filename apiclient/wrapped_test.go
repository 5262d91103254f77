package apiclient

import (
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
