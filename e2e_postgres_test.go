package main

// End-to-end tests of the PostgreSQL store under faults, and of shards:
// the real binary against the in-process sandbox, whose ledger is the
// evidence of who was phoned. The lock's connection is killed, the server
// is stopped as a crash would stop it, and several shards of one campaign
// run at once, on PostgreSQL and on the files of one machine.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
)

// pgAdmin connects to the database at url (pgtest's URLs are the
// superuser's) for the test to look at and fault callrun's sessions.
func pgAdmin(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting as the admin: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// lockHolderPIDs returns the backends of callrun's sessions that hold a
// run lock (a session-level advisory lock of two int4 keys, the second a
// shard's code, 65536 or more: not the gate, the agents lock or the
// journal writes' lock, which a write in flight holds) in the database
// the admin connection is on.
func lockHolderPIDs(t *testing.T, admin *pgx.Conn) []uint32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := admin.Query(ctx, `
SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.objid >= 65536
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND a.application_name = 'callrun'
ORDER BY l.pid`)
	if err != nil {
		t.Fatalf("reading pg_locks: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[uint32])
	if err != nil {
		t.Fatalf("reading pg_locks: %v", err)
	}
	return pids
}

// checkEveryCallJournaled: every number that reached the sandbox has, in
// the journal (as `callrun report` rebuilds it), an intent: it is sent,
// failed or uncertain, never pending. A number called without its intent
// committed first would read as pending.
func (e *e2eCampaign) checkEveryCallJournaled(rows []e2eRow, l e2eLedger) {
	e.t.Helper()
	status := map[string]string{}
	for _, r := range rows {
		status[r["phone_number"]] = r["status"]
	}
	for phone, calls := range l.byPhone {
		switch s := status[phone]; s {
		case "sent", "failed", "uncertain":
		default:
			e.t.Errorf("%s reached the sandbox (%d requests, first #%d %s) but the journal says %q: A CALL WAS STARTED WITHOUT ITS INTENT ON RECORD", phone, len(calls), calls[0].Seq, calls[0].Outcome, s)
		}
	}
}

// checkOnceEach: with no faults nothing is ever sent again, so no number
// reaches the service twice at all, placed or not.
func (l e2eLedger) checkOnceEach(t testing.TB) {
	t.Helper()
	for phone, calls := range l.byPhone {
		if len(calls) > 1 {
			t.Errorf("%s reached the service %d times with no fault to retry: %v", phone, len(calls), calls)
		}
	}
}

// TestPostgresLockConnectionKilled terminates, mid-run, the backend of the
// connection that holds the run lock (as a DBA, a pooler or a failover
// would). The run must notice at its next journal write, start no call
// after that beyond those whose intents were already committed (at most
// concurrency), and stop by itself saying the lock was lost. The next run
// resumes; nobody is called twice, and only the calls in flight are
// uncertain.
func TestPostgresLockConnectionKilled(t *testing.T) {
	const concurrency, n = 16, 200
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 150 * time.Millisecond}})
	t.Cleanup(srv.Close)
	db := pgtest.URL(t)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 1000, concurrency: concurrency, postgres: db})
	admin := pgAdmin(t, db)

	p := e.start("run", e.path)
	waitFor(t, 30*time.Second, "30 call starts", func() bool { return srv.Stats().CallsReceived >= 30 })
	holders := lockHolderPIDs(t, admin)
	if len(holders) != 1 {
		t.Fatalf("callrun sessions holding a run lock: %v, want one", holders)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ok bool
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, holders[0]).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v, %v", holders[0], ok, err)
	}
	// The terminate took effect once the backend is gone, and its lock with
	// it: from then on no INSERT can pass the lock check.
	waitFor(t, 10*time.Second, "the lock's backend to end", func() bool {
		var alive bool
		err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, holders[0]).Scan(&alive)
		return err == nil && !alive
	})
	killedAt := time.Now()
	callsAtKill := srv.Stats().CallsReceived

	res := p.wait(t, 20*time.Second)
	stopIn := p.ended.Sub(killedAt)
	checkJSONLogs(t, res)
	if res.signaled || res.code == 0 || res.code == run.ExitIncomplete {
		t.Errorf("after the lock's connection was killed: %s", res)
	}
	if !strings.Contains(res.stderr, store.ErrLockLost.Error()) {
		t.Errorf("stderr does not say the lock was lost (%q):\n%s", store.ErrLockLost, res.stderr)
	}
	if stopIn > 10*time.Second {
		t.Errorf("the run went on %v after its lock was lost", stopIn)
	}
	l := e.ledger()
	callsAfter := len(l.calls) - callsAtKill
	if callsAfter > concurrency {
		t.Errorf("%d call starts reached the sandbox after the lock was lost, more than the %d that may have had their intents committed before", callsAfter, concurrency)
	}
	l.checkNobodyTwice(t)
	st := e.status()
	if st["uncertain"] > concurrency {
		t.Errorf("after the lock was lost: %d uncertain, want at most %d (the calls in flight); status %v", st["uncertain"], concurrency, st)
	}
	if st["sent"]+st["uncertain"] != len(l.byPhone) || st["failed"] != 0 {
		t.Errorf("after the lock was lost: status %v, but %d numbers reached the sandbox", st, len(l.byPhone))
	}
	if st["pending"] == 0 {
		t.Errorf("the run called everyone before the kill took effect (status %v): the test proves nothing; make it slower", st)
	}

	// The next run takes the lock again and calls the rest.
	res2 := e.resumeAfterFault(st, n, "the lost lock")
	t.Logf("lock's backend killed with %d call starts received; the run stopped %v later with exit %d; %d call starts after; status then %v; resumed run exit %d in %v",
		callsAtKill, stopIn.Round(time.Millisecond), res.code, callsAfter, st, res2.code, res2.elapsed.Round(time.Millisecond))
}

