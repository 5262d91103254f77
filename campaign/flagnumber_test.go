package campaign

import (
	"slices"
	"testing"
)

// TestFlaggedRowHoldsWorkNumber: exports that name a person's lines
// "Work Number", "Home Number" and "Mobile Number" (Freshsales, phone
// systems) give a flagged row's other numbers under those headers: each
// is held, while a "Business Number" (a company's registration number)
// is not taken for a phone line.
func TestFlaggedRowHoldsWorkNumber(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nEd,(415) 555-0120\n",
		"b.csv": "Name,Phone,Work Number,Home Number,Other Number,Business Number,Do not disturb\n" +
			"Cy Bell,+1 650 555 0178,,,,,false\n" +
			"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0120,true\n",
	}
	f := loadFlagPhones(t, flagPhonesCampaign(`{column: "Do not disturb"}`), sheets)
	_, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	want := []string{Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v (a.csv's Ben held at his work, home and other numbers)", got, want)
	}
	for h, want := range map[string]bool{"Work Number": true, "Mobile No.": true, "Home Number 2": true, "Business Number": false, "Car Number": false, "Account Number": false, "Number": false} {
		if personsLineHeader(h) != want {
			t.Errorf("personsLineHeader(%q) = %v, want %v", h, !want, want)
		}
	}
}
