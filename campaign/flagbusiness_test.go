package campaign

import (
	"slices"
	"strings"
	"testing"
)

// TestFlaggedRowHoldsBusinessPhone: Outlook's and Dynamics 365's contact
// exports call the person's own work line "Business Phone" (and "Business
// Phone 2"; Close's "Phone (Office)"), the company's "Company Main Phone"
// or "Company Phone". A row flagged do not call holds its Business Phone
// and Office Phone as it holds its Work Phone: the person who asked not
// to be called is not called at their desk from another sheet. The
// company's lines stay unheld, as they may be another person's.
func TestFlaggedRowHoldsBusinessPhone(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nEd,(415) 555-0120\nEd,(415) 555-0121\n",
		"b.csv": "Full Name,Phone,Business Phone,Business Phone 2,Phone (Office),Company Main Phone,Company Phone,Do not allow Phone Calls\n" +
			"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0120,(415) 555-0121,Do Not Allow\n" +
			"Cy Bell,+1 650 555 0178,,,,,,Allow\n",
	}
	f := loadFlagPhones(t, flagPhonesCampaign(`{column: "Do not allow Phone Calls"}`), sheets)
	_, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	want := []string{Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed, ToCall}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v (a.csv's Ben held at his Business Phone, Business Phone 2 and Office phone; the company's lines called)", got, want)
	}
	var listed []string
	for _, fl := range sup.Flagged() {
		listed = append(listed, fl.Number)
	}
	if w := "+14155550111 +14155550112 +14155550113"; !strings.Contains(strings.Join(listed, " "), w) {
		t.Errorf("numbers for the store's list %v; want them to hold %s", listed, w)
	}
}
