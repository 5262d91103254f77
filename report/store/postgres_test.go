package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
)

// storeKinds are the two stores, each made fresh for a test: the tests
// of a promise run against both.
var storeKinds = []struct {
	name string
	open func(t *testing.T, campaign string, index, count int) Store
}{
	{"files", func(t *testing.T, campaign string, index, count int) Store {
		if count > 1 {
			return ShardFiles(sharedDir(t, campaign), index, count)
		}
		return Files{Dir: sharedDir(t, campaign)}
	}},
	{"postgres", func(t *testing.T, campaign string, index, count int) Store {
		return openPostgres(t, sharedURL(t), campaign, index, count)
	}},
}

// sharedDir and sharedURL give every store a test opens the same
// directory or database, so that two stores of one test share state as
// two machines would.
var shared sync.Map // test name -> dir or URL

func sharedDir(t *testing.T, campaign string) string {
	v, _ := shared.LoadOrStore(t.Name()+"/dir", t.TempDir())
	return filepath.Join(v.(string), campaign)
}

func sharedURL(t *testing.T) string {
	if v, ok := shared.Load(t.Name() + "/url"); ok {
		return v.(string)
	}
	u := pgURL(t)
	shared.Store(t.Name()+"/url", u)
	return u
}

func openPostgres(t testing.TB, url, campaign string, index, count int) *Postgres {
	t.Helper()
	p, err := OpenPostgres(context.Background(), url, campaign, index, count)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func lockStore(t *testing.T, s Store) func() error {
	t.Helper()
	unlock, err := s.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return unlock
}

func openStoreJournal(t *testing.T, s Store) (*Journal, *State) {
	t.Helper()
	j, st, err := s.OpenJournal(context.Background(), JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		j.Close()
		st.Close()
	})
	return j, st
}

