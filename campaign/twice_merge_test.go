package campaign

import (
	"context"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestStatePushMergeKeepsWhomAMachineCalled: two machines ran the same
// campaign from files of their own; A called everyone, B's calls were
// all answered 503 (provably not placed, left pending). A pushes, B
// pushes with --merge, and a run on the database follows. B's records
// come after A's, and before, each contact read as B left it, pending:
// the run on the database called everyone A had called a second time.
// Adding a machine's journal must only keep people from being called.
func TestStatePushMergeKeepsWhomAMachineCalled(t *testing.T) {
	const n = 4
	url := pgtest.URL(t)
	files := map[string]string{"leads.csv": dtSheet(n)}
	a := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, ""), files)
	b := dtPrepare(t, a.srv, a.client, t.TempDir(), dtCampaign(1000, 2, ""), files)
	clock := &dtClock{now: time.Now()}
	tune := func(o *RunOptions) { o.MaxAttempts, o.Now, o.Sleep = 1, clock.Now, clock.Sleep }

	// Machine A calls everyone.
	if res := a.mustRun(tune); res.Sent != n {
		t.Fatalf("machine A: %+v", res)
	}
	// Machine B, later, gets 503s: nobody placed, everyone pending there.
	a.srv.SetFaults(sandbox.Faults{Share503: 1})
	if res := b.mustRun(tune); res.Pending != n {
		t.Fatalf("machine B: %+v", res)
	}
	a.srv.SetFaults(sandbox.Faults{})
	if got := len(a.srv.Placed()); got != n {
		t.Fatalf("%d calls placed before the push, want %d", got, n)
	}

	ctx := context.Background()
	p, err := store.OpenPostgres(ctx, url, a.f.Name, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	unlock, err := p.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Push(ctx, false, a.journal); err != nil {
		t.Fatalf("push of A: %v", err)
	}
	if _, err := p.Push(ctx, true, b.journal); err != nil {
		t.Fatalf("push --merge of B: %v", err)
	}
	unlock()

	// The run on the database calls nobody: A called them all.
	a.pg, a.pgURL = p, url
	res := a.mustRun(tune)
	placed := dtPlaced(a.srv)
	for i := range n {
		if got := placed[dtPhone(i)]; got != 1 {
			t.Errorf("%s placed %d times, want 1", dtPhone(i), got)
		}
	}
	if res.Started != 0 || res.Skipped != n {
		t.Errorf("run on the database: %+v; want every contact skipped as settled", res)
	}
	if c := a.state().Counts(); c[store.Sent] != n {
		t.Errorf("the database's journal after the merge: %v, want %d sent", c, n)
	}
}
