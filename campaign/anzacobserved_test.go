package campaign

import (
	"testing"
	"time"
)

// TestAustralianRuleAnzacDayObserved: Anzac Day on a weekend is
// observed on the Monday after in the states (Western Australia and the
// ACT for a Saturday or a Sunday; the Northern Territory, Queensland and
// South Australia for a Sunday), as Christmas, Boxing Day, New Year's
// Day and Australia Day are: the docs say a national public holiday's
// observed day is kept, and a number does not say its state.
func TestAustralianRuleAnzacDayObserved(t *testing.T) {
	for _, tc := range []struct {
		zone string
		at   time.Time
	}{
		{"Australia/Perth", time.Date(2027, 4, 26, 10, 0, 0, 0, time.UTC)},    // 25 April 2027 is a Sunday
		{"Australia/Brisbane", time.Date(2027, 4, 26, 10, 0, 0, 0, time.UTC)}, // so is it there
		{"Australia/Perth", time.Date(2026, 4, 27, 10, 0, 0, 0, time.UTC)},    // 25 April 2026 is a Saturday
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		lt := time.Date(tc.at.Year(), tc.at.Month(), tc.at.Day(), 10, 0, 0, 0, loc)
		if australianRule(lt) {
			t.Errorf("%s: open on %s, the Monday Anzac Day is observed on", tc.zone, lt.Format("Mon 2 Jan 2006 15:04"))
		}
	}
	// A plain Monday stays open.
	if lt := time.Date(2027, 5, 3, 10, 0, 0, 0, time.UTC); !australianRule(lt) {
		t.Errorf("closed on %s, a plain Monday", lt.Format("Mon 2 Jan 2006"))
	}
}
