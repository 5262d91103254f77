package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/callrun/callrun/report/store"
)

// TestListenSalesforceOutboundMessage: a Salesforce Outbound Message
// (SOAP) is read, its Lead's DoNotCall numbers (Phone and MobilePhone)
// listed before the answer,
// and answered 200 with the SOAP acknowledgement Salesforce waits for
// (else it sends the message again for a day, then drops it); its
// Contact whose DoNotCall is false is listed nowhere. XML that is no
// Outbound Message is still refused.
func TestListenSalesforceOutboundMessage(t *testing.T) {
	_, home, _, base, _, stop := listenCampaign(t, "  opt_out: {field: disposition, values: [opted_out]}\nregion: US\n")
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := http.Post(base+"/callrun/spring/"+hookSecret, "text/xml; charset=utf-8", strings.NewReader(salesforceDoNotCall))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<Ack>true</Ack>") ||
			!strings.Contains(string(body), `xmlns="http://soap.sforce.com/2005/09/outbound"`) {
			t.Errorf("attempt %d: answered %d %s; want 200 and the SOAP Ack", attempt, resp.StatusCode, body)
		}
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if on := store.OnDoNotCall(es); len(on) != 2 || on["+19175550331"].Number == "" || on["+19175550333"].Number == "" {
			t.Errorf("attempt %d: the do-not-call list holds %v, want the Lead's Phone and MobilePhone alone", attempt, on)
		}
	}
	resp, err := http.Post(base+"/callrun/spring/"+hookSecret, "application/xml", strings.NewReader(`<?xml version="1.0"?><call><phone>+19175550332</phone></call>`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("other XML: answered %d, want 400", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
