package campaign

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
)

// dtReadCSV reads a report.csv into one map per line, the header's line
// included (mapping each name to itself).
func dtReadCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs {
		m := map[string]string{}
		for i, name := range recs[0] {
			if i < len(rec) {
				m[name] = rec[i]
			}
		}
		out = append(out, m)
	}
	return out
}

const goldenCampaign = `name: golden
agents:
  - name: Spring Promo
    prompt: Offer the spring promotion.
  - name: Held Agent
    prompt: Follow up on the spring promotion.
sheets:
  - file: leads.csv
    agent: Spring Promo
    fields:
      phone_number: Phone
      first_name: First Name
      last_name: Last Name
      email: Email
      ghl_contact_id: Contact Id
      local_presence_number: Local
  - file: followups.csv
    agent: Held Agent
    fields: {phone_number: Phone, first_name: First Name}
    set: {local_presence_number: "no"}
suppress: [dnc.csv]
region: US
dedupe: campaign
pace: {per_second: 1000, burst: 1, concurrency: 1}
`

// Rows 2 to 10 of leads.csv: uncertain (a 500 after placing), invalid
// phone, duplicate of row 2, suppressed, sent with a formula for a name,
// invalid e-mail, sent after Excel damage was repaired, invalid
// local_presence_number, sent with more formula-looking cells.
const goldenLeads = "Contact Id,First Name,Last Name,Phone,Email,Local\r\n" +
	"c-01,Ada,Lovelace,+12125550101,ada@example.com,yes\r\n" +
	"c-02,Grace,Hopper,12345,grace@example.com,no\r\n" +
	"c-03,Alan,Turing,(212) 555-0101,alan@example.com,\r\n" +
	"c-04,Katherine,Johnson,+1 212 555 0104,kj@example.com,n\r\n" +
	"c-05,\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",Hacker,+12125550105,,\r\n" +
	"c-06,Edsger,Dijkstra,+12125550106,not-an-email,\r\n" +
	"c-07,Barbara,Liskov,1.2125550107E+10,bl@example.com,TRUE\r\n" +
	"c-08,Donald,Knuth,+12125550108,dk@example.com,maybe\r\n" +
	"c-09,@Frances,-Allen,+12125550109,,\r\n"

// followups.csv goes to an agent that the service refuses calls for
// (409): failed, a duplicate of leads.csv row 6, and one left pending
// after 503s.
const goldenFollowups = "Phone,First Name\n" +
	"+13105550201,Margaret\n" +
	"212-555-0105,Dup across sheets\n" +
	"+13105550202,Linus\n"

// TestReportGolden runs a small campaign in three deterministic runs (one
// worker, fixed clocks, fixed agent ids) that leave every status a report
// row can have, then compares report.csv, summary.json and the printed
// summary with golden files:
//
//  1. a 500 after placing, limit 1: the first contact is uncertain;
//  2. only 503s, two attempts each: the rest are pending;
//  3. no faults, the second agent refusing calls (409), limit 4: three
//     sent, one failed, the last contact left pending.
func TestReportGolden(t *testing.T) {
	srv, client := dtSandbox(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentID: "agent_spring", AgentName: "Spring Promo", GeneralPrompt: "Offer the spring promotion."})
	srv.AddAgent(sandbox.Agent{AgentID: "agent_held", AgentName: "Held Agent", GeneralPrompt: "Follow up on the spring promotion."})
	e := dtPrepare(t, srv, client, t.TempDir(), goldenCampaign, map[string]string{
		"leads.csv": goldenLeads, "followups.csv": goldenFollowups, "dnc.csv": "Number\n(212) 555-0104\n",
	})
	at := func(min int) func() time.Time {
		// 12:xx in New York, 09:xx in Los Angeles: inside everyone's hours.
		return func() time.Time { return time.Date(2025, 3, 3, 17, min, 0, 0, time.UTC) }
	}

	// One worker (concurrency 1): the sandbox's call ids follow the
	// sheets' order, as the golden file has them.
	srv.SetFaults(sandbox.Faults{Share500: 1})
	if res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 1, at(0) }); res.Uncertain != 1 {
		t.Fatalf("run 1: %+v", res)
	}
	srv.SetFaults(sandbox.Faults{Share503: 1})
	if res := e.mustRun(func(o *RunOptions) {
		o.MaxAttempts, o.Now = 2, at(10)
		o.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() } // the Retry-After: 1
	}); res.Pending != 5 {
		t.Fatalf("run 2: %+v", res)
	}
	srv.SetFaults(sandbox.Faults{})
	srv.SetAgentStatus("agent_held", "pending")
	res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 4, at(20) })
	if res.Sent != 3 || res.Failed != 1 {
		t.Fatalf("run 3: %+v", res)
	}
	e.checkIntentBeforeSend(1)

	// As `callrun run` ends: the report from the journal just written.
	sum := &report.Summary{Campaign: e.f.Name, StartedAt: res.StartedAt, CallsThisRun: res.Started, Ending: report.EndLimit}
	sum.Finish(at(21)())
	st := e.state()
	if err := WriteReport(context.Background(), e.f, st, e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	csvData, err := os.ReadFile(filepath.Join(e.dir, ReportCSV))
	if err != nil {
		t.Fatal(err)
	}
	summary, err := os.ReadFile(filepath.Join(e.dir, SummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	// Golden files, rewritten with -update (golden_test.go).
	golden(t, t.Name()+".csv.golden", csvData)
	golden(t, t.Name()+".summary.golden", summary)
	golden(t, t.Name()+".text.golden", []byte(sum.Text()))

	// `callrun report` rebuilds the same report from the journal alone.
	// Its clock is the test's, as the run's was: a pending row's reason
	// names the hours as they stand when the report is written.
	again := t.TempDir()
	rebuild := &report.Summary{Campaign: e.f.Name, Ending: report.EndRebuilt}
	rebuild.Finish(at(21)())
	if err := WriteReport(context.Background(), e.f, e.state(), e.sup, nil, again, rebuild); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := os.ReadFile(filepath.Join(again, ReportCSV))
	if err != nil {
		t.Fatal(err)
	}
	if string(rebuilt) != string(csvData) {
		t.Errorf("the rebuilt report differs:\n%s\nfrom the run's:\n%s", rebuilt, csvData)
	}
}
