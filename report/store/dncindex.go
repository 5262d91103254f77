package store

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
)

// DoNotCallIndexName is the file name of a do-not-call list's index,
// beside its history ([DoNotCallFileName]). It is derived from the
// history alone: deleting it is safe, it is built again.
const DoNotCallIndexName = "do-not-call.index"

// The index file is a header, then the sorted keys ([numberKey]) of the
// numbers on the list as of the history's first covered bytes, each a
// big-endian uint64, then the numbers on the list that have no key, each
// a uvarint length and its bytes. The header is the magic, the version,
// covered, the SHA-256 of the last up to tailHashed bytes of the history
// before covered, the count of keys and the count of other numbers.
const (
	indexMagic   = "CRDNCIDX"
	indexVersion = 1
	indexHeader  = 8 + 4 + 4 + 8 + sha256.Size + 8 + 8
	tailHashed   = 4096
)

// maxDelta bounds the numbers a list keeps in memory for the entries
// appended after its index covers: past it, the index is built again.
const maxDelta = 100_000

// numberKey packs an E.164 number, "+" and 1 to 15 digits, into a uint64:
// the count of digits in the top byte, their value below, so that "+1..."
// and "+01..." differ. ok is false for any other string.
func numberKey(n string) (key uint64, ok bool) {
	if len(n) < 2 || len(n) > 16 || n[0] != '+' {
		return 0, false
	}
	var v uint64
	for i := 1; i < len(n); i++ {
		c := n[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return uint64(len(n)-1)<<56 | v, true
}

// keyNumber is the number whose key is k.
func keyNumber(k uint64) string {
	return fmt.Sprintf("+%0*d", int(k>>56), k&(1<<56-1))
}

// dncIndex is an index file's header, as read or written, and the
// numbers without a key it holds.
type dncIndex struct {
	covered int64    // the history's bytes it covers: whole lines
	hash    [32]byte // of the last up to tailHashed bytes before covered
	count   int64    // keys
	others  map[string]bool
	keys    io.ReaderAt // the keys section, when not read from the file (it could not be written)
}

// encodeHeader returns ix's header.
func (ix *dncIndex) encodeHeader() []byte {
	b := make([]byte, 0, indexHeader)
	b = append(b, indexMagic...)
	b = binary.BigEndian.AppendUint32(b, indexVersion)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(ix.covered))
	b = append(b, ix.hash[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(ix.count))
	return binary.BigEndian.AppendUint64(b, uint64(len(ix.others)))
}

// readIndex reads the index at path; nil, nil when it is missing, of
// another version or does not hold what its header says.
func readIndex(path string) (*dncIndex, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := make([]byte, indexHeader)
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, nil // too short: built again
	}
	if string(h[:8]) != indexMagic || binary.BigEndian.Uint32(h[8:]) != indexVersion {
		return nil, nil
	}
	ix := &dncIndex{covered: int64(binary.BigEndian.Uint64(h[16:]))}
	copy(ix.hash[:], h[24:56])
	ix.count = int64(binary.BigEndian.Uint64(h[56:]))
	nOthers := binary.BigEndian.Uint64(h[64:])
	end := indexHeader + ix.count*8
	if ix.covered < 0 || ix.count < 0 || ix.count > fi.Size()/8 || end > fi.Size() || nOthers > uint64(fi.Size()) {
		return nil, nil
	}
	ix.others = map[string]bool{}
	br := bufio.NewReader(io.NewSectionReader(f, end, fi.Size()-end))
	for range nOthers {
		n, err := binary.ReadUvarint(br)
		if err != nil || n > 64 {
			return nil, nil
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, nil
		}
		ix.others[string(b)] = true
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, nil // more than the header says
	}
	return ix, nil
}

// tailHash returns the SHA-256 of the last up to tailHashed bytes of f
// before covered, and those bytes: how an index of an append-only file
// (the do-not-call list's, the deliveries' retry keys) tells that the
// file it covers is still the one it was built from.
func tailHash(f io.ReaderAt, covered int64) ([32]byte, []byte, error) {
	from := max(0, covered-tailHashed)
	b := make([]byte, covered-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return [32]byte{}, nil, err
	}
	return sha256.Sum256(b), b, nil
}

// dncRecord is one entry of the history, for building the index: its
// number's key and where its line starts, shifted left once, its low bit
// set for a removal.
type dncRecord struct{ key, at uint64 }

// scanHistory reads the whole lines of the history f, up to size bytes,
// and returns the records of the entries whose number has a key, the
// entries of the others (by number, in order: true for an addition, with
// where its line starts), and the length of the whole lines read. A line
// that is not an entry is an error naming the file and where the line
// starts: the list says who must not be called, so it is not guessed.
func scanHistory(f io.ReaderAt, path string, size int64) (recs []dncRecord, others []otherEntry, covered int64, err error) {
	lines, err := countLines(f, size)
	if err != nil {
		return nil, nil, 0, err
	}
	recs = make([]dncRecord, 0, lines)
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<16)
	var off int64
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			long := bytes.Clone(line)
			var rest []byte
			rest, err = br.ReadBytes('\n')
			line = append(long, rest...)
		}
		if errors.Is(err, io.EOF) {
			return recs, others, off, nil // a torn or unfinished last line is not read
		}
		if err != nil {
			return nil, nil, 0, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			number, removed, ok := decodeEntry(line)
			if !ok {
				return nil, nil, 0, fmt.Errorf("%s: the line at byte %d is not a do-not-call entry", path, off)
			}
			if key, ok := numberKey(number); ok {
				at := uint64(off) << 1
				if removed {
					at |= 1
				}
				recs = append(recs, dncRecord{key, at})
			} else {
				others = append(others, otherEntry{number, !removed, off})
			}
		}
		off += int64(len(line))
	}
}

