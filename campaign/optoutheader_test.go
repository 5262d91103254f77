package campaign

import (
	"strings"
	"testing"
)

// TestOptOutAloneIsASignal: an opt-out that names no channel ("Opt-Out",
// "Global Opt Out", "Marketing Opt-Out", Dynamics 365's GDPR opt-out) is
// a signal as "Opted Out" is, and so is Salesforce's "Don't Process"
// (the label of HasOptedOutProcessing); an opt-out of e-mail alone is
// not. A sheet whose Opt-Out column says true is refused until the
// campaign maps or ignores the column.
func TestOptOutAloneIsASignal(t *testing.T) {
	for _, h := range []string{"Opt Out", "Opt-Out", "OptOut", "Global Opt-Out", "Marketing Opt Out", "GDPR Opt-out", "msdyn_gdproptout",
		"Don't Process", "Do Not Process", "HasOptedOutProcessing", "Opted Out"} {
		if !DoNotCallHeader(h) {
			t.Errorf("DoNotCallHeader(%q) = false; want a do-not-call flag", h)
		}
	}
	for _, h := range []string{"Email Opt Out", "Opt Out Email", "Email Opt-Out Date", "unsubscribe_url", "Unsubscribe"} {
		if DoNotCallHeader(h) {
			t.Errorf("DoNotCallHeader(%q) = true; want none", h)
		}
	}
	for _, sheet := range []string{
		"Phone,First Name,Opt-Out\n+14155550101,Ada,false\n+14155550102,Bo,true\n",
	} {
		f, err := dncCampaign(t, map[string]string{"a.csv": sheet}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		_, sup := signalPlan(t, f)
		if err := sup.SignalProblems(f); err == nil || !strings.Contains(err.Error(), "(row 3:") {
			t.Errorf("%q: SignalProblems %v; want the campaign refused for row 3", sheet, err)
		}
	}
}
