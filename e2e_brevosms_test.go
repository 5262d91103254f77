package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// brevoFields is the fields: block of a campaign over a Brevo contacts
// export whose numbers to call are in column phone.
func brevoFields(phone string) string {
	return fmt.Sprintf("    fields:\n      phone_number: %s\n      first_name: FIRSTNAME\n      email: EMAIL\n      ghl_contact_id: CONTACT ID\n", phone)
}

// writeBrevoSheet writes contacts.csv as Brevo exports its contacts
// (testdata/exports/brevo.csv's shape: its attribute names, semicolons,
// the blacklists as true or false), one row each of rows: SMS,
// LANDLINE_NUMBER, SMS_BLACKLISTED. called is each row's number the
// campaign calls.
func (e *e2eCampaign) writeBrevoSheet(rows [][3]string, called []e2eContact) {
	e.t.Helper()
	var b strings.Builder
	b.WriteString("CONTACT ID;EMAIL;FIRSTNAME;LASTNAME;SMS;LANDLINE_NUMBER;WHATSAPP;DOUBLE_OPT-IN;OPT_IN;EMAIL_BLACKLISTED;SMS_BLACKLISTED;ADDED_TIME;MODIFIED_TIME\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "%d;p%d@example.fr;%s;Roux;%s;%s;;Yes;Yes;false;%s;2025-03-03 10:12:33;2025-10-03 08:40:05\n", 1041+i, i, called[i].First, r[0], r[1], r[2])
	}
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.contacts = called
}

// TestBrevoSMSIsThePersonsLine: Brevo's SMS attribute holds its
// contact's mobile number ("To import the phone number of a contact you
// want to send SMS to, use the SMS attribute",
// https://help.brevo.com/hc/en-us/articles/208729849). A campaign that
// calls a Brevo export's LANDLINE_NUMBER and maps SMS_BLACKLISTED as its
// do-not-call flag puts a flagged row's SMS number on the store's
// do-not-call list with its landline; a second campaign on the store that
// calls the export's SMS column does not call that person. Before, the
// SMS column was not read as one of the person's lines, and the second
// campaign called the flagged person's mobile (1 call; now 0).
func TestBrevoSMSIsThePersonsLine(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	home := filepath.Join(t.TempDir(), "callrun-home")
	phones := e2ePhones(6)
	mobile, landline := phones[0], phones[1] // the flagged person's
	otherMobile, otherLandline := phones[2], phones[3]
	mobile.First, landline.First = "Chloé", "Chloé"
	otherMobile.First, otherLandline.First = "Amélie", "Amélie"

	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:2], perSecond: 50, concurrency: 2})
	a.rename("brevo-landlines")
	a.env = append(a.env, "CALLRUN_HOME="+home)
	a.editYAML("    fields:\n      phone_number: Phone\n      first_name: First Name\n      email: Email\n      ghl_contact_id: Contact Id\n", brevoFields("LANDLINE_NUMBER"))
	a.appendYAML("do_not_call: {column: SMS_BLACKLISTED}\n")
	a.writeBrevoSheet([][3]string{{mobile.E164, landline.E164, "true"}, {otherMobile.E164, otherLandline.E164, "false"}}, []e2eContact{landline, otherLandline})
	if res := a.run(60*time.Second, "run", a.path); res.code != 0 {
		t.Fatalf("run of the landlines' campaign: %s", res)
	}
	if got := callsByNumber(srv.Calls()); got[landline.E164] != 0 || got[otherLandline.E164] != 1 || len(got) != 1 {
		t.Fatalf("the sandbox's ledger after the landlines' campaign: %v; want %s only, once", got, otherLandline.E164)
	}
	listed := map[string]string{}
	for _, e := range a.dncList(false) {
		listed[e.Number] = e.Source
	}
	if !strings.Contains(listed[mobile.E164], `the number in its column "SMS"`) || listed[landline.E164] == "" || len(listed) != 2 {
		t.Errorf("the store's do-not-call list after the landlines' campaign: %v; want %s (its SMS column) and %s", listed, mobile.E164, landline.E164)
	}

	// The second campaign calls the export's SMS numbers; its own sheet
	// does not flag the person.
	b := newE2ECampaign(t, srv, e2eSetup{contacts: phones[4:6], perSecond: 50, concurrency: 2})
	b.rename("brevo-mobiles")
	b.env = append(b.env, "CALLRUN_HOME="+home)
	b.editYAML("    fields:\n      phone_number: Phone\n      first_name: First Name\n      email: Email\n      ghl_contact_id: Contact Id\n", brevoFields("SMS"))
	b.writeBrevoSheet([][3]string{{mobile.E164, "", "false"}, {otherMobile.E164, "", "false"}}, []e2eContact{mobile, otherMobile})
	if res := b.run(60*time.Second, "run", b.path); res.code != 0 {
		t.Fatalf("run of the mobiles' campaign: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[mobile.E164] != 0 {
		t.Errorf("the sandbox's ledger after the mobiles' campaign: %v; want %s, the flagged person's SMS number, never called", got, mobile.E164)
	}
	if got[otherMobile.E164] != 1 || got[otherLandline.E164] != 1 || len(got) != 2 {
		t.Errorf("the sandbox's ledger after the mobiles' campaign: %v; want %s and %s once each", got, otherMobile.E164, otherLandline.E164)
	}
	if r := b.report()[0]; r["status"] != "suppressed" || !strings.Contains(r["reason"], "do-not-call list") {
		t.Errorf("the mobiles' campaign's report row of %s: %s, %q; want suppressed for the do-not-call list", mobile.E164, r["status"], r["reason"])
	}
}
