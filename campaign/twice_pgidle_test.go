package campaign

import (
	"context"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestRunPostgresIdleSessionTimeoutKeepsTheLock: the database's
// idle_session_timeout (PostgreSQL 14 and later; a managed server or a
// DBA may set it for every session) ended the connection that holds the
// campaign's lock, which sits idle for the whole run. The run then lost
// its lock part way through: it stopped, and the calls in flight, whose
// answers had come, read uncertain. The lock's connection must not be
// ended for being idle.
func TestRunPostgresIdleSessionTimeoutKeepsTheLock(t *testing.T) {
	const n = 6
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: 300 * time.Millisecond}}, dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.usePostgres()
	ctx := context.Background()
	pgtest.IdleSessionTimeout(t, e.pgURL, "700ms")
	res, err := e.run(ctx, nil)
	if err != nil {
		t.Fatalf("Run: %v (%+v)", err, res)
	}
	e.checkPlacedOnce(n)
	e.checkCounts(map[store.Status]int{store.Sent: n})
}
