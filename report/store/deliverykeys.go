package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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

// keyRecordSize is the width of one key of the index: 128 bits.
const keyRecordSize = 16

// keyTrailerSize is the length of the index's trailer, after its keys.
const keyTrailerSize = 64

// keyIndexMagic opens the trailer of a key index of this format.
var keyIndexMagic = [16]byte{'c', 'a', 'l', 'l', 'r', 'u', 'n', '-', 'k', 'e', 'y', 's', '-', 'v', '1', '\n'}

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
// holding every key in memory: the key index file (sorted records of the
// keys in the file up to a length, searched on disk) and the keys stored
// since it was written, in memory. Its methods are safe for concurrent
// use.
//
// The index file is the records sorted, then a trailer: magic, the length
// of the deliveries file it covers, the number of records, a hash of the
// deliveries file's last bytes up to that length, and CRC-32Cs of the
// records and of the trailer. One that does not match the deliveries file
// (missing, torn, stale, or of a file replaced since) is rebuilt.
type deliveryKeys struct {
	path string // the index file

	mu     sync.Mutex
	f      *os.File // the index file; nil when there is none yet
	n      int64    // records in f
	recent map[keyRecord]struct{}
	err    error // why the index is not whole, once a write of it failed
}

// keyTrailer is the trailer of a key index.
type keyTrailer struct {
	covers int64 // the length of the deliveries file whose keys it holds
	n      int64
	tail   [16]byte // hash of the deliveries file's last bytes up to covers
	crc    uint32   // of the records
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (t keyTrailer) bytes() []byte {
	b := make([]byte, keyTrailerSize)
	copy(b, keyIndexMagic[:])
	binary.LittleEndian.PutUint64(b[16:], uint64(t.covers))
	binary.LittleEndian.PutUint64(b[24:], uint64(t.n))
	copy(b[32:48], t.tail[:])
	binary.LittleEndian.PutUint32(b[48:], t.crc)
	binary.LittleEndian.PutUint32(b[52:], crc32.Checksum(b[:52], castagnoli))
	return b
}

// keysTailHash is the first half of the deliveries file's [tailHash] up
// to length covers, as the key index keeps it.
func keysTailHash(f *os.File, covers int64) ([16]byte, error) {
	sum, _, err := tailHash(f, covers)
	return [16]byte(sum[:16]), err
}

// openDeliveryKeys opens the key index at path of deliveries file f,
// size bytes long, and returns how much of f it covers; 0 and no index
// file when the index is missing or does not match f (torn, stale, or of
// another file), for the caller to rebuild it.
func openDeliveryKeys(path string, f *os.File, size int64) (*deliveryKeys, int64, error) {
	k := &deliveryKeys{path: path, recent: map[keyRecord]struct{}{}}
	ix, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return k, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("opening the key index %s: %w", path, err)
	}
	t, ok, err := checkKeyIndex(ix, f, size)
	if err != nil || !ok {
		ix.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("reading the key index %s: %w", path, err)
		}
		return k, 0, nil
	}
	k.f, k.n = ix, t.n
	return k, t.covers, nil
}

// checkKeyIndex reads the trailer of key index ix and reports whether
// the index is whole and matches deliveries file f, size bytes long.
func checkKeyIndex(ix, f *os.File, size int64) (keyTrailer, bool, error) {
	var t keyTrailer
	fi, err := ix.Stat()
	if err != nil {
		return t, false, err
	}
	if fi.Size() < keyTrailerSize || (fi.Size()-keyTrailerSize)%keyRecordSize != 0 {
		return t, false, nil
	}
	b := make([]byte, keyTrailerSize)
	if _, err := ix.ReadAt(b, fi.Size()-keyTrailerSize); err != nil {
		return t, false, err
	}
	if !bytes.Equal(b[:16], keyIndexMagic[:]) || binary.LittleEndian.Uint32(b[52:]) != crc32.Checksum(b[:52], castagnoli) {
		return t, false, nil
	}
	t.covers = int64(binary.LittleEndian.Uint64(b[16:]))
	t.n = int64(binary.LittleEndian.Uint64(b[24:]))
	copy(t.tail[:], b[32:48])
	t.crc = binary.LittleEndian.Uint32(b[48:])
	if t.covers < 0 || t.covers > size || t.n != (fi.Size()-keyTrailerSize)/keyRecordSize {
		return t, false, nil
	}
	if h, err := keysTailHash(f, t.covers); err != nil || h != t.tail {
		return t, false, err
	}
	// The records: their checksum, and in order, which the search needs.
	crc := uint32(0)
	var prev []byte
	buf := make([]byte, 1<<16*keyRecordSize)
	for off := int64(0); off < t.n*keyRecordSize; {
		b := buf[:min(int64(len(buf)), t.n*keyRecordSize-off)]
		if _, err := ix.ReadAt(b, off); err != nil {
			return t, false, err
		}
		crc = crc32.Update(crc, castagnoli, b)
		for i := 0; i < len(b); i += keyRecordSize {
			r := b[i : i+keyRecordSize]
			if prev != nil && bytes.Compare(prev, r) >= 0 {
				return t, false, nil
			}
			prev = r
		}
		prev = bytes.Clone(prev)
		off += int64(len(b))
	}
	return t, crc == t.crc, nil
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
		if found, err := k.search(r); found || err != nil {
			if err != nil {
				err = fmt.Errorf("reading the key index %s: %w", k.path, err)
			}
			return found, err
		}
	}
	return false, nil
}