func TestStoreRoundTrip(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			s := kind.open(t, "spring", 0, 1)
			unlock := lockStore(t, s)
			j, st := openStoreJournal(t, s)
			t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
			mustAppend(t, j,
				Record{Type: TypeRun, Note: "run 1", At: t0},
				Record{Type: TypeIntent, Agent: "east", Phone: "+14155550100", AgentID: "ag_1", Sheet: "a.csv", Row: 2, Attempt: 1, At: t0.Add(time.Second)},
				Record{Type: TypeIntent, Agent: "east", Phone: "+14155550101", AgentID: "ag_1", Sheet: "a.csv", Row: 3, Attempt: 1, At: t0.Add(2 * time.Second)},
				Record{Type: TypeOutcome, Agent: "east", Phone: "+14155550100", AgentID: "ag_1", Sheet: "a.csv", Row: 2, Attempt: 1, Status: OutcomeSent, HTTP: 201, Body: `{"call_id":"c1"}`, CallID: "c1", At: t0.Add(3 * time.Second)},
				Record{Type: TypeOutcome, Agent: "east", Phone: "+14155550101", AgentID: "ag_1", Sheet: "a.csv", Row: 3, Attempt: 1, Status: OutcomeFailed, HTTP: 422, Reason: "the service refused the call", Body: "bad <number> & such\nline 2 ünïcode", At: t0.Add(4 * time.Second)},
				Record{Type: TypeIntent, Agent: "west", Phone: "+442071838750", N: 2, AgentID: "ag_2", Attempt: 1, At: t0.Add(5 * time.Second)},
				Record{Type: TypeEnd, Note: "complete", At: t0.Add(6 * time.Second)},
			)
			check := func(t *testing.T, st *State) {
				t.Helper()
				want := map[Status]int{Sent: 1, Failed: 1, Uncertain: 1, Pending: 0, Erased: 0}
				if got := st.Counts(); fmt.Sprint(got) != fmt.Sprint(want) || st.Len() != 3 {
					t.Errorf("Counts = %v, Len %d; want %v, 3", got, st.Len(), want)
				}
				e, ok := st.Lookup(Key{"east", "+14155550101", 0})
				wantE := Entry{Status: Failed, Attempts: 1, HTTP: 422, FirstAt: t0.Add(2 * time.Second), LastAt: t0.Add(4 * time.Second), Reason: "the service refused the call", Body: "bad <number> & such\nline 2 ünïcode", AgentID: "ag_1"}
				if !ok || !entryEqual(e, wantE) {
					t.Errorf("Lookup failed = %+v, %v; want %+v", e, ok, wantE)
				}
				e, ok = st.Lookup(Key{"west", "+442071838750", 2})
				wantE = Entry{Status: Uncertain, Attempts: 1, FirstAt: t0.Add(5 * time.Second), LastAt: t0.Add(5 * time.Second), Reason: noOutcome, AgentID: "ag_2"}
				if !ok || !entryEqual(e, wantE) {
					t.Errorf("Lookup uncertain = %+v, %v; want %+v", e, ok, wantE)
				}
				if _, ok := st.Status(Key{"east", "+14155550102", 0}); ok {
					t.Errorf("a contact never written has a status")
				}
				// The call a sent call's outcome names, read back from the journal.
				if keys, err := st.CallKeys(map[string]bool{"c1": true, "c9": true}); err != nil || len(keys) != 1 || keys["c1"] != (Key{"east", "+14155550100", 0}) {
					t.Errorf("CallKeys = %v, %v; want c1's contact alone", keys, err)
				}
			}
			t.Run("live", func(t *testing.T) { check(t, st) })
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if err := unlock(); err != nil {
				t.Fatal(err)
			}
			// Another machine's view: a store of its own on the same place.
			other := kind.open(t, "spring", 0, 1)
			t.Run("ReadState", func(t *testing.T) {
				st, err := other.ReadState(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				check(t, st)
			})
			t.Run("reopened", func(t *testing.T) {
				defer lockStore(t, other)()
				_, st := openStoreJournal(t, other)
				check(t, st)
			})
			runs, err := other.ReadRuns(ctx)
			if err != nil {
				t.Fatal(err)
			}
			end := t0.Add(6 * time.Second)
			if len(runs) != 1 || !runs[0].StartedAt.Equal(t0) || !runs[0].LastAt.Equal(end) || runs[0].Calls != 3 ||
				!runs[0].EndedAt.Equal(end) || runs[0].Ending != "complete" {
				t.Errorf("ReadRuns = %+v; want one run started %v, ended complete %v, 3 calls", runs, t0, end)
			}
			// A different campaign in the same place sees none of it.
			st2, err := kind.open(t, "autumn", 0, 1).ReadState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			if st2.Len() != 0 {
				t.Errorf("campaign autumn sees %d contacts of campaign spring", st2.Len())
			}
		})
	}
}

func TestStoreConcurrentAppend(t *testing.T) {
	const goroutines, each = 16, 60
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := kind.open(t, "c", 0, 1)
			defer lockStore(t, s)()
			j, st := openStoreJournal(t, s)
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						r := intent(fmt.Sprintf("agent-%d", g%3), fmt.Sprintf("+1%03d%06d", g, i))
						r.Body = strings.Repeat("b", i)
						if err := j.Append(r); err != nil {
							errs <- err
							return
						}
						if e, ok := st.Lookup(r.Key()); !ok || e.Status != Uncertain || e.Body != r.Body {
							errs <- fmt.Errorf("%v: Lookup %+v, %v right after Append", r.Key(), e, ok)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			j.Close()
			st2, err := s.ReadState(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			if st2.Len() != goroutines*each || st2.Counts()[Uncertain] != goroutines*each {
				t.Errorf("replayed %d contacts (%v); want %d uncertain", st2.Len(), st2.Counts(), goroutines*each)
			}
		})
	}
}

func TestStoreLockKeepsASecondRunOut(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			a, b := kind.open(t, "c", 0, 1), kind.open(t, "c", 0, 1)
			unlock := lockStore(t, a)
			_, err := b.Lock(context.Background())
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("second Lock: %v; want ErrLocked", err)
			}
			if pid := fmt.Sprint(os.Getpid()); !strings.Contains(err.Error(), pid) {
				t.Errorf("the error does not name the holder's pid %s: %v", pid, err)
			}
			if err := unlock(); err != nil {
				t.Fatal(err)
			}
			unlock = lockStore(t, b) // free again once released
			unlock()
		})
	}
}

