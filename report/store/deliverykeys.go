package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
)

// DeliveryKeysFile is the name of the deliveries' key index, beside the
// deliveries file in a campaign's state directory. Deleting it is safe:
// listen rebuilds it, reading the whole deliveries file once.
const DeliveryKeysFile = "deliveries.keys"

// deliveryKeyRecent is how many keys stored since the key index was last
// written a [deliveryKeys] keeps in memory before it writes the index
// again. It bounds that memory, and the deliveries listen reads at its
// start beyond those the index covers. Tests lower it.
var deliveryKeyRecent = 1 << 15

// deliveryKeyChunk is how many keys listen sorts at once as it rebuilds
// the key index (32 MiB of them), merging each chunk into the index
// written so far. Tests lower it.
var deliveryKeyChunk = 1 << 21

// createKeyIndex creates the key index file durably; tests make it fail.
var createKeyIndex = durable.Create

// keyRecordSize is the width of one key of the index: 128 bits.
const keyRecordSize = 16

// keyRecord is a delivery key as the index holds it. A key callrun gives
// ([apiclient.Delivery.Key]) is already the first 128 bits of a SHA-256,
// in hex: its record is those bits, so the index tells two keys apart
// exactly as the keys do. Any other key (from an older callrun) is the
// first 128 bits of its own SHA-256. Two different keys share a record
// with a chance of about n²/2¹²⁹ among n keys (below 10⁻²⁵ at 10⁷): a
// false "stored already", which would drop a delivery, is that unlikely.
type keyRecord [keyRecordSize]byte

// recordOf returns the record of key.
func recordOf(key string) keyRecord {
	var r keyRecord
	if len(key) == 2*keyRecordSize {
		if _, err := hex.Decode(r[:], []byte(key)); err == nil && hex.EncodeToString(r[:]) == key {
			return r
		}
	}
	sum := sha256.Sum256([]byte(key))
	copy(r[:], sum[:])
	return r
}

// deliveryKeys are the keys of the deliveries stored in a deliveries
// file, for [Deliveries.Append] to store a retried delivery once without
// holding every key in memory: the key index file (a [keyIndex] of the
// records of the keys in the file up to a length, searched
// on disk) and the keys stored since it was written, in memory. An index
// that does not match the deliveries file (missing, torn, stale, of a
// file replaced since, or failing its checksum) is rebuilt. Its methods
// are safe for concurrent use.
type deliveryKeys struct {
	path string // the index file

	mu     sync.Mutex
	f      *os.File  // the index file; nil when there is none yet
	ix     *keyIndex // f's
	recent map[keyRecord]struct{}
	err    error // why the index is not whole, once a write of it failed
}

// openDeliveryKeys opens the key index at path of deliveries file f,
// size bytes long, and returns how much of f it covers; 0 and no index
// file when the index is missing or does not match f (torn, stale, or of
// another file), for the caller to rebuild it.
func openDeliveryKeys(path string, f *os.File, size int64) (*deliveryKeys, int64, error) {
	k := &deliveryKeys{path: path, recent: map[keyRecord]struct{}{}}
	ixf, ix, _, err := openKeyIndex(path, keyRecordSize, f, size)
	if ixf != nil {
		var ok bool
		if ok, err = ix.verify(ixf); ok && ix.extra == 0 {
			k.f, k.ix = ixf, ix
			return k, ix.covered, nil
		}
		ixf.Close()
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the key index %s: %w", path, err)
	}
	return k, 0, nil
}

// has reports whether a delivery of any of keys ("" for none) is stored.
func (k *deliveryKeys) has(keys ...string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return false, k.err
	}
	for _, key := range keys {
		if key == "" {
			continue
		}
		r := recordOf(key)
		if _, ok := k.recent[r]; ok {
			return true, nil
		}
		if k.ix == nil {
			continue
		}
		found, err := k.ix.lookup(k.f, r[:])
		if err != nil {
			return false, fmt.Errorf("reading the key index %s: %w", k.path, err)
		}
		if found[0] {
			return true, nil
		}
	}
	return false, nil
}

