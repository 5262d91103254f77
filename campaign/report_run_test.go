package campaign

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// runReportSum is the summary `callrun run` finishes a run's report with:
// the run's facts, its end at.
func runReportSum(f *File, res *RunResult, ending string, at time.Time) *report.Summary {
	sum := &report.Summary{Campaign: f.Name, StartedAt: res.StartedAt, CallsThisRun: res.Started, Ending: ending}
	sum.Finish(at)
	return sum
}

// checkSameReport fails t unless the report files in got and want are
// the same: report.csv, report.html and summary.json byte for byte,
// report.xlsx cell for cell (a zip's bytes carry times).
func checkSameReport(t *testing.T, got, want string) {
	t.Helper()
	for _, name := range []string{ReportCSV, ReportHTML, SummaryJSON} {
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(g) != string(w) {
			t.Errorf("%s differs from WriteReport's:\n%s\nwant:\n%s", name, g, w)
		}
	}
	g, err := report.ReadXLSX(filepath.Join(got, ReportXLSX))
	if err != nil {
		t.Fatal(err)
	}
	w, err := report.ReadXLSX(filepath.Join(want, ReportXLSX))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(g, w, slices.Equal) {
		t.Errorf("%s differs from WriteReport's:\n%q\nwant:\n%q", ReportXLSX, g, w)
	}
}

// TestRunReportIsWriteReports: the report a run writes while it calls
// (StartReport, then Finish) is the report WriteReport writes from the
// journal once the run is over, after each of TestReportGolden's three
// runs, which leave every status a row can have: an uncertain contact,
// contacts pending after 503s and then sent, a failed one, one left by
// --limit, invalid, duplicate and suppressed rows.
func TestRunReportIsWriteReports(t *testing.T) {
	srv, client := dtSandbox(t, sandbox.Options{})
	srv.AddAgent(sandbox.Agent{AgentID: "agent_spring", AgentName: "Spring Promo", GeneralPrompt: "Offer the spring promotion."})
	srv.AddAgent(sandbox.Agent{AgentID: "agent_held", AgentName: "Held Agent", GeneralPrompt: "Follow up on the spring promotion."})
	e := dtPrepare(t, srv, client, t.TempDir(), goldenCampaign, map[string]string{
		"leads.csv": goldenLeads, "followups.csv": goldenFollowups, "dnc.csv": "Number\n(212) 555-0104\n",
	})
	at := func(min int) func() time.Time {
		return func() time.Time { return time.Date(2025, 3, 3, 17, min, 0, 0, time.UTC) }
	}
	stateDir := e.f.Path(e.f.StateDir)
	ending := ""
	end := time.Time{}
	e.report = func(*Report) {}
	e.finish = func(rep *Report, res *RunResult) error {
		if err := rep.Finish(context.Background(), runReportSum(e.f, res, ending, end)); err != nil {
			return err
		}
		// WriteReport from the journal the run leaves, with the same facts.
		want := t.TempDir()
		if err := WriteReport(context.Background(), e.f, rep.opts.State, e.sup, nil, want, runReportSum(e.f, res, ending, end)); err != nil {
			return err
		}
		checkSameReport(t, stateDir, want)
		return nil
	}

	srv.SetFaults(sandbox.Faults{Share500: 1})
	ending, end = report.EndLimit, at(1)()
	if res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 1, at(0) }); res.Uncertain != 1 {
		t.Fatalf("run 1: %+v", res)
	}
	srv.SetFaults(sandbox.Faults{Share503: 1})
	ending, end = report.EndComplete, at(11)()
	if res := e.mustRun(func(o *RunOptions) {
		o.MaxAttempts, o.Now = 2, at(10)
		o.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	}); res.Pending != 5 {
		t.Fatalf("run 2: %+v", res)
	}
	srv.SetFaults(sandbox.Faults{})
	srv.SetAgentStatus("agent_held", "pending")
	ending, end = report.EndLimit, at(21)()
	if res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 4, at(20) }); res.Sent != 3 || res.Failed != 1 {
		t.Fatalf("run 3: %+v", res)
	}
	// And once more with --retry-failed and --retry-uncertain: the failed
	// and the uncertain contact are sent again, so their rows wait.
	ending, end = report.EndComplete, at(31)()
	if res := e.mustRun(func(o *RunOptions) { o.RetryFailed, o.RetryUncertain, o.Now = true, true, at(30) }); res.Started < 2 {
		t.Fatalf("run 4: %+v", res)
	}
}

