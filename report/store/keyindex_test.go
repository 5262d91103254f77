package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookupKeysBothWays: the binary searches and the one read of the
// keys merged against the numbers find the same keys.
func TestLookupKeysBothWays(t *testing.T) {
	var keys, asked []byte
	for i := range 5000 {
		k, _ := numberKey(fmt.Sprintf("+1212%07d", i*3))
		keys = binary.BigEndian.AppendUint64(keys, k)
	}
	r := bytes.NewReader(keys)
	for i := range 3000 {
		k, _ := numberKey(fmt.Sprintf("+1212%07d", i*5))
		asked = binary.BigEndian.AppendUint64(asked, k)
	}
	searched, merged := make([]bool, 3000), make([]bool, 3000)
	if err := searchKeys(r, 0, 5000, 8, asked, searched); err != nil {
		t.Fatal(err)
	}
	if err := mergeKeys(r, 0, 5000, 8, asked, merged); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, f := range merged {
		if want := (i*5)%3 == 0 && i*5 < 15000; f != want || searched[i] != want {
			t.Fatalf("key %d: the merge says %v, the search %v, want %v", i*5, f, searched[i], want)
		}
		if f {
			n++
		}
	}
	if n != 1000 {
		t.Fatalf("%d found, want 1000", n)
	}
}

