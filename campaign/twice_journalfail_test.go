package campaign

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunJournalSyncFailureLeavesNobodyUncertain: when the journal's
// write or fsync fails (a disk gone full, an I/O error), the intents of
// that commit were refused and their calls never started. The next run
// must not read them as uncertain: they were written to the file before
// the fsync failed, and before, the next run found them there with no
// outcome and held those people back as uncertain, for a person to send
// with --retry-uncertain, which the service never saw.
func TestRunJournalSyncFailureLeavesNobodyUncertain(t *testing.T) {
	const n = 6
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	var syncs atomic.Int32
	boom := errors.New("no space left on device")
	e.beforeSync = func() error {
		if syncs.Add(1) >= 3 {
			return boom
		}
		return nil
	}
	e.journalClosed.Store(true)
	_, err := e.run(context.Background(), nil)
	e.beforeSync = nil
	e.checkNothingUnsentUncertain(n, err, nil)
}

// checkNothingUnsentUncertain checks a run over the first n test numbers
// that the journal's failure stopped with err: no number reads uncertain
// unless the sandbox received its call start, each it received (and
// answered) reads sent, and the next run, tuned by tune, places each
// number once.
func (e *dtEnv) checkNothingUnsentUncertain(n int, err error, tune func(*RunOptions)) {
	t := e.t
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("err = %v, want the journal's failure", err)
	}
	received := dtReceived(e.srv)
	if len(received) == 0 || len(received) == n {
		t.Fatalf("%d numbers received: the journal failed at the wrong time", len(received))
	}
	st := e.state()
	for i := range n {
		p := dtPhone(i)
		s, _ := st.Status(store.Key{Agent: "Alpha", Phone: p})
		if s == store.Uncertain && received[p] == 0 {
			t.Errorf("%s reads uncertain, but the sandbox never received its call start", p)
		}
		// Every call the sandbox received it answered: the outcomes that
		// rode with the failed commit are kept.
		if received[p] != 0 && s != store.Sent {
			t.Errorf("%s reads %s, but the sandbox answered its call start", p, s)
		}
	}
	e.mustRun(tune)
	placed := dtPlaced(e.srv)
	for i := range n {
		if p := dtPhone(i); placed[p] != 1 {
			t.Errorf("%s placed %d times, want 1", p, placed[p])
		}
	}
	e.checkIntentBeforeSend(1)
}