// TestRunReportIsWriteReportsDedupe is TestRunReportIsWriteReports under
// dedupe: agent and none, where the run and its report share the table
// of the numbers seen and a number repeated under one agent is a
// duplicate (agent) or a contact of its own (none): two runs, the first
// stopped by --limit (contacts left pending), the second with the other
// agent refusing calls (failed contacts). Each leaves the report
// WriteReport writes, which has the invalid, duplicate and suppressed
// rows too.
func TestRunReportIsWriteReportsDedupe(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		run1, run2 RunResult
	}{
		// leads.csv: rows 2, 6, 8 and 10 called, row 4 a duplicate of
		// row 2 under agent (a contact of its own, and called, under
		// none);
		// followups.csv's three rows, under the other agent, all called.
		{"agent", RunResult{Started: 2, Sent: 2}, RunResult{Started: 5, Sent: 2, Failed: 3}},
		{"none", RunResult{Started: 2, Sent: 2}, RunResult{Started: 6, Sent: 3, Failed: 3}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv, client := dtSandbox(t, sandbox.Options{})
			srv.AddAgent(sandbox.Agent{AgentID: "agent_spring", AgentName: "Spring Promo", GeneralPrompt: "Offer the spring promotion."})
			srv.AddAgent(sandbox.Agent{AgentID: "agent_held", AgentName: "Held Agent", GeneralPrompt: "Follow up on the spring promotion."})
			yaml := strings.Replace(goldenCampaign, "dedupe: campaign", "dedupe: "+tc.mode, 1)
			e := dtPrepare(t, srv, client, t.TempDir(), yaml, map[string]string{
				"leads.csv": goldenLeads, "followups.csv": goldenFollowups, "dnc.csv": "Number\n(212) 555-0104\n",
			})
			at := func(min int) func() time.Time {
				return func() time.Time { return time.Date(2025, 3, 3, 17, min, 0, 0, time.UTC) }
			}
			stateDir := e.f.Path(e.f.StateDir)
			ending, end := "", time.Time{}
			e.report = func(*Report) {}
			e.finish = func(rep *Report, res *RunResult) error {
				if err := rep.Finish(context.Background(), runReportSum(e.f, res, ending, end)); err != nil {
					return err
				}
				want := t.TempDir()
				if err := WriteReport(context.Background(), e.f, rep.opts.State, e.sup, nil, want, runReportSum(e.f, res, ending, end)); err != nil {
					return err
				}
				checkSameReport(t, stateDir, want)
				return nil
			}
			counts := func(r *RunResult) RunResult {
				return RunResult{Started: r.Started, Sent: r.Sent, Failed: r.Failed}
			}

			ending, end = report.EndLimit, at(1)()
			if res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 2, at(0) }); !reflect.DeepEqual(counts(res), tc.run1) {
				t.Fatalf("run 1: %+v, want %+v", res, tc.run1)
			}
			srv.SetAgentStatus("agent_held", "pending")
			ending, end = report.EndComplete, at(11)()
			if res := e.mustRun(func(o *RunOptions) { o.Now = at(10) }); !reflect.DeepEqual(counts(res), tc.run2) {
				t.Fatalf("run 2: %+v, want %+v", res, tc.run2)
			}
			got, err := os.ReadFile(filepath.Join(stateDir, ReportCSV))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{",invalid,", ",suppressed,", ",failed,"} {
				if !strings.Contains(string(got), want) {
					t.Errorf("report.csv has no %q row:\n%s", want, got)
				}
			}
			// Row 4, the second row of row 2's number under one agent.
			row4 := map[string]string{"agent": "duplicate", "none": "sent"}[tc.mode]
			if !strings.Contains(string(got), "\nleads.csv,4,+12125550101,alan@example.com,Alan,Turing,c-03,,,"+row4+",") {
				t.Errorf("report.csv: leads.csv row 4 is not %s:\n%s", row4, got)
			}
		})
	}
}