// countLines counts the newlines of f's first size bytes, so that the
// records of a list of millions are made once, at their size.
func countLines(f io.ReaderAt, size int64) (int, error) {
	n := 0
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		n += bytes.Count(buf[:k], []byte{'\n'})
		off += int64(k)
		if errors.Is(err, io.EOF) {
			break // cut meanwhile: the lines read next are fewer
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// otherEntry is an entry of a number without a key: whether it puts the
// number on the list, and where its line starts.
type otherEntry struct {
	number string
	on     bool
	at     int64
}

// inForce sorts recs and returns, in key order, the records of the
// additions in force: of each number whose last entry is an addition,
// the first addition after its last removal (recs' memory is reused).
func inForce(recs []dncRecord) []dncRecord {
	slices.SortFunc(recs, func(a, b dncRecord) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.at, b.at)) })
	out := recs[:0]
	for i := 0; i < len(recs); {
		j, put := i, -1
		for ; j < len(recs) && recs[j].key == recs[i].key; j++ {
			switch {
			case recs[j].at&1 == 1:
				put = -1
			case put < 0:
				put = j
			}
		}
		if put >= 0 {
			out = append(out, recs[put])
		}
		i = j
	}
	return out
}

// othersInForce returns the numbers without a key on the list after es,
// each with where the addition in force starts.
func othersInForce(es []otherEntry) map[string]int64 {
	on := map[string]int64{}
	for _, e := range es {
		if !e.on {
			delete(on, e.number)
		} else if _, ok := on[e.number]; !ok {
			on[e.number] = e.at
		}
	}
	return on
}

// buildIndex reads the history at path and writes its index beside it
// (durably: written whole, or not at all), returning the index and the
// last up to tailHashed bytes it covers, or nil when there is no
// history. Two processes building at once write the same index. An
// index that cannot be written (a directory the user may only read) is
// kept in memory instead.
func buildIndex(dir, path string) (*dncIndex, []byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	recs, oes, covered, err := scanHistory(f, path, fi.Size())
	if err != nil {
		return nil, nil, err
	}
	recs = inForce(recs)
	ix := &dncIndex{covered: covered, count: int64(len(recs)), others: map[string]bool{}}
	for n := range othersInForce(oes) {
		ix.others[n] = true
	}
	hash, tail, err := tailHash(f, covered)
	if err != nil {
		return nil, nil, err
	}
	ix.hash = hash
	if err := writeIndex(dir, ix, recs); err != nil {
		keys := make([]byte, 0, 8*len(recs))
		for _, r := range recs {
			keys = binary.BigEndian.AppendUint64(keys, r.key)
		}
		ix.keys = bytes.NewReader(keys)
	}
	return ix, tail, nil
}

// staleTemp is how old a temporary index file must be to be removed: a
// process building the index killed before it renamed it left it there,
// for none takes minutes to write.
const staleTemp = 15 * time.Minute

// removeStaleTemps removes the temporary index files in dir older than
// staleTemp; the one another process is writing now is younger.
func removeStaleTemps(dir string, now time.Time) {
	temps, _ := filepath.Glob(filepath.Join(dir, "."+DoNotCallIndexName+".*.tmp"))
	for _, p := range temps {
		if fi, err := os.Stat(p); err == nil && now.Sub(fi.ModTime()) > staleTemp {
			os.Remove(p)
		}
	}
}

