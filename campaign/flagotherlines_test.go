package campaign

import (
	"fmt"
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

// TestFlaggedRowHoldsBrevoSMS: Brevo's SMS attribute is its contact's
// mobile number ("To import the phone number of a contact you want to
// send SMS to, use the SMS attribute",
// https://help.brevo.com/hc/en-us/articles/208729849), so a Brevo row
// flagged do not call (SMS_BLACKLISTED true) holds the number in its SMS
// column too when the campaign calls the export's LANDLINE_NUMBER: a.csv's
// row with that mobile is not called, and the number is among those for
// the store's list. So it is when the first 64 rows leave the column
// empty. The sheet is testdata/exports/brevo.csv's shape (Brevo's
// attribute names, semicolons, blacklists as true or false). The other
// exports' columns of the person's own mobile already count: Mailchimp's
// and Klaviyo's "Phone Number", ActiveCampaign's and HighLevel's
// "Phone", HubSpot's "Mobile Phone Number", Brevo's WHATSAPP; a column
// about texts, or with another word, does not.
func TestFlaggedRowHoldsBrevoSMS(t *testing.T) {
	const header = "CONTACT ID;EMAIL;FIRSTNAME;LASTNAME;SMS;LANDLINE_NUMBER;WHATSAPP;DOUBLE_OPT-IN;OPT_IN;EMAIL_BLACKLISTED;SMS_BLACKLISTED;ADDED_TIME;MODIFIED_TIME\n"
	campaign := "name: brevo\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n" +
		"  - {file: a.csv, agent: A, fields: {phone_number: Phone}}\n" +
		"  - {file: b.csv, agent: A, fields: {phone_number: LANDLINE_NUMBER}, do_not_call: {column: SMS_BLACKLISTED}}\n" +
		"region: FR\nunsafe_ignore_called_person_hours: true\n"
	sheetA := "Name,Phone\nChloé,+33612345603\nAmélie,+33612345601\n"
	flagged := "1043;chloe.morel@example.fr;Chloé;Morel;+33612345603;+33123456703;;Yes;Yes;false;true;2025-03-05 10:12:33;2025-10-05 08:40:05\n"
	other := "1041;amelie.roux@example.fr;Amélie;Roux;+33612345601;+33123456701;;Yes;Yes;false;false;2025-03-03 10:12:33;2025-10-03 08:40:05\n"
	var empties strings.Builder
	for i := range 70 {
		fmt.Fprintf(&empties, "%d;p%d@example.fr;P;Q;;+331234%05d;;Yes;Yes;false;false;2025-03-03 10:12:33;2025-10-03 08:40:05\n", 2000+i, i, 10000+i)
	}
	for _, tc := range []struct {
		name, sheetB string
		want         []string
	}{
		{"SMS in the first rows", header + flagged + other, []string{Suppressed, ToCall, Suppressed, ToCall}},
		{"SMS empty in the first 64 rows", header + empties.String() + flagged + other,
			append(append([]string{Suppressed, ToCall}, slices.Repeat([]string{ToCall}, 70)...), Suppressed, ToCall)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFlagPhones(t, campaign, map[string]string{"a.csv": sheetA, "b.csv": tc.sheetB})
			_, sup := signalPlan(t, f)
			if got := rowStatuses(t, f, sup); !slices.Equal(got, tc.want) {
				t.Errorf("statuses %v, want %v (a.csv's Chloé held at her SMS number)", got, tc.want)
			}
			var listed []string
			for _, fl := range sup.Flagged() {
				listed = append(listed, fl.Number)
			}
			if !slices.Contains(listed, "+33612345603") || slices.Contains(listed, "+33612345601") {
				t.Errorf("numbers for the store's list %v; want Chloé's SMS number +33612345603, not Amélie's", listed)
			}
		})
	}
	for h, want := range map[string]bool{
		"SMS": true, "sms_number": true, "SMS Phone Number": true, "WHATSAPP": true, "LANDLINE_NUMBER": true,
		"Phone Number": true, "Phone": true, "Mobile Phone Number": true, "Mobile phone number": true,
		"SMS_BLACKLISTED": false, "SMS Consent": false, "SMS Opt In": false, "SMS Sender ID": false, "Last SMS": false, "SMS Status": false,
	} {
		if personsLineHeader(h) != want {
			t.Errorf("personsLineHeader(%q) = %v, want %v", h, !want, want)
		}
	}
}
