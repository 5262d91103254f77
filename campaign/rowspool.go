package campaign

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync/atomic"

	"github.com/callrun/callrun/campaign/sheet"
)

// sheetReadings counts the sheets read record by record from their file
// (not from a rowSpool): tests check that plan reads a sheet with a
// do-not-call or a consent column once.
var sheetReadings atomic.Int64

// records is a sheet's records, one at a time: a *sheet.Reader, or a
// rowSpool's reading.
type records interface {
	Next() (sheet.Record, error)
}

// rowSpool is the records of a sheet as the pass over its signal columns
// ([File.ReadFlagged]) read them to the end of the sheet, kept in a
// temporary file, so that the contact reader reads them from there
// rather than parse the sheet again. The file is private to the user and
// removed from its directory as soon as it is made (its space is freed
// when the rowSpool is); where the system does not allow that, nothing is
// kept and the sheet is parsed again. A sheet changed since (its
// [sheet.Stamp] or its header not those the pass read) is read from the
// sheet again. The contact
// readers of plan, run and the report read it, at once.
type rowSpool struct {
	f      *os.File
	size   int64
	header []string
	notes  []string
	// sheet is the sheet's file as the pass read it.
	sheet sheet.Stamp
}

// spoolWriter writes a rowSpool as the pass reads the sheet, a batch at a
// time; the file is made at the first batch.
type spoolWriter struct {
	f      *os.File
	w      *bufio.Writer
	size   int64
	failed bool
}

