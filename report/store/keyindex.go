package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"time"
)

// keyIndex is a key index file as read or written: a file derived from
// an append-only JSON Lines file (its source) that holds sorted keys of
// one width for the source's whole lines up to a length (covered), and
// bytes its user keeps beside them (extra). The do-not-call list
// ([DoNotCallIndexName]) and the deliveries ([DeliveryKeysFile]) keep
// one each, and say what their keys are; a user with keys of two kinds
// keeps two files. An index is trusted only while the source still ends,
// at covered, in the bytes whose hash it holds: else, or when it is
// missing, torn or of another format, its user builds it again.
//
// The file is keyIndexMagic, the keys (sorted, none twice), extra, then
// the trailer: the count of keys, the length of extra and covered (each
// a big-endian uint64), the SHA-256 of the source's last up to
// tailHashed bytes before covered, the CRC-32C of the file before the
// trailer, the key width (uint32), and keyIndexMagic again.
type keyIndex struct {
	width   int
	count   int64 // keys
	extra   int64 // length of the extra bytes
	covered int64
	hash    [32]byte
	crc     uint32
	trailer []byte // as read or written: whether a file is still this index
}

const (
	keyIndexMagic   = "CRKEYIX1" // its last byte the format's version
	keyIndexTrailer = 72
	tailHashed      = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tailHash returns the SHA-256 of the last up to tailHashed bytes of f
// before covered, and those bytes: how a key index tells that the source
// it covers is still the one it was built from.
func tailHash(f io.ReaderAt, covered int64) ([32]byte, []byte, error) {
	from := max(0, covered-tailHashed)
	b := make([]byte, covered-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return [32]byte{}, nil, err
	}
	return sha256.Sum256(b), b, nil
}

// openKeyIndex opens the key index at path and checks its trailer
// against its source src, srcSize bytes long. It returns nil when the
// file is missing, cannot be read as a whole key index of this format
// with keys width bytes wide, or src no longer holds what it covers;
// else the file, the index and the source's bytes it hashed. It does not
// read the keys ([keyIndex.verify] does).
func openKeyIndex(path string, width int, src io.ReaderAt, srcSize int64) (*os.File, *keyIndex, []byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	fi, err := f.Stat()
	t := make([]byte, keyIndexTrailer)
	if err == nil && fi.Size() >= int64(len(keyIndexMagic)+len(t)) {
		_, err = f.ReadAt(t, fi.Size()-int64(len(t)))
	}
	ix := &keyIndex{width: width, count: int64(binary.BigEndian.Uint64(t)), extra: int64(binary.BigEndian.Uint64(t[8:])),
		covered: int64(binary.BigEndian.Uint64(t[16:])), hash: [32]byte(t[24:56]), crc: binary.BigEndian.Uint32(t[56:]), trailer: t}
	size := int64(len(keyIndexMagic)) + ix.count*int64(width) + ix.extra + int64(len(t))
	if err != nil || string(t[64:]) != keyIndexMagic || binary.BigEndian.Uint32(t[60:]) != uint32(width) ||
		uint64(ix.count) > uint64(fi.Size()) || uint64(ix.extra) > uint64(fi.Size()) || size != fi.Size() || uint64(ix.covered) > uint64(srcSize) {
		f.Close()
		return nil, nil, nil, nil
	}
	h, tail, err := tailHash(src, ix.covered)
	if err != nil || h != ix.hash {
		f.Close()
		return nil, nil, nil, err
	}
	return f, ix, tail, nil
}

// keys reads the keys whole from the index's bytes r.
func (ix *keyIndex) keys(r io.ReaderAt) ([]byte, error) {
	b := make([]byte, ix.count*int64(ix.width))
	if len(b) == 0 {
		return b, nil // ReadAt of nothing at the end says io.EOF
	}
	_, err := r.ReadAt(b, int64(len(keyIndexMagic)))
	return b, err
}

// readExtra reads the index's extra bytes from r.
func (ix *keyIndex) readExtra(r io.ReaderAt) ([]byte, error) {
	b := make([]byte, ix.extra)
	_, err := r.ReadAt(b, int64(len(keyIndexMagic))+ix.count*int64(ix.width))
	return b, err
}

// verify reads the index's bytes r whole and reports whether they match
// its checksum and its keys are sorted with no key twice, as lookup
// needs.
func (ix *keyIndex) verify(r io.ReaderAt) (bool, error) {
	w, keys := ix.width, int64(len(keyIndexMagic))+ix.count*int64(ix.width)
	crc, buf := uint32(0), make([]byte, (1<<16)/w*w)
	var prev []byte
	for p, part := range [][2]int64{{0, int64(len(keyIndexMagic))}, {int64(len(keyIndexMagic)), keys}, {keys, keys + ix.extra}} {
		for off := part[0]; off < part[1]; {
			b := buf[:min(int64(len(buf)), part[1]-off)]
			if _, err := r.ReadAt(b, off); err != nil {
				return false, err
			}
			crc = crc32.Update(crc, castagnoli, b)
			for i := 0; p == 1 && i < len(b); i += w {
				if prev != nil && bytes.Compare(prev, b[i:i+w]) >= 0 {
					return false, nil
				}
				prev = b[i : i+w]
			}
			prev = bytes.Clone(prev) // buf is read into again
			off += int64(len(b))
		}
	}
	return crc == ix.crc, nil
}

// reopen opens the index file at path while it is still ix (its trailer
// the same); nil when it is gone or another process replaced it.
func (ix *keyIndex) reopen(path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	t := make([]byte, len(ix.trailer))
	if err == nil && fi.Size() >= int64(len(t)) {
		_, err = f.ReadAt(t, fi.Size()-int64(len(t)))
	}
	if err != nil || !bytes.Equal(t, ix.trailer) {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// lookup reports, for each of keys (sorted, distinct, ix.width bytes
// each, end to end), whether the index's bytes r hold it: by a binary
// search for each, or by one read of the keys merged against them,
// whichever reads less.
func (ix *keyIndex) lookup(r io.ReaderAt, keys []byte) ([]bool, error) {
	count, w, off := ix.count, ix.width, int64(len(keyIndexMagic))
	found := make([]bool, len(keys)/w)
	if count == 0 || len(found) == 0 {
		return found, nil
	}
	searches := int64(len(found)) * int64(bits.Len64(uint64(count)))
	if reads := (count*int64(w) + mergeBlock - 1) / mergeBlock; reads < searches {
		return found, mergeKeys(r, off, count, w, keys, found)
	}
	return found, searchKeys(r, off, count, w, keys, found)
}

// mergeBlock is how much of the keys mergeKeys reads at a time.
const mergeBlock = 1 << 16

// mergeKeys is lookup by one read of the keys, count at off.
func mergeKeys(r io.ReaderAt, off, count int64, w int, keys []byte, found []bool) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, count*int64(w)), mergeBlock)
	k := make([]byte, w)
	i := 0
	for n := int64(0); n < count && i < len(found); n++ {
		if _, err := io.ReadFull(br, k); err != nil {
			return err
		}
		for i < len(found) && bytes.Compare(keys[i*w:(i+1)*w], k) < 0 {
			i++
		}
		if i < len(found) && bytes.Equal(keys[i*w:(i+1)*w], k) {
			found[i] = true
			i++
		}
	}
	return nil
}

