package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// replacingCalls is a CallStarter that, right before its k-th call
// start, replaces the journal file at path with a copy of itself (as a
// sync client, rsync or a restore from a backup does: a new file renamed
// over the old one), then passes every call on.
type replacingCalls struct {
	next    CallStarter
	t       *testing.T
	path    string
	k       int32
	remove  bool // remove the journal's directory instead of replacing the file
	started atomic.Int32
}

func (r *replacingCalls) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	switch nth := r.started.Add(1); {
	case nth == r.k && r.remove:
		if err := os.RemoveAll(filepath.Dir(r.path)); err != nil {
			r.t.Error(err)
		}
	case nth == r.k:
		data, err := os.ReadFile(r.path)
		if err != nil {
			r.t.Error(err)
		}
		tmp := r.path + ".copy"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			r.t.Error(err)
		}
		if err := os.Rename(tmp, r.path); err != nil {
			r.t.Error(err)
		}
	}
	return r.next.StartCallForm(ctx, ep, form)
}

// TestRunJournalReplacedUnderTheRun: the journal file is replaced while a
// run holds it open (a copy renamed over it). The run went on writing its
// intents and outcomes into the old file, which no one reads any more, so
// the next run, reading the file at the path, called every contact called
// after the replacement a second time. The run must see that the file at
// the path is no longer its journal and start no call after that.
func TestRunJournalReplacedUnderTheRun(t *testing.T) {
	const n, k = 8, 3
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.journalClosed.Store(true)
	calls := &replacingCalls{next: e.client, t: t, path: e.journal, k: k}
	_, err := e.run(context.Background(), func(o *RunOptions) { o.Calls = calls })
	if err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("the run with its journal replaced: err = %v, want the journal's replacement", err)
	}
	if got := len(e.srv.Placed()); got > k {
		t.Errorf("%d calls placed by the run whose journal was replaced at its call %d: it went on calling", got, k)
	}
	e.mustRun(nil)
	placed := dtPlaced(e.srv)
	for i := range n {
		if p := dtPhone(i); placed[p] != 1 {
			t.Errorf("%s placed %d times, want 1", p, placed[p])
		}
	}
	// The call start in flight when the file was replaced reached the
	// service; its outcome went to the old file: uncertain, as after a
	// crash. Every other contact is sent.
	e.checkCounts(map[store.Status]int{store.Sent: n - 1, store.Uncertain: 1})
}

// TestRunStateDirectoryRemovedUnderTheRun: the state directory is
// deleted while a run holds its journal open (a clean-up script, a
// person who took the run for finished). The run went on calling
// everyone left, recording them in a file no one could read any more.
// It must start no call after that.
func TestRunStateDirectoryRemovedUnderTheRun(t *testing.T) {
	const n, k = 8, 3
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.journalClosed.Store(true)
	calls := &replacingCalls{next: e.client, t: t, path: e.journal, k: k, remove: true}
	_, err := e.run(context.Background(), func(o *RunOptions) { o.Calls = calls })
	if err == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("the run with its state directory removed: err = %v, want the journal's removal", err)
	}
	if got := len(e.srv.Placed()); got > k {
		t.Errorf("%d calls placed by the run whose state directory was removed at its call %d: it went on calling", got, k)
	}
}
