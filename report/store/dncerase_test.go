package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dncBytes returns the list's history and index as they are on disk.
func dncBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	for _, name := range []string{DoNotCallFileName, DoNotCallIndexName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// checkNoNumber fails when the list's files hold number as text or as
// the 8 bytes of its packed key.
func checkNoNumber(t *testing.T, dir, number string) {
	t.Helper()
	b := dncBytes(t, dir)
	if bytes.Contains(b, []byte(number)) || bytes.Contains(b, []byte(strings.TrimPrefix(number, "+"))) {
		t.Errorf("the list's files still hold %s", number)
	}
	k, _ := numberKey(number)
	if bytes.Contains(b, binary.BigEndian.AppendUint64(nil, k)) {
		t.Errorf("the list's index still holds the key of %s", number)
	}
}

func TestEraseDoNotCallFileKeepsTheHash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const a, b, c, d = "+14155550101", "+14155550102", "+14155550103", "+14155550104"
	l := OpenDoNotCallFile(dir)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if _, err := l.Add(ctx, []DoNotCallEntry{
		{Number: a, At: at, Source: "suppress add", Reason: "said " + a + " on the call"},
		{Number: c, At: at, Source: "import list.csv"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Has(ctx, a); err != nil { // the index is built, and holds A's key
		t.Fatal(err)
	}
	keys, err := OpenErasureFile(dir).MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := l.EraseDoNotCall(ctx, []string{a, b}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys, At: at}})
	if err != nil {
		t.Fatal(err)
	}
	if n != (DoNotCallEraseCounts{Added: 1, Replaced: 1}) {
		t.Errorf("counts %+v, want B added and A replaced", n)
	}
	checkNoNumber(t, dir, a)
	checkNoNumber(t, dir, b)
	if !bytes.Contains(dncBytes(t, dir), []byte(c)) {
		t.Errorf("C, not erased, is gone from the list")
	}
	if bytes.Contains(dncBytes(t, dir), []byte("on the call")) {
		t.Errorf("A's reason was kept")
	}
	for _, list := range []*DoNotCallFile{l, OpenDoNotCallFile(dir)} {
		on, err := list.OnList(ctx, []string{a, b, c, d})
		if err != nil {
			t.Fatal(err)
		}
		if !on[a] || !on[b] || !on[c] || on[d] {
			t.Errorf("on the list after the erase: %v, want A, B and C", on)
		}
		if has, err := list.Has(ctx, a); err != nil || !has {
			t.Errorf("Has(A) = %v, %v; want true", has, err)
		}
		if _, ok, err := list.NumbersUpTo(ctx, 100); err != nil || ok {
			t.Errorf("NumbersUpTo: ok %v, %v; want not ok while the list holds hashes", ok, err)
		}
	}
	var shown []DoNotCallEntry
	if err := OpenDoNotCallFile(dir).Each(ctx, true, func(e DoNotCallEntry) error {
		shown = append(shown, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	hashed := 0
	for _, e := range shown {
		if e.Hash != "" {
			hashed++
			if e.Number != "" || e.Reason != "" {
				t.Errorf("hashed entry %+v keeps a number or reason", e)
			}
		}
	}
	if len(shown) != 3 || hashed != 2 {
		t.Errorf("current entries %+v, want C and two hashed", shown)
	}

	// Erasing again writes nothing.
	before := dncBytes(t, dir)
	n, err = OpenDoNotCallFile(dir).EraseDoNotCall(ctx, []string{a, b}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys, At: at}})
	if err != nil || n != (DoNotCallEraseCounts{}) {
		t.Errorf("second erase: %+v, %v; want nothing", n, err)
	}
	if !bytes.Equal(before, dncBytes(t, dir)) {
		t.Errorf("the second erase changed the list's files")
	}

	// suppress remove and add of an erased person write hashes.
	l2 := OpenDoNotCallFile(dir)
	w, err := l2.Add(ctx, []DoNotCallEntry{{Number: a, Removed: true, Source: "suppress remove", Reason: "wrong " + a}})
	if err != nil || len(w) != 1 || w[0].Hash == "" || w[0].Number != "" {
		t.Fatalf("removing A wrote %+v, %v; want one hashed removal", w, err)
	}
	if has, err := OpenDoNotCallFile(dir).Has(ctx, a); err != nil || has {
		t.Errorf("Has(A) after its removal = %v, %v", has, err)
	}
	if w, err := l2.Add(ctx, []DoNotCallEntry{{Number: a, Source: "delivery k1 of campaign x"}}); err != nil || len(w) != 1 || w[0].Hash == "" {
		t.Fatalf("adding A again wrote %+v, %v; want one hashed addition", w, err)
	}
	if has, err := OpenDoNotCallFile(dir).Has(ctx, a); err != nil || !has {
		t.Errorf("Has(A) after its opt-out = %v, %v", has, err)
	}
	checkNoNumber(t, dir, a)

	// The key taken away: the list answers nothing, for anyone.
	if err := os.Remove(filepath.Join(dir, ErasureKeyFileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDoNotCallFile(dir).Has(ctx, d); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("Has(D) without the key: %v, want ErrErasureKeyMissing", err)
	}
	if _, err := OpenDoNotCallFile(dir).OnList(ctx, []string{d}); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("OnList without the key: %v, want ErrErasureKeyMissing", err)
	}
}

func TestEraseDoNotCallFileAllowContact(t *testing.T) {
	ctx := context.Background()
	const a, b = "+14155550101", "+14155550102"
	dir, l, keys := optedOut(t, a)
	n, err := l.EraseDoNotCall(ctx, []string{a, b}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys}, AllowContact: true})
	if err != nil || n != (DoNotCallEraseCounts{Replaced: 1}) {
		t.Fatalf("erase: %+v, %v; want A replaced, nobody added", n, err)
	}
	on, err := OpenDoNotCallFile(dir).OnList(ctx, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !on[a] || on[b] {
		t.Errorf("on the list: %v; want A (its opt-out stays), not B", on)
	}
	checkNoNumber(t, dir, a)
}

func TestEraseDoNotCallFileKilledBeforeReplace(t *testing.T) {
	ctx := context.Background()
	const a, b = "+14155550101", "+14155550102"
	dir, l, keys := optedOut(t, a)
	kill := errors.New("killed")
	_, err := l.EraseDoNotCall(ctx, []string{a, b}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys, BeforeReplace: func() error { return kill }}})
	if !errors.Is(err, kill) {
		t.Fatalf("erase: %v, want the kill", err)
	}
	on, err := OpenDoNotCallFile(dir).OnList(ctx, []string{a, b})
	if err != nil || !on[a] || !on[b] {
		t.Errorf("after the kill on the list: %v, %v; want A and B (B's hashed addition came first)", on, err)
	}
	n, err := OpenDoNotCallFile(dir).EraseDoNotCall(ctx, []string{a, b}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys}})
	if err != nil || n != (DoNotCallEraseCounts{Replaced: 1}) {
		t.Errorf("erase again: %+v, %v; want A replaced", n, err)
	}
	checkNoNumber(t, dir, a)
	checkNoNumber(t, dir, b)
}

