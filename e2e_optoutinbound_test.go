package main

import (
	"context"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestOptOutOfAnInboundCallWithoutOwnNumbers: a delivery that says its
// call was inbound (Retell's and Twilio's direction "inbound", Telnyx's
// "incoming", Bland's inbound true) names the campaign's line as its
// to_number or to, and the person as its from_number or from, whether or
// not outcomes.own_numbers lists that line (a local-presence number it
// does not list, say). Pat calls the campaign's line +14155550177, which
// own_numbers does not list, and says "do not call me", once as Retell
// writes it and once as Twilio's status callback does; Quinn does the
// same as Bland writes it. Pat's and Quinn's numbers go on the list, the
// line does not, and a later run of another campaign on the store with
// Pat, Quinn and the line places no call to Pat or Quinn: checked in the
// sandbox's ledger.
func TestOptOutOfAnInboundCallWithoutOwnNumbers(t *testing.T) {
	const line, pat, quinn, ada = "+14155550177", "+19175550263", "+19175550264", "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, "files"))
	first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
		"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	hook := "http://" + addr + "/callrun/first/" + hookSecret
	postDelivery200(t, hook, "application/json",
		`{"event":"call_ended","call":{"call_id":"in-1","direction":"inbound","from_number":"`+pat+`","to_number":"`+line+`","disposition":"do_not_call"}}`)
	postDelivery200(t, hook, "application/x-www-form-urlencoded",
		url.Values{"CallSid": {"CA1"}, "CallStatus": {"completed"}, "Direction": {"inbound"}, "From": {pat}, "To": {line}, "disposition": {"do_not_call"}}.Encode())
	postDelivery200(t, hook, "application/json",
		`{"call_id":"bl-1","inbound":true,"to":"`+line+`","from":"`+quinn+`","status":"completed","disposition":"do_not_call"}`)
	if on := onTheList(t, first); !on[pat] || !on[quinn] || on[line] || len(on) != 2 {
		t.Errorf("the do-not-call list holds %v, want Pat's %s and Quinn's %s alone (not the campaign's line %s)", on, pat, quinn, line)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	other := newCampaign("other", "region: US\n")
	writeContacts(t, other, "Phone,First Name\n"+ada+",Ada\n"+pat+",Pat\n"+quinn+",Quinn\n")
	if err := runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard); err != nil {
		t.Fatalf("the other campaign: %v\nlisten:\n%s", err, logs.String())
	}
	if n, m := placedTo(srv, pat), placedTo(srv, quinn); n != 0 || m != 0 {
		t.Errorf("Pat was placed %d times and Quinn %d, want none: each said do not call", n, m)
	}
	if n := placedTo(srv, ada); n != 1 {
		t.Errorf("Ada was placed %d times, want 1", n)
	}
}