// TestPostgresServerStopped stops PostgreSQL mid-run as a crash would
// (pg_ctl stop -m immediate). The run stops with an error naming
// PostgreSQL; once the server is back, the journal holds an intent for
// every call start the sandbox received (none is pending), and the next
// run finishes without calling anyone twice.
//
// It stops the tests' shared cluster: it must not run in parallel with
// other tests (none here do).
func TestPostgresServerStopped(t *testing.T) {
	const concurrency, n = 8, 120
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 100 * time.Millisecond}})
	t.Cleanup(srv.Close)
	db := pgtest.URL(t)
	cluster := pgtest.Shared(t)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 1000, concurrency: concurrency, postgres: db})

	p := e.start("run", e.path)
	waitFor(t, 30*time.Second, "20 call starts", func() bool { return srv.Stats().CallsReceived >= 20 })
	// Registered after pgtest.URL's clean-up, so run before it: the
	// database is dropped from a running server.
	t.Cleanup(func() { cluster.Start(t) })
	cluster.Stop(t)
	stoppedAt := time.Now()
	callsAtStop := srv.Stats().CallsReceived

	res := p.wait(t, 45*time.Second)
	stopIn := p.ended.Sub(stoppedAt)
	checkJSONLogs(t, res)
	if res.signaled || res.code == 0 || res.code == run.ExitIncomplete {
		t.Errorf("after PostgreSQL stopped: %s", res)
	}
	if msg := lastLine(res.stderr); !strings.Contains(msg, "PostgreSQL") {
		t.Errorf("the run's last word does not name PostgreSQL: %s\n%s", msg, res.stderr)
	}
	cluster.Start(t)

	l := e.ledger()
	callsAfter := len(l.calls) - callsAtStop
	if callsAfter > concurrency {
		t.Errorf("%d call starts reached the sandbox after PostgreSQL stopped, more than the %d in flight", callsAfter, concurrency)
	}
	l.checkNobodyTwice(t)
	if r := e.run(30*time.Second, "report", e.path); r.code != 0 {
		t.Fatalf("report after the restart: %s", r)
	}
	rows := e.report()
	e.checkReportAgainstLedger(rows, l)
	e.checkEveryCallJournaled(rows, l)
	st := countStatuses(rows)
	if st["uncertain"] > concurrency {
		t.Errorf("after the stop: %d uncertain, want at most %d (the calls in flight): %v", st["uncertain"], concurrency, st)
	}
	if st["pending"] == 0 {
		t.Errorf("the run called everyone before PostgreSQL stopped (%v): the test proves nothing; make it slower", st)
	}

	res2 := e.resumeAfterFault(st, n, "the stop")
	t.Logf("PostgreSQL stopped with %d call starts received; the run stopped %v later with exit %d (%s); %d call starts after; then %v; resumed run exit %d in %v",
		callsAtStop, stopIn.Round(time.Millisecond), res.code, lastLine(res.stderr), callsAfter, st, res2.code, res2.elapsed.Round(time.Millisecond))
}

