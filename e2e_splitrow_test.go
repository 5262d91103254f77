package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestSplitRowEndToEnd runs the binary over an export whose writer does
// not quote a note written on two lines, so that the line break splits
// the person's row in two, as the CSV exports of several programs do
// (github.com/derhansen/sf_event_mgt issue 639: "this line break will
// also be in the csv export and thus properties of this entry will be in
// the following line in wrong columns"; Glucosio/glucosio-android issue
// 383; OpenCTI-Platform/opencti issue 1462). Grace's row ends after
// "called twice"; the next line, "asked us to stop,Yes", holds the rest
// of her note and her Do Not Call cell. Read as two rows, hers said
// nothing of do not call (an empty cell is a no) and she was called, at
// her row and at the later row with her number (ledger: 1 call to her
// number). Now the rows that read as one split row saying do not call
// hold her number: no call to it (ledger 1 -> 0), the others called once,
// and the report names the two rows and the column to fix.
func TestSplitRowEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 4})
	c := e.contacts
	sheet := "Contact Id,First Name,Phone,Email,Notes,Do Not Call\r\n" +
		c[0].ID + "," + c[0].First + "," + c[0].Raw + ",a@example.com,ok,No\r\n" +
		c[1].ID + "," + c[1].First + "," + c[1].Raw + ",g@example.com,called twice\r\n" + // row 3, split
		"asked us to stop,Yes\r\n" + // row 4: the rest of row 3
		c[2].ID + "," + c[2].First + "," + c[2].Raw + ",k@example.com,,No\r\n" +
		"C-DUP,G. Hopper," + c[1].Raw + ",grace.h@example.com,,No\r\n" // row 6: her number again
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(sheet), 0o600); err != nil {
		t.Fatal(err)
	}
	e.appendYAML("do_not_call: {column: Do Not Call}\n")
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 && res.code != 1 {
		t.Fatalf("run: %s", res)
	}
	got := callsByNumber(srv.Calls())
	if got[c[1].E164] != 0 {
		t.Errorf("the sandbox received %d call start(s) to %s, whose row says do not call past a line break", got[c[1].E164], c[1].E164)
	}
	for _, k := range []int{0, 2} {
		if got[c[k].E164] != 1 {
			t.Errorf("the sandbox received %d call start(s) to %s; want 1", got[c[k].E164], c[k].E164)
		}
	}
	rows := e.reportRows()
	if len(rows) != 5 {
		t.Fatalf("report has %d rows; want 5", len(rows))
	}
	for _, k := range []int{1, 4} {
		if rows[k]["status"] != "suppressed" || !strings.Contains(rows[k]["reason"], `row 3, which may go on in row 4, split from it by a line break inside column "Notes"`) ||
			!strings.Contains(rows[k]["reason"], `column "Do Not Call" says "Yes"`) {
			t.Errorf("report row %s: %s, %q; want suppressed, naming rows 3 and 4 and the column", rows[k]["row"], rows[k]["status"], rows[k]["reason"])
		}
	}
	if rows[2]["status"] != "invalid" {
		t.Errorf("report row %s: %s, %q; want invalid (the rest of row 3)", rows[2]["row"], rows[2]["status"], rows[2]["reason"])
	}
}

// TestSplitRowOverSeveralLines: a note written in paragraphs splits the
// row over more than two lines when its writer does not quote it: a
// second line break ("called twice" / "then again" / "asked us to
// stop,Yes"), or a blank line between the paragraphs, which the CSV
// reader skips. Only a row split over exactly two adjacent lines was
// read as one, so Grace, whose Do Not Call cell says Yes on the third
// line, was called (ledger: 1 call to her number); now the lines read
// as one row hold her number (ledger 1 -> 0), and the others are called
// once.
func TestSplitRowOverSeveralLines(t *testing.T) {
	for name, split := range map[string]string{
		"two line breaks": "called twice\r\nthen again\r\nasked us to stop,Yes\r\n",
		"a blank line":    "called twice\r\n\r\nasked us to stop,Yes\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 4})
			c := e.contacts
			sheet := "Contact Id,First Name,Phone,Email,Notes,Do Not Call\r\n" +
				c[0].ID + "," + c[0].First + "," + c[0].Raw + ",a@example.com,ok,No\r\n" +
				c[1].ID + "," + c[1].First + "," + c[1].Raw + ",g@example.com," + split +
				c[2].ID + "," + c[2].First + "," + c[2].Raw + ",k@example.com,,No\r\n"
			if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(sheet), 0o600); err != nil {
				t.Fatal(err)
			}
			e.appendYAML("do_not_call: {column: Do Not Call}\n")
			if res := e.run(60*time.Second, "run", e.path); res.code != 0 && res.code != 1 {
				t.Fatalf("run: %s", res)
			}
			got := callsByNumber(srv.Calls())
			if got[c[1].E164] != 0 {
				t.Errorf("the sandbox received %d call start(s) to %s, whose row says do not call past its note's line breaks", got[c[1].E164], c[1].E164)
			}
			for _, k := range []int{0, 2} {
				if got[c[k].E164] != 1 {
					t.Errorf("the sandbox received %d call start(s) to %s; want 1", got[c[k].E164], c[k].E164)
				}
			}
			for _, row := range e.reportRows() {
				if row["row"] == "3" && (row["status"] != "suppressed" || !strings.Contains(row["reason"], `column "Do Not Call" says "Yes"`)) {
					t.Errorf("report row 3: %s, %q; want suppressed, naming the column", row["status"], row["reason"])
				}
			}
		})
	}
}
