package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestConsentRefusedHoldsForTheNumber is the promise of a refusal of
// consent, checked against the sandbox's ledger: a consent cell that
// says the person refused to be called is a sign not to call them, read
// as a withdrawal is, whether or not the campaign requires consent. The
// campaign maps its consent column without required. Number X is in
// row 2 with a date of consent and in row 6, written otherwise, whose
// cell is the Italian privacy form's refusal, "non acconsento"; Y's row
// 3 says "Consent - Denied", Zoho CRM's Data Processing Basis once the
// customer answered its consent form "stop processing" (Zoho CRM API
// v1, GDPR changes: https://www.zoho.com/jp/crm/developer/docs/api/api-v1-gdpr-changes.html,
// which lists Consent - Pending, Awaiting, Obtained, Not Responded and
// Denied).
// Before, both were read as no evidence only and called (2 calls); now
// neither is (0), both go on the store's do-not-call list as refused,
// and a second campaign on the store that maps no consent does not call
// X. A consent not given yet ("Consent - Not Responded", "Pending") and
// an empty cell stay no evidence: those rows are called, as any row
// without consent is when it is not required.
func TestConsentRefusedHoldsForTheNumber(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(8)
	x, y := phones[0], phones[1]
	home := filepath.Join(t.TempDir(), "callrun-home")

	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:5], perSecond: 50, concurrency: 2})
	a.rename("consent-refused")
	a.env = append(a.env, "CALLRUN_HOME="+home)
	xAgain := e2eContact{Raw: x.E164, E164: x.E164, First: x.First, ID: "X-AGAIN"}
	a.contacts = []e2eContact{x, y, phones[2], phones[3], xAgain, phones[4]}
	a.writeSheetWithColumn("Consent", []string{"2024-01-02", "Consent - Denied", "Consent - Not Responded", "", "non acconsento", "Pending"})
	a.appendYAML("consent: {column: Consent}\n")

	p := a.plan()
	if p.Totals.Suppressed != 3 || p.Totals.DoNotCallFlag != 3 || p.Totals.Invalid != 0 || p.Totals.ToCall != 3 {
		t.Errorf("plan: %+v; want the rows of X and Y suppressed for the refusals (3), the 3 others to call", p.Totals)
	}
	if res := a.run(60*time.Second, "run", a.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[x.E164] != 0 || got[y.E164] != 0 {
		t.Errorf("the sandbox's ledger after the campaign: %v; want %s and %s, who refused consent, never called", got, x.E164, y.E164)
	}
	if got[phones[2].E164] != 1 || got[phones[3].E164] != 1 || got[phones[4].E164] != 1 || len(got) != 3 {
		t.Errorf("the sandbox's ledger after the campaign: %v; want the rows without evidence but no refusal called once each", got)
	}
	rows := a.report()
	if r := rows[0]; r["status"] != "suppressed" || !strings.Contains(r["reason"], `consent to be called was refused in sheet contacts.csv, row 6 (consent column "Consent" says "non acconsento")`) {
		t.Errorf("report row %s: %s, %q; want suppressed for the refusal in row 6", r["row"], r["status"], r["reason"])
	}
	if r := rows[1]; r["status"] != "suppressed" || !strings.Contains(r["reason"], `consent column "Consent" says "Consent - Denied": the contact refused consent to be called`) {
		t.Errorf("report row %s: %s, %q; want suppressed for its refusal", r["row"], r["status"], r["reason"])
	}
	es := a.dncList(false)
	sources := map[string]string{}
	for _, e := range es {
		sources[e.Number] = e.Source
	}
	if len(es) != 2 || !strings.Contains(sources[x.E164], `consent refused: consent column "Consent" of campaign consent-refused says "non acconsento"`) ||
		!strings.Contains(sources[y.E164], `says "Consent - Denied"`) {
		t.Errorf("the store's do-not-call list after the run: %+v; want %s and %s, each from its refusal", es, x.E164, y.E164)
	}

	// Another campaign on the store: it maps no consent column.
	checkListHoldsElsewhere(t, srv, "no-consent", []e2eContact{phones[5], x, phones[6]}, "", home)
}
