package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
)

// keyDelivery is delivery i of the key index tests, under a key of the
// form callrun gives (hex) or, odd i, of an older callrun's.
func keyDelivery(i int) Delivery {
	key := fmt.Sprintf("%032x", i*7919+1)
	if i%2 == 1 {
		key = fmt.Sprintf("legacy-%d", i)
	}
	return Delivery{Key: key, At: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), Event: "call.ended",
		Fields: map[string]string{"phone_number": "+14155550100", "n": fmt.Sprint(i)}}
}

// appendKeys appends deliveries from..to-1 to w and checks that each
// was new.
func appendKeys(t *testing.T, w *Deliveries, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		_, isNew, err := w.Append(keyDelivery(i))
		if err != nil || !isNew {
			t.Fatalf("delivery %d: new %v, %v", i, isNew, err)
		}
	}
}

// checkStored checks that deliveries 0..n-1 are stored (Append finds them)
// and that n..n+9 are not, then closes w.
func checkStored(t *testing.T, w *Deliveries, n int) {
	t.Helper()
	for i := range n {
		if _, isNew, err := w.Append(keyDelivery(i)); err != nil || isNew {
			t.Fatalf("a retry of delivery %d: new %v, %v", i, isNew, err)
		}
	}
	appendKeys(t, w, n, n+10)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeliveryKeysIndex: the key index beside the deliveries file is
// written as keys accumulate, trusted when it matches the file (the
// deliveries it covers are not read again: a line spoiled inside them
// goes unnoticed), and rebuilt when it is missing, corrupt, or of
// another deliveries file; then trusted in its turn.
func TestDeliveryKeysIndex(t *testing.T) {
	oldRecent, oldChunk := deliveryKeyRecent, deliveryKeyChunk
	deliveryKeyRecent, deliveryKeyChunk = 16, 7 // rebuilt by merging 29 chunks
	t.Cleanup(func() { deliveryKeyRecent, deliveryKeyChunk = oldRecent, oldChunk })
	dir := filepath.Join(t.TempDir(), "state")
	path, keysPath := filepath.Join(dir, DeliveriesFile), filepath.Join(dir, DeliveryKeysFile)
	w, err := OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	appendKeys(t, w, 0, 200)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := os.ReadFile(keysPath)
	if err != nil {
		t.Fatal(err)
	}
	// The count of keys, the trailer's first word.
	if n := int64(binary.BigEndian.Uint64(ix[len(ix)-keyIndexTrailer:])); n < 200-int64(deliveryKeyRecent) {
		t.Errorf("the key index holds %d keys of 200 stored, at most %d in memory", n, deliveryKeyRecent)
	}

	// Trusted: the first line, far before the bytes the index hashes,
	// spoiled; a listen that read every line would refuse the file.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spoiled := append([]byte(nil), raw...)
	copy(spoiled, "XXXX")
	if err := os.WriteFile(path, spoiled, 0o600); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "."+DeliveryKeysFile+".123.tmp") // of a listen killed writing the index
	if err := os.WriteFile(leftover, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err = OpenDeliveries(dir)
	if err != nil {
		t.Fatalf("a matching key index: the deliveries it covers were read again: %v", err)
	}
	checkStored(t, w, 200)
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temporary file of the index left: %v", err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T)
	}{
		{"missing", func(t *testing.T) { os.Remove(keysPath) }},
		{"a record flipped", func(t *testing.T) { flipByte(t, keysPath, int64(len(keyIndexMagic))+50*keyRecordSize+15) }},
		{"its trailer flipped", func(t *testing.T) { flipByte(t, keysPath, -20) }},
		{"torn", func(t *testing.T) { os.Truncate(keysPath, 100) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			tc.spoil(t)
			w, err := OpenDeliveries(dir)
			if err != nil {
				t.Fatal(err)
			}
			checkStored(t, w, 200)
			if err := os.WriteFile(path, spoiled, 0o600); err != nil {
				t.Fatal(err)
			}
			// The rebuilt index is written, and trusted in its turn.
			if w, err = OpenDeliveries(dir); err != nil {
				t.Fatalf("the rebuilt index was not kept: %v", err)
			}
			checkStored(t, w, 200)
		})
	}

	// Of another file: the deliveries file replaced by one that holds
	// other deliveries, as long, whose last bytes differ.
	other := filepath.Join(t.TempDir(), "state")
	w, err = OpenDeliveries(other)
	if err != nil {
		t.Fatal(err)
	}
	appendKeys(t, w, 1000, 1200)
	w.Close()
	if err := os.Rename(filepath.Join(other, DeliveriesFile), path); err != nil {
		t.Fatal(err)
	}
	w, err = OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, isNew, err := w.Append(keyDelivery(i)); err != nil || !isNew {
			t.Fatalf("delivery %d, of the file replaced: new %v, %v; the old file's index was trusted", i, isNew, err)
		}
	}
	for i := 1000; i < 1200; i++ {
		if _, isNew, err := w.Append(keyDelivery(i)); err != nil || isNew {
			t.Fatalf("delivery %d, of the file now there: new %v, %v", i, isNew, err)
		}
	}
	w.Close()
}

