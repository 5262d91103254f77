package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunReportAfterAJournalFailureSaysSent: the journal's fsync fails
// on a commit that holds the outcome of a call the service answered 200
// and the intent of the next contact. The journal is cut back and the
// outcome written again (it is true whatever becomes of the run), so the
// journal on disk says sent; but the run's own state never took that
// outcome in, and the report the run wrote marked the contact uncertain,
// for a person to check before --retry-uncertain. The run's report must
// say what its journal says.
func TestRunReportAfterAJournalFailureSaysSent(t *testing.T) {
	const n = 6
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	var syncs atomic.Int32
	e.beforeSync = func() error {
		if syncs.Add(1) >= 3 {
			return errors.New("no space left on device")
		}
		return nil
	}
	e.journalClosed.Store(true)
	stateDir := e.f.Path(e.f.StateDir)
	e.report = func(*Report) {}
	e.finish = func(rep *Report, res *RunResult) error {
		return rep.Finish(context.Background(), runReportSum(e.f, res, "stopped", res.StartedAt))
	}
	if _, err := e.run(context.Background(), nil); err == nil {
		t.Fatal("the run went on after its journal failed")
	}
	e.beforeSync = nil
	st := e.state()
	received := dtReceived(e.srv)
	rows := dtReadCSV(t, filepath.Join(stateDir, ReportCSV))
	for _, r := range rows {
		p := r["phone_number"]
		s, _ := st.Status(store.Key{Agent: "Alpha", Phone: p})
		if received[p] > 0 && r["status"] != string(s) {
			t.Errorf("%s: the run's report says %s, its journal %s (the sandbox answered its call start)", p, r["status"], s)
		}
	}
}
