package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// TestErasedOptOutIsNeverCalledPostgres is TestErasedOptOutIsNeverCalled
// over PostgreSQL's list: A opts out, is erased from the list (with and
// without AllowContact), and a run over A, B and C calls B and C only,
// counted in the sandbox's ledger; with the database's erasure key gone,
// the run stops naming it and calls nobody new.
func TestErasedOptOutIsNeverCalledPostgres(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run("allow-contact="+strconv.FormatBool(allow), func(t *testing.T) {
			ctx := context.Background()
			db := e2eDatabase(t, "postgres")
			srv, path := erasureCampaign(t, db)
			const a, b, c, d = "+14155550142", "+14155550143", "+14155550144", "+14155550145"
			calls := func() map[string]int { return callsByNumber(srv.Calls()) }
			if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
				t.Fatalf("suppress add: exit %d\n%s", code, out)
			}
			s, _, keys := openErasure(t, path, campaign.LoadOptions{}, false)
			list, err := s.DoNotCall()
			if err != nil {
				t.Fatal(err)
			}
			n, err := list.EraseDoNotCall(ctx, []string{a}, store.EraseDoNotCallOptions{EraseOptions: store.EraseOptions{Keys: keys}, AllowContact: allow})
			if err != nil || n.Replaced != 1 || n.Added != 0 {
				t.Fatalf("erasing A from the list: %+v, %v", n, err)
			}
			if rows := pgText(t, db, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM callrun_do_not_call t`); strings.Contains(rows, a[2:]) {
				t.Errorf("callrun_do_not_call still holds A:\n%s", rows)
			}
			writePeople(t, filepath.Dir(path), a, b, c)
			if code, out := runAppOut(t, "run", path); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			if got := calls(); got[a] != 0 || got[b] != 1 || got[c] != 1 || len(got) != 2 {
				t.Fatalf("ledger: %v; want B and C once each, never A", got)
			}
			pgText(t, db, `WITH k AS (DELETE FROM callrun_keys RETURNING 1) SELECT count(*)::text FROM k`)
			writePeople(t, filepath.Dir(path), a, b, c, d)
			if code, out := runAppOut(t, "run", path); code == 0 || !strings.Contains(out, "erasure key") {
				t.Errorf("a run whose list's key is missing: exit %d, want an error naming the erasure key\n%s", code, out)
			}
			if got := calls(); got[a] != 0 || got[d] != 0 || len(got) != 2 {
				t.Fatalf("ledger after the key was taken away: %v; want only B and C", got)
			}
		})
	}
}