// e2eReformat writes c's number in one of e2ePhones' five styles.
func e2eReformat(c e2eContact, style int) string {
	area, line := c.E164[2:5], c.E164[8:12]
	switch style % 5 {
	case 0:
		return fmt.Sprintf("(%s) 555-%s", area, line)
	case 1:
		return fmt.Sprintf("%s-555-%s", area, line)
	case 2:
		return fmt.Sprintf("+1 %s 555 %s", area, line)
	case 3:
		return fmt.Sprintf("%s555%s", area, line)
	}
	return fmt.Sprintf("1.%s.555.%s", area, line)
}

// e2eWithDuplicates returns distinct followed by dups rows that repeat
// numbers of distinct, each written in another style than its first
// occurrence, under another name and id: what a merged CRM export holds.
func e2eWithDuplicates(distinct []e2eContact, dups int) []e2eContact {
	rows := slices.Clone(distinct)
	for i := range dups {
		j := (i * 7) % len(distinct)
		c := distinct[j]
		c.Raw = e2eReformat(c, j%5+1+i%4) // e2ePhones wrote it in style j%5
		c.First = fmt.Sprintf("%s (again %d)", c.First, i)
		c.ID = fmt.Sprintf("dup-%04d", i)
		rows = append(rows, c)
	}
	return rows
}

