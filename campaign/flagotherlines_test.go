package campaign

import (
	"slices"
	"strings"
	"testing"
)

// TestFlaggedRowHoldsThePersonsOtherLines: a row flagged do not call
// holds the person's further numbers under the names exports give them,
// so that the person is not called at them from another sheet (a.csv):
// Outlook's and Dynamics 365's "Business Phone" (Close's "Phone
// (Office)"), a CRM's custom "Alternate Phone", "Secondary Phone", "Alt.
// Phone", "Additional Phone", and Freshsales' and phone systems' "Work
// Number", "Home Number", "Other Number". A company's lines ("Company
// Main Phone", "Company Phone") and a "Business Number" (a company's
// registration number) are not held: they may be another person's.
func TestFlaggedRowHoldsThePersonsOtherLines(t *testing.T) {
	for _, tc := range []struct {
		name, sheetA, sheetB, column string
		want                         []string
		listed                       string // numbers the store's list must hold
	}{
		{
			name:   "business and office phones",
			sheetA: "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nEd,(415) 555-0120\nEd,(415) 555-0121\n",
			sheetB: "Full Name,Phone,Business Phone,Business Phone 2,Phone (Office),Company Main Phone,Company Phone,Do not allow Phone Calls\n" +
				"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0120,(415) 555-0121,Do Not Allow\n" +
				"Cy Bell,+1 650 555 0178,,,,,,Allow\n",
			column: "Do not allow Phone Calls",
			want:   []string{Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed, ToCall},
			listed: "+14155550111 +14155550112 +14155550113",
		},
		{
			name:   "alternate phones, their first rows empty",
			sheetA: "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nBen,(415) 555-0114\nEd,(415) 555-0120\n",
			sheetB: "Name,Phone,Alternate Phone,Secondary Phone,Alt. Phone,Additional Phone,DoNotCall\n" +
				"Cy Bell,+1 650 555 0178,,,,,false\n" +
				"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0114,true\n",
			column: "DoNotCall",
			want:   []string{Suppressed, Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed},
		},
		{
			name:   "work, home and other numbers",
			sheetA: "Name,Phone\nBen,(415) 555-0111\nBen,(415) 555-0112\nBen,(415) 555-0113\nEd,(415) 555-0120\n",
			sheetB: "Name,Phone,Work Number,Home Number,Other Number,Business Number,Do not disturb\n" +
				"Cy Bell,+1 650 555 0178,,,,,false\n" +
				"Ben Ames,+1 650 555 0177,(415) 555-0111,(415) 555-0112,(415) 555-0113,(415) 555-0120,true\n",
			column: "Do not disturb",
			want:   []string{Suppressed, Suppressed, Suppressed, ToCall, ToCall, Suppressed},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFlagPhones(t, flagPhonesCampaign(`{column: "`+tc.column+`"}`), map[string]string{"a.csv": tc.sheetA, "b.csv": tc.sheetB})
			_, sup := signalPlan(t, f)
			if got := rowStatuses(t, f, sup); !slices.Equal(got, tc.want) {
				t.Errorf("statuses %v, want %v (a.csv's Ben held at his own further numbers, the company's called)", got, tc.want)
			}
			var listed []string
			for _, fl := range sup.Flagged() {
				listed = append(listed, fl.Number)
			}
			if !strings.Contains(strings.Join(listed, " "), tc.listed) {
				t.Errorf("numbers for the store's list %v; want them to hold %s", listed, tc.listed)
			}
		})
	}
	for h, want := range map[string]bool{
		"Alternate Phone": true, "Secondary Phone": true, "Alt. Phone": true, "Additional Phone": true, "Phone (Alternate)": true,
		"Backup Phone": true, "Second Phone": true, "Work Number": true, "Mobile No.": true, "Home Number 2": true,
		"Business Number": false, "Car Number": false, "Account Number": false, "Number": false,
	} {
		if personsLineHeader(h) != want {
			t.Errorf("personsLineHeader(%q) = %v, want %v", h, !want, want)
		}
	}
}