func TestPostgresShardLocks(t *testing.T) {
	url := pgURL(t)
	hold := func(index, count int) (func() error, error) {
		return openPostgres(t, url, "big", index, count).Lock(context.Background())
	}
	u1, err := hold(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := hold(2, 4)
	if err != nil {
		t.Fatalf("shard 2/4 beside 1/4: %v", err)
	}
	for _, c := range []struct{ index, count int }{{1, 4}, {0, 1}, {0, 2}, {1, 2}, {3, 8}} {
		if u, err := hold(c.index, c.count); !errors.Is(err, ErrLocked) {
			if u != nil {
				u()
			}
			t.Errorf("shard %d/%d beside 1/4 and 2/4: %v; want ErrLocked", c.index, c.count, err)
		} else if host, _ := os.Hostname(); !strings.Contains(err.Error(), host) {
			t.Errorf("the error does not name the holder's host: %v", err)
		}
	}
	if u, err := openPostgres(t, url, "small", 0, 1).Lock(context.Background()); err != nil {
		t.Errorf("another campaign: %v", err)
	} else {
		u()
	}
	u1()
	u2()
	u, err := hold(0, 1)
	if err != nil {
		t.Fatalf("the whole campaign once the shards ended: %v", err)
	}
	u()
}

// terminate ends the PostgreSQL backend with the given pid, as an
// administrator (or a failover) would.
func terminate(t *testing.T, url string, pid uint32) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend($1::int)`, int64(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v, %v", pid, ok, err)
	}
}

// beginSlow begins a transaction on a connection of its own, for a test
// to commit when it chooses: a write whose commit is slow. The test's
// cleanup rolls back what it did not commit and hangs up.
func beginSlow(t *testing.T, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // none after a commit
	return tx
}

func journalRows(t *testing.T, url, campaign string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM callrun_journal WHERE campaign = $1`, campaign).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPostgresLockLostStopsTheJournal(t *testing.T) {
	url := pgURL(t)
	p := openPostgres(t, url, "c", 0, 1)
	defer lockStore(t, p)()
	j, _ := openStoreJournal(t, p)
	mustAppend(t, j, intent("a", "+15550001"))
	terminate(t, url, p.lease.pid)
	// The lock is free now: another run takes it, as one would.
	other := openPostgres(t, url, "c", 0, 1)
	defer lockStore(t, other)()
	if err := j.Append(intent("a", "+15550002")); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Append after the lock's connection ended: %v; want ErrLockLost", err)
	}
	if err := j.Append(intent("a", "+15550003")); !errors.Is(err, ErrLockLost) {
		t.Errorf("the journal goes on after losing the lock: %v", err)
	}
	if n := journalRows(t, url, "c"); n != 1 {
		t.Errorf("%d rows in the journal; want 1: nothing written once the lock was lost", n)
	}
}

func TestPostgresRefusesANewerSchema(t *testing.T) {
	url := pgURL(t)
	openPostgres(t, url, "c", 0, 1)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE callrun_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err = OpenPostgres(context.Background(), url, "c", 0, 1)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("OpenPostgres on a version-99 database: %v; want ErrNewerSchema naming 99", err)
	}
}