// writeSheetWithDuplicates is writeSheet for a sheet that repeats numbers
// (writeSheet refuses them): every row is written, and the ledger expects
// each number with the fields of its first row, the one dedupe keeps.
func (e *e2eCampaign) writeSheetWithDuplicates(rows []e2eContact) {
	e.t.Helper()
	var sheet strings.Builder
	w := csv.NewWriter(&sheet)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email"})
	byPhone := map[string]e2eContact{}
	for _, c := range rows {
		if _, dup := byPhone[c.E164]; !dup {
			byPhone[c.E164] = c
		}
		w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"})
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(sheet.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.contacts, e.byPhone = slices.Clone(rows), byPhone
}

// shardPace returns the per_second of the log record that announces the
// run's shard, and whether there is one.
func shardPace(stderr, shard string) (float64, bool) {
	for _, line := range strings.Split(stderr, "\n") {
		var rec struct {
			Shard     string   `json:"shard"`
			PerSecond *float64 `json:"per_second"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Shard == shard && rec.PerSecond != nil {
			return *rec.PerSecond, true
		}
	}
	return 0, false
}

// waitLogged waits until each of procs has logged msg (as a JSON record's
// message) or ended.
func waitLogged(t *testing.T, d time.Duration, msg string, procs ...*e2eProc) {
	t.Helper()
	waitFor(t, d, fmt.Sprintf("%d runs to log %q", len(procs), msg), func() bool {
		for _, p := range procs {
			select {
			case <-p.done:
				continue
			default:
			}
			if !strings.Contains(p.stderr.String(), `"message":"`+msg+`"`) {
				return false
			}
		}
		return true
	})
}

// TestPostgresFourShardsAtOnce runs four shards of one campaign at once,
// with the journal in PostgreSQL and a sheet that repeats numbers in other
// formats (dedupe: campaign): each distinct number is called exactly once
// in all, each shard paces at per_second / 4, and `status` without
// --shard counts every shard's calls. While they run, a run of another
// split (--shard 1/2) and a run of the whole campaign exit 75.
func TestPostgresFourShardsAtOnce(t *testing.T) {
	const distinct, dups, shards, perSecond = 48, 12, 4, 16.0
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 100 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(distinct), perSecond: perSecond, concurrency: 2, postgres: pgtest.URL(t)})
	e.writeSheetWithDuplicates(e2eWithDuplicates(e2ePhones(distinct), dups))
	if p := e.plan(); p.Totals.Rows != distinct+dups || p.Totals.Duplicate != dups || p.Totals.ToCall != distinct {
		t.Fatalf("plan: %+v, want %d rows, %d duplicates, %d to call", p.Totals, distinct+dups, dups, distinct)
	}

	var procs []*e2eProc
	for k := range shards {
		procs = append(procs, e.start("run", "--shard", fmt.Sprintf("%d/%d", k, shards), e.path))
	}
	// Once every shard holds its lock and calls, runs of other splits of
	// the campaign are kept out.
	waitLogged(t, 30*time.Second, "calling", procs...)
	running := 0
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			running++
		}
	}
	if running == 0 {
		t.Fatalf("every shard finished before the other splits could try: make the test slower")
	}
	otherP, wholeP := e.start("run", "--shard", "1/2", e.path), e.start("run", e.path)
	other, whole := otherP.wait(t, 30*time.Second), wholeP.wait(t, 30*time.Second)
	checkJSONLogs(t, other)
	checkJSONLogs(t, whole)
	for _, r := range []e2eResult{other, whole} {
		if r.code != run.ExitTryLater {
			t.Errorf("a run of another split while %d shards of 4 run: %s", running, r)
		}
	}
	if !strings.Contains(other.stderr, "different split") {
		t.Errorf("run --shard 1/2 does not say that a different split holds the campaign:\n%s", other.stderr)
	}

	var shardsEnded time.Time
	for k, p := range procs {
		res := p.wait(t, 60*time.Second)
		if p.ended.After(shardsEnded) {
			shardsEnded = p.ended
		}
		checkJSONLogs(t, res)
		if res.code != 0 {
			t.Errorf("shard %d: %s", k, res)
		}
		shard := fmt.Sprintf("%d/%d", k, shards)
		if got, ok := shardPace(res.stderr, shard); !ok || got != perSecond/shards {
			t.Errorf("shard %s logged per_second %v (logged: %v), want %v / %d = %v", shard, got, ok, perSecond, shards, perSecond/shards)
		}
	}

	if !shardsEnded.After(otherP.started) || !shardsEnded.After(wholeP.started) {
		t.Errorf("the shards had all ended (%v) before the runs of other splits started (%v, %v): this machine is too slow for the test as it is; slow the shards down",
			shardsEnded.Format(time.StampMilli), otherP.started.Format(time.StampMilli), wholeP.started.Format(time.StampMilli))
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	l.checkOnceEach(t)
	if len(l.byPhone) != distinct || l.totalPlaced() != distinct {
		t.Errorf("the ledger has %d numbers and %d placed calls, want each of the %d distinct numbers once", len(l.byPhone), l.totalPlaced(), distinct)
	}
	if got := srv.Agents(); len(got) != 1 {
		t.Errorf("the sandbox has %d agents, want 1: %v", len(got), got)
	}
	st := e.status()
	if st["sent"] != distinct || st["duplicate"] != dups {
		t.Errorf("status of the whole campaign: %v, want %d sent and %d duplicate", st, distinct, dups)
	}
	if r := e.run(30*time.Second, "report", e.path); r.code != 0 {
		t.Fatalf("report: %s", r)
	}
	rows := e.report()
	seen := map[string]bool{}
	var kept []e2eRow
	for i, r := range rows {
		want := "sent"
		if seen[e.contacts[i].E164] {
			want = "duplicate"
		} else {
			kept = append(kept, r)
		}
		seen[e.contacts[i].E164] = true
		if r["status"] != want {
			t.Errorf("report row %s %s (%s): %q, want %q", r["row"], r["phone_number"], e.contacts[i].Raw, r["status"], want)
		}
	}
	e.checkReportAgainstLedger(kept, l)
	t.Logf("4 shards: %d requests for %d distinct numbers; --shard 1/2 exit %d, whole run exit %d, with %d shards running; status %v",
		len(l.calls), distinct, other.code, whole.code, running, st)
}

// shardStatus is `status --shard K/N --format json`'s counts.
func (e *e2eCampaign) shardStatus(shard string) map[string]int {
	e.t.Helper()
	cmd := exec.Command(e2eBin.path, "--log-format", "json", "status", "--shard", shard, "--format", "json", e.path)
	cmd.Env, cmd.Dir = e.env, e.cwd
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("status --shard %s: %v\n%s", shard, err, out)
	}
	var st struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		e.t.Fatalf("status --shard %s: %v\n%s", shard, err, out)
	}
	return st.Counts
}

// TestShardsOfFilesOnOneMachine runs two shards of a campaign at once with
// the state directory's files: both finish, every number is called once;
// a run without --shard afterwards is refused with exit 2, saying to
// give --shard, and calls nobody.
func TestShardsOfFilesOnOneMachine(t *testing.T) {
	const n = 40
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 50 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 100, concurrency: 4})

	a := e.start("run", "--shard", "0/2", e.path)
	b := e.start("run", "--shard", "1/2", e.path)
	sent := 0
	for k, p := range []*e2eProc{a, b} {
		res := p.wait(t, 60*time.Second)
		checkJSONLogs(t, res)
		if res.code != 0 {
			t.Errorf("shard %d/2: %s", k, res)
		}
		st := e.shardStatus(fmt.Sprintf("%d/2", k))
		if st["sent"] == 0 || st["failed"]+st["uncertain"]+st["pending"] != 0 {
			t.Errorf("status --shard %d/2: %v, want some sent and nothing else", k, st)
		}
		sent += st["sent"]
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	l.checkOnceEach(t)
	if len(l.byPhone) != n || l.totalPlaced() != n || sent != n {
		t.Errorf("the ledger has %d numbers and %d placed calls, the shards' status %d sent; want %d of each", len(l.byPhone), l.totalPlaced(), sent, n)
	}

	if got := srv.Agents(); len(got) != 1 {
		t.Errorf("the sandbox has %d agents, want 1: %v", len(got), got)
	}
	before := len(srv.Calls())
	whole := e.run(30*time.Second, "run", e.path)
	if whole.code != run.ExitUsage || !strings.Contains(whole.stderr, "--shard") || !strings.Contains(whole.stderr, "another split") {
		t.Errorf("a run without --shard beside the shards' journals: want exit 2 saying to give --shard (%q): %s", store.ErrShardMismatch, whole)
	}
	if got := len(srv.Calls()); got != before {
		t.Errorf("the refused run made %d call starts", got-before)
	}
	t.Logf("2 file shards: %d calls; run without --shard: exit %d: %s", len(l.calls), whole.code, lastLine(whole.stderr))
}

// TestShardsStartedTogetherCreateTheAgentOnce: the first runs of a
// campaign's shards, started at once, find no agent on the service. Only
// one of them may create it: two agents of one name would make every run
// of the campaign refuse to guess between them (exit 1) until a person
// renames one. The service here takes 300 ms to create an agent, so that
// every shard lists the agents before the first create ends.
func TestShardsStartedTogetherCreateTheAgentOnce(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			const n, shards = 16, 4
			srv := sandbox.NewUnstartedServer(sandbox.Options{})
			inner := srv.Handler()
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/ai/agent/create" {
					time.Sleep(300 * time.Millisecond)
				}
				inner.ServeHTTP(w, r)
			})
			srv.Start()
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 100, concurrency: 2, postgres: e2eDatabase(t, kind)})
			var procs []*e2eProc
			for k := range shards {
				procs = append(procs, e.start("run", "--shard", fmt.Sprintf("%d/%d", k, shards), e.path))
			}
			for k, p := range procs {
				res := p.wait(t, 60*time.Second)
				checkJSONLogs(t, res)
				if res.code != 0 {
					t.Errorf("shard %d/%d: %s", k, shards, res)
				}
			}
			if got := srv.Agents(); len(got) != 1 {
				t.Errorf("the sandbox has %d agents, want 1: %v", len(got), got)
			}
			l := e.ledger()
			l.checkNobodyTwice(t)
			l.checkOnceEach(t)
			if len(l.byPhone) != n {
				t.Errorf("the ledger has %d numbers, want %d", len(l.byPhone), n)
			}
		})
	}
}

// resumeAfterFault runs the campaign again after a fault that stopped a
// run with st's counts, and checks from the ledger that it finished it:
// nobody twice, every call journaled, the fault's uncertain contacts still
// uncertain and everyone else sent.
func (e *e2eCampaign) resumeAfterFault(st map[string]int, n int, fault string) e2eResult {
	e.t.Helper()
	res := e.run(60*time.Second, "run", e.path)
	if want := map[bool]int{true: run.ExitIncomplete, false: 0}[st["uncertain"] > 0]; res.code != want {
		e.t.Fatalf("resuming (want exit %d): %s", want, res)
	}
	rows := e.report()
	l := e.ledger()
	l.checkNobodyTwice(e.t)
	l.checkOnceEach(e.t)
	e.checkReportAgainstLedger(rows, l)
	e.checkEveryCallJournaled(rows, l)
	c := countStatuses(rows)
	if c["uncertain"] != st["uncertain"] || c["sent"]+c["uncertain"] != n {
		e.t.Errorf("after resuming: %v, want the %d uncertain of %s and everyone else sent", c, st["uncertain"], fault)
	}
	return res
}

// TestPostgresShardsShareARotatingToken runs four shards of a campaign at
// once, as four machines would, with the token in PostgreSQL and a
// service whose access tokens live 2 seconds and whose every refresh
// rotates the refresh token and revokes the one spent. The run lasts
// several lifetimes, so the shards refresh again and again, often
// together: each refresh must take the row's lock and read the token
// again, or two shards would spend one refresh token and the service
// would refuse the second. The token endpoint takes 300 ms to answer, so
// that other shards come to refresh while one does. No refresh may be
// refused, no shard may stop, and each contact is called once.
func TestPostgresShardsShareARotatingToken(t *testing.T) {
	const n, shards, perSecond = 72, 4, 9.0 // about 8 s: four token lifetimes
	srv := sandbox.NewUnstartedServer(sandbox.Options{AccessTokenLifetime: 2 * time.Second, Faults: sandbox.Faults{Latency: 50 * time.Millisecond}})
	inner := srv.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token/refresh" {
			time.Sleep(300 * time.Millisecond)
		}
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: perSecond, concurrency: 2, postgres: pgtest.URL(t)})
	loginRefreshes := srv.Stats().Refreshes

	var procs []*e2eProc
	for k := range shards {
		procs = append(procs, e.start("run", "--shard", fmt.Sprintf("%d/%d", k, shards), e.path))
	}
	var longest time.Duration
	for k, p := range procs {
		res := p.wait(t, 90*time.Second)
		checkJSONLogs(t, res)
		if res.code != 0 {
			t.Errorf("shard %d/%d: %s", k, shards, res)
		}
		noSecrets(t, fmt.Sprintf("shard %d/%d's output", k, shards), res.stdout+res.stderr)
		if strings.Contains(res.stdout+res.stderr, e2eTokenKey) {
			t.Errorf("shard %d/%d printed the token key", k, shards)
		}
		longest = max(longest, res.elapsed)
	}
	stats := srv.Stats()
	if stats.TokenErrors != 0 {
		t.Errorf("the service refused %d token requests: two shards spent the same refresh token", stats.TokenErrors)
	}
	refreshes := stats.Refreshes - loginRefreshes
	if lifetimes := int(longest / (2 * time.Second)); refreshes < lifetimes-1 || lifetimes < 3 {
		t.Errorf("%d refreshes in a run of %v (%d token lifetimes): the test does not exercise rotation", refreshes, longest, lifetimes)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	l.checkOnceEach(t)
	if len(l.byPhone) != n || l.totalPlaced() != n {
		t.Errorf("the ledger has %d numbers and %d placed calls, want each of the %d once", len(l.byPhone), l.totalPlaced(), n)
	}
	if st := e.status(); st["sent"] != n {
		t.Errorf("status: %v, want %d sent", st, n)
	}
	// A login of the database's token, not a file's, and status says where.
	res := e.run(30*time.Second, "auth", "status", e.path)
	if res.code != 0 || !strings.Contains(res.stdout, "callrun_tokens") {
		t.Errorf("auth status: %s", res)
	}
	noSecrets(t, "auth status", res.stdout+res.stderr)
	t.Logf("4 shards over %v with a 2 s rotating token: %d refreshes, %d token errors, %d answers 401, %d calls",
		longest.Round(time.Millisecond), refreshes, stats.TokenErrors, stats.Unauthorized, len(l.calls))
}

// TestPostgresTokenNeedsItsKey: with state.postgres, a run without
// CALLRUN_TOKEN_KEY, or with a key other than the login's, stops before
// calling anyone and says what to do, without printing either key; so
// does a campaign file that names a token file besides.
func TestPostgresTokenNeedsItsKey(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 2, postgres: pgtest.URL(t)})
	env := e.env
	t.Cleanup(func() { e.env = env })
	without := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "CALLRUN_TOKEN_KEY=") })
	const otherKey = "b3RoZXIta2V5LW9mLXRoaXJ0eS10d28tYnl0ZXMuLi4="
	for _, tc := range []struct {
		name string
		env  []string
		code int
		says string
	}{
		{"no key", without, run.ExitUsage, "openssl rand -base64 32"},
		{"a short key", append(slices.Clone(without), "CALLRUN_TOKEN_KEY=c2hvcnQ="), run.ExitUsage, "openssl rand -base64 32"},
		{"another key", append(slices.Clone(without), "CALLRUN_TOKEN_KEY="+otherKey), exitRuntime, "sealed with another CALLRUN_TOKEN_KEY"},
	} {
		e.env = tc.env
		res := e.run(30*time.Second, "run", e.path)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.says) {
			t.Errorf("%s: want exit %d saying %q: %s", tc.name, tc.code, tc.says, res)
		}
		if strings.Contains(res.stdout+res.stderr, e2eTokenKey) || strings.Contains(res.stdout+res.stderr, otherKey) {
			t.Errorf("%s: a key was printed: %s", tc.name, res)
		}
	}
	e.env = env
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d call starts without the token's key", n)
	}
	b, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	withFile := strings.Replace(string(b), "  redirect_uri:", "  token_file: token.json\n  redirect_uri:", 1)
	if err := os.WriteFile(e.path, []byte(withFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := e.run(30*time.Second, "auth", "status", e.path); res.code != run.ExitUsage || !strings.Contains(res.stderr, "service.token_file") {
		t.Errorf("service.token_file beside state.postgres: %s", res)
	}
}
