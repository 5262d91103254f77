package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestPostgresShardKilledResumesOnAnotherMachine: two shards of a
// campaign whose state is in PostgreSQL call at once; shard 0 is killed
// with SIGKILL while its calls are in flight, and shard 0 is run again
// from another machine (a copy of the campaign's folder with a state
// directory, HOME and CALLRUN_HOME of its own, and the token from the
// database). From the sandbox's ledger: nobody was phoned twice, every
// contact was phoned but those the kill left uncertain, at most the
// shard's calls in flight; status from anywhere says the same.
func TestPostgresShardKilledResumesOnAnotherMachine(t *testing.T) {
	const n, concurrency = 60, 3
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 50 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 12, concurrency: concurrency, postgres: pgtest.URL(t)})

	shard0, shard1 := e.start("run", "--shard", "0/2", e.path), e.start("run", "--shard", "1/2", e.path)
	waitFor(t, 30*time.Second, "shard 0's calls under way", func() bool { return srv.Stats().CallsReceived > n/4 })
	shard0.cmd.Process.Kill()
	<-shard0.done
	if res := shard0.result(); !res.signaled {
		t.Fatalf("shard 0 ended before the kill: %s", res)
	}
	if res := shard1.wait(t, 60*time.Second); res.code != exitOK {
		t.Fatalf("shard 1: %s", res)
	}

	// The other machine: the campaign's folder copied, nothing else.
	other := *e
	other.dir = t.TempDir()
	other.cwd, other.path, other.stateDir = other.dir, filepath.Join(other.dir, "campaign.yaml"), filepath.Join(other.dir, "state")
	for _, name := range []string{"campaign.yaml", "contacts.csv"} {
		b, err := os.ReadFile(filepath.Join(e.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other.dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other.env = e2eEnv(other.dir)
	other.env = slices.DeleteFunc(other.env, func(kv string) bool { return strings.HasPrefix(kv, "CALLRUN_TOKEN_FILE=") })
	for _, kv := range e.env {
		if strings.HasPrefix(kv, "CALLRUN_DATABASE_URL=") || strings.HasPrefix(kv, "CALLRUN_TOKEN_KEY=") {
			other.env = append(other.env, kv)
		}
	}
	res := other.run(60*time.Second, "run", "--shard", "0/2", other.path)
	if res.code != exitOK && res.code != run.ExitIncomplete { // 3: the kill left some uncertain
		t.Fatalf("shard 0 on the other machine: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	if placed := l.totalPlaced(); placed < n-concurrency || placed > n {
		t.Errorf("%d calls placed for %d contacts, want %d less at most the %d the kill left uncertain", placed, n, n, concurrency)
	}
	st := other.status()
	if st["sent"]+st["uncertain"] != n || st["uncertain"] > concurrency {
		t.Errorf("status from the other machine: %v, want %d sent or uncertain, at most %d uncertain", st, n, concurrency)
	}
	t.Logf("shard 0 killed, resumed on another machine: %d calls placed for %d contacts; status %v", l.totalPlaced(), n, st)
}