// searchKeys is lookup by a binary search for each key.
func searchKeys(r io.ReaderAt, off, count int64, w int, keys []byte, found []bool) error {
	v := make([]byte, w)
	for i := range found {
		k := keys[i*w : (i+1)*w]
		lo, hi := int64(0), count
		for lo < hi {
			mid := int64(uint64(lo+hi) >> 1)
			if _, err := r.ReadAt(v, off+mid*int64(w)); err != nil {
				return err
			}
			switch c := bytes.Compare(v, k); {
			case c == 0:
				found[i], lo = true, hi
			case c < 0:
				lo = mid + 1
			default:
				hi = mid
			}
		}
	}
	return nil
}

// keyIndexWriter writes a key index to w: its keys in order, then its
// trailer ([keyIndexWriter.finish]).
type keyIndexWriter struct {
	ix   keyIndex
	bw   *bufio.Writer
	crc  hash.Hash32 // of what bw wrote
	last []byte      // the key added last
}

// newKeyIndexWriter starts a key index of keys width bytes wide in w.
func newKeyIndexWriter(w io.Writer, width int) *keyIndexWriter {
	h := crc32.New(castagnoli)
	kw := &keyIndexWriter{ix: keyIndex{width: width}, bw: bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16), crc: h}
	kw.bw.WriteString(keyIndexMagic) //nolint:errcheck // finish reports it
	return kw
}

