package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// writeSpoolSheet writes contacts.csv as a CRM report has it, with what
// the sheet's reader reads besides plain rows: a byte order mark and a
// title block above the header, a quoted note over two lines, a row with
// more fields than the header, a later row that flags an earlier row's
// number do not call, and a footer. A "Do Not Call" cell says 1 on every
// fifth contact from the second, a "Consent Date" says revoked on every
// seventh from the fourth. It returns the numbers to call.
func (e *e2eCampaign) writeSpoolSheet() []string {
	e.t.Helper()
	var b strings.Builder
	b.WriteString("\ufeffLeads export\nAll leads\n\n")
	w := csv.NewWriter(&b)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email", "Do Not Call", "Consent Date", "Notes"})
	var want []string
	for i, c := range e.contacts {
		dnc, consent, note := "", "2024-03-05", "called before"
		if i%5 == 1 {
			dnc = "1"
		}
		if i%7 == 3 {
			consent = "revoked"
		}
		if i%3 == 0 {
			note = "asked for\nthe afternoon"
		}
		w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com", dnc, consent, note})
		if i == 4 {
			w.Write([]string{"X1", "Extra", "+12125550199", "x@example.com", "", "2024-03-05", "", "one", "two"})
		}
		if dnc == "" && consent != "revoked" && i != 0 {
			want = append(want, c.E164)
		}
	}
	c := e.contacts[0]
	w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com", "1", "2024-03-05", "the same person, flagged later"})
	w.Flush()
	b.WriteString("\nExported by the CRM\nPage 1 of 1\n")
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(want)
	return want
}

// TestRowSpoolCallsAsSheetEndToEnd runs the binary twice on the same
// sheet with a do-not-call and a consent column, against a sandbox each:
// once as it is, the contacts read from the rows the pass over those
// columns kept; once with TMPDIR a directory that is not there, where
// nothing can be kept and the sheet is parsed again. The calls the sandboxes
// received are the same, each a number whose row and later rows say
// neither do not call nor consent withdrawn, once.
func TestRowSpoolCallsAsSheetEndToEnd(t *testing.T) {
	contacts := e2ePhones(30)
	var got [2][]string
	var want []string
	for k, name := range []string{"kept", "parsed again"} {
		srv := sandbox.NewServer(sandbox.Options{})
		t.Cleanup(srv.Close)
		e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 100, concurrency: 4})
		want = e.writeSpoolSheet()
		e.appendYAML("do_not_call: {column: \"Do Not Call\"}\nconsent: {column: Consent Date, required: true}\n")
		if k == 1 {
			// A TMPDIR that is not there: no temporary file can be made,
			// root or not.
			e.env = append(e.env, "TMPDIR="+filepath.Join(t.TempDir(), "not-there"))
		}
		if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
			t.Fatalf("run, the rows %s: %s", name, res)
		}
		l := e.ledger()
		l.checkNobodyTwice(t)
		for phone, n := range l.placed {
			if n > 0 {
				got[k] = append(got[k], phone)
			}
		}
		slices.Sort(got[k])
		if !slices.Equal(got[k], want) {
			t.Errorf("the rows %s: the sandbox placed calls to %v,\nwant %v", name, got[k], want)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("the calls with the rows kept %v differ from those with the sheet parsed again %v", got[0], got[1])
	}
}
