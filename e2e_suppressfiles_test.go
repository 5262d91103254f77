package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestDoNotCallFilesOfSeveralColumnsEndToEnd runs the binary against the
// sandbox with the do-not-call files people bring: a Salesforce
// do-not-call report with numbers under Phone and under Mobile (and
// Excel for Mac's line ends), the National Do Not Call Registry's
// download (area code, number; no header) and a state registry's (a
// header, the number written with a dash). Nobody listed in any column
// of any of them is called, whoever is only under Mobile included;
// everyone else is called once.
func TestDoNotCallFilesOfSeveralColumnsEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	contacts := e2ePhones(16)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 100, concurrency: 4})
	split := func(i int) (area, number string) { return contacts[i].E164[2:5], contacts[i].E164[5:] }

	listed := map[string]string{} // E.164 -> the file and column that list it
	sf := "\"Contact ID\",\"First Name\",\"Phone\",\"Mobile\",\"Do Not Call\"\r"
	row := func(id, name, phone, mobile string) {
		sf += fmt.Sprintf("%q,%q,%q,%q,\"1\"\r", id, name, phone, mobile)
	}
	row("0035g00000XyZ01AAB", contacts[0].First, contacts[0].Raw, "")
	listed[contacts[0].E164] = "sf-dnc.csv Phone"
	for _, i := range []int{1, 2} { // only under Mobile; the Phone is nobody's of the sheet
		row(fmt.Sprintf("0035g00000XyZ%02dAAB", i+1), contacts[i].First, fmt.Sprintf("(808) 555-01%02d", i), contacts[i].Raw)
		listed[contacts[i].E164] = "sf-dnc.csv Mobile"
	}
	row("0035g00000XyZ04AAB", contacts[3].First, contacts[3].Raw, "+1 808 555 0199")
	listed[contacts[3].E164] = "sf-dnc.csv Phone, beside a Mobile"
	sf += "\r\"Do Not Call Contacts\"\r\"Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.\"\r"

	var ftc strings.Builder
	for _, i := range []int{4, 5, 6} {
		area, number := split(i)
		fmt.Fprintf(&ftc, "%s,%s\r\n", area, number)
		listed[contacts[i].E164] = "ftc.txt, area code and number"
	}
	area, number := split(7)
	state := fmt.Sprintf("Area Code,Phone Number\n%s,%s-%s\n", area, number[:3], number[3:])
	listed[contacts[7].E164] = "state.csv, Area Code and Phone Number"

	writeFile(t, filepath.Join(e.dir, "sf-dnc.csv"), []byte(sf))
	writeFile(t, filepath.Join(e.dir, "ftc.txt"), []byte(ftc.String()))
	writeFile(t, filepath.Join(e.dir, "state.csv"), []byte(state))
	e.appendYAML("suppress: [sf-dnc.csv, ftc.txt, state.csv]\n")

	res := e.run(30*time.Second, "plan", "--offline", "--strict", e.path)
	if res.code != 0 {
		t.Fatalf("plan --strict: %s", res)
	}
	p := e.plan()
	if p.Totals.Suppressed != len(listed) || p.Totals.ToCall != len(contacts)-len(listed) {
		t.Errorf("plan: %+v, want %d suppressed and %d to call", p.Totals, len(listed), len(contacts)-len(listed))
	}
	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	for _, c := range contacts {
		if where, ok := listed[c.E164]; ok {
			if len(l.byPhone[c.E164]) > 0 {
				t.Errorf("%s, listed in %s, was CALLED (%d request(s))", c.E164, where, len(l.byPhone[c.E164]))
			}
		} else if l.placed[c.E164] != 1 {
			t.Errorf("%s, listed nowhere, was placed %d times, want once", c.E164, l.placed[c.E164])
		}
	}
	if n := l.totalPlaced(); n != len(contacts)-len(listed) {
		t.Errorf("the sandbox placed %d calls, want %d", n, len(contacts)-len(listed))
	}
}
