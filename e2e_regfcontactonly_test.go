package main

import (
	"context"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestRegFHoldsAfterAContactOnlyDelivery: the service's account webhooks
// send the contact's form alone, no event, so a call.answered among them
// cannot be told apart. Reg F's hold fails closed: a contact-only delivery
// of Ada's call records a conversation, and another `reg_f` campaign on
// the store places no call to her three days later (past the 24-hour
// limit, inside the 7 days), counted in the sandbox's ledger, with files
// and with PostgreSQL. A call.started alone says nobody answered yet: it
// holds no one.
func TestRegFHoldsAfterAContactOnlyDelivery(t *testing.T) {
	for _, kind := range e2eStores {
		for _, tc := range []struct {
			name  string
			form  url.Values
			calls int // Ada's calls in the ledger after both campaigns
		}{
			{"contact-only", url.Values{"phone_number": {"+14155550132"}, "first_name": {"Ada"}}, 1},
			{"call.started", url.Values{"event": {"call.started"}, "phone_number": {"+14155550132"}}, 2},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) { testRegFHoldsAfter(t, kind, tc.form, tc.calls) })
		}
	}
}

func testRegFHoldsAfter(t *testing.T, kind string, form url.Values, calls int) {
	const ada = "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	// The agent's own completion would come after an hour: the test's
	// delivery is the only one.
	srv := sandbox.NewServer(sandbox.Options{CallDuration: time.Hour})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	sheet := "Phone,First Name\n+1 415 555 0132,Ada\n"
	first := newCampaign("first", "pressure: {preset: reg_f}\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+"\n")
	writeContacts(t, first, sheet)
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	if err := runCampaign(ctx, nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	if n := placedTo(srv, ada); n != 1 {
		t.Fatalf("the first campaign placed Ada %d times, want once", n)
	}
	postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, "application/x-www-form-urlencoded", form.Encode())
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	later := func() time.Time { return time.Now().Add(3 * 24 * time.Hour) }
	other := newCampaign("other", "pressure: {preset: reg_f}\n")
	writeContacts(t, other, sheet)
	_ = runCampaign(ctx, nolog, runOptions{Path: other, Now: later}, io.Discard) // exits 75 when Ada is held
	if n := placedTo(srv, ada); n != calls {
		t.Errorf("Ada was placed %d times, want %d\nlisten:\n%s", n, calls, logs.String())
	}
}
