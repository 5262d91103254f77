package campaign

import (
	"slices"
	"testing"
)

// TestFlaggedRowHoldsAlternatePhone: a CRM's custom fields for a
// contact's further numbers ("Alternate Phone", "Secondary Phone", "Alt.
// Phone", "Additional Phone") are the person's own lines: a row flagged
// do not call holds them, as it holds its Other Phone, even where their
// first rows are empty.
func TestFlaggedRowHoldsAlternatePhone(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nBen,(415) 555-0114\nEd,(415) 555-0120\n",
		"b.csv": "Name,Phone,Alternate Phone,Secondary Phone,Alt. Phone,Additional Phone,DoNotCall\n" +
			"Cy Bell,+1 650 555 0178,,,,,false\n" +
			"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0114,true\n",
	}
	f := loadFlagPhones(t, flagPhonesCampaign(`{column: "DoNotCall"}`), sheets)
	_, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	want := []string{Suppressed, Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v (a.csv's Ben held at each of his further numbers)", got, want)
	}
	for _, h := range []string{"Alternate Phone", "Secondary Phone", "Alt. Phone", "Additional Phone", "Phone (Alternate)", "Backup Phone", "Second Phone"} {
		if !personsLineHeader(h) {
			t.Errorf("personsLineHeader(%q) = false; want the person's own line", h)
		}
	}
}