// add notes keys as stored, in memory, and reports whether so many are
// that the index should be written again.
func (k *deliveryKeys) add(keys ...string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range keys {
		k.recent[recordOf(key)] = struct{}{}
	}
	return len(k.recent) > deliveryKeyRecent
}

// write replaces the index file with one holding every key, the file's
// and the recent ones, covering deliveries file f up to length covers (to
// which every key added belongs), and forgets the recent ones. It replaces
// the file durably, so that a crash leaves the old index or the new. When
// it fails (a disk full for a moment, say), the index at the path, the
// old one or the new, is opened again and checked, the recent keys kept,
// and the next add writes it again; only when no index that covers the
// file as before can be had is it not known to be whole, and every later
// lookup fails with its error: listen answers 503 until it is started
// again.
func (k *deliveryKeys) write(f *os.File, covers int64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return k.err
	}
	recent := make([]keyRecord, 0, len(k.recent))
	for r := range k.recent {
		recent = append(recent, r)
	}
	sortRecords(recent)
	old := k.ix
	if err := k.merge(f, covers, recent); err != nil {
		if old == nil || !k.reopen(f, covers, old.covered) {
			k.err = err
		}
		return err
	}
	clear(k.recent)
	return nil
}

// reopen opens the index at k.path again after a failed write, and
// reports whether it is whole and covers deliveries file f (covers bytes
// long) up to was, as the index before the write did, or up to covers:
// with the recent keys, which the write did not forget, it then holds
// every key of f.
func (k *deliveryKeys) reopen(f *os.File, covers, was int64) bool {
	if k.f != nil {
		k.f.Close()
		k.f, k.ix = nil, nil
	}
	ixf, ix, _, err := openKeyIndex(k.path, keyRecordSize, f, covers)
	if err != nil || ixf == nil {
		return false
	}
	if ok, err := ix.verify(ixf); err != nil || !ok || ix.extra != 0 || (ix.covered != was && ix.covered != covers) {
		ixf.Close()
		return false
	}
	k.f, k.ix = ixf, ix
	return true
}

// sortRecords sorts rs in the index's order.
func sortRecords(rs []keyRecord) {
	slices.SortFunc(rs, func(a, b keyRecord) int { return bytes.Compare(a[:], b[:]) })
}

// merge writes, durably at k.path, an index of the records of the index
// open now (if any) merged with rs, sorted, each record once, covering
// deliveries file f up to length covers. It closes the old index
// (Windows cannot replace a file held open) and opens the new one.
func (k *deliveryKeys) merge(f *os.File, covers int64, rs []keyRecord) error {
	w, err := createKeyIndex(k.path, private.FileMode(filepath.Dir(k.path)))
	if err == nil {
		defer w.Abort()
		kw := newKeyIndexWriter(w, keyRecordSize)
		if err = kw.merge(k.ix, k.f, len(rs), func(i int) []byte { return rs[i][:] }); err == nil {
			k.ix, _, err = kw.finish(f, covers, nil)
		}
	}
	if k.f != nil {
		k.f.Close()
		k.f = nil
	}
	if err == nil {
		err = w.Commit()
	}
	if err != nil {
		k.ix = nil
		return fmt.Errorf("writing the key index %s: %w", k.path, err)
	}
	if k.f, err = os.Open(k.path); err != nil {
		k.ix = nil
		return fmt.Errorf("opening the key index %s: %w", k.path, err)
	}
	return nil
}

// close closes the index file.
func (k *deliveryKeys) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return nil
	}
	err := k.f.Close()
	k.f = nil
	return err
}

// lineKey returns the key of a line of the deliveries file: read without
// decoding the rest from a line as listen writes it, which begins with
// its key; any other must be a JSON object with a key.
func lineKey(line []byte) (string, bool) {
	if rest, ok := bytes.CutPrefix(line, []byte(`{"key":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i]), true
		}
	}
	var d struct {
		Key string `json:"key"`
	}
	if json.Unmarshal(line, &d) != nil || d.Key == "" {
		return "", false
	}
	return d.Key, true
}