// add writes key after the keys added; a key equal to the one added last
// is written once.
func (w *keyIndexWriter) add(key []byte) {
	if w.ix.count > 0 && bytes.Equal(key, w.last) {
		return
	}
	w.bw.Write(key) //nolint:errcheck // finish reports it
	w.last = append(w.last[:0], key...)
	w.ix.count++
}

// merge adds the keys of the index old in r (none when old is nil) and
// the n keys key gives, both sorted, in order.
func (w *keyIndexWriter) merge(old *keyIndex, r io.ReaderAt, n int, key func(int) []byte) error {
	or := bufio.NewReaderSize(bytes.NewReader(nil), 16)
	if old != nil {
		or = bufio.NewReaderSize(io.NewSectionReader(r, int64(len(keyIndexMagic)), old.count*int64(old.width)), 1<<16)
	}
	o := make([]byte, w.ix.width)
	_, err := io.ReadFull(or, o)
	for i := 0; ; {
		switch {
		case err != nil && !errors.Is(err, io.EOF):
			return err
		case err == nil && (i == n || bytes.Compare(o, key(i)) <= 0):
			w.add(o)
			_, err = io.ReadFull(or, o)
		case i == n:
			return nil
		default:
			w.add(key(i))
			i++
		}
	}
}

// finish writes extra and the trailer, the index covering src up to
// covered, flushes them, and returns the index and the source's bytes
// it hashed.
func (w *keyIndexWriter) finish(src io.ReaderAt, covered int64, extra []byte) (*keyIndex, []byte, error) {
	ix := &w.ix
	h, tail, err := tailHash(src, covered)
	if err != nil {
		return nil, nil, err
	}
	w.bw.Write(extra) //nolint:errcheck // Flush reports it
	if err := w.bw.Flush(); err != nil {
		return nil, nil, err
	}
	ix.extra, ix.covered, ix.hash, ix.crc = int64(len(extra)), covered, h, w.crc.Sum32()
	t := binary.BigEndian.AppendUint64(nil, uint64(ix.count))
	t = binary.BigEndian.AppendUint64(t, uint64(ix.extra))
	t = binary.BigEndian.AppendUint64(t, uint64(covered))
	t = append(t, h[:]...)
	t = binary.BigEndian.AppendUint32(t, ix.crc)
	t = binary.BigEndian.AppendUint32(t, uint32(ix.width))
	ix.trailer = append(t, keyIndexMagic...)
	if _, err := w.bw.Write(ix.trailer); err != nil {
		return nil, nil, err
	}
	return ix, tail, w.bw.Flush()
}

// eachLine calls fn with each whole line of f from offset from up to
// limit that is not blank, and where it starts, and returns where the
// last whole line ends: a last line without its newline (torn by a
// crash, or being written) is not read. The line is fn's only during
// the call.
func eachLine(f io.ReaderAt, from, limit int64, fn func(line []byte, at int64) error) (int64, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(f, from, limit-from), 1<<20)
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
			if err := fn(line, off); err != nil {
				return off, err
			}
		}
		off += int64(len(line))
	}
}

// removeTemps removes the temporary files a process killed while it
// wrote the file name in dir left (durable's ".name.*.tmp") older than
// age; all of them when age is 0. It returns the first error.
func removeTemps(dir, name string, age time.Duration, now time.Time) error {
	temps, _ := filepath.Glob(filepath.Join(dir, "."+name+".*.tmp"))
	var first error
	for _, p := range temps {
		if fi, err := os.Stat(p); age > 0 && (err != nil || now.Sub(fi.ModTime()) <= age) {
			continue
		}
		if err := os.Remove(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}
