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

// TestReportNotInSheetsNoteOfARowSuppressedSince: a contact called whose
// row the CRM flags do not call after the call (the person asked so on
// it) is still in the sheet, as a suppressed row that shows no call:
// not_in_sheets counts it, as docs/report.md says, and the printed note
// must not say it is in no row of the sheets.
func TestReportNotInSheetsNoteOfARowSuppressedSince(t *testing.T) {
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
	flagged := strings.Replace(b.String(), ",Name 0,\n", ",Name 0,Yes\n", 1)
	dtWrite(t, filepath.Join(e.dir, "leads.csv"), flagged)
	e.reload()
	sum := &report.Summary{Campaign: e.f.Name}
	if err := WriteReport(context.Background(), e.f, e.state(), e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	if sum.NotInSheets != 1 {
		t.Errorf("not_in_sheets is %d, want 1: the row flagged since shows no call", sum.NotInSheets)
	}
	text := sum.Text()
	if strings.Contains(text, "in no row of the sheets") || !strings.Contains(text, "suppressed now") {
		t.Errorf("the note says the contact is in no row of the sheets, or not that its row may be suppressed now; it is in one, suppressed:\n%s", text)
	}
}
