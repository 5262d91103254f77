package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestSuppressImportKilledPostgres: `suppress import` of three batches'
// worth of numbers into PostgreSQL, killed (SIGKILL) once its first batch
// is on the list, leaves whole batches there and nothing of the one it
// was in; the import again puts the rest on, counting those it finds
// there; then plan and the run, checked against the sandbox's ledger,
// call neither of the two contacts the file holds and everyone else once.
func TestSuppressImportKilledPostgres(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	contacts := e2ePhones(8)
	db := e2eDatabase(t, "postgres")
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2, postgres: db})

	const n = 3 * importBatch
	csvPath := writeRegistry(t, t.TempDir(), 0, n-2, contacts[0].E164, contacts[2].E164)

	admin := pgAdmin(t, db)
	ctx := context.Background()
	count := func() int {
		t.Helper()
		var c int
		// The table is made by the import's first connection.
		if err := admin.QueryRow(ctx, `SELECT CASE WHEN to_regclass('callrun_do_not_call') IS NULL THEN 0 ELSE (SELECT count(*) FROM callrun_do_not_call) END`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	p := e.start("suppress", "import", e.path, csvPath)
	deadline := time.Now().Add(2 * time.Minute)
	for count() == 0 {
		select {
		case <-p.done:
			t.Fatalf("the import ended before it was killed: %s", p.result())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch on the list after 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.signal(t, syscall.SIGKILL)
	if res := p.wait(t, 30*time.Second); !res.signaled {
		t.Fatalf("the import ended before it was killed: %s", res)
	}
	// Once the killed import's sessions are gone (the server rolls back
	// what they had not committed), the list holds what it leaves.
	for {
		var sessions int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&sessions); err != nil {
			t.Fatal(err)
		}
		if sessions == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of the killed import still open", sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	left := count()
	if left%importBatch != 0 || left == 0 || left == n {
		t.Fatalf("%d numbers on the list after the kill, want whole batches of %d, fewer than %d", left, importBatch, n)
	}

	again := e.run(2*time.Minute, "suppress", "import", e.path, csvPath)
	m := regexp.MustCompile(`(\d+) number\(s\) of .* put on .*; (\d+) on it already`).FindStringSubmatch(again.stdout)
	if again.code != 0 || m == nil {
		t.Fatalf("suppress import again: %s", again)
	}
	if put, already := atoi(t, m[1]), atoi(t, m[2]); put != n-left || already != left {
		t.Errorf("suppress import again put %d on and found %d on, want %d and %d", put, already, n-left, left)
	}
	if c := count(); c != n {
		t.Errorf("%d entries after the import again, want %d", c, n)
	}

	e.runSkipping(0, 2)
}

// runSkipping checks that plan counts the contacts skip (by index) as on
// the do-not-call list, runs the campaign, and checks against the
// sandbox's ledger that none of them was called and everyone else once.
func (e *e2eCampaign) runSkipping(skip ...int) {
	e.t.Helper()
	if pl := e.plan(); pl.Totals.Suppressed != len(skip) || pl.Totals.ToCall != len(e.contacts)-len(skip) {
		e.t.Fatalf("plan: %+v, want contacts %v on the do-not-call list", pl.Totals, skip)
	}
	if res := e.run(time.Minute, "run", e.path); res.code != 0 {
		e.t.Fatalf("run: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(e.t)
	for i, c := range e.contacts {
		want := 1
		if slices.Contains(skip, i) {
			want = 0
		}
		if l.placed[c.E164] != want {
			e.t.Errorf("contact %d (%s) was placed %d times, want %d", i, c.E164, l.placed[c.E164], want)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSuppressImportStoppedSaysWhatWentOn: an import whose batches the
// database refuses once one has committed (a trigger, as a full disk or a
// lost server would) stops with an error that says how many numbers of
// the file went on, and the list holds just those, in whole batches.
func TestSuppressImportStoppedSaysWhatWentOn(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	db := e2eDatabase(t, "postgres")
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(2), perSecond: 50, concurrency: 2, postgres: db})
	if res := e.run(time.Minute, "suppress", "add", e.path, "+14155550100"); res.code != 0 {
		t.Fatalf("suppress add: %s", res)
	}
	admin := pgAdmin(t, db)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `
CREATE TABLE import_went_on (n int);
CREATE FUNCTION refuse_after_one() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM import_went_on) THEN
		RAISE EXCEPTION 'refused for the test';
	END IF;
	INSERT INTO import_went_on VALUES (1);
	RETURN NULL;
END $$;
CREATE TRIGGER refuse_after_one BEFORE INSERT ON callrun_do_not_call FOR EACH STATEMENT EXECUTE FUNCTION refuse_after_one();`); err != nil {
		t.Fatal(err)
	}
	const n = 3 * importBatch
	csvPath := writeRegistry(t, t.TempDir(), 0, n)

	res := e.run(2*time.Minute, "suppress", "import", e.path, csvPath)
	m := regexp.MustCompile(`(\d+) number\(s\) of \S+ were put on the list before the import stopped; run it again`).FindStringSubmatch(res.stderr)
	if res.code == 0 || m == nil || !strings.Contains(res.stderr, "refused for the test") {
		t.Fatalf("suppress import: %s; want it to fail, with the database's error and how many numbers went on", res)
	}
	var onList int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM callrun_do_not_call`).Scan(&onList); err != nil {
		t.Fatal(err)
	}
	if put := atoi(t, m[1]); put != onList-1 || put == 0 || put%importBatch != 0 || put == n {
		t.Fatalf("the error says %d numbers went on; the list holds %d besides the one added before, want the same, in whole batches of %d, fewer than %d", put, onList-1, importBatch, n)
	}
}

// writeRegistry writes registry.csv in dir, a do-not-call list under a
// "Phone Number" header: n numbers in E.164, benchPhone(first) on, then
// extra. It returns the file's path.
func writeRegistry(tb testing.TB, dir string, first, n int, extra ...string) string {
	tb.Helper()
	path := filepath.Join(dir, "registry.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("Phone Number\n")
	for i := range n {
		area, exch, line := benchPhone(first + i)
		fmt.Fprintf(w, "+1%s%d%04d\n", area, exch, line)
	}
	for _, e := range extra {
		fmt.Fprintln(w, e)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return path
}