// heldCalls is a CallStarter that, before the call start of the number
// last, waits until ready says so (or a deadline passes).
type heldCalls struct {
	CallStarter
	last  string
	ready func() bool
	t     *testing.T
}

func (h heldCalls) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if v, _ := url.ParseQuery(form); v.Get("phone_number") == h.last {
		deadline := time.Now().Add(10 * time.Second)
		for !h.ready() {
			if time.Now().After(deadline) {
				h.t.Errorf("the report made no row before the last call started")
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	return h.CallStarter.StartCallForm(ctx, ep, form)
}

// TestRunReportRowsBeforeTheEnd: while a run calls, its report makes the
// rows of the contacts already settled: the last call does not start
// until every row before it is made (one worker, so each is settled by
// then), and the report is still WriteReport's.
func TestRunReportRowsBeforeTheEnd(t *testing.T) {
	const n = 40
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	var rep *Report
	e.report = func(r *Report) { rep = r }
	e.finish = func(r *Report, res *RunResult) error {
		if made := r.made.Load(); made < n-1 {
			t.Errorf("%d rows made before the run ended, want %d", made, n-1)
		}
		end := time.Now()
		if err := r.Finish(context.Background(), runReportSum(e.f, res, report.EndComplete, end)); err != nil {
			return err
		}
		want := t.TempDir()
		if err := WriteReport(context.Background(), e.f, r.opts.State, e.sup, nil, want, runReportSum(e.f, res, report.EndComplete, end)); err != nil {
			return err
		}
		checkSameReport(t, e.f.Path(e.f.StateDir), want)
		return nil
	}
	res := e.mustRun(func(o *RunOptions) {
		o.Calls = heldCalls{CallStarter: o.Calls, last: dtPhone(n - 1), t: t,
			ready: func() bool { return rep.made.Load() >= n-1 }}
	})
	if res.Sent != n {
		t.Fatalf("%+v", res)
	}
	if placed := len(e.srv.Placed()); placed != n {
		t.Errorf("%d calls placed, want %d", placed, n)
	}
}

// TestRunReportFailureLeavesTheCalls: a report that cannot be written
// (report.csv is a directory) fails Finish, after a run that called
// every contact once, as it would have without a report; the journal has
// them all sent.
func TestRunReportFailureLeavesTheCalls(t *testing.T) {
	const n = 30
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	stateDir := e.f.Path(e.f.StateDir)
	if err := os.MkdirAll(filepath.Join(stateDir, ReportCSV), 0o755); err != nil {
		t.Fatal(err)
	}
	var finishErr error
	e.report = func(*Report) {}
	e.finish = func(r *Report, res *RunResult) error {
		finishErr = r.Finish(context.Background(), runReportSum(e.f, res, report.EndComplete, time.Now()))
		return nil
	}
	if res := e.mustRun(nil); res.Sent != n {
		t.Fatalf("%+v", res)
	}
	if finishErr == nil {
		t.Fatal("Finish wrote a report over a directory")
	}
	if placed := len(e.srv.Placed()); placed != n {
		t.Errorf("%d calls placed, want %d", placed, n)
	}
	if c := e.state().Counts(); c[store.Sent] != n {
		t.Errorf("journal: %v, want %d sent", c, n)
	}
	temps, _ := filepath.Glob(filepath.Join(stateDir, ".report.*"))
	if len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}
