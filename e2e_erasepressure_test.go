package main

import (
	"bytes"
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

// TestErasedStartStillHoldsTheNumber, files and PostgreSQL: campaign 1
// calls A; A's call starts and conversations are erased with the store's
// real key, and CALLRUN_HOME's starts and conversations files (the
// database's rows) hold A's number in no form. The same day campaign 2, in another state directory, does
// not call A: the hashed start holds it under the default contact
// pressure (one call a day); with the erasure key taken away campaign 2
// refuses to run and calls nobody; a day later by its clock the hashed
// start no longer holds A, and campaign 2 calls it. The sandbox's ledger
// counts each call.
func TestErasedStartStillHoldsTheNumber(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testErasedStartHolds(t, kind) })
	}
}

func testErasedStartHolds(t *testing.T, kind string) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(func() {
		srv.Config.Close()
		srv.Close()
	})
	const a = "+14155550132" // testCampaign's one contact
	makeCampaign := campaignsOnOneStore(t, srv.URL, db)
	newCampaign := func(name string) string { return makeCampaign(name, "") }
	placed := func() int { return callsByNumber(srv.Calls())[a] }

	one := newCampaign("campaign-1")
	home := os.Getenv("CALLRUN_HOME") // both campaigns' store
	if err := runCampaign(ctx, nolog, runOptions{Path: one}, io.Discard); err != nil {
		t.Fatalf("campaign 1: %v", err)
	}
	if n := placed(); n != 1 {
		t.Fatalf("A called %d times by campaign 1, want 1", n)
	}
	s, _, keys := openErasure(t, one, campaign.LoadOptions{}, false)
	starts, err := s.CallStarts()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := starts.Converse(ctx, store.Conversation{Number: a, At: time.Now(), Campaign: "campaign-1", Key: "delivery-1"}); err != nil {
		t.Fatal(err)
	}
	n, err := starts.Erase(ctx, []string{a}, store.EraseOptions{Keys: keys})
	if err != nil || n != (store.PressureEraseCounts{Starts: 1, Conversations: 1}) {
		t.Fatalf("erasing A from the call starts: %+v, %v; want its start and its conversation", n, err)
	}
	var conn *pgx.Conn
	if db != "" {
		if conn, err = pgx.Connect(ctx, db); err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var held int
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM callrun_call_starts WHERE number || start_id LIKE '%5550132%') + (SELECT count(*) FROM callrun_conversations WHERE number LIKE '%5550132%')`).Scan(&held); err != nil || held != 0 {
			t.Errorf("after the erase, %d rows of the call starts and conversations hold A (%v), want none", held, err)
		}
	}
	entries, err := os.ReadDir(home)
	if err != nil && !errors.Is(err, os.ErrNotExist) { // a database's store writes none
		t.Fatal(err)
	}
	searched := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "call-starts") && !strings.HasPrefix(e.Name(), "conversations") || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		searched++
		b, err := os.ReadFile(filepath.Join(home, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{"4155550132", "555-0132", "5550132"} {
			if bytes.Contains(b, []byte(form)) {
				t.Errorf("%s holds A's number as %q after the erase:\n%s", e.Name(), form, b)
			}
		}
	}
	if want := map[bool]int{true: 2, false: 0}[db == ""]; searched != want {
		t.Errorf("searched %d starts and conversations files in CALLRUN_HOME, want the 2 written", searched)
	}

	// The same day, campaign 2: held back by the hashed start.
	two := newCampaign("campaign-2")
	sameDay := func() time.Time { return time.Now().Add(2 * time.Hour) }
	err = runCampaign(ctx, nolog, runOptions{Path: two, Now: sameDay}, io.Discard)
	if code := exitCode(ctx, err); code != run.ExitTryLater {
		t.Errorf("campaign 2 the same day: exit %d (%v), want %d: A left pending", code, err, run.ExitTryLater)
	}
	if n := placed(); n != 1 {
		t.Fatalf("A called %d times after campaign 2 the same day, want campaign 1's one: its erased start did not hold it", n)
	}
	hist, err := starts.History(ctx, a)
	if err != nil || len(hist) != 1 || hist[0].Hash == "" {
		t.Fatalf("history of A: %+v, %v; want campaign 1's start, hashed", hist, err)
	}
	rows := readReportRows(t, filepath.Join(filepath.Dir(two), ".callrun", "campaign-2", "report.csv"))
	until := hist[0].At.Add(24 * time.Hour).UTC().Format(time.RFC3339)
	if r := rows[a]; r["status"] != "pending" || !strings.Contains(r["reason"], "may be called again from "+until) {
		t.Errorf("campaign 2's report row of A: %v; want pending, held by the erased start until %s", r, until)
	}

	// The key taken away: campaign 2 cannot tell whom the hashes are of,
	// and calls nobody.
	keyPath := filepath.Join(home, store.ErasureKeyFileName)
	var key []byte
	if db == "" {
		if key, err = os.ReadFile(keyPath); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(keyPath); err != nil {
			t.Fatal(err)
		}
	} else if _, err := conn.Exec(ctx, `ALTER TABLE callrun_keys RENAME TO callrun_keys_away; CREATE TABLE callrun_keys (LIKE callrun_keys_away INCLUDING ALL)`); err != nil {
		t.Fatal(err)
	}
	nextDay := func() time.Time { return time.Now().Add(25 * time.Hour) }
	if err := runCampaign(ctx, nolog, runOptions{Path: two, Now: nextDay}, io.Discard); !errors.Is(err, store.ErrErasureKeyMissing) {
		t.Errorf("campaign 2 without the erasure key: %v, want %v", err, store.ErrErasureKeyMissing)
	}
	if n := placed(); n != 1 {
		t.Fatalf("A called %d times by a campaign without the erasure key, want 1", n)
	}
	if db == "" {
		if err := os.WriteFile(keyPath, key, 0o600); err != nil {
			t.Fatal(err)
		}
	} else if _, err := conn.Exec(ctx, `DROP TABLE callrun_keys; ALTER TABLE callrun_keys_away RENAME TO callrun_keys`); err != nil {
		t.Fatal(err)
	}

	// A day on: the hashed start holds A no more.
	if err := runCampaign(ctx, nolog, runOptions{Path: two, Now: nextDay}, io.Discard); err != nil {
		t.Fatalf("campaign 2 a day later: %v", err)
	}
	if n := placed(); n != 2 {
		t.Errorf("A called %d times after campaign 2 a day later, want 2", n)
	}
}
