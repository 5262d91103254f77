package main

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestServiceRedialCountsInPressure: a call the service places on its own
// (an agent's Enable Redial, "Redial After" 1-5 retries,
// https://docs.aisync.link/ai/manage-agent/call-handling; the shape of its
// call.started is testdata/webhooks/envelope-service-redial.2) counts in
// contact pressure once listen has its delivery. The first campaign calls
// Olivia once, its own call's call.started and call.ended reach listen
// (each with the call id callrun's start was answered with), and so do a
// call.started of a call id callrun never started (the service's redial)
// sent twice, as a retry, and that call's call.ended. A campaign with
// per_day 2 then does not call her (her first call and the redial are 2
// in 24 hours); one with per_day 3 does, once: callrun's own call, the
// retry and the redial's other delivery added no start. With files and
// with PostgreSQL, counted in the sandbox's ledger (before the fix the
// per_day 2 campaign called her: 2 calls placed after it, not 1).
func TestServiceRedialCountsInPressure(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testServiceRedial(t, kind) })
	}
}

func testServiceRedial(t *testing.T, kind string) {
	const olivia = "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	sheet := "Phone,First Name\n+1 415 555 0132,Olivia\n"
	hook := "http://" + addr + "/callrun/first/" + hookSecret
	first := newCampaign("first", "region: US\noutcomes:\n  url: "+hook+"\n")
	writeContacts(t, first, sheet)
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	if err := runCampaign(ctx, nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	own := callIDTo(srv, olivia)
	if own == "" || placedTo(srv, olivia) != 1 {
		t.Fatalf("the first campaign placed Olivia %d times (call id %q), want once", placedTo(srv, olivia), own)
	}
	post := func(event, callID string) {
		form := url.Values{"event": {event}, "call_id": {callID}, "phone_number": {olivia}}
		postDelivery200(t, hook, "application/x-www-form-urlencoded", form.Encode())
	}
	post("call.started", own)
	post("call.ended", own)
	post("call.started", "call_redial_9002")
	post("call.started", "call_redial_9002") // the service's retry of it
	post("call.ended", "call_redial_9002")
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	two := newCampaign("two", "region: US\npressure: {per_day: 2}\n")
	writeContacts(t, two, sheet)
	_ = runCampaign(ctx, nolog, runOptions{Path: two}, io.Discard) // exits 75 when Olivia is held
	if n := placedTo(srv, olivia); n != 1 {
		t.Errorf("after a campaign with per_day 2, Olivia was placed %d times, want the first campaign's one: the service redialled her, 2 calls in 24 hours\nlisten:\n%s", n, logs.String())
	}
	if code, out := runAppOut(t, "history", two, olivia); code != 0 || !strings.Contains(out, "the service's own call, call_redial_9002") || strings.Count(out, "service's own call") != 1 {
		t.Errorf("history (exit %d) does not show the redial once as the service's own call:\n%s", code, out)
	}
	three := newCampaign("three", "region: US\npressure: {per_day: 3}\n")
	writeContacts(t, three, sheet)
	if err := runCampaign(ctx, nolog, runOptions{Path: three}, io.Discard); err != nil {
		t.Errorf("the campaign with per_day 3: %v", err)
	}
	if n := placedTo(srv, olivia); n != 2 {
		t.Errorf("after a campaign with per_day 3, Olivia was placed %d times, want 2: callrun's own call, a retry of a delivery or a second delivery of the redial counted again\nlisten:\n%s", n, logs.String())
	}
}

// TestServiceDeliveryBeforeAnswer: the sandbox sends the account
// webhooks of callrun's own call to listen as it places it, so its
// call.started may reach listen before or after the call start's answer
// (its call id) reaches the journal; before, it is counted as the
// service's start and the call's outcome gives it back (report/store's
// TestServiceStarts makes that order certain; here it is whichever the
// machine gives). Either way a campaign with per_day 2 then calls the
// person: one call in 24 hours, not two. With files and with PostgreSQL,
// in the sandbox's ledger.
func TestServiceDeliveryBeforeAnswer(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testServiceDeliveryBeforeAnswer(t, kind) })
	}
}

func testServiceDeliveryBeforeAnswer(t *testing.T, kind string) {
	const olivia = "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	hook := "http://" + addr + "/callrun/first/" + hookSecret
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration:   10 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: hook, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond},
	})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	sheet := "Phone,First Name\n+1 415 555 0132,Olivia\n"
	first := newCampaign("first", "region: US\noutcomes:\n  url: "+hook+"\n")
	writeContacts(t, first, sheet)
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	if err := runCampaign(ctx, nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	waitFor(t, 30*time.Second, "the call's 3 deliveries acknowledged", func() bool {
		n := 0
		for _, d := range srv.Deliveries() {
			if d.Acked {
				n++
			}
		}
		return n >= 3
	})
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
	two := newCampaign("two", "region: US\npressure: {per_day: 2}\n")
	writeContacts(t, two, sheet)
	if err := runCampaign(ctx, nolog, runOptions{Path: two}, io.Discard); err != nil {
		t.Errorf("the campaign with per_day 2: %v", err)
	}
	if n := placedTo(srv, olivia); n != 2 {
		t.Errorf("Olivia was placed %d times, want 2: her first call counted once\nlisten:\n%s", n, logs.String())
	}
}
