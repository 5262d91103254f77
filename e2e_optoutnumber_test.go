package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestOptOutByCallIDListsTheContactsNumber: an opt-out that names a call
// callrun placed is that call's contact's, whatever number its fields
// read as. Maria's contact is +52 55 1234 5678 (the campaign's region is
// US, its countries US, GB, MX and FR); the service reports her opt-out
// with her call's id and her national number, which the campaign's
// region reads as a valid New Jersey number. Her number goes on the
// store's do-not-call list, the New Jersey one does not (listen warns of
// it), and a later run of another campaign on the store, with contact
// pressure off, places no call to her: checked in the sandbox's ledger,
// with files and with PostgreSQL.
func TestOptOutByCallIDListsTheContactsNumber(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testOptOutByCallID(t, kind) })
	}
}

func testOptOutByCallID(t *testing.T, kind string) {
	const maria, jersey = "+525512345678", "+15512345678"
	const ada = "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	sheet := "Phone,First Name\n+14155550132,Ada\n+52 55 1234 5678,Maria\n"
	countries := "region: US\ncountries: [US, GB, MX, FR]\n"
	first := newCampaign("first", countries+"outcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
	writeContacts(t, first, sheet)
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	if err := runCampaign(ctx, nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	callID := callIDTo(srv, maria)
	if callID == "" || placedTo(srv, maria) != 1 || placedTo(srv, ada) != 1 {
		t.Fatalf("the first campaign placed Maria %d times (call id %q) and Ada %d, want each once", placedTo(srv, maria), callID, placedTo(srv, ada))
	}

	// Her opt-out, with her call's id and her number without its country
	// code.
	postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, "application/x-www-form-urlencoded",
		url.Values{"event": {"call.ended"}, "call_id": {callID}, "phone_number": {"55 1234 5678"}, "disposition": {"do_not_call"}}.Encode())
	on := onTheList(t, first)
	if !on[maria] || on[jersey] || len(on) != 1 {
		t.Errorf("the do-not-call list holds %v, want Maria's %s alone (not %s, her national number read in the US)", on, maria, jersey)
	}
	if l := logs.String(); !strings.Contains(l, `"level":"warn"`) || !strings.Contains(l, `"not_listed":"`+jersey+`"`) || !strings.Contains(l, `"listed":"`+maria+`"`) {
		t.Errorf("listen did not warn of the number it did not list; its log:\n%s", l)
	}
	if code, out := runAppOut(t, "outcomes", "--format", "json", first); code != 0 || !strings.Contains(out, `"matched-by-call-id"`) {
		t.Errorf("outcomes: exit %d, want the opt-out matched to Maria by its call id:\n%s", code, out)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	// Another campaign on the store, with the same people and no contact
	// pressure: only the list keeps Maria from being called again.
	other := newCampaign("other", countries+"pressure: {off: true}\n")
	writeContacts(t, other, sheet)
	if err := runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard); err != nil {
		t.Fatalf("the other campaign: %v", err)
	}
	if n := placedTo(srv, maria); n != 1 {
		t.Errorf("Maria was placed %d times, want the first campaign's one: she said do not call", n)
	}
	if n := placedTo(srv, ada); n != 2 {
		t.Errorf("Ada was placed %d times, want 2: the other campaign calls who did not opt out", n)
	}
	if r := readReportRows(t, filepath.Join(filepath.Dir(other), ".callrun", "other", "report.csv"))[maria]; r["status"] != "suppressed" {
		t.Errorf("the other campaign's row of Maria: %v, want suppressed (on the do-not-call list)", r)
	}
}

// TestOptOutOfAnInboundCallListsTheCaller: a number of the campaign's
// own (outcomes.own_numbers) is never listed, whatever field holds it.
// Pat calls callrun's number +14155550100 and says "do not call me"; a
// Retell-style delivery of the inbound call gives callrun's number as
// to_number and Pat's as from_number. Pat's number goes on the list,
// callrun's own does not; nothing is held; and a later run of another
// campaign on the store that has Pat places no call to Pat: checked in
// the sandbox's ledger, with files and with PostgreSQL.
func TestOptOutOfAnInboundCallListsTheCaller(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testOptOutOfAnInboundCall(t, kind) })
	}
}

func testOptOutOfAnInboundCall(t *testing.T, kind string) {
	const own, pat, ada = "+14155550100", "+19175550263", "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, kind))
	first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
		"\n  opt_out: {field: disposition, values: [do_not_call]}\n  own_numbers: [\""+own+"\"]\n")
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, "application/json",
		`{"event":"call_ended","call":{"call_id":"in-1","direction":"inbound","from_number":"`+pat+`","to_number":"`+own+`","disposition":"do_not_call"}}`)
	if on := onTheList(t, first); !on[pat] || on[own] || len(on) != 1 {
		t.Errorf("the do-not-call list holds %v, want Pat's %s alone (not callrun's own %s)", on, pat, own)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	// Another campaign on the store that has Pat and Ada: it runs (no
	// opt-out is held) and calls Ada alone.
	other := newCampaign("other", "region: US\n")
	writeContacts(t, other, "Phone,First Name\n"+ada+",Ada\n(917) 555-0263,Pat\n")
	if err := runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard); err != nil {
		t.Fatalf("the other campaign: %v\nlisten:\n%s", err, logs.String())
	}
	if n := placedTo(srv, pat); n != 0 {
		t.Errorf("Pat was placed %d times, want none: Pat said do not call", n)
	}
	if n := placedTo(srv, ada); n != 1 {
		t.Errorf("Ada was placed %d times, want 1: the other campaign calls who did not opt out", n)
	}
	if r := readReportRows(t, filepath.Join(filepath.Dir(other), ".callrun", "other", "report.csv"))[pat]; r["status"] != "suppressed" {
		t.Errorf("the other campaign's row of Pat: %v, want suppressed (on the do-not-call list)", r)
	}
}

// writeContacts replaces the contacts.csv beside the campaign at path.
func writeContacts(t *testing.T, path, sheet string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "contacts.csv"), []byte(sheet), 0o644); err != nil {
		t.Fatal(err)
	}
}

// placedTo counts the calls the sandbox placed to number.
func placedTo(srv *sandbox.Server, number string) int {
	n := 0
	for _, c := range srv.Placed() {
		if c.Form.Get("phone_number") == number {
			n++
		}
	}
	return n
}

// callIDTo returns the call id the sandbox gave the last call placed to
// number, "" when none was.
func callIDTo(srv *sandbox.Server, number string) string {
	id := ""
	for _, c := range srv.Placed() {
		if c.Form.Get("phone_number") == number {
			id = c.CallID
		}
	}
	return id
}

// postDelivery200 posts body to a listen's hook and wants it answered 200.
func postDelivery200(t *testing.T, hook, ctype, body string) {
	t.Helper()
	resp, err := http.Post(hook, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the opt-out was answered %d", resp.StatusCode)
	}
}

// onTheList returns the numbers on the do-not-call list of the campaign
// at path's store, as `callrun suppress list` says.
func onTheList(t *testing.T, path string) map[string]bool {
	t.Helper()
	code, out := runAppOut(t, "suppress", "list", "--format", "json", path)
	var es []store.DoNotCallEntry
	if err := json.Unmarshal([]byte(out), &es); code != 0 || err != nil {
		t.Fatalf("suppress list: exit %d, %v\n%s", code, err, out)
	}
	on := map[string]bool{}
	for n := range store.OnDoNotCall(es) {
		on[n] = true
	}
	return on
}
