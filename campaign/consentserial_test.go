package campaign

import (
	"strings"
	"testing"
)

// TestConsentExcelSerialDateSaysWhatItMayBe: Excel writes a date cell
// whose format is General to a CSV as its serial number (45678 for
// 2025-01-21). It is still no evidence of consent (the number could count
// anything), but "is neither a date nor a yes" left a user looking at a
// date in Excel puzzled; the reason now says what the number may be and
// how to save the column as dates.
func TestConsentExcelSerialDateSaysWhatItMayBe(t *testing.T) {
	for _, cell := range []string{"45678", "45678.5", "36526"} {
		got, why := ReadConsent(cell, "US", consentNow)
		if got != "" || !strings.Contains(why, "it may be a date as Excel stores it, a count of days: in Excel format the column as a date") {
			t.Errorf("ReadConsent(%q) = %q, %q", cell, got, why)
		}
	}
	for _, cell := range []string{"123", "4567890", "99999", "n/a", "12345"} {
		if _, why := ReadConsent(cell, "US", consentNow); strings.Contains(why, "Excel") {
			t.Errorf("ReadConsent(%q): %q names Excel's dates", cell, why)
		}
	}
}