func TestPostgresPush(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, JournalFile)
	j, _ := openJournal(t, path)
	mustAppend(t, j,
		Record{Type: TypeRun, Note: "run 1"},
		intent("a", "+15550001"), outcome("a", "+15550001", OutcomeSent),
		intent("a", "+15550002"), outcome("a", "+15550002", OutcomeFailed),
		intent("b", "+15550003"))
	j.Close()
	appendRaw(t, path, `{"t":"intent","agent":"b","pho`) // a torn last line: left behind

	url := pgURL(t)
	p := openPostgres(t, url, "c", 0, 1)
	unlock := lockStore(t, p)
	n, err := p.Push(ctx, false, path)
	if err != nil || n != 6 {
		t.Fatalf("Push = %d, %v; want 6 records", n, err)
	}
	if _, err := p.Push(ctx, false, path); !errors.Is(err, ErrCampaignExists) {
		t.Errorf("second Push: %v; want ErrCampaignExists", err)
	}
	unlock()
	want := readState(t, path)
	got, err := p.ReadState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if fmt.Sprint(got.Counts()) != fmt.Sprint(want.Counts()) || got.Len() != want.Len() {
		t.Errorf("pushed state %v (%d contacts); the file's %v (%d)", got.Counts(), got.Len(), want.Counts(), want.Len())
	}
	if e, ok := got.Lookup(Key{"a", "+15550002", 0}); !ok || e.Status != Failed || e.Attempts != 1 {
		t.Errorf("Lookup in the pushed journal: %+v, %v", e, ok)
	}
	// The whole campaign and its shards' journals go in together.
	whole := filepath.Join(t.TempDir(), "state")
	for _, fs := range []Files{{Dir: whole}} {
		unlock := lockStore(t, fs)
		j, s := openStoreJournal(t, fs)
		mustAppend(t, j, intent("a", "+15550009"))
		j.Close()
		s.Close()
		unlock()
	}
	shard := ShardFiles(filepath.Join(t.TempDir(), "state"), 1, 2)
	for _, fs := range []Files{shard} {
		unlock := lockStore(t, fs)
		j, s := openStoreJournal(t, fs)
		mustAppend(t, j, intent("a", "+15550008"), outcome("a", "+15550008", OutcomeSent))
		j.Close()
		s.Close()
		unlock()
	}
	both := openPostgres(t, url, "e", 0, 1)
	unlockBoth := lockStore(t, both)
	if n, err := both.Push(ctx, false, Files{Dir: whole}.Journal(), shard.Journal()); err != nil || n != 3 {
		t.Errorf("Push of two journals = %d, %v; want 3 records", n, err)
	}
	unlockBoth()
	if st, err := both.ReadState(ctx); err != nil || st.Len() != 2 || st.Counts()[Sent] != 1 {
		t.Errorf("the two journals pushed: %v, %v", st, err)
	}

	// Another machine's journal of the same campaign is added with merge.
	relock := lockStore(t, p)
	other := filepath.Join(t.TempDir(), JournalFile)
	oj, _ := openJournal(t, other)
	mustAppend(t, oj, intent("a", "+15550007"), outcome("a", "+15550007", OutcomeSent))
	oj.Close()
	if n, err := p.Push(ctx, true, other); err != nil || n != 2 {
		t.Errorf("Push with merge = %d, %v; want 2 records", n, err)
	}
	relock()
	if st, err := p.ReadState(ctx); err != nil || st.Len() != 4 {
		t.Errorf("after the merge: %v, %v; want 4 contacts", st, err)
	} else if s, _ := st.Status(Key{"a", "+15550007", 0}); s != Sent {
		t.Errorf("the merged contact: %q", s)
	}

	sharded := openPostgres(t, url, "d", 1, 2)
	defer lockStore(t, sharded)()
	if _, err := sharded.Push(ctx, false, path); err == nil {
		t.Errorf("Push under a shard's lock succeeded; it must hold the whole campaign")
	}
}

func TestPostgresErrorsHideThePassword(t *testing.T) {
	const password = "s3cret-Pässword/+="
	for _, dsn := range []string{
		"postgres://callrun:" + strings.ReplaceAll(password, "/", "%2F") + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=callrun password='" + password + "' dbname=db sslmode=disable connect_timeout=2",
		"postgres://callrun:" + password + "@127.0.0.1:notaport/db",
		"postgres://callrun@127.0.0.1:1/db?sslmode=disable&connect_timeout=2&password=" + url.QueryEscape(password),
	} {
		if got := PostgresPassword(dsn); got != password && !strings.Contains(dsn, "notaport") {
			t.Errorf("PostgresPassword = %q; want the password", got)
		}
		_, err := OpenPostgres(context.Background(), dsn, "c", 0, 1)
		if err == nil {
			t.Fatalf("OpenPostgres(%q) succeeded", "dsn")
		}
		for _, form := range []string{password, "s3cret", "P%C3%A4ssword"} {
			if strings.Contains(err.Error(), form) {
				t.Errorf("the error holds the password (%q): %v", form, err)
			}
		}
	}
}

