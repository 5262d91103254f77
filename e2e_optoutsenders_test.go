package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// senderOptOuts are deliveries as the senders a team points at listen
// write them (text-message webhooks, voice agents' post-call webhooks,
// CRM records), each a person's "do not call me" that listen once
// answered 200 and lost, or put on another number than the person's.
// people must never be called after it (listed, or every run held);
// called are people the same delivery does not opt out, called once;
// listed, that its people are on the do-not-call list, not only held.
var senderOptOuts = []struct {
	name, ctype, body string
	people, called    []string
	listed            bool
}{
	// A CRM's contact whose own fields say do not call beside the array
	// of its phones, Close's contact
	// (https://developer.close.com/resources/contacts/: phones, each
	// {phone, phone_formatted, type}) in its webhook event
	// (https://developer.close.com/resources/webhooks/: event.data),
	// its custom field forwarded by name as a relay (Make, Zapier)
	// writes it. Each phone, a number and a type, read as a delivery of
	// its own, made the contact a wrapper of deliveries: its
	// do_not_call was dropped with it, both phones stored and
	// acknowledged, and both called.
	{"close-contact-phones-do-not-call", "application/json",
		`{"subscription_id":"whsub_1","event":{"id":"ev_1","date_created":"2026-11-29T20:00:00.000000","object_type":"contact","action":"updated","lead_id":"lead_1","data":{"id":"cont_1","lead_id":"lead_1","name":"Pat Doe","title":"","phones":[{"phone":"+19175550401","phone_formatted":"+1 917-555-0401","type":"office"},{"phone":"+19175550402","phone_formatted":"+1 917-555-0402","type":"mobile"}],"emails":[],"do_not_call":true},"changed_fields":["do_not_call"]}}`,
		[]string{"+19175550401", "+19175550402"}, nil, true},
}

// TestSenderOptOutsKeepThePeopleUncalled posts each of senderOptOuts to
// listen, answered 200, on a store of its own, then runs another
// campaign on that store with its people, its called and Ada: the
// sandbox's ledger must show no call to its people, and one to each of
// called.
func TestSenderOptOutsKeepThePeopleUncalled(t *testing.T) {
	const ada = "+14155550132"
	for _, s := range senderOptOuts {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			addr := freePort(t)
			srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
			t.Cleanup(srv.Close)
			newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, "files"))
			first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
				"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
			// The list's people are the first campaign's contacts, as the
			// deliveries' people were called by it.
			sheet := "Phone,First Name\n" + ada + ",Ada\n"
			for i, p := range s.people {
				sheet += fmt.Sprintf("%s,Person%d\n", p, i)
			}
			writeContacts(t, first, sheet)
			var logs e2eBuffer
			_, stop := startListenOn(t, &logs, addr, first)
			postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, s.ctype, s.body)
			if err := stop(); err != nil {
				t.Errorf("listen: %v", err)
			}
			if s.listed {
				on := onTheList(t, first)
				for _, p := range s.people {
					if !on[p] {
						t.Errorf("%s is not on the do-not-call list: %v", p, on)
					}
				}
			}
			other := newCampaign("other", "region: US\npressure: {off: true}\n")
			writeContacts(t, other, sheet)
			runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard) //nolint:errcheck // a run held by the opt-out fails
			for _, p := range s.people {
				if n := placedTo(srv, p); n != 0 {
					t.Errorf("%s was placed %d times, want none: they said do not call\nlisten:\n%s", p, n, logs.String())
				}
			}
			for _, p := range s.called {
				if n := placedTo(srv, p); n != 1 {
					t.Errorf("%s was placed %d times, want 1: the delivery is no opt-out\nlisten:\n%s", p, n, logs.String())
				}
			}
		})
	}
}