// writeIndex writes ix, with the keys of recs, to the index file in dir.
func writeIndex(dir string, ix *dncIndex, recs []dncRecord) error {
	removeStaleTemps(dir, time.Now())
	w, err := durable.Create(filepath.Join(dir, DoNotCallIndexName), private.FileMode(dir))
	if err != nil {
		return err
	}
	defer w.Abort()
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(ix.encodeHeader()) //nolint:errcheck // Flush reports it
	var b [8]byte
	for _, r := range recs {
		binary.BigEndian.PutUint64(b[:], r.key)
		bw.Write(b[:]) //nolint:errcheck
	}
	for _, n := range slices.Sorted(maps.Keys(ix.others)) {
		bw.Write(binary.AppendUvarint(nil, uint64(len(n)))) //nolint:errcheck
		bw.WriteString(n)                                   //nolint:errcheck
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return w.Commit()
}

// decodeEntry reads the number of an entry's JSON line and whether it is
// a removal: quickly for the lines json.Marshal writes, else through
// encoding/json. ok is false for a line that is no entry.
func decodeEntry(line []byte) (number string, removed, ok bool) {
	const head, at = `{"number":"`, `","at":"`
	if rest, found := bytes.CutPrefix(line, []byte(head)); found {
		end := bytes.IndexByte(rest, '"')
		if end > 0 && bytes.HasPrefix(rest[end:], []byte(at)) && bytes.IndexByte(rest[:end], '\\') < 0 {
			after := rest[end+len(at):]
			if q := bytes.IndexByte(after, '"'); q > 0 {
				tail := after[q+1:]
				t := bytes.TrimRight(tail, " \r\n")
				if len(t) > 0 && t[len(t)-1] == '}' {
					switch {
					case bytes.HasPrefix(tail, []byte(`,"removed":true,"source":"`)):
						return string(rest[:end]), true, true
					case bytes.HasPrefix(tail, []byte(`,"source":"`)):
						return string(rest[:end]), false, true
					}
				}
			}
		}
	}
	var e DoNotCallEntry
	if err := json.Unmarshal(line, &e); err != nil || e.Number == "" {
		return "", false, false
	}
	return e.Number, e.Removed, true
}

// lookupKeys reports, for each of keys (sorted, distinct), whether the
// index's keys section, count keys at off in r, holds it: by a binary
// search for each, or by one read of the section merged against them,
// whichever reads less.
func lookupKeys(r io.ReaderAt, off, count int64, keys []uint64) ([]bool, error) {
	if count == 0 || len(keys) == 0 {
		return make([]bool, len(keys)), nil
	}
	searches := int64(len(keys)) * int64(bits.Len64(uint64(count)))
	if reads := (count*8 + mergeBlock - 1) / mergeBlock; reads < searches {
		return mergeKeys(r, off, count, keys)
	}
	return searchKeys(r, off, count, keys)
}

// mergeBlock is how much of the keys section mergeKeys reads at a time.
const mergeBlock = 1 << 16

// mergeKeys is lookupKeys by one read of the keys section.
func mergeKeys(r io.ReaderAt, off, count int64, keys []uint64) ([]bool, error) {
	found := make([]bool, len(keys))
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, count*8), mergeBlock)
	var b [8]byte
	i := 0
	for n := int64(0); n < count && i < len(keys); n++ {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, err
		}
		k := binary.BigEndian.Uint64(b[:])
		for i < len(keys) && keys[i] < k {
			i++
		}
		if i < len(keys) && keys[i] == k {
			found[i] = true
			i++
		}
	}
	return found, nil
}

// searchKeys is lookupKeys by a binary search for each key.
func searchKeys(r io.ReaderAt, off, count int64, keys []uint64) ([]bool, error) {
	found := make([]bool, len(keys))
	var b [8]byte
	for i, k := range keys {
		lo, hi := int64(0), count
		for lo < hi {
			mid := int64(uint64(lo+hi) >> 1)
			if _, err := r.ReadAt(b[:], off+mid*8); err != nil {
				return nil, err
			}
			switch v := binary.BigEndian.Uint64(b[:]); {
			case v == k:
				found[i], lo = true, hi
			case v < k:
				lo = mid + 1
			default:
				hi = mid
			}
		}
	}
	return found, nil
}