// flipByte flips a bit of the byte at off in the file at path (from its
// end when off is negative).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRecordOfKeys: a key callrun gives is its own record; any other is
// hashed, and keys differing in case or length do not share a record.
func TestRecordOfKeys(t *testing.T) {
	key := apiclient.Delivery{CallID: "c1", Event: "call.ended"}.Key()
	r := recordOf(key)
	if fmt.Sprintf("%x", r[:]) != key {
		t.Errorf("record of %s: %x", key, r)
	}
	seen := map[keyRecord]string{}
	for _, k := range []string{key, "A" + key[1:], key[:31], "legacy", "Legacy", ""} {
		if o, ok := seen[recordOf(k)]; ok {
			t.Errorf("%q and %q share a record", k, o)
		}
		seen[recordOf(k)] = k
	}
}

// TestDeliveriesGone: once the deliveries file is removed or renamed
// under the Deliveries, no delivery is acknowledged: each Append fails
// with ErrDeliveriesGone, and what was stored before is in the file
// wherever it went.
func TestDeliveriesGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		move func(dir string) error
	}{
		{"removed", func(dir string) error { return os.RemoveAll(dir) }},
		{"renamed", func(dir string) error {
			return os.Rename(filepath.Join(dir, DeliveriesFile), filepath.Join(dir, "old.jsonl"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			w, err := OpenDeliveries(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			appendKeys(t, w, 0, 3)
			if err := tc.move(dir); err != nil {
				t.Fatal(err)
			}
			for i := 3; i < 6; i++ {
				if _, _, err := w.Append(keyDelivery(i)); !errors.Is(err, ErrDeliveriesGone) {
					t.Errorf("delivery %d after the file went: %v; want ErrDeliveriesGone", i, err)
				}
			}
		})
	}
}

// TestLastDeliveryAt: the last whole delivery of the file, however long
// its line, a torn line after it left out; in the table, the campaign's
// last row; zero for none.
func TestLastDeliveryAt(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for name, open := range map[string]func(t *testing.T) Store{
		"files":    func(t *testing.T) Store { return Files{Dir: filepath.Join(t.TempDir(), "state")} },
		"postgres": func(t *testing.T) Store { return openPostgres(t, pgURL(t), "spring", 0, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if got, err := s.LastDeliveryAt(ctx); err != nil || !got.IsZero() {
				t.Fatalf("no delivery: %v, %v", got, err)
			}
			w, err := s.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i, size := range []int{10, 200 << 10, 10} {
				d := keyDelivery(i)
				d.At = at.Add(time.Duration(i) * time.Minute)
				d.Raw = strings.Repeat("x", size)
				if _, _, err := w.Append(d); err != nil {
					t.Fatal(err)
				}
				if got, err := s.LastDeliveryAt(ctx); err != nil || !got.Equal(d.At) {
					t.Errorf("after delivery %d: %v, %v; want %v", i, got, err, d.At)
				}
			}
			w.Close()
			if f, ok := s.(Files); ok {
				fh, err := os.OpenFile(filepath.Join(f.Dir, DeliveriesFile), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fh.WriteString(`{"key":"torn","at":"2030-01-01T00:00:00Z","fie`)
				fh.Close()
				if got, err := s.LastDeliveryAt(ctx); err != nil || !got.Equal(at.Add(2*time.Minute)) {
					t.Errorf("with a torn line: %v, %v", got, err)
				}
			}
		})
	}
}
