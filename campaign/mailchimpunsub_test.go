package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMailchimpUnsubscribedExport: Mailchimp's audience export puts the
// people who unsubscribed in a file of their own, whose columns say when
// and why (UNSUB_TIME, UNSUB_REASON, ...). An unsubscribe that names no
// channel is a signal as "Unsubscribed" is: the sheet is refused until the
// campaign maps or ignores it, never called as it stands.
func TestMailchimpUnsubscribedExport(t *testing.T) {
	for _, h := range []string{"UNSUB_TIME", "UNSUB_REASON", "UNSUB_REASON_OTHER", "UNSUB_CAMPAIGN_TITLE", "UNSUB_CAMPAIGN_ID"} {
		if !doNotCallAboutHeader(h) || DoNotCallHeader(h) {
			t.Errorf("%q: about a flag %v, a flag %v; want the date or reason of an unsubscribe", h, doNotCallAboutHeader(h), DoNotCallHeader(h))
		}
	}
	body, err := os.ReadFile(filepath.Join("testdata", "crm", "unsubscribed_members_export_4f2a9c.csv"))
	if err != nil {
		t.Fatal(err)
	}
	sheet := strings.Replace(string(body), "Phone Number", "Phone", 1)
	f, err := dncCampaign(t, map[string]string{"unsubscribed.csv": sheet}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	err = sup.SignalProblems(f)
	if err == nil || !strings.Contains(err.Error(), `"UNSUB_TIME"`) || p.UnmappedDoNotCall == 0 {
		t.Fatalf("SignalProblems: %v (%d unmapped); want the campaign refused for UNSUB_TIME", err, p.UnmappedDoNotCall)
	}

	f, err = dncCampaign(t, map[string]string{"unsubscribed.csv": sheet}, "do_not_call: {column: UNSUB_TIME}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup = signalPlan(t, f)
	if got := rowStatuses(t, f, sup); len(got) != 2 || got[0] != Suppressed || got[1] != Suppressed {
		t.Errorf("mapped: statuses %v; want both unsubscribed rows suppressed", got)
	}
}
