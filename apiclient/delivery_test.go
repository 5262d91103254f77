package apiclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadDelivery(t *testing.T) {
	for _, tc := range []struct {
		name, method, ctype, target, body string
	}{
		{"GET query", http.MethodGet, "", "/h?event=call.ended&phone_number=%2B4915112345678&agent_id=agent_1&first_name=Ada", ""},
		{"POST form", http.MethodPost, "application/x-www-form-urlencoded", "/h", "event=call.ended&phone_number=%2B4915112345678&agent_id=agent_1&first_name=Ada"},
		{"POST JSON", http.MethodPost, "application/json; charset=utf-8", "/h", `{"event":"call.ended","phone_number":"+4915112345678","agent_id":"agent_1","first_name":"Ada"}`},
		{"POST JSON, no type", http.MethodPost, "", "/h", ` {"type":"call.ended","phone_number":"+4915112345678","agent_id":"agent_1","first_name":"Ada"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			d, err := ReadDelivery(r)
			if err != nil {
				t.Fatal(err)
			}
			if d.Event != "call.ended" || d.AgentID != "agent_1" || d.Phone() != "+4915112345678" || d.Fields["first_name"] != "Ada" {
				t.Errorf("read %+v", d)
			}
			if d.Raw == "" {
				t.Error("no raw delivery kept")
			}
		})
	}
	// One delivery's key does not depend on its encoding.
	a := deliveryOf(map[string][]string{"event": {"call.ended"}, "phone_number": {"+1"}}, "", false)
	b := deliveryOf(map[string][]string{"phone_number": {"+1"}, "event": {"call.ended"}}, "x", false)
	c := deliveryOf(map[string][]string{"phone_number": {"+1"}, "event": {"call.started"}}, "", false)
	if a.Key() != b.Key() || a.Key() == c.Key() {
		t.Errorf("keys %s %s %s", a.Key(), b.Key(), c.Key())
	}
}

func TestReadDeliveryRefuses(t *testing.T) {
	big := "phone_number=" + strings.Repeat("1", MaxDeliveryBody)
	r := httptest.NewRequest(http.MethodPost, "/h", strings.NewReader(big))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := ReadDelivery(r); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("oversized body: %v", err)
	}
	r = httptest.NewRequest(http.MethodPost, "/h", strings.NewReader(big))
	r.ContentLength = -1 // chunked: the length is learnt by reading
	if _, err := ReadDelivery(r); !errors.Is(err, ErrDeliveryTooLarge) {
		t.Errorf("oversized chunked body: %v", err)
	}
	r = httptest.NewRequest(http.MethodPost, "/h", strings.NewReader(`{"phone_number":`))
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadDelivery(r); err == nil {
		t.Error("a broken JSON body was read")
	}
	r = httptest.NewRequest(http.MethodPut, "/h", nil)
	if _, err := ReadDelivery(r); err == nil {
		t.Error("a PUT was read")
	}
}

func TestReadDeliveryRedacts(t *testing.T) {
	AddSecret("hook-secret-4711")
	r := httptest.NewRequest(http.MethodPost, "/h", strings.NewReader("phone_number=%2B1&note=hook-secret-4711"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	d, err := ReadDelivery(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Raw, "4711") {
		t.Errorf("raw delivery keeps the secret: %s", d.Raw)
	}
	r = httptest.NewRequest(http.MethodPost, "/h", strings.NewReader("phone_number=%2B1&note="+strings.Repeat("x", 5000)))
	if d, err = ReadDelivery(r); err != nil || len(d.Raw) > maxDeliveryRaw+len(Redacted) {
		t.Errorf("raw delivery not bounded: %d bytes, %v", len(d.Raw), err)
	}
}
