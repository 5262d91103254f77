package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/jackc/pgx/v5"
)

// TestErasedContactIsNeverCalledAgain, files and PostgreSQL: a campaign
// calls A (its call's outcome unknown: uncertain), then B and C (sent);
// A is erased from the journal, first by an erase killed before its
// replace and one killed after it, then whole. The journal holds A's
// number in no form, a second erase changes nothing, a callrun whose
// store has lost its erasure key refuses to run, and resumes (`callrun
// run --retry-uncertain`, and in process plain and with
// --retry-uncertain --retry-failed, a month on, when no contact pressure
// holds anyone) call nobody new: the sandbox's ledger has each of A, B
// and C once.
func TestErasedContactIsNeverCalledAgain(t *testing.T) {
	for _, kind := range []string{"files", "postgres"} {
		t.Run(kind, func(t *testing.T) { testErasedContactNeverCalled(t, kind) })
	}
}

func testErasedContactNeverCalled(t *testing.T, kind string) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	srv, path := erasureCampaign(t, db)
	const a, b, c = "+14155550132", "+14155550133", "+14155550134"
	dir := filepath.Dir(path)
	sheet := func(phones ...string) { writePeople(t, dir, phones...) }
	calls := func() map[string]int { return callsByNumber(srv.Calls()) }

	// A's call start is answered 500 after the call was placed: uncertain.
	sheet(a)
	srv.SetFaults(sandbox.Faults{Share500: 1})
	if code, out := runAppOut(t, "run", path); code != run.ExitIncomplete {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	srv.SetFaults(sandbox.Faults{})
	sheet(a, b, c)
	if code, out := runAppOut(t, "run", path); code != run.ExitIncomplete { // A is still uncertain
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	if n := calls(); n[a] != 1 || n[b] != 1 || n[c] != 1 || len(n) != 3 {
		t.Fatalf("ledger before the erase: %v; want A, B and C once each", n)
	}

	s, _, keys := openErasure(t, path, campaign.LoadOptions{}, false)
	journal := func() string {
		t.Helper()
		if db == "" {
			b, err := os.ReadFile(filepath.Join(s.ReportDir(), store.JournalFile))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		conn, err := pgx.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var text string
		if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(line || E'\n', '' ORDER BY id), '') FROM callrun_journal`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		return text
	}
	resume := func(what string, o run.Options) {
		t.Helper()
		before := len(srv.Calls())
		o.Path = path
		o.Now = func() time.Time { return time.Now().Add(31 * 24 * time.Hour) } // no contact pressure holds anyone
		if err := run.Campaign(ctx, nolog, o, io.Discard); err != nil {
			var ee *run.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if after := srv.Calls(); len(after) != before {
			t.Errorf("%s called %d more: %v", what, len(after)-before, after[before:])
		}
	}
	erase := func(opts store.EraseOptions) (store.EraseCounts, error) {
		opts.Keys, opts.At = keys, time.Now()
		return s.EraseJournal(ctx, []string{a}, opts)
	}
	crash := errors.New("killed")

	// Killed before the replace: the journal as it was, and a resume
	// calls nobody new.
	old := journal()
	if _, err := erase(store.EraseOptions{BeforeReplace: func() error { return crash }}); !errors.Is(err, crash) {
		t.Fatalf("erase killed before its replace: %v", err)
	}
	if journal() != old {
		t.Error("an erase killed before its replace changed the journal")
	}
	resume("a resume after an erase killed before its replace", run.Options{})

	// Killed after the replace: the journal is the new one.
	if _, err := erase(store.EraseOptions{AfterReplace: func() error { return crash }}); !errors.Is(err, crash) {
		t.Fatalf("erase killed after its replace: %v", err)
	}
	erased := journal()
	for _, form := range []string{a, strings.TrimPrefix(a, "+"), "4155550132"} {
		if strings.Contains(erased, form) {
			t.Errorf("the journal still holds A as %q:\n%s", form, erased)
		}
	}
	if !strings.Contains(erased, `"t":"erased"`) || !strings.Contains(erased, b) || !strings.Contains(erased, c) {
		t.Errorf("the journal after the erase lost more than A, or has no tombstone:\n%s", erased)
	}
	if n, err := erase(store.EraseOptions{}); err != nil || n != (store.EraseCounts{}) || journal() != erased {
		t.Errorf("erasing again: %+v, %v; the journal changed: %v", n, err, journal() != erased)
	}

	// callrun finds A through the store's own key: a run calls nobody.
	before := len(srv.Calls())
	if code, out := runAppOut(t, "run", "--retry-uncertain", path); code != 0 || len(srv.Calls()) != before {
		t.Errorf("a run with the store's key: exit %d, %d calls\n%s", code, len(srv.Calls())-before, out)
	}
	// A store that has lost its key refuses, rather than take A for
	// someone new.
	hideKey(t, ctx, db)
	if code, out := runAppOut(t, "run", "--retry-uncertain", path); code == 0 || !strings.Contains(out, "erasure key") || !strings.Contains(out, "restore it") {
		t.Errorf("a run without the key: exit %d\n%s", code, out)
	}
	if n := len(srv.Calls()); n != before {
		t.Errorf("a run without the key called %d", n-before)
	}
	restoreKey(t, ctx, db)

	resume("a resume", run.Options{})
	resume("a resume with --retry-uncertain --retry-failed", run.Options{RetryUncertain: true, RetryFailed: true})
	if n := calls(); n[a] != 1 || n[b] != 1 || n[c] != 1 || len(n) != 3 {
		t.Errorf("ledger: %v; want A, B and C once each", n)
	}
	// The report of the last resume never shows A as one to call.
	if row := readReportBy(t, "row", filepath.Join(s.ReportDir(), "report.csv"))["2"]; row["status"] != string(store.Erased) || row["phone_number"] != "" {
		t.Errorf("A's report row: %v, want status erased and no number", row)
	}
}

// hideKey takes the store's erasure key away, as a backup restored
// without it would: the key file aside, or the table's rows into another.
func hideKey(t *testing.T, ctx context.Context, db string) {
	t.Helper()
	if db == "" {
		home, err := store.Home()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(home, store.ErasureKeyFileName), filepath.Join(home, "key.aside")); err != nil {
			t.Fatal(err)
		}
		return
	}
	pgExec(t, ctx, db, `CREATE TABLE key_aside AS SELECT * FROM callrun_keys; DELETE FROM callrun_keys`)
}

// restoreKey puts back what hideKey took away.
func restoreKey(t *testing.T, ctx context.Context, db string) {
	t.Helper()
	if db == "" {
		home, err := store.Home()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(home, "key.aside"), filepath.Join(home, store.ErasureKeyFileName)); err != nil {
			t.Fatal(err)
		}
		return
	}
	pgExec(t, ctx, db, `INSERT INTO callrun_keys SELECT * FROM key_aside; DROP TABLE key_aside`)
}

// pgExec runs sql on the database at db.
func pgExec(t *testing.T, ctx context.Context, db, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

// erasureCampaign starts a sandbox and writes testCampaign's campaign for
// it, its state in the database db ("": in files), logged in; it returns
// the sandbox and the campaign file's path. The erasure tests start so.
func erasureCampaign(t *testing.T, db string) (*sandbox.Server, string) {
	t.Helper()
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(func() {
		srv.Config.Close()
		srv.Close()
	})
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	t.Setenv("TEST_SECRET", sandbox.DefaultClientSecret)
	if db != "" {
		t.Setenv("CALLRUN_TOKEN_FILE", "") // the token is kept in the database
		t.Setenv("CALLRUN_DATABASE_URL", db)
		t.Setenv(store.TokenKeyVar, e2eTokenKey)
		appendFile(t, path, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n")
	}
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	return srv, path
}

// writePeople writes the campaign's contacts.csv in dir: a row for each
// of phones, named Person A, Person B and on.
func writePeople(t *testing.T, dir string, phones ...string) {
	t.Helper()
	body := "Phone,First Name\n"
	for i, p := range phones {
		body += p + ",Person " + string(rune('A'+i)) + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
