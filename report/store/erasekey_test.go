package store

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// erasureStore is one kind of store's erasure keys and erased set, for
// the tests that hold of both: open gives a new handle on the same store
// (as another process would have), dropKeys loses every key, as a
// restore without the key file or table would.
type erasureStore struct {
	name     string
	open     func() ErasureStore
	dropKeys func()
}

func erasureStores(t *testing.T) []erasureStore {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	url := pgURL(t)
	p := openPostgres(t, url, "c", 0, 1)
	return []erasureStore{
		{"files", func() ErasureStore { return OpenErasureFile(home) }, func() {
			if err := os.Remove(filepath.Join(home, ErasureKeyFileName)); err != nil {
				t.Fatal(err)
			}
		}},
		{"postgres", func() ErasureStore { return &pgErasure{p: openPostgres(t, url, "c", 0, 1)} }, func() {
			if _, err := p.pool.Exec(context.Background(), `DELETE FROM callrun_keys`); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// keyEncodings are the forms a key could leak in: raw, hex, base64.
func keyEncodings(keys *ErasureKeys) []string {
	var out []string
	for _, k := range keys.keys {
		out = append(out, string(k.key), hex.EncodeToString(k.key), strings.ToUpper(hex.EncodeToString(k.key)),
			base64.StdEncoding.EncodeToString(k.key), base64.RawStdEncoding.EncodeToString(k.key),
			base64.URLEncoding.EncodeToString(k.key), base64.RawURLEncoding.EncodeToString(k.key),
			fmt.Sprint(k.key), fmt.Sprintf("%x", k.key)[:16])
	}
	return out
}

// checkNoKey fails when text holds any encoding of a key of keys.
func checkNoKey(t *testing.T, keys *ErasureKeys, what, text string) {
	t.Helper()
	for _, enc := range keyEncodings(keys) {
		if strings.Contains(text, enc) {
			t.Errorf("%s holds the erasure key (as %q): %s", what, enc, text)
		}
	}
}

// TestErasureKeyMadeOnce: before an erase a store holds no key, and
// reading it makes none; two first erases at once (two handles, as two
// processes) make one key, which every handle then reads, and a second
// MakeKey keeps it.
func TestErasureKeyMadeOnce(t *testing.T) {
	ctx := context.Background()
	for _, s := range erasureStores(t) {
		t.Run(s.name, func(t *testing.T) {
			keys, err := s.open().Keys(ctx)
			if err != nil || keys.Hashes("+14155550100") != nil {
				t.Fatalf("Keys of a new store: %v, %v; want none", keys, err)
			}
			if on, err := s.open().OnErased(ctx, []string{"+14155550100"}); err != nil || len(on) != 0 {
				t.Fatalf("OnErased of a new store: %v, %v", on, err)
			}
			if again, err := s.open().Keys(ctx); err != nil || again.Hashes("+14155550100") != nil {
				t.Fatalf("Keys read again: %v, %v; reading made a key", again, err)
			}
			const n = 8
			made := make([]*ErasureKeys, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, err := s.open().MakeKey(ctx)
					if err != nil {
						t.Error(err)
					}
					made[i] = k
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			read, err := s.open().Keys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := read.Hashes("+14155550100")
			if len(want) != 1 {
				t.Fatalf("after %d MakeKeys at once the store holds %d keys; want 1", n, len(want))
			}
			for i, k := range made {
				if got := k.Hashes("+14155550100"); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("MakeKey %d gave %v; the store holds %v", i, got, want)
				}
			}
			id, _, _ := splitHash(want[0])
			if !read.Has(id) || read.Has("00000000") {
				t.Errorf("Has(%s) = %v, Has(00000000) = %v", id, read.Has(id), read.Has("00000000"))
			}
			if k, err := s.open().MakeKey(ctx); err != nil || fmt.Sprint(k.Hashes("+14155550100")) != fmt.Sprint(want) {
				t.Errorf("a later MakeKey: %v, %v; want the key kept", k, err)
			}
			if h := read.Hashes("+14155550101"); len(h) != 1 || h[0] == want[0] {
				t.Errorf("another number's hash: %v", h)
			}
		})
	}
}

// TestErasureKeysNil: a nil *ErasureKeys, as a store with no key gives
// the journal, hashes nothing and has no key.
func TestErasureKeysNil(t *testing.T) {
	var k *ErasureKeys
	if k.Hashes("+14155550100") != nil || k.Has("630dcd29") {
		t.Error("a nil ErasureKeys hashes or has a key")
	}
	if err := CheckHashKey(k, "h1:630dcd29:P93vHG3RH6UTbH7m_wTVDWpG1SHlxt8WspBdqC8-nPc", "journal.jsonl line 3"); !errors.Is(err, ErrErasureKeyMissing) || !strings.Contains(err.Error(), "journal.jsonl line 3") {
		t.Errorf("CheckHashKey with no keys: %v", err)
	}
	if err := CheckHashKey(k, "+14155550100", "journal.jsonl line 3"); err == nil || errors.Is(err, ErrErasureKeyMissing) || !strings.Contains(err.Error(), "journal.jsonl line 3") {
		t.Errorf("CheckHashKey of a number: %v; want an error naming the line", err)
	}
}

// TestErasedSet: an erased person's number is in the set for every
// handle (another process's too) and nobody else's is; a hash is added
// once; an entry that is not a keyed hash of the store's key, or says
// no why, is refused, and nothing of its batch is written.
func TestErasedSet(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	for _, s := range erasureStores(t) {
		t.Run(s.name, func(t *testing.T) {
			w := s.open()
			keys, err := w.MakeKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a, b := keys.Hashes("+14155550100")[0], keys.Hashes("+14155550101")[0]
			other := NumberHash(make([]byte, 32), "+14155550102") // a key the store does not hold
			for _, bad := range [][]ErasedEntry{
				{{Hash: a, Why: "erase"}, {Hash: other, Why: "erase"}},
				{{Hash: a, Why: "erase"}, {Hash: "+14155550100", Why: "erase"}},
				{{Hash: a, Why: ""}},
			} {
				if _, err := w.AddErased(ctx, bad); err == nil {
					t.Errorf("AddErased(%v) took it", bad)
				}
			}
			if got, err := w.ErasedEntries(ctx); err != nil || len(got) != 0 {
				t.Fatalf("after refused batches the set holds %v, %v", got, err)
			}
			wrote, err := w.AddErased(ctx, []ErasedEntry{{Hash: a, At: at, Why: "erase"}, {Hash: a, At: at, Why: "erase"}, {Hash: b, At: at.Add(time.Second), AllowContact: true, Why: "retention"}})
			if err != nil || len(wrote) != 2 {
				t.Fatalf("AddErased = %v, %v; want 2 written", wrote, err)
			}
			r := s.open() // another process, reading from the start
			on, err := r.OnErased(ctx, []string{"+14155550100", "+14155550101", "+14155550102"})
			if err != nil || !on["+14155550100"] || !on["+14155550101"] || on["+14155550102"] {
				t.Fatalf("OnErased = %v, %v; want the first two", on, err)
			}
			if wrote, err := w.AddErased(ctx, []ErasedEntry{{Hash: a, At: at, Why: "erase"}}); err != nil || len(wrote) != 0 {
				t.Errorf("AddErased of a hash in the set: %v, %v; want nothing written", wrote, err)
			}
			c := keys.Hashes("+14155550103")[0]
			if _, err := s.open().AddErased(ctx, []ErasedEntry{{Hash: c, At: at.Add(2 * time.Second), Why: "erase"}}); err != nil {
				t.Fatal(err)
			}
			if on, err := r.OnErased(ctx, []string{"+14155550103"}); err != nil || !on["+14155550103"] {
				t.Errorf("OnErased after another handle added: %v, %v", on, err)
			}
			got, err := s.open().ErasedEntries(ctx)
			want := []ErasedEntry{{Hash: a, At: at, Why: "erase"}, {Hash: b, At: at.Add(time.Second), AllowContact: true, Why: "retention"}, {Hash: c, At: at.Add(2 * time.Second), Why: "erase"}}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ErasedEntries = %v, %v; want %v", got, err, want)
			}
		})
	}
}

// TestErasedSetFailsClosedWithoutItsKey: a store restored with its
// erased set and without its key cannot tell the erased from anyone
// else: every reading of the set stops, naming what holds the hash,
// where the key belongs and what to do, and saying nothing of the key;
// a new key is not made in its place silently either (an erase refuses).
func TestErasedSetFailsClosedWithoutItsKey(t *testing.T) {
	ctx := context.Background()
	for _, s := range erasureStores(t) {
		t.Run(s.name, func(t *testing.T) {
			keys, err := s.open().MakeKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.open().AddErased(ctx, []ErasedEntry{{Hash: keys.Hashes("+14155550100")[0], Why: "erase"}}); err != nil {
				t.Fatal(err)
			}
			s.dropKeys()
			holder, where := "erased.jsonl line 1", ErasureKeyFileName
			if s.name == "postgres" {
				holder, where = "callrun_erased", "callrun_keys"
			}
			for name, es := range map[string]ErasureStore{"a new handle": s.open(), "another new handle": s.open()} {
				on, err := es.OnErased(ctx, []string{"+14155550100", "+14155550101"})
				if !errors.Is(err, ErrErasureKeyMissing) || on != nil {
					t.Fatalf("OnErased of %s without the key: %v, %v; want ErrErasureKeyMissing", name, on, err)
				}
				for _, want := range []string{holder, where, "restore", "calls nobody"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error of %s does not say %q: %v", name, want, err)
					}
				}
				checkNoKey(t, keys, "the error", err.Error())
			}
			// An erase made now would make a second key, and the first
			// one's, restored from the backup, would be written over in
			// files: it stops instead.
			if made, err := s.open().MakeKey(ctx); !errors.Is(err, ErrErasureKeyMissing) {
				t.Errorf("MakeKey beside the hashes of a lost key: %v, %v; want ErrErasureKeyMissing", made, err)
			}
			if again, err := s.open().Keys(ctx); err != nil || again.Hashes("+14155550100") != nil {
				t.Errorf("after the refused MakeKey the store holds %v, %v; want no key", again, err)
			}
		})
	}
}

// TestErasureKeysNeverPrinted: neither a key's errors nor the keys as
// printed say the key, in any encoding.
func TestErasureKeysNeverPrinted(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	f := OpenErasureFile(home)
	keys, err := f.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(home, ErasureKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), hex.EncodeToString(keys.keys[0].key)) {
		t.Fatalf("the key file does not hold the key in hex: the check below would find nothing")
	}
	checkNoKey(t, keys, "printed", fmt.Sprintf("%v %+v %#v %s %v %+v %#v", keys, keys, keys, keys, *keys, *keys, *keys))
	// Damaged files: a key's hex cut, a byte changed, the JSON cut.
	hexKey := hex.EncodeToString(keys.keys[0].key)
	other := "00" // another first byte than the key's own (1 key in 256 starts with 00)
	if strings.HasPrefix(hexKey, other) {
		other = "ff"
	}
	for name, damaged := range map[string]string{
		"cut hex":     strings.Replace(string(raw), hexKey, hexKey[:40], 1),
		"bad hex":     strings.Replace(string(raw), hexKey, "zz"+hexKey[2:], 1),
		"another key": strings.Replace(string(raw), hexKey, other+hexKey[2:], 1),
		"cut JSON":    string(raw[:len(raw)/2]),
		"not JSON":    hexKey,
		"no key":      `{"keys":[]}`,
	} {
		if err := os.WriteFile(filepath.Join(home, ErasureKeyFileName), []byte(damaged), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenErasureFile(home).Keys(ctx)
		if err == nil || !strings.Contains(err.Error(), ErasureKeyFileName) {
			t.Errorf("%s: Keys = %v; want an error naming the file", name, err)
			continue
		}
		checkNoKey(t, keys, name+"'s error", err.Error())
		if _, err := OpenErasureFile(home).MakeKey(ctx); err == nil {
			t.Errorf("%s: MakeKey made a key over the damaged file", name)
		}
	}
}

// TestErasureKeyUnreadable: a key file that cannot be read (here a
// directory in its place; a file of another user's mode alike) is an
// error, never a store without a key: no new key is made over it.
func TestErasureKeyUnreadable(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ErasureKeyFileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenErasureFile(home).Keys(ctx); err == nil {
		t.Error("Keys of an unreadable key file: no error")
	}
	if _, err := OpenErasureFile(home).MakeKey(ctx); err == nil {
		t.Error("MakeKey over an unreadable key file: no error")
	}
	if _, err := OpenErasureFile(home).OnErased(ctx, []string{"+14155550100"}); err == nil {
		t.Error("OnErased with an unreadable key file: no error")
	}
}

// TestErasureFileLines: the erased set's file holds a hash, when, the
// contact flag and why, and no number; a line that is not an entry (a
// number where the hash goes) stops its readers, naming the file.
func TestErasureFileLines(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	f := OpenErasureFile(home)
	keys, err := f.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	if _, err := f.AddErased(ctx, []ErasedEntry{{Hash: keys.Hashes("+14155550100")[0], At: at, Why: "erase"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ErasedFileName))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"hash":%q,"at":"2026-11-28T04:00:00Z","allow_contact":false,"why":"erase"}`+"\n", keys.Hashes("+14155550100")[0])
	if string(b) != want {
		t.Errorf("erased.jsonl:\n%s\nwant\n%s", b, want)
	}
	if strings.Contains(string(b), "4155550100") {
		t.Errorf("erased.jsonl holds the number: %s", b)
	}
	appendRaw(t, filepath.Join(home, ErasedFileName), `{"hash":"+14155550101","at":"2026-11-28T04:00:00Z","allow_contact":false,"why":"erase"}`+"\n")
	if _, err := OpenErasureFile(home).OnErased(ctx, []string{"+14155550100"}); err == nil || !strings.Contains(err.Error(), ErasedFileName) {
		t.Errorf("OnErased over a line with a number: %v; want an error naming the file", err)
	}
}

// TestErasureThroughTheStore: every store gives its erasure key and
// erased set through Store.Erasure: files and a shard's files the ones
// in CALLRUN_HOME, which they share; a rehearsal its own in Home's
// sandbox directory, so that no rehearsal's erase touches real records;
// PostgreSQL its tables, whatever the files hold.
func TestErasureThroughTheStore(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("CALLRUN_HOME", home)
	dir := filepath.Join(t.TempDir(), "state")
	url := pgURL(t)
	erasure := func(o Options) ErasureStore {
		t.Helper()
		s, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		e, err := s.Erasure()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	keys, err := erasure(Options{Dir: dir}).MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ErasureKeyFileName)); err != nil {
		t.Fatalf("the files' key is not in CALLRUN_HOME: %v", err)
	}
	if _, err := erasure(Options{Dir: dir}).AddErased(ctx, []ErasedEntry{{Hash: keys.Hashes("+14155550100")[0], Why: "erase"}}); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"files":       {Dir: dir},
		"a shard":     {Dir: dir, Index: 1, Count: 2},
		"a rehearsal": {Dir: dir, Rehearsal: true},
		"a rehearsal of a campaign on PostgreSQL": {Dir: dir, Postgres: url, Campaign: "c", Rehearsal: true},
		"postgres": {Dir: dir, Postgres: url, Campaign: "c"},
	} {
		on, err := erasure(o).OnErased(ctx, []string{"+14155550100"})
		want := name == "files" || name == "a shard"
		if err != nil || on["+14155550100"] != want {
			t.Errorf("%s: OnErased = %v, %v; want erased %v", name, on, err, want)
		}
	}
	// The rehearsals keep their own erased set but use Home's key: the
	// call starts in Home, which both share, hold hashes of one key.
	rk, err := erasure(Options{Dir: dir, Rehearsal: true}).MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rk.Hashes("+14155550100")[0] != keys.Hashes("+14155550100")[0] {
		t.Error("the rehearsals made a key of their own; want Home's")
	}
	if _, err := os.Stat(filepath.Join(home, "sandbox", ErasureKeyFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a key file in CALLRUN_HOME/sandbox: %v; want none", err)
	}
	if k, err := erasure(Options{Dir: dir, Postgres: url, Campaign: "c"}).Keys(ctx); err != nil || k.Hashes("+14155550100") != nil {
		t.Errorf("the database's keys: %v, %v; want none (the files' key is theirs until state push)", k, err)
	}
}

// TestMigration8: a database callrun opens has the tables of the
// erasure keys and the erased set, as the design names them.
func TestMigration8(t *testing.T) {
	p := openPostgres(t, pgURL(t), "c", 0, 1)
	var cols []string
	rows, err := p.pool.Query(context.Background(), `
SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable FROM information_schema.columns
WHERE table_name IN ('callrun_keys', 'callrun_erased') ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	want := "[callrun_erased.hash text NO callrun_erased.at timestamp with time zone NO callrun_erased.allow_contact boolean NO callrun_erased.why text NO callrun_keys.id text NO callrun_keys.key bytea NO callrun_keys.at timestamp with time zone NO]"
	if fmt.Sprint(cols) != want {
		t.Errorf("columns:\n%v\nwant\n%s", cols, want)
	}
}

// TestPostgresMakeKeyWaitsForTheListWriters: the database's first key is
// made under the do-not-call list writers' lock, the one every erase and
// list writer takes: while another holds it, MakeKey waits, and makes
// its key once it is let go.
func TestPostgresMakeKeyWaitsForTheListWriters(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	e := &pgErasure{p: openPostgres(t, url, "c", 0, 1)}
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(dncLock)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.MakeKey(ctx)
		done <- err
	}()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("MakeKey returned (%v) while another held the list writers' lock", err)
		default:
		}
		if err := holder.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND classid = ($1::bigint >> 32)::oid AND objid = ($1::bigint & 4294967295)::oid)`, int64(dncLock)).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(dncLock)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if keys, err := e.Keys(ctx); err != nil || len(keys.Hashes("+1")) != 1 {
		t.Errorf("after the wait: %v, %v; want one key", keys, err)
	}
}