// optedOut returns a list in a directory of its own that holds number,
// and the key of the directory's store.
func optedOut(t *testing.T, number string) (string, *DoNotCallFile, *ErasureKeys) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	l := OpenDoNotCallFile(dir)
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: number, Source: "suppress add"}}); err != nil {
		t.Fatal(err)
	}
	keys, err := OpenErasureFile(dir).MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dir, l, keys
}

// TestEraseDoNotCallRemovesAKilledIndexBuild: the copy of the list's
// index that a process killed while it wrote it left behind holds the
// numbers on the list as their packed keys; erasing a person from the
// list removes it too, however young, so that no file of the store holds
// the erased number in any form.
func TestEraseDoNotCallRemovesAKilledIndexBuild(t *testing.T) {
	const a = "+14155550101"
	dir, l, keys := optedOut(t, a)
	k, _ := numberKey(a)
	temp := filepath.Join(dir, "."+DoNotCallIndexName+".123.tmp")
	if err := os.WriteFile(temp, append([]byte(keyIndexMagic), binary.BigEndian.AppendUint64(nil, k)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.EraseDoNotCall(context.Background(), []string{a}, EraseDoNotCallOptions{EraseOptions: EraseOptions{Keys: keys}}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // a directory
		}
		if bytes.Contains(b, binary.BigEndian.AppendUint64(nil, k)) || bytes.Contains(b, []byte(a)) {
			t.Errorf("after erasing %s from the list, %s still holds it", a, e.Name())
		}
	}
}
