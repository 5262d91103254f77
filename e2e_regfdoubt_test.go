package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestRegFHoldsBothNumbersOfADoubtfulConversation: a delivery of an
// answered call whose number field is sent twice with two numbers does
// not say whose the conversation was. Reg F's hold after a conversation
// must not be lost for it: both people stay uncalled for 7 days, as an
// opt-out in doubt keeps both uncalled. Before, the delivery recorded no
// conversation at all, and another campaign on the store called both.
func TestRegFHoldsBothNumbersOfADoubtfulConversation(t *testing.T) {
	const ada, p1, p2 = "+14155550132", "+19175550321", "+19175550322"
	for _, s := range []struct{ name, ctype, body string }{
		{"json-number-twice", "application/json",
			`{"event":"call.ended","phone_number":"` + p1 + `","phone_number":"` + p2 + `","duration":60}`},
		{"form-number-twice", "application/x-www-form-urlencoded",
			"event=call.ended&phone_number=%2B19175550321&phone_number=%2B19175550322&duration=60"},
	} {
		for _, kind := range e2eStores {
			t.Run(s.name+"/"+kind, func(t *testing.T) {
				ctx := context.Background()
				addr := freePort(t)
				srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
				t.Cleanup(srv.Close)
				newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
				first := newCampaign("first", "region: US\npressure: {preset: reg_f}\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+"\n")
				var logs e2eBuffer
				_, stop := startListenOn(t, &logs, addr, first)
				postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, s.ctype, s.body)
				if err := stop(); err != nil {
					t.Errorf("listen: %v", err)
				}
				other := newCampaign("other", "region: US\npressure: {preset: reg_f}\n")
				writeContacts(t, other, "Phone,First Name\n"+ada+",Ada\n"+p1+",One\n"+p2+",Two\n")
				runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard) //nolint:errcheck // held contacts leave the run waiting
				for _, p := range []string{p1, p2} {
					if n := placedTo(srv, p); n != 0 {
						t.Errorf("%s was placed %d times, want none: the conversation may have been theirs\nlisten:\n%s", p, n, logs.String())
					}
				}
				if n := placedTo(srv, ada); n != 1 {
					t.Errorf("Ada was placed %d times, want 1", n)
				}
			})
		}
	}
}