// encodeRecords appends recs to buf as a rowSpool keeps them: for each,
// the length of what follows; its row; its group's title row and title
// (0 when it has none); then its error's file, field and message after a
// field count of 0, or its fields' count plus one, their lengths and
// their text. ok is false when a record's error is not one the reading
// gives back as it was. Workers encode the batches they are given.
func encodeRecords(buf []byte, recs []sheet.Record) (_ []byte, ok bool) {
	var body []byte
	for _, rec := range recs {
		body = binary.AppendUvarint(body[:0], uint64(rec.Row))
		if g := rec.Group; g != nil {
			body = binary.AppendUvarint(body, uint64(g.Row))
			body = appendString(body, g.Title)
		} else {
			body = binary.AppendUvarint(body, 0)
		}
		if rec.Err != nil {
			se, isSheet := rec.Err.(*sheet.Error)
			if !isSheet || se.Row != rec.Row {
				return buf, false
			}
			body = binary.AppendUvarint(body, 0)
			body = appendString(body, se.File)
			body = appendString(body, se.Field)
			body = appendString(body, se.Msg)
		} else {
			body = binary.AppendUvarint(body, uint64(len(rec.Fields))+1)
			for _, f := range rec.Fields {
				body = binary.AppendUvarint(body, uint64(len(f)))
			}
			for _, f := range rec.Fields {
				body = append(body, f...)
			}
		}
		buf = binary.AppendUvarint(buf, uint64(len(body)))
		buf = append(buf, body...)
	}
	return buf, true
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// write adds a batch encoded by encodeRecords (ok false when it could
// not be) to the spool.
func (w *spoolWriter) write(encoded []byte, ok bool) {
	if w.failed {
		return
	}
	if !ok {
		w.fail()
		return
	}
	if w.f == nil {
		f, err := os.CreateTemp("", "callrun-rows-*")
		if err != nil {
			w.failed = true
			return
		}
		if err := os.Remove(f.Name()); err != nil {
			// A system that does not remove an open file: keep nothing
			// rather than leave the rows in a file behind.
			f.Close()
			os.Remove(f.Name())
			w.failed = true
			return
		}
		w.f, w.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	if _, err := w.w.Write(encoded); err != nil {
		w.fail()
		return
	}
	w.size += int64(len(encoded))
}

// fail gives up keeping the records.
func (w *spoolWriter) fail() {
	w.failed = true
	if w.f != nil {
		w.f.Close()
		w.f, w.w = nil, nil
	}
}

// finish returns the spool of the sheet read to its end by r, kept
// with the stamp of the bytes r parsed (a file written to as it was read
// has none); nil when nothing could be kept.
func (w *spoolWriter) finish(r *sheet.Reader) *rowSpool {
	if w.failed {
		return nil
	}
	if w.f != nil {
		if err := w.w.Flush(); err != nil {
			w.fail()
			return nil
		}
	}
	stamp, ok := r.Stamp()
	if !ok {
		w.fail()
		return nil
	}
	return &rowSpool{f: w.f, size: w.size, header: r.Header(), notes: r.Notes(), sheet: stamp}
}

// discard gives up the records of a sheet not read to its end.
func (w *spoolWriter) discard() { w.fail() }

// current reports whether sp holds the records of the sheet at path
// whose header r read: the file is the one the pass read, with the same
// bytes. It reads the file whole, as a hash (far faster than parsing it).
func (sp *rowSpool) current(path string, r *sheet.Reader) bool {
	if !slices.Equal(r.Header(), sp.header) {
		return false
	}
	now, err := sheet.StampFile(path)
	return err == nil && now.Same(sp.sheet)
}

// reading returns the records of sp from the first, as the sheet's
// reader gave them.
func (sp *rowSpool) reading() records {
	sr := &spoolReading{groups: map[int]*sheet.Group{}}
	if sp.f != nil {
		sr.br = bufio.NewReaderSize(io.NewSectionReader(sp.f, 0, sp.size), 1<<20)
	}
	return sr
}

// spoolReading reads a rowSpool's records.
type spoolReading struct {
	br *bufio.Reader
	// groups are the groups of rows met so far, by their title's row: the
	// records of a group share its *sheet.Group, as the sheet's reader
	// gives them.
	groups map[int]*sheet.Group
	body   []byte
	lens   []int
}

// errSpool is the error of a record of a rowSpool that does not read as
// one.
var errSpool = errors.New("a record is cut short")

// Next returns the next record, and io.EOF after the last.
func (sr *spoolReading) Next() (sheet.Record, error) {
	if sr.br == nil {
		return sheet.Record{}, io.EOF
	}
	n, err := binary.ReadUvarint(sr.br)
	if err == io.EOF {
		return sheet.Record{}, io.EOF
	}
	var body []byte
	if err == nil {
		// The record in the buffer, else (longer than it) read whole.
		if body, err = sr.br.Peek(int(n)); err == nil {
			defer sr.br.Discard(int(n))
		} else {
			sr.body = slices.Grow(sr.body[:0], int(n))[:n]
			body = sr.body
			_, err = io.ReadFull(sr.br, body)
		}
	}
	var rec sheet.Record
	if err == nil {
		rec, err = sr.decode(body)
	}
	if err != nil {
		return sheet.Record{}, fmt.Errorf("reading the rows kept from the sheet's first reading: %w", noEOF(err))
	}
	return rec, nil
}

// decode reads a record encoded by encodeRecords, without its length.
func (sr *spoolReading) decode(b []byte) (sheet.Record, error) {
	uvarint := func() int {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxInt32 {
			b = nil
			return -1
		}
		b = b[n:]
		return int(v)
	}
	text := func() (string, bool) {
		l := uvarint()
		if l < 0 || l > len(b) {
			return "", false
		}
		s := string(b[:l])
		b = b[l:]
		return s, true
	}
	rec := sheet.Record{Row: uvarint()}
	if groupRow := uvarint(); groupRow > 0 {
		title, ok := text()
		if !ok {
			return rec, errSpool
		}
		g := sr.groups[groupRow]
		if g == nil || g.Title != title {
			g = &sheet.Group{Title: title, Row: groupRow}
			sr.groups[groupRow] = g
		}
		rec.Group = g
	}
	switch n := uvarint(); {
	case n < 0:
		return rec, errSpool
	case n == 0:
		se := &sheet.Error{Row: rec.Row}
		var ok1, ok2, ok3 bool
		se.File, ok1 = text()
		se.Field, ok2 = text()
		se.Msg, ok3 = text()
		if !ok1 || !ok2 || !ok3 {
			return rec, errSpool
		}
		rec.Err = se
	default:
		rec.Fields = make([]string, n-1)
		lens := slices.Grow(sr.lens[:0], n-1)[:n-1]
		sr.lens = lens
		total := 0
		for k := range lens {
			if lens[k] = uvarint(); lens[k] < 0 {
				return rec, errSpool
			}
			total += lens[k]
		}
		if total != len(b) {
			return rec, errSpool
		}
		// One string that the fields share, as encoding/csv makes a
		// record's.
		all, at := string(b), 0
		for k, l := range lens {
			rec.Fields[k] = all[at : at+l]
			at += l
		}
	}
	return rec, nil
}

// noEOF is err, with an end of the file in the middle of a record said
// so.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
