package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPushCopiesTheErasureKeyAndSet: state push copies the files' key
// and erased set into a database that made a key of its own: both keys
// stay, and a person erased in either is erased in the database; pushed
// again, nothing is new. A set whose key is lost is refused before
// anything is copied.
func TestPushCopiesTheErasureKeyAndSet(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("CALLRUN_HOME", home)
	files := OpenErasureFile(home)
	fkeys, err := files.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	if _, err := files.AddErased(ctx, []ErasedEntry{{Hash: fkeys.Hashes("+14155550100")[0], At: at, Why: "erase"}, {Hash: fkeys.Hashes("+14155550101")[0], At: at, AllowContact: true, Why: "retention"}}); err != nil {
		t.Fatal(err)
	}
	p := openPostgres(t, pgURL(t), "c", 0, 1)
	db := &pgErasure{p: p}
	dkeys, err := db.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddErased(ctx, []ErasedEntry{{Hash: dkeys.Hashes("+14155550102")[0], At: at, Why: "erase"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j, _ := openJournal(t, filepath.Join(dir, JournalFile))
	mustAppend(t, j, intent("a", "+15550001"))
	j.Close()
	unlock := lockStore(t, p)
	out, err := p.PushFiles(ctx, dir, []string{filepath.Join(dir, JournalFile)}, false)
	unlock()
	if err != nil || out.Keys != 1 || out.KeysNew != 1 || out.Erased != 2 || out.ErasedNew != 2 {
		t.Fatalf("PushFiles = %+v, %v; want 1 key and 2 erased, all new", out, err)
	}
	keys, err := db.Keys(ctx)
	if err != nil || len(keys.Hashes("+14155550100")) != 2 {
		t.Fatalf("the database's keys after the push: %v, %v; want its own and the files'", keys, err)
	}
	for _, k := range []*ErasureKeys{fkeys, dkeys} {
		id, _, _ := splitHash(k.Hashes("+1")[0])
		if !keys.Has(id) {
			t.Errorf("the database lacks key %s after the push", id)
		}
	}
	on, err := db.OnErased(ctx, []string{"+14155550100", "+14155550101", "+14155550102", "+14155550103"})
	if err != nil || len(on) != 3 || on["+14155550103"] {
		t.Errorf("OnErased in the database after the push: %v, %v; want the three erased", on, err)
	}
	os.Remove(filepath.Join(dir, PushedFile))
	unlock = lockStore(t, p)
	out, err = p.PushFiles(ctx, dir, []string{filepath.Join(dir, JournalFile)}, true)
	unlock()
	if err != nil || out.KeysNew != 0 || out.ErasedNew != 0 || out.Keys != 1 || out.Erased != 2 {
		t.Errorf("PushFiles again = %+v, %v; want nothing new", out, err)
	}

	// The files' key lost: nothing is pushed, the journal included.
	if err := os.Remove(filepath.Join(home, ErasureKeyFileName)); err != nil {
		t.Fatal(err)
	}
	other := openPostgres(t, pgURL(t), "c", 0, 1)
	os.Remove(filepath.Join(dir, PushedFile))
	unlock = lockStore(t, other)
	_, err = other.PushFiles(ctx, dir, []string{filepath.Join(dir, JournalFile)}, false)
	unlock()
	if !errors.Is(err, ErrErasureKeyMissing) {
		t.Fatalf("PushFiles of a set without its key: %v; want ErrErasureKeyMissing", err)
	}
	if st, err := other.ReadState(ctx); err != nil || st.Len() != 0 {
		t.Errorf("the journal was pushed beside a set without its key: %v, %v", st, err)
	}
}
