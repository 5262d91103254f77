package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunPressureOnePersonSpeltApart: contact pressure counts a number,
// however each campaign's sheet writes it. Campaign A calls a New York
// number written nationally in a US sheet; an hour later campaign B's UK
// sheet writes it with the international prefix 00, campaign C's US
// sheet in E.164 with dashes, and campaign D's with an extension (which
// is no number to call): none of them calls it. The sandbox's ledger
// holds one call.
func TestRunPressureOnePersonSpeltApart(t *testing.T) {
	clock := &dtClock{now: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	base := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(1)})
	home := t.TempDir()
	env := func(name, region, cell string) *dtEnv {
		yaml := strings.Replace(dtCampaign(1000, 2, "countries: [US, GB]\n"), "name: dispatch-test", "name: "+name, 1)
		yaml = strings.Replace(yaml, "region: US", "region: "+region, 1)
		e := dtPrepare(t, base.srv, base.client, t.TempDir(), yaml, map[string]string{"leads.csv": "Phone,First Name\n\"" + cell + "\",Pat\n"})
		e.pressure = &store.Pressure{Limits: store.DefaultPressure, Starts: store.OpenCallStartsFile(home), Campaign: name, Now: clock.Now}
		return e
	}
	run := func(e *dtEnv) *RunResult {
		return e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	}
	if res := run(env("a", "US", "(212) 201-0000")); res.Sent != 1 {
		t.Fatalf("campaign A: %+v; want the number called", res)
	}
	clock.mu.Lock()
	clock.now = clock.now.Add(time.Hour)
	clock.mu.Unlock()
	for _, c := range []struct{ name, region, cell string }{
		{"b", "GB", "00 1 212 201 0000"},
		{"c", "US", "+1-212-201-0000"},
		{"d", "US", "+1 212 201 0000 ext. 12"},
	} {
		before := len(base.srv.Calls())
		res := run(env(c.name, c.region, c.cell))
		if res.Sent != 0 || len(base.srv.Calls()) != before {
			t.Errorf("campaign %s, %q in a %s sheet, an hour after A: %+v, %d new call(s) in the ledger; want none", c.name, c.cell, c.region, res, len(base.srv.Calls())-before)
		}
	}
	if placed := dtPlaced(base.srv); len(placed) != 1 || placed[dtPhone(0)] != 1 {
		t.Errorf("ledger: %v; want %s placed once", placed, dtPhone(0))
	}
}
