package campaign

import (
	"strings"
	"testing"
)

// TestConsentRefusedWithoutRequired: without consent.required, a
// refusal in the consent column ("Declined") or in the consent's status
// column ("Denied", as Google's and Zoho's consent statuses write it) is
// a sign the person must not be called, read as a withdrawal: the row
// and every other row with its number are suppressed, its reason saying
// the person refused, and the number is among those run puts on the
// store's do-not-call list (a status column's as a do-not-call column's
// flag). A consent not given yet ("Not Responded", "Pending") is no
// evidence: its row is called, consent not being required. A status
// callrun cannot read ("Maybe") holds its row, on no list, as today; a
// consent cell it cannot read ("Maybe") is no evidence, as today, and
// its row is called, consent not being required.
func TestConsentRefusedWithoutRequired(t *testing.T) {
	sheet := `First Name,Phone,Consent Date,Consent Status
Ada,+12125550101,2024-03-05,Granted
Bo,+12125550102,2024-03-05,Denied
Cy,+12125550102,2024-03-06,Granted
Di,+12125550103,,Not Responded
Ed,+12125550104,Declined,
Eve,+12125550104,2024-03-05,Granted
Fa,+12125550105,2024-03-05,Maybe
Gu,+12125550106,Maybe,Pending
`
	f := scopeCampaign(t, sheet, "consent: {column: Consent Date}\n")
	cs := scopeContacts(t, f, consentNow)
	for name, w := range map[string]struct{ status, reason string }{
		"Ada": {ToCall, ""},
		"Bo":  {Suppressed, `the consent's status column "Consent Status" says "Denied": the contact refused consent to be called`},
		"Cy":  {Suppressed, `consent to be called was refused in sheet s.csv, row 3 (consent column "Consent Status" says "Denied")`},
		"Di":  {ToCall, ""},
		"Ed":  {Suppressed, `consent column "Consent Date" says "Declined": the contact refused consent to be called`},
		"Eve": {Suppressed, `consent to be called was refused in sheet s.csv, row 6 (consent column "Consent Date" says "Declined")`},
		"Fa":  {Suppressed, `"Maybe"`},
		"Gu":  {ToCall, ""},
	} {
		c, ok := cs[name]
		if !ok {
			t.Errorf("no contact %s", name)
			continue
		}
		if c.Status != w.status || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("%s: %s, %q; want %s, a reason holding %q", name, c.Status, c.Reason, w.status, w.reason)
		}
	}
	sup, err := f.LoadSuppression(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, fl := range sup.Flagged() {
		listed[fl.Number] = true
	}
	if !listed["+12125550102"] || !listed["+12125550104"] || len(listed) != 2 {
		t.Errorf("numbers for the store's list %v; want the two refused, +12125550102 and +12125550104, only", listed)
	}
}