// TestKeyIndexReadBack: an index reads back as written (a key added
// twice kept once, the extra bytes), a second one merged from it and
// other keys holds both, each found by lookup; neither is trusted once
// its source's covered bytes change, and one fails verify once a key is
// changed, or when its keys are out of order.
func TestKeyIndexReadBack(t *testing.T) {
	dir := t.TempDir()
	src := []byte(strings.Repeat("{\"line\":1}\n", 1000))
	covered := int64(len(src)) - 11
	key := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	write := func(name string, fill func(w *keyIndexWriter) error, extra string) (*keyIndex, []byte) {
		t.Helper()
		var buf bytes.Buffer
		w := newKeyIndexWriter(&buf, 8)
		if err := fill(w); err != nil {
			t.Fatal(err)
		}
		ix, tail, err := w.finish(bytes.NewReader(src), covered, []byte(extra))
		if err != nil || !bytes.Equal(tail, src[covered-tailHashed:covered]) {
			t.Fatalf("finish: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return ix, buf.Bytes()
	}
	a, aBytes := write("a", func(w *keyIndexWriter) error {
		for _, v := range []uint64{1, 5, 5, 9} {
			w.add(key(v))
		}
		return nil
	}, "extra")
	write("b", func(w *keyIndexWriter) error {
		return w.merge(a, bytes.NewReader(aBytes), 3, func(i int) []byte { return key([]uint64{2, 5, 10}[i]) })
	}, "")
	asked := bytes.Join([][]byte{key(1), key(2), key(5), key(6), key(9), key(10), key(11)}, nil)
	for name, want := range map[string]string{"a": "[true false true false true false false]", "b": "[true true true false true true false]"} {
		f, ix, _, err := openKeyIndex(filepath.Join(dir, name), 8, bytes.NewReader(src), int64(len(src)))
		if err != nil || f == nil {
			t.Fatalf("index %s: not read back: %v", name, err)
		}
		defer f.Close()
		found, err := ix.lookup(f, asked)
		if err != nil || fmt.Sprint(found) != want {
			t.Errorf("index %s: %v, %v; want %v", name, found, err, want)
		}
		if ok, err := ix.verify(f); !ok || err != nil {
			t.Errorf("verify of index %s as written: %v, %v", name, ok, err)
		}
	}
	f, ix, _, _ := openKeyIndex(filepath.Join(dir, "a"), 8, bytes.NewReader(src), int64(len(src)))
	defer f.Close()
	if extra, err := ix.readExtra(f); err != nil || string(extra) != "extra" || ix.count != 3 || ix.covered != covered {
		t.Fatalf("index a: %d keys covering %d, extra %q, %v", ix.count, ix.covered, extra, err)
	}

	// Not trusted: its source changed in the bytes it hashes, or cut
	// short of what it covers; read as of another width; torn; a byte of
	// its trailer flipped.
	notTrusted := func(what string, b []byte, width int, s []byte) {
		t.Helper()
		p := filepath.Join(dir, "spoiled")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if f, ix, _, err := openKeyIndex(p, width, bytes.NewReader(s), int64(len(s))); f != nil || err != nil {
			t.Errorf("%s: trusted (%v, %v)", what, ix, err)
		}
	}
	changed := bytes.Clone(src)
	changed[covered-10] = '2'
	notTrusted("source changed", aBytes, 8, changed)
	notTrusted("source cut", aBytes, 8, src[:covered-1])
	notTrusted("width 16", aBytes, 16, src)
	notTrusted("torn", aBytes[:len(aBytes)-1], 8, src)
	for _, at := range []int{1, 9, 17, 30, 61, 70} {
		spoiled := bytes.Clone(aBytes)
		spoiled[len(spoiled)-keyIndexTrailer+at] ^= 1
		notTrusted(fmt.Sprintf("trailer byte %d flipped", at), spoiled, 8, src)
	}
	// A key changed: the checksum.
	spoiled := bytes.Clone(aBytes)
	spoiled[len(keyIndexMagic)+8+7] = 4 // the second key, 5
	if ok, err := a.verify(bytes.NewReader(spoiled)); ok || err != nil {
		t.Errorf("a key changed: verify says %v, %v", ok, err)
	}
	// Keys out of order, under a checksum that holds.
	unsorted, unsortedBytes := write("unsorted", func(w *keyIndexWriter) error {
		for _, v := range []uint64{1, 9, 5} {
			w.add(key(v))
		}
		return nil
	}, "")
	if ok, err := unsorted.verify(bytes.NewReader(unsortedBytes)); ok || err != nil {
		t.Errorf("keys out of order: verify says %v, %v", ok, err)
	}
}

// TestIndexesOfMainsFormatRebuilt: a do-not-call index and a deliveries'
// key index written by callrun before the shared key index format
// (testdata/index-before, written by that version) are not read as
// indexes: each is built again from its source, and answers as the
// source says.
func TestIndexesOfMainsFormatRebuilt(t *testing.T) {
	copyDir := func(t *testing.T, from string) string {
		t.Helper()
		dir := t.TempDir()
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("do-not-call", func(t *testing.T) {
		dir := copyDir(t, filepath.Join("testdata", "index-before", "dnc"))
		f, err := os.Open(filepath.Join(dir, DoNotCallFileName))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		if ix, _, err := readIndex(filepath.Join(dir, DoNotCallIndexName), f, fi.Size()); ix != nil || err != nil {
			t.Fatalf("the old index was read: %v, %v", ix, err)
		}
		want := map[string]bool{"+14155550100": true, "+14155550102": true, "tel:0800 123": true}
		if got := onNow(t, dir, "+14155550100", "+14155550101", "+14155550102", "tel:0800 123", "+14155550103"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("on the list: %v, want %v", got, want)
		}
		if ix := indexHeaderOf(t, dir); ix.covered != fi.Size() || ix.count != 2 || len(ix.others) != 1 {
			t.Fatalf("the index built again covers %d of %d bytes, %d keys, %d others", ix.covered, fi.Size(), ix.count, len(ix.others))
		}
	})
	t.Run("deliveries", func(t *testing.T) {
		dir := copyDir(t, filepath.Join("testdata", "index-before", "deliveries"))
		f, err := os.Open(filepath.Join(dir, DeliveriesFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		k, covers, err := openDeliveryKeys(filepath.Join(dir, DeliveryKeysFile), f, fi.Size())
		if err != nil || covers != 0 || k.f != nil {
			t.Fatalf("the old key index was read: covers %d, open %v, %v", covers, k.f != nil, err)
		}
		w, err := OpenDeliveries(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 12 {
			key := fmt.Sprintf("%032x", i*7919+1)
			if i%2 == 1 {
				key = fmt.Sprintf("legacy-%d", i)
			}
			if _, isNew, err := w.Append(Delivery{Key: key, Fields: map[string]string{}}); err != nil || isNew {
				t.Fatalf("a retry of delivery %d: new %v, %v", i, isNew, err)
			}
		}
		if _, isNew, err := w.Append(Delivery{Key: "new", Fields: map[string]string{}}); err != nil || !isNew {
			t.Fatalf("a new delivery: new %v, %v", isNew, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fi, _ = f.Stat()
		k, covers, err = openDeliveryKeys(filepath.Join(dir, DeliveryKeysFile), f, fi.Size())
		if err != nil || k.f == nil || covers == 0 {
			t.Fatalf("the key index built again is not kept: covers %d, %v", covers, err)
		}
		k.close()
	})
}