// search looks for r in the index file's records, which are sorted.
func (k *deliveryKeys) search(r keyRecord) (bool, error) {
	var at keyRecord
	lo, hi := int64(0), k.n
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := k.f.ReadAt(at[:], mid*keyRecordSize); err != nil {
			return false, err
		}
		switch bytes.Compare(at[:], r[:]) {
		case 0:
			return true, nil
		case -1:
			lo = mid + 1
		default:
			hi = mid
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
// it fails the index is not known to be whole, and every later lookup
// fails with its error: listen answers 503 until it is started again.
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
	nf, n, err := writeKeyIndex(k.path, f, covers, k.f, k.n, recent)
	k.f, k.n = nf, n
	if err != nil {
		k.err = err
		return err
	}
	clear(k.recent)
	return nil
}

// sortRecords sorts rs in the index's order.
func sortRecords(rs []keyRecord) {
	slices.SortFunc(rs, func(a, b keyRecord) int { return bytes.Compare(a[:], b[:]) })
}

// writeKeyIndex writes, durably at path, an index of the n records of
// the index file old (nil for none) merged with rs, both sorted, each
// record once, covering deliveries file f up to length covers. It closes
// old (Windows cannot replace a file held open) and returns the new index
// open for reading, with its number of records.
func writeKeyIndex(path string, f *os.File, covers int64, old *os.File, n int64, rs []keyRecord) (*os.File, int64, error) {
	closed := old == nil
	err := mergeKeyIndex(path, f, covers, old, n, rs, func() error {
		if closed {
			return nil
		}
		closed = true
		return old.Close()
	})
	if !closed {
		old.Close()
	}
	if err != nil {
		return nil, 0, err
	}
	ix, err := os.Open(path)
	if err == nil {
		var fi os.FileInfo
		if fi, err = ix.Stat(); err == nil {
			return ix, (fi.Size() - keyTrailerSize) / keyRecordSize, nil
		}
		ix.Close()
	}
	return nil, 0, fmt.Errorf("opening the key index %s: %w", path, err)
}

// mergeKeyIndex is writeKeyIndex's writing, calling beforeCommit before it
// puts the new index in place.
func mergeKeyIndex(path string, f *os.File, covers int64, old *os.File, n int64, rs []keyRecord, beforeCommit func() error) error {
	fail := func(err error) error { return fmt.Errorf("writing the key index %s: %w", path, err) }
	t := keyTrailer{covers: covers}
	var err error
	if t.tail, err = keysTailHash(f, covers); err != nil {
		return fail(err)
	}
	w, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return fail(err)
	}
	defer w.Abort()
	bw := bufio.NewWriterSize(w, 1<<16)
	var last keyRecord
	put := func(r keyRecord) error {
		if t.n > 0 && r == last {
			return nil
		}
		t.crc = crc32.Update(t.crc, castagnoli, r[:])
		t.n++
		last = r
		_, err := bw.Write(r[:])
		return err
	}
	var or io.Reader = bytes.NewReader(nil)
	if old != nil {
		or = bufio.NewReaderSize(io.NewSectionReader(old, 0, n*keyRecordSize), 1<<16)
	}
	var o keyRecord
	_, err = io.ReadFull(or, o[:])
	for err == nil || len(rs) > 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(err)
		}
		if err == nil && (len(rs) == 0 || bytes.Compare(o[:], rs[0][:]) <= 0) {
			if err := put(o); err != nil {
				return fail(err)
			}
			_, err = io.ReadFull(or, o[:])
			continue
		}
		if err := put(rs[0]); err != nil {
			return fail(err)
		}
		rs = rs[1:]
	}
	if !errors.Is(err, io.EOF) {
		return fail(err)
	}
	if _, err := bw.Write(t.bytes()); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := beforeCommit(); err != nil {
		return fail(err)
	}
	if err := w.Commit(); err != nil {
		return fail(err)
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

// readDeliveryKeys calls fn with the key of each delivery whose whole line
// is in deliveries file f at path from offset from on, and the offset
// just past its line, and returns the offset after the last whole line (a last line without its newline was
// torn by a crash, never acknowledged). It reads only the keys, which is
// all listen keeps of deliveries that may carry transcripts: a line as
// listen writes it begins with its key, read without decoding the rest;
// any other must be a JSON object with a key. A line that is neither is
// an error naming the file and the line's byte offset.
func readDeliveryKeys(path string, f *os.File, from int64, fn func(key string, end int64) error) (int64, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(f, from, 1<<62), 1<<20)
	off := from
	var long []byte // a line longer than the buffer, gathered
	for {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, part...)
			continue
		}
		line := part
		if long != nil {
			line, long = append(long, part...), nil
		}
		if errors.Is(err, io.EOF) {
			return off, nil
		}
		if err != nil {
			return off, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			key, ok := lineKey(line)
			if !ok {
				return off, fmt.Errorf("%s: the line at byte %d is not a delivery", path, off)
			}
			if err := fn(key, off+int64(len(line))); err != nil {
				return off, err
			}
		}
		off += int64(len(line))
	}
}

// lineKey returns the key of a line of the deliveries file.
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
