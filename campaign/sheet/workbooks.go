package sheet

import (
	"io"
	"os"
	"sync"
)

// Workbooks keeps the rows of each workbook opened through it, as the
// CSV text [OpenWith] reads them as, so that a workbook opened again is
// read from that text rather than unpacked again: unpacking a worksheet
// and parsing its XML costs far more than reading the text. A campaign's
// File keeps one for its sheets, which plan and run open more than once
// (the sheets' check, the pass for the do-not-call and consent columns,
// the contacts, the report). The first opening unpacks the worksheet
// whole, even for a reader that wants its first rows only, so that every
// later one reads the text: each is read to its end by some reader of a
// plan or a run anyway. The text is kept in a temporary file, private to
// the user, removed from its directory as soon as it is made where the
// system allows (its space is freed when the Workbooks is); where it does
// not, nothing is kept and a workbook is unpacked each time it is opened.
// A workbook changed since (its [Stamp]) is unpacked again. Safe for
// concurrent use.
type Workbooks struct {
	mu       sync.Mutex
	kept     map[workbookKey]*keptText
	unpacked int
}

// workbookKey is a worksheet of a workbook.
type workbookKey struct {
	path, worksheet string
}

// keptText is the CSV text of a worksheet, from the workbook of stamp.
type keptText struct {
	f     *os.File
	size  int64
	stamp Stamp
	facts *Workbook
}

// Unpacked returns how many times a workbook was unpacked from its file
// through w: tests check that a campaign's workbook is unpacked once.
func (w *Workbooks) Unpacked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unpacked
}

// open returns the CSV text of the worksheet of the workbook at path,
// from the text kept when it was opened before, else unpacked whole from
// the file into a kept text first; and what openWorkbook learned of the
// workbook, kept with the text; and the stamp of the workbook's file,
// taken before the text was unpacked from it.
func (w *Workbooks) open(path, worksheet string) (io.ReadCloser, *Workbook, Stamp, error) {
	key := workbookKey{path: path, worksheet: worksheet}
	stamp, err := StampFile(path)
	if err != nil {
		return nil, nil, Stamp{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.kept[key]; k != nil && k.stamp.Same(stamp) {
		return io.NopCloser(io.NewSectionReader(k.f, 0, k.size)), k.facts, stamp, nil
	}
	rc, facts, err := openWorkbook(path, worksheet)
	if err != nil {
		return nil, nil, Stamp{}, err
	}
	w.unpacked++
	tmp, err := os.CreateTemp("", "callrun-workbook-*.csv")
	if err != nil {
		return rc, facts, stamp, nil // not kept
	}
	if err := os.Remove(tmp.Name()); err != nil {
		// A system that does not remove an open file: keep nothing
		// rather than leave the rows in a file behind.
		tmp.Close()
		os.Remove(tmp.Name())
		return rc, facts, stamp, nil
	}
	size, err := io.Copy(tmp, rc)
	rc.Close()
	if err != nil {
		tmp.Close()
		return nil, nil, Stamp{}, err
	}
	if w.kept == nil {
		w.kept = map[workbookKey]*keptText{}
	}
	w.kept[key] = &keptText{f: tmp, size: size, stamp: stamp, facts: facts}
	return io.NopCloser(io.NewSectionReader(tmp, 0, size)), facts, stamp, nil
}
