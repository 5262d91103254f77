package campaign

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
)

// TestReportSaysCalledContactsGoneFromTheSheets: the report is written
// from the sheets as they are now. A re-export that dropped three of the
// five contacts called gave a report of two rows and "sent 2", as if the
// service had placed two calls, with nothing to say that the journal
// (and the service's ledger) holds five. The summary now says how many
// contacts the journal records as called that no row of the sheets
// shows.
func TestReportSaysCalledContactsGoneFromTheSheets(t *testing.T) {
	const n = 5
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.mustRun(nil)
	if placed := len(e.srv.Placed()); placed != n {
		t.Fatalf("test bug: %d calls placed", placed)
	}
	lines := strings.SplitAfter(dtSheet(n), "\n")
	dtWrite(t, filepath.Join(e.dir, "leads.csv"), strings.Join(lines[:3], "")) // the header and two rows
	e.reload()
	sum := &report.Summary{Campaign: e.f.Name}
	if err := WriteReport(context.Background(), e.f, e.state(), e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	if sum.Counts["sent"] != 2 {
		t.Fatalf("test bug: the report counts %v", sum.Counts)
	}
	if sum.NotInSheets != n-2 {
		t.Errorf("summary.json's not_in_sheets is %d; the journal holds %d contacts called that the sheets no longer show", sum.NotInSheets, n-2)
	}
	if text := sum.Text(); !strings.Contains(text, "3 contacts the journal holds a call start for") {
		t.Errorf("the printed summary does not say 3 contacts called are not in the sheets:\n%s", text)
	}
}
