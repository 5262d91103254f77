package sheet

import (
	"io"
	"os"
	"sync"
)

// Workbooks keeps the rows of each workbook read to its end through it,
// as the CSV text [OpenWith] reads them as, so that a workbook opened
// again is read from that text rather than unpacked again: unpacking a
// worksheet and parsing its XML costs far more than reading the text. A
// campaign's File keeps one for its sheets, which plan and run read more
// than once (the pass for the do-not-call and consent columns, then the
// contacts, then the report). The text is kept in a temporary file,
// private to the user, removed from its directory as soon as it is made
// where the system allows (its space is freed when the Workbooks is);
// where it does not, nothing is kept and a workbook is unpacked each time
// it is read. A workbook changed since (its [Stamp]) is unpacked again.
// Safe for concurrent use.
type Workbooks struct {
	mu       sync.Mutex
	kept     map[workbookKey]*keptText
	unpacked int
}

// workbookKey is a worksheet of a workbook.
type workbookKey struct {
	path, worksheet string
}

// keptText is the CSV text of a worksheet read to its end, from the
// workbook of stamp.
type keptText struct {
	f     *os.File
	size  int64
	stamp Stamp
}

// Unpacked returns how many times a workbook was unpacked and read to its
// end from its file through w: tests check that a campaign's workbook is
// unpacked once.
func (w *Workbooks) Unpacked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unpacked
}

// open returns the CSV text of the worksheet of the workbook at path,
// from the text kept when it was read before, else unpacked from the file
// and kept as it is read.
func (w *Workbooks) open(path, worksheet string) (io.ReadCloser, error) {
	key := workbookKey{path: path, worksheet: worksheet}
	stamp, err := StampFile(path)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	k := w.kept[key]
	w.mu.Unlock()
	if k != nil && k.stamp.Same(stamp) {
		return io.NopCloser(io.NewSectionReader(k.f, 0, k.size)), nil
	}
	rc, err := openWorkbook(path, worksheet)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "callrun-workbook-*.csv")
	if err != nil {
		return &keeping{ReadCloser: rc, w: w}, nil // counted, not kept
	}
	if err := os.Remove(tmp.Name()); err != nil {
		// A system that does not remove an open file: keep nothing
		// rather than leave the rows in a file behind.
		tmp.Close()
		os.Remove(tmp.Name())
		return &keeping{ReadCloser: rc, w: w}, nil
	}
	return &keeping{ReadCloser: rc, w: w, key: key, stamp: stamp, tmp: tmp}, nil
}

// keeping is the CSV text of a workbook as it is unpacked, copied to tmp
// as it is read; read to its end without error, it is kept in w.
type keeping struct {
	io.ReadCloser
	w     *Workbooks
	key   workbookKey
	stamp Stamp
	tmp   *os.File // nil once kept or given up
	size  int64
	done  bool
}

func (k *keeping) Read(p []byte) (int, error) {
	n, err := k.ReadCloser.Read(p)
	if k.tmp != nil && n > 0 {
		if _, werr := k.tmp.Write(p[:n]); werr != nil {
			k.drop()
		}
		k.size += int64(n)
	}
	if err == io.EOF && !k.done {
		k.done = true
		k.w.mu.Lock()
		k.w.unpacked++
		if k.tmp != nil {
			if k.w.kept == nil {
				k.w.kept = map[workbookKey]*keptText{}
			}
			k.w.kept[k.key] = &keptText{f: k.tmp, size: k.size, stamp: k.stamp}
			k.tmp = nil
		}
		k.w.mu.Unlock()
	}
	return n, err
}

// drop gives up keeping the text.
func (k *keeping) drop() {
	if k.tmp != nil {
		k.tmp.Close()
		k.tmp = nil
	}
}

func (k *keeping) Close() error {
	k.drop()
	return k.ReadCloser.Close()
}
