package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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

// The list's index is a key index ([keyIndex]): the sorted keys ([numberKey]) of the numbers on the list as of the
// history's covered bytes, each a big-endian uint64; its extra bytes are
// the numbers on the list that have no key, sorted, each a uvarint
// length and its bytes.

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

// dncIndex is the list's index as loaded.
type dncIndex struct {
	*keyIndex
	others map[string]bool // the numbers on the list without a key
	mem    io.ReaderAt     // the index's bytes, when its file could not be written
}

// readIndex reads the index at path and checks it against the history f,
// size bytes long; nil when it is missing, of another format, torn, or
// does not cover f. It also returns the history's bytes it hashed.
func readIndex(path string, f io.ReaderAt, size int64) (*dncIndex, []byte, error) {
	ixf, kx, tail, err := openKeyIndex(path, 8, f, size)
	if ixf == nil {
		return nil, nil, err
	}
	defer ixf.Close()
	b, err := kx.readExtra(ixf)
	if err != nil {
		return nil, nil, err
	}
	ix := &dncIndex{keyIndex: kx, others: map[string]bool{}}
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > 64 || uint64(len(b)-k) < n {
			return nil, nil, nil
		}
		ix.others[string(b[k:k+int(n)])] = true
		b = b[k+int(n):]
	}
	return ix, tail, nil
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
	covered, err = eachLine(f, 0, size, func(line []byte, off int64) error {
		number, removed, ok := decodeEntry(line)
		if !ok {
			return fmt.Errorf("%s: the line at byte %d is not a do-not-call entry", path, off)
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
		return nil
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return recs, others, covered, nil
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
	ix := &dncIndex{others: map[string]bool{}}
	var extra, tail []byte
	for _, n := range slices.Sorted(maps.Keys(othersInForce(oes))) {
		extra = append(binary.AppendUvarint(extra, uint64(len(n))), n...)
		ix.others[n] = true
	}
	write := func(w io.Writer) (err error) {
		kw := newKeyIndexWriter(w, 8)
		var b [8]byte
		for _, r := range recs {
			binary.BigEndian.PutUint64(b[:], r.key)
			kw.add(b[:])
		}
		ix.keyIndex, tail, err = kw.finish(f, covered, extra)
		return err
	}
	removeTemps(dir, DoNotCallIndexName, staleTemp, time.Now()) //nolint:errcheck // the next build tries again
	w, err := durable.Create(filepath.Join(dir, DoNotCallIndexName), private.FileMode(dir))
	if err == nil {
		defer w.Abort()
		if err = write(w); err == nil {
			err = w.Commit()
		}
	}
	if err != nil {
		var mem bytes.Buffer
		if err := write(&mem); err != nil {
			return nil, nil, err
		}
		ix.mem = bytes.NewReader(mem.Bytes())
	}
	return ix, tail, nil
}

// staleTemp is how old a temporary index file must be to be removed: a
// process building the index killed before it renamed it left it there,
// for none takes minutes to write.
const staleTemp = 15 * time.Minute

// decodeEntry reads the number of an entry's JSON line (an erased
// person's hash, which has no key and is kept with the numbers that have
// none) and whether it is
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
	if err := json.Unmarshal(line, &e); err != nil || !validEntry(&e) {
		return "", false, false
	}
	return cmp.Or(e.Number, e.Hash), e.Removed, true
}
