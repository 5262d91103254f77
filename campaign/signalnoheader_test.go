package campaign

import (
	"strings"
	"testing"
)

// TestSignalColumnWithoutHeader: a column with no header whose cells say
// do not call (a mark typed beside the last column, as people do in
// Excel) stops the campaign with a problem that names the column by its
// letter and says to give it a header: never a mapping of the column ""
// that the campaign file would refuse.
func TestSignalColumnWithoutHeader(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,First Name,\n+14155550101,Ada,\n+14155550102,Bo,Do not call\n"}
	f, err := dncCampaign(t, sheets, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	err = sup.SignalProblems(f)
	if err == nil || !strings.Contains(err.Error(), "in column C, which has no header") || !strings.Contains(err.Error(), "give column C a header") ||
		strings.Contains(err.Error(), `column: ""`) {
		t.Errorf("SignalProblems: %v; want the column named C and a header asked for", err)
	}
}
