package sheet

import (
	"hash/maphash"
	"io"
	"os"
)

// Stamp is a file as it stood when it was looked at: which file it was,
// its size, its modification time and a hash of its bytes. What is kept
// of a sheet read once (the CSV text of a workbook, [Workbooks]; the
// records the campaign's pass over the do-not-call and consent columns
// read) stands for the file whose stamp it was kept with: a file put in
// its place with the same size and time, or a cell changed in place and
// the time set back (or changed within the clock's tick), has another
// stamp.
type Stamp struct {
	fi  os.FileInfo
	sum uint64
}

// stampSeed seeds the hashes of the files' bytes, compared within the
// process only.
var stampSeed = maphash.MakeSeed()

// StampFile reads the file at path whole and returns its stamp. Hashing
// a file costs far less than parsing it.
func StampFile(path string) (Stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Stamp{}, err
	}
	var h maphash.Hash
	h.SetSeed(stampSeed)
	if n, err := io.Copy(&h, f); err != nil {
		return Stamp{}, err
	} else if n != fi.Size() {
		return Stamp{}, io.ErrUnexpectedEOF // written to as it was read
	}
	return Stamp{fi: fi, sum: h.Sum64()}, nil
}

// stampingReader is a text sheet's file as a [Reader] reads it: the
// bytes it passes on are hashed as a [Stamp] hashes them, so that once
// they are read to the end the stamp of what was parsed is known without
// reading the file again.
type stampingReader struct {
	f   *os.File
	fi  os.FileInfo // the file as it was opened
	h   maphash.Hash
	n   int64
	eof bool
}

func newStampingReader(f *os.File) *stampingReader {
	r := &stampingReader{f: f}
	r.h.SetSeed(stampSeed)
	if fi, err := f.Stat(); err == nil {
		r.fi = fi
	}
	return r
}

func (r *stampingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if err == io.EOF {
		r.eof = true
	}
	return n, err
}

// stamp returns the stamp of the bytes read, with the file's size and
// time when it was opened: false until they are read to the end, and
// when more or fewer bytes were read than the file held when opened (it
// was written to as it was read).
func (r *stampingReader) stamp() (Stamp, bool) {
	if !r.eof || r.fi == nil || r.n != r.fi.Size() {
		return Stamp{}, false
	}
	return Stamp{fi: r.fi, sum: r.h.Sum64()}, true
}

// Same reports whether s and t are the stamps of the same file with the
// same size, time and bytes; false when either is the zero Stamp.
func (s Stamp) Same(t Stamp) bool {
	return s.fi != nil && t.fi != nil && s.fi.Size() == t.fi.Size() && s.fi.ModTime().Equal(t.fi.ModTime()) && os.SameFile(s.fi, t.fi) && s.sum == t.sum
}