func TestStoreLockAgentsTakesTurns(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			a, b := kind.open(t, "c", 0, 2), kind.open(t, "c", 1, 2)
			unlock, err := a.LockAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			waiting, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			if u, err := b.LockAgents(waiting); err == nil {
				u()
				t.Fatalf("a second LockAgents succeeded while the first held it")
			}
			if err := unlock(); err != nil {
				t.Fatal(err)
			}
			u, err := b.LockAgents(ctx)
			if err != nil {
				t.Fatalf("LockAgents once released: %v", err)
			}
			u()
		})
	}
}

// Lookup reads details back in windows of rows; whatever order the
// contacts are looked up in (a sheet in call order, sorted the other way,
// shuffled), each gets its own records.
func TestPostgresLookupInAnyOrder(t *testing.T) {
	const n = 3000
	p := openPostgres(t, pgURL(t), "c", 0, 1)
	unlock := lockStore(t, p)
	j, _ := openStoreJournal(t, p)
	phone := func(k int) string { return fmt.Sprintf("+1212%07d", k) }
	var qs []Queued
	for k := range n {
		q1, err1 := j.Enqueue(intent("a", phone(k)))
		o := outcome("a", phone(k), OutcomeFailed)
		o.Body = "body of " + phone(k)
		q2, err2 := j.Enqueue(o)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		qs = append(qs, q1, q2)
	}
	for _, q := range qs {
		if err := q.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	unlock()
	for _, order := range []string{"forward", "backward", "shuffled"} {
		st, err := p.ReadState(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ks := make([]int, n)
		for i := range ks {
			ks[i] = i
		}
		switch order {
		case "backward":
			slices.Reverse(ks)
		case "shuffled":
			rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		}
		for _, k := range ks {
			e, ok := st.Lookup(Key{"a", phone(k), 0})
			if !ok || e.Status != Failed || e.Body != "body of "+phone(k) || e.FirstAt.IsZero() || e.Attempts != 1 {
				t.Fatalf("%s: Lookup(%s) = %+v, %v", order, phone(k), e, ok)
			}
		}
		st.Close()
	}
}

// Once the tables exist, a role with the grants docs/postgres-and-shards.md
// lists runs callrun as a run, listen and callrun suppress use the store:
// it creates nothing.
func TestPostgresRunsWithTheLeastPrivileges(t *testing.T) {
	admin := pgURL(t)
	openPostgres(t, admin, "c", 0, 1) // creates the tables
	conn, err := pgx.Connect(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	role := fmt.Sprintf("caller_%d", time.Now().UnixNano())
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN PASSWORD 'least-secret'`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT SELECT, INSERT ON callrun_journal TO ` + role,
		`GRANT SELECT, INSERT, UPDATE ON callrun_runs TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON callrun_tokens TO ` + role,
		`GRANT SELECT ON callrun_schema TO ` + role,
		`GRANT SELECT, INSERT ON callrun_do_not_call, callrun_do_not_call_sources TO ` + role,
		`GRANT SELECT, INSERT ON callrun_opt_out_holds TO ` + role,
		`GRANT SELECT, INSERT ON callrun_deliveries TO ` + role,
		`GRANT SELECT, INSERT, UPDATE ON callrun_call_starts TO ` + role,
		`GRANT SELECT, INSERT ON callrun_conversations TO ` + role,
		`GRANT SELECT, INSERT, UPDATE ON callrun_report_dirs TO ` + role,
		`GRANT SELECT ON callrun_keys, callrun_erased TO ` + role,
	} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			c.Exec(context.Background(), `DROP OWNED BY `+role)
			c.Exec(context.Background(), `DROP ROLE `+role)
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "least-secret")
	p := openPostgres(t, u.String(), "c", 0, 1)
	defer lockStore(t, p)()
	// As a run opens it: the do-not-call list checked and contact
	// pressure counted in the transaction that writes each intent.
	ctx := context.Background()
	j, st, err := p.OpenJournal(ctx, JournalOptions{DoNotCall: pgList(p),
		Pressure: &Pressure{Limits: DefaultPressure, Starts: pgStarts(p), Campaign: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { j.Close(); st.Close() }()
	mustAppend(t, j, intent("a", "+15550001"), outcome("a", "+15550001", OutcomeSent))
	if e, ok := st.Lookup(Key{"a", "+15550001", 0}); !ok || e.Status != Sent {
		t.Errorf("Lookup as the least role: %+v, %v", e, ok)
	}
	// listen's and callrun suppress's writes.
	if _, err := pgList(p).Add(ctx, []DoNotCallEntry{{Number: "+15550002", Source: "suppress add"}}); err != nil {
		t.Errorf("the do-not-call list as the least role: %v", err)
	}
	imported := false
	if _, err := pgList(p).Import(ctx, func() ([]DoNotCallEntry, error) {
		if imported {
			return nil, nil
		}
		imported = true
		return []DoNotCallEntry{{Number: "+15550003", Source: "import registry.csv"}}, nil
	}); err != nil {
		t.Errorf("suppress import as the least role: %v", err)
	}
	if err := pgList(p).Each(ctx, false, func(DoNotCallEntry) error { return nil }); err != nil {
		t.Errorf("suppress list as the least role: %v", err)
	}
	if err := j.Append(intent("b", "+15550002")); !errors.Is(err, ErrDoNotCall) {
		t.Errorf("an intent to a number on the list as the least role: %v, want ErrDoNotCall", err)
	}
	if err := j.Append(intent("c", "+15550001")); !errors.Is(err, ErrHeld) {
		t.Errorf("a second call start within a day as the least role: %v, want held", err)
	}
	if err := p.Register(ctx, Place{Campaign: "c", CampaignFile: "/c.yaml", StateDir: "/s", Kind: PlaceRun, Host: "h", At: time.Now()}); err != nil {
		t.Errorf("recording the campaign's place as the least role: %v", err)
	}
	if _, err := pgStarts(p).Converse(ctx, Conversation{Number: "+15550001", At: time.Now(), Campaign: "c", Key: "k1"}); err != nil {
		t.Errorf("a conversation as the least role: %v", err)
	}
	d, err := p.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Append(Delivery{Key: "k1", At: time.Now(), Event: "call.ended", Fields: map[string]string{"phone_number": "+15550001"}}); err != nil {
		t.Errorf("a delivery as the least role: %v", err)
	}
	d.Close()
	if h, err := p.Holders(context.Background()); err != nil || len(h) != 1 {
		t.Errorf("Holders as the least role: %v, %v", h, err)
	}
	tok := pgToken(t, p, "client", testKey(9))
	for _, write := range []func() error{func() error { return tok.Save([]byte("t")) }, tok.Remove} {
		unlock := lockToken(t, tok)
		if err := write(); err != nil {
			t.Errorf("the token as the least role: %v", err)
		}
		unlock()
	}
}

// pgList is p's do-not-call list, which a database always has.
func pgList(p *Postgres) DoNotCallList { l, _ := p.DoNotCall(); return l }

// pgStarts is p's call starts, which a database always has.
func pgStarts(p *Postgres) CallStarts { s, _ := p.CallStarts(); return s }

// TestPostgresNewHolderSeesAnIntentInFlight checks the moment a run's
// lock is lost while one of its intents is being written: the write has
// found the lock held (its connection was alive when the statement
// checked) but not committed, and a second run takes the lock. The
// first run's caller will start the call once the write commits, so the
// second run must read that intent, or it would call the same contact.
func TestPostgresNewHolderSeesAnIntentInFlight(t *testing.T) {
	url := pgURL(t)
	ctx := context.Background()
	p := openPostgres(t, url, "c", 0, 1)
	defer lockStore(t, p)()
	j, _ := openStoreJournal(t, p)
	rec := intent("a", "+15550001")
	rec.At = time.Now()
	line, err := encodeRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{buf: line, recs: []pending{{rec: rec, end: len(line)}}}
	// The journal's own write, in a transaction the test commits when
	// it chooses: as a write whose commit is slow.
	tx := beginSlow(t, url)
	conn := tx.Conn()
	if err := j.sink.(*pgSink).insert(ctx, tx, b); err != nil {
		t.Fatalf("the first run's write, checked while its lock was held: %v", err)
	}
	terminate(t, url, p.lease.pid)
	other := openPostgres(t, url, "c", 0, 1)
	defer lockStore(t, other)()
	type opened struct {
		st  *State
		err error
	}
	done := make(chan opened, 1)
	go func() {
		j, st, err := other.OpenJournal(ctx, JournalOptions{})
		if err == nil {
			t.Cleanup(func() { j.Close(); st.Close() })
		}
		done <- opened{st, err}
	}()
	// Commit once the second run's replay has come back, or is waiting
	// for a lock the write holds.
	for waiting := false; !waiting; {
		select {
		case o := <-done:
			done <- o
			waiting = true
		default:
			if err := conn.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_locks WHERE NOT granted`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if st, _ := o.st.Status(Key{"a", "+15550001", 0}); st != Uncertain {
		t.Errorf("the second run reads the first run's intent as %q; want it uncertain (the call may be starting)", st)
	}
}

// TestPostgresRefusesARunOnAMachineWhoseClockIsOff checks that a run
// whose machine's clock is minutes from the database's takes no lock, so
// starts no call: its call starts would count contact pressure by a
// clock the other machines do not keep.
func TestPostgresRefusesARunOnAMachineWhoseClockIsOff(t *testing.T) {
	url := pgURL(t)
	for _, off := range []time.Duration{-5 * time.Minute, 3 * time.Minute} {
		p := openPostgres(t, url, "c", 0, 1)
		p.clock = func() time.Time { return time.Now().Add(off) }
		unlock, err := p.Lock(context.Background())
		if err == nil {
			unlock()
			t.Fatalf("clock off by %s: the run took the lock", off)
		}
		way := "behind"
		if off > 0 {
			way = "ahead of"
		}
		if want := fmt.Sprintf("is %s %s the clock of", off.Abs(), way); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "NTP") {
			t.Errorf("clock off by %s: %v; want it to say %q and how to fix it", off, err, want)
		}
		// The lock is free again for a machine whose clock is right.
		q := openPostgres(t, url, "c", 0, 1)
		q.clock = func() time.Time { return time.Now().Add(off / 10) }
		unlock, err = q.Lock(context.Background())
		if err != nil {
			t.Fatalf("a clock %s off, after one %s off was refused: %v", off/10, off, err)
		}
		unlock()
	}
}

// TestPostgresSessionsCompileNothing: callrun's sessions run with JIT
// compilation off, whatever the database's own settings: with it, the
// server compiled each intent's INSERT (0.4-0.6 s before every call
// start) while a large import was not yet analyzed.
func TestPostgresSessionsCompileNothing(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET jit = on', current_database()); EXECUTE format('ALTER DATABASE %I SET jit_above_cost = 0', current_database()); END $$`); err != nil {
		t.Fatal(err)
	}
	p := openPostgres(t, url, "c", 0, 1)
	for range 3 { // the pool's connections, one after another
		var jit, above string
		if err := p.pool.QueryRow(ctx, `SELECT current_setting('jit'), current_setting('jit_above_cost')`).Scan(&jit, &above); err != nil {
			t.Fatal(err)
		}
		if jit != "off" || above != "0" {
			t.Fatalf("a session of callrun's has jit = %s, jit_above_cost = %s; want jit off (the database's own jit_above_cost, 0, read)", jit, above)
		}
	}
}

// TestPostgresAgentsLockOutlivesIdleSessionTimeout: the agents lock's
// connection sits idle while the run waits for a created agent to be
// ready; a database's idle_session_timeout (PostgreSQL 14 and later)
// ended it, and with it the lock, so a second shard took the lock and,
// not finding the first one's agent listed yet, created another. The
// wait below is the server's own timeout passing, not a test of timing.
func TestPostgresAgentsLockOutlivesIdleSessionTimeout(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	pgtest.IdleSessionTimeout(t, url, "200ms")
	a, b := openPostgres(t, url, "c", 0, 2), openPostgres(t, url, "c", 1, 2)
	unlock, err := a.LockAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // five times the server's idle_session_timeout
	waiting, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if u, err := b.LockAgents(waiting); err == nil {
		u()
		t.Errorf("the other shard took the agents lock while the first held it: its idle connection was ended")
	}
	if err := unlock(); err != nil {
		t.Logf("unlock: %v", err) // the connection is back in the pool either way
	}
}
