package campaign

import (
	"slices"
	"testing"
)

// TestConsentEmptyDates: a consent column exported from a database whose
// empty dates came out as the date its system counts from (Unix time 0,
// SQL Server's 1900-01-01) holds no consent: with consent required, such
// a row is invalid, never called.
func TestConsentEmptyDates(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Consent Date\n" +
		"+14155550101,2024-03-05 10:00:00\n" +
		"+14155550102,1970-01-01 00:00:00\n" +
		"+14155550103,12/31/1969 4:00 PM\n" +
		"+14155550104,1900-01-01 00:00:00.000\n"}
	f, err := dncCampaign(t, sheets, "consent: {column: Consent Date, required: true}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{ToCall, Invalid, Invalid, Invalid}) {
		t.Errorf("statuses %v; want only the row with a real date of consent called", got)
	}
}
