package main

import (
	"context"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestRegFConversationByCallID: a conversation whose delivery names a
// call callrun placed is that call's contact's, whatever number its
// fields read as, as an opt-out's is. Maria's contact is +52 55 1234 5678
// (the campaign's region is US); the service reports her call answered
// with her call's id and her national number, which the region reads as
// a New Jersey number, or with her call's id and no number at all. Three
// days later (past the 24-hour limit, inside Reg F's 7 days) another
// campaign with `preset: reg_f` has her: it places no call to her,
// checked in the sandbox's ledger, with files and with PostgreSQL.
func TestRegFConversationByCallID(t *testing.T) {
	for _, kind := range e2eStores {
		for _, tc := range []struct{ name, number string }{{"national", "55 1234 5678"}, {"none", ""}} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) { testRegFConversationByCallID(t, kind, tc.number) })
		}
	}
}

func testRegFConversationByCallID(t *testing.T, kind, number string) {
	const maria = "+525512345678"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	sheet := "Phone,First Name\n+52 55 1234 5678,Maria\n"
	countries := "region: US\ncountries: [US, MX]\n"
	first := newCampaign("first", countries+"pressure: {preset: reg_f}\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+"\n")
	writeContacts(t, first, sheet)
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	if err := runCampaign(ctx, nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	callID := callIDTo(srv, maria)
	if callID == "" || placedTo(srv, maria) != 1 {
		t.Fatalf("the first campaign placed Maria %d times (call id %q), want once", placedTo(srv, maria), callID)
	}
	form := url.Values{"event": {"call.answered"}, "call_id": {callID}}
	if number != "" {
		form.Set("phone_number", number)
	}
	postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, "application/x-www-form-urlencoded", form.Encode())
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	later := func() time.Time { return time.Now().Add(3 * 24 * time.Hour) }
	other := newCampaign("other", countries+"pressure: {preset: reg_f}\n")
	writeContacts(t, other, sheet)
	_ = runCampaign(ctx, nolog, runOptions{Path: other, Now: later}, io.Discard) // exits 75 when Maria is held
	if n := placedTo(srv, maria); n != 1 {
		t.Errorf("Maria was placed %d times, want the first campaign's one: her call was answered 3 days before, and Reg F holds her 7\nlisten:\n%s", n, logs.String())
	}
}
