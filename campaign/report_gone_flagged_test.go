package campaign

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
)

// TestReportNotInSheetsLeavesOutCalledRowsFlaggedSince: a contact called,
// whose row the CRM flags do not call after the call (the person asked
// so on it) and whose sheet is re-exported, is still in a row of the
// sheets: the summary must not say it is in none.
func TestReportNotInSheetsLeavesOutCalledRowsFlaggedSince(t *testing.T) {
	const n = 3
	yml := dtCampaign(1000, 2, "") + "do_not_call: {column: Do Not Call}\n"
	var b strings.Builder
	b.WriteString("Phone,First Name,Do Not Call\n")
	for i := range n {
		fmt.Fprintf(&b, "%s,Name %d,\n", dtPhone(i), i)
	}
	e := newDtEnv(t, sandbox.Options{}, yml, map[string]string{"leads.csv": b.String()})
	e.mustRun(nil)
	if placed := len(e.srv.Placed()); placed != n {
		t.Fatalf("test bug: %d calls placed", placed)
	}
	// The re-export: the first person is now flagged do not call.
	flagged := strings.Replace(b.String(), ",Name 0,\n", ",Name 0,Yes\n", 1)
	dtWrite(t, filepath.Join(e.dir, "leads.csv"), flagged)
	e.reload()
	sum := &report.Summary{Campaign: e.f.Name}
	if err := WriteReport(context.Background(), e.f, e.state(), e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	if sum.NotInSheets != 0 {
		t.Errorf("summary.json's not_in_sheets is %d, but every contact called is in a row of the sheet (one flagged since)\n%s", sum.NotInSheets, sum.Text())
	}
}
