package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// TestErasedOptOutIsNeverCalled, files, plain and with AllowContact: A
// opts out (`callrun suppress add`) and is erased from the do-not-call
// list; a campaign over a sheet with A, B and C then calls B and C, not
// A (the sandbox's ledger), and CALLRUN_HOME holds A's number in no
// form: neither as text nor as the 8 bytes of its packed key in the
// list's index. With the store's erasure key taken away, a run over a
// new contact D refuses and the ledger is unchanged. Files and
// PostgreSQL (whose table callrun_do_not_call then holds A in no form).
func TestErasedOptOutIsNeverCalled(t *testing.T) {
	for _, kind := range e2eStores {
		for _, allow := range []bool{false, true} {
			t.Run(kind+"/allow-contact="+strconv.FormatBool(allow), func(t *testing.T) { testErasedOptOut(t, kind, allow) })
		}
	}
}

func testErasedOptOut(t *testing.T, kind string, allowContact bool) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	srv, path := erasureCampaign(t, db)
	const a, b, c, d = "+14155550142", "+14155550143", "+14155550144", "+14155550145"
	dir := filepath.Dir(path)
	home := os.Getenv("CALLRUN_HOME")
	sheet := func(phones ...string) { writePeople(t, dir, phones...) }
	calls := func() map[string]int { return callsByNumber(srv.Calls()) }

	if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	s, _, keys := openErasure(t, path, campaign.LoadOptions{}, false)
	list, err := s.DoNotCall()
	if err != nil {
		t.Fatal(err)
	}
	n, err := list.EraseDoNotCall(ctx, []string{a}, store.EraseDoNotCallOptions{EraseOptions: store.EraseOptions{Keys: keys}, AllowContact: allowContact})
	if err != nil || n.Replaced != 1 {
		t.Fatalf("erasing A from the list: %+v, %v", n, err)
	}

	sheet(a, b, c)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if got := calls(); got[a] != 0 || got[b] != 1 || got[c] != 1 || len(got) != 2 {
		t.Fatalf("ledger: %v; want B and C once each, never A", got)
	}

	digits := a[1:]
	v, _ := strconv.ParseUint(digits, 10, 64)
	packed := binary.BigEndian.AppendUint64(nil, uint64(len(digits))<<56|v)
	if db != "" {
		if rows := pgText(t, db, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM callrun_do_not_call t`); strings.Contains(rows, digits) {
			t.Errorf("callrun_do_not_call still holds A:\n%s", rows)
		}
	}
	err = filepath.WalkDir(home, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == home {
			return nil // a database's store made no home files
		}
		if err != nil || e.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(body, []byte(digits)) || bytes.Contains(body, packed) {
			t.Errorf("%s still holds A's number", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The export gives other systems numbers only: the erased person's
	// entry is left out, and said so.
	if code, out := runAppOut(t, "suppress", "export", path); code != 0 || strings.Contains(out, "erased person)") || !strings.Contains(out, "1 erased people on the list are not exported") {
		t.Errorf("suppress export: exit %d\n%s", code, out)
	}

	// The key taken away: nobody is called.
	hideKey(t, ctx, db)
	sheet(a, b, c, d)
	if code, out := runAppOut(t, "run", path); code == 0 || !strings.Contains(out, "erasure key") {
		t.Errorf("a run whose list's key is missing: exit %d, want an error naming the erasure key\n%s", code, out)
	}
	if got := calls(); got[a] != 0 || got[d] != 0 || len(got) != 2 {
		t.Fatalf("ledger after the key was taken away: %v; want only B and C", got)
	}
}
