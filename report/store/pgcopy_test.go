package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPGDoNotCallEntriesReadBackAsWritten: entries written by Add (the
// binary COPY that doNotCallCopy encodes) read back field for
// field: times before the year 2000, far after it and to the
// microsecond, removals, text in any script, empty and long fields, and
// an Add of more rows than a chunk of the COPY holds.
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
	// Then 1,500 in one Add: rows encoded a chunk at a time.
	var bulk []DoNotCallEntry
	for i := range 1500 {
		bulk = append(bulk, DoNotCallEntry{Number: fmt.Sprintf("+1212555%04d", i), At: want[2].At.Add(time.Duration(i) * time.Microsecond), Source: fmt.Sprintf("bulk %d", i)})
	}
	if wrote, err := l.Add(ctx, bulk); err != nil || len(wrote) != len(bulk) {
		t.Fatalf("Add of %d wrote %d: %v", len(bulk), len(wrote), err)
	}
	want = append(want, bulk...)
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
	url, admin := pgMigrated(t)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if _, err := admin.Exec(ctx, `DROP TABLE callrun_do_not_call_sources; DROP TABLE callrun_agents_created; ALTER TABLE callrun_do_not_call DROP COLUMN source_id; UPDATE callrun_schema SET version = 8;
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

// TestPGDoNotCallImportReportsTheBatchThatFailed: a batch that fails
// stops the import with its own error, even when the next batch's
// source is being added at that moment (another transaction holds the
// same source, uncommitted, so the lookup waits until the failure
// cancels it).
func TestPGDoNotCallImportReportsTheBatchThatFailed(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	l := pgList(openPostgres(t, url, "any", 0, 1)).(*pgDoNotCall)
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	key := sha256.Sum256([]byte("import b.csv"))
	if _, err := tx.Exec(ctx, `INSERT INTO callrun_do_not_call_sources (key, source) VALUES ($1, 'import b.csv')`, key[:]); err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err = l.Import(ctx, func() ([]DoNotCallEntry, error) {
		switch calls++; calls {
		case 1:
			return []DoNotCallEntry{{Number: "", Source: "import a.csv"}}, nil // add refuses it
		case 2:
			return []DoNotCallEntry{{Number: "+14155550199", Source: "import b.csv"}}, nil
		}
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "needs its number") {
		t.Fatalf("Import: %v; want the first batch's error (a do-not-call entry needs its number)", err)
	}
}

// TestDoNotCallCopyStreams: the COPY stream reads the same whatever the
// reads' sizes, holds a chunk of rows at a time, not the whole stream,
// and is the header and the trailer alone for no entry.
func TestDoNotCallCopyStreams(t *testing.T) {
	at := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)
	var entries []DoNotCallEntry
	for i := range 100_000 {
		entries = append(entries, DoNotCallEntry{Number: fmt.Sprintf("+1415%07d", i), At: at, Source: []string{"import a.csv", "suppress add"}[i%2], Removed: i%7 == 0})
	}
	sources := map[string]int32{"import a.csv": 3}
	whole, err := io.ReadAll(newDoNotCallCopy(entries, sources))
	if err != nil {
		t.Fatal(err)
	}
	bytewise, err := io.ReadAll(iotest.OneByteReader(newDoNotCallCopy(entries[:2000], sources)))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := io.ReadAll(newDoNotCallCopy(entries[:2000], sources))
	if !bytes.Equal(bytewise, head) {
		t.Fatal("read a byte at a time, the stream differs")
	}
	if empty, _ := io.ReadAll(newDoNotCallCopy(nil, nil)); string(empty) != pgCopyHeader+"\xff\xff" {
		t.Fatalf("no entry: %q, want the header and the trailer", empty)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := io.Copy(io.Discard, struct{ io.Reader }{newDoNotCallCopy(entries, sources)}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(whole))/10 {
		t.Fatalf("streaming %d bytes allocated %d: more than a chunk at a time", len(whole), alloc)
	}
}

// TestPGDoNotCallMigratesVersion9: a database of version 9, whose list
// has the primary key on its ids, is migrated to one without it (the
// list's rows are each indexed once less as they go in); the entries
// written before read back in the order they were written, and the list
// takes and answers entries as before.
func TestPGDoNotCallMigratesVersion9(t *testing.T) {
	ctx := context.Background()
	url, admin := pgMigrated(t)
	if _, err := admin.Exec(ctx, `DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'callrun_do_not_call'::regclass AND contype = 'p') THEN
		ALTER TABLE callrun_do_not_call ADD PRIMARY KEY (id);
	END IF;
END $$;
DROP TABLE callrun_agents_created;
UPDATE callrun_schema SET version = 9;
INSERT INTO callrun_do_not_call (number, at, source) VALUES ('+14155550102', '2026-11-01T09:00:00Z', 'suppress add'), ('+14155550100', '2026-11-01T09:01:00Z', 'suppress add');
INSERT INTO callrun_do_not_call (number, at, removed, source, reason) VALUES ('+14155550102', '2026-11-01T09:02:00Z', true, 'suppress remove', 'asked')`); err != nil {
		t.Fatal(err)
	}
	idIndexes := func() int {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
WHERE i.indrelid = 'callrun_do_not_call'::regclass AND i.indnkeyatts = 1 AND a.attname = 'id'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if idIndexes() != 1 {
		t.Fatal("the version-9 list was set up without its primary key")
	}
	l := pgList(openPostgres(t, url, "any", 0, 1)).(*pgDoNotCall)
	if n := idIndexes(); n != 0 {
		t.Errorf("after the migration the list still has %d index(es) of its ids alone", n)
	}
	if _, err := l.Import(ctx, importBatches("import /data/registry.csv", []string{"+14155550101", "+14155550103"}, []string{"+14155550104"})); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Removed: true, Source: "suppress remove", Reason: "asked"}}); err != nil {
		t.Fatal(err)
	}
	var history []string
	if err := l.Each(ctx, false, func(e DoNotCallEntry) error {
		history = append(history, fmt.Sprintf("%s %s %v", e.Number, e.Source, e.Removed))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(history) == 7 {
		slices.Sort(history[3:6]) // an import's batches go in two at once: their rows in any order
	}
	want := "[+14155550102 suppress add false +14155550100 suppress add false +14155550102 suppress remove true " +
		"+14155550101 import /data/registry.csv false +14155550103 import /data/registry.csv false +14155550104 import /data/registry.csv false " +
		"+14155550100 suppress remove true]"
	if fmt.Sprint(history) != want {
		t.Errorf("the history reads\n%v\nwant\n%s", history, want)
	}
	for n, on := range map[string]bool{"+14155550100": false, "+14155550101": true, "+14155550102": false, "+14155550104": true} {
		if got := has(t, l, n); got != on {
			t.Errorf("%s on the list: %v, want %v", n, got, on)
		}
	}
}

// pgMigrated returns a database with callrun's tables made, and a
// connection to it to set them back as an older callrun left them; the
// connection is closed when the test ends.
func pgMigrated(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	url := pgURL(t)
	openPostgres(t, url, "any", 0, 1).Close()
	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return url, admin
}
