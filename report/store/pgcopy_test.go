package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPGDoNotCallEntriesReadBackAsWritten: entries written by Add (the
// binary COPY that appendDoNotCallCopy encodes) read back field for
// field: times before the year 2000, far after it and to the
// microsecond, removals, text in any script, empty and long fields.
func TestPGDoNotCallEntriesReadBackAsWritten(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	l := pgList(p)
	long := strings.Repeat("ŝource ☎ ", 7000)
	want := []DoNotCallEntry{
		{Number: "+14155550100", At: time.Date(1999, 12, 31, 23, 59, 59, 999_999_000, time.UTC), Source: "import /tmp/registry.csv"},
		{Number: "+14155550101", At: time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC), Source: "suppress add"},
		{Number: "+14155550100", At: time.Date(2026, 11, 28, 23, 1, 2, 345_678_000, time.UTC), Removed: true, Source: "suppress remove", Reason: "a wrong number, said Zoë 👍"},
		{Number: "+442071838750", At: time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), Source: long},
		{Number: "+33142685300", At: time.Date(2999, 6, 30, 12, 0, 0, 0, time.UTC), Source: ""},
	}
	for _, e := range want {
		if wrote, err := l.Add(ctx, []DoNotCallEntry{e}); err != nil || len(wrote) != 1 {
			t.Fatalf("Add(%+v) wrote %d: %v", e, len(wrote), err)
		}
	}
	var got []DoNotCallEntry
	if err := l.(*pgDoNotCall).Each(ctx, false, func(e DoNotCallEntry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read back %d entries, wrote %d", len(got), len(want))
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Number != w.Number || g.Hash != w.Hash || !g.At.Equal(w.At) || g.Removed != w.Removed || g.Source != w.Source || g.Reason != w.Reason {
			t.Errorf("entry %d read back as %+v, written as %+v", i, short(g), short(w))
		}
	}
}

// short is e with its source cut to 40 bytes, for a readable failure.
func short(e DoNotCallEntry) DoNotCallEntry {
	if len(e.Source) > 40 {
		e.Source = e.Source[:40] + "..."
	}
	return e
}

// TestPGDoNotCallImportKeepsItsSourceOnce: a database of version 8,
// whose rows hold their own source, is migrated; then an import's rows
// share their source, kept once in callrun_do_not_call_sources (a second
// import of the same file shares it too), while Add's rows keep their
// own; the history and the current list read every row's source back,
// old rows and new.
func TestPGDoNotCallImportKeepsItsSourceOnce(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	openPostgres(t, url, "any", 0, 1).Close()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if _, err := admin.Exec(ctx, `DROP TABLE callrun_do_not_call_sources; ALTER TABLE callrun_do_not_call DROP COLUMN source_id; UPDATE callrun_schema SET version = 8;
INSERT INTO callrun_do_not_call (number, at, source) VALUES ('+14155550100', '2026-11-01T09:00:00Z', 'import /old/registry.csv')`); err != nil {
		t.Fatal(err)
	}
	l := pgList(openPostgres(t, url, "any", 0, 1)).(*pgDoNotCall)
	imported := func(source string, numbers ...string) {
		t.Helper()
		var batches [][]string
		for _, n := range numbers { // a batch a number: each asks for its source
			batches = append(batches, []string{n})
		}
		if _, err := l.Import(ctx, importBatches(source, batches...)); err != nil {
			t.Fatal(err)
		}
	}
	imported("import /data/registry.csv", "+14155550101", "+14155550102", "+14155550103")
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550104", At: at, Source: "suppress add"}}); err != nil {
		t.Fatal(err)
	}
	imported("import /data/registry.csv", "+14155550105")
	imported("import /data/state-registry.csv", "+14155550106")
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550102", At: at, Removed: true, Source: "suppress remove", Reason: "asked"}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"+14155550100": "import /old/registry.csv",
		"+14155550101": "import /data/registry.csv",
		"+14155550102": "import /data/registry.csv",
		"+14155550103": "import /data/registry.csv",
		"+14155550104": "suppress add",
		"+14155550105": "import /data/registry.csv",
		"+14155550106": "import /data/state-registry.csv",
	}
	var history []string
	if err := l.Each(ctx, false, func(e DoNotCallEntry) error {
		history = append(history, e.Number+" "+e.Source)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// An import's batches go in two at once: their rows in any order.
	slices.Sort(history[1:4])
	wantHistory := "[+14155550100 import /old/registry.csv +14155550101 import /data/registry.csv +14155550102 import /data/registry.csv +14155550103 import /data/registry.csv +14155550104 suppress add +14155550105 import /data/registry.csv +14155550106 import /data/state-registry.csv +14155550102 suppress remove]"
	if fmt.Sprint(history) != wantHistory {
		t.Errorf("the history reads\n%v\nwant\n%s", history, wantHistory)
	}
	current := map[string]string{}
	if err := l.Each(ctx, true, func(e DoNotCallEntry) error {
		current[e.Number] = e.Source
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	delete(want, "+14155550102")
	if fmt.Sprint(current) != fmt.Sprint(want) {
		t.Errorf("the list reads\n%v\nwant\n%v", current, want)
	}
	var sources, shared, own int
	if err := admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM callrun_do_not_call_sources),
	(SELECT count(*) FROM callrun_do_not_call WHERE source = '' AND source_id IS NOT NULL),
	(SELECT count(*) FROM callrun_do_not_call WHERE source <> '' AND source_id IS NULL)`).Scan(&sources, &shared, &own); err != nil {
		t.Fatal(err)
	}
	if sources != 2 || shared != 5 || own != 3 {
		t.Errorf("%d sources kept once, %d rows that share one, %d with their own; want 2, 5 (the imports') and 3", sources, shared, own)
	}
}
