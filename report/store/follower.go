package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// follower follows a JSON Lines file that other processes append to,
// reading each time only what was appended since the last: the
// do-not-call list and its opt-out holds, the call starts and the
// conversations, read from their start, and the deliveries a run follows
// ([DeliveriesTail]), from their end. Only whole lines are read: a last
// line without its newline (being written, or torn by a crash) is left
// for a later read. A file that is gone, that shrank under the lines read
// (a writer cut a torn line), or that no longer holds the line read last
// where it was read, or that is another file at the same path (a
// compaction or an erasure replaced it), is read again from its
// start, its reader first told to forget what it read; a tail goes on
// from the file's end instead. Its methods are not safe for concurrent
// use.
type follower[T any] struct {
	path  string
	what  string        // an entry's kind, for errors: "a call start"
	valid func(*T) bool // whether a line decoded is an entry
	tail  bool          // after a restart, go on from the file's end
	// lenient skips a line that does not decode as an entry, or is not
	// one, rather than stop at it: a journal's index of its call ids
	// ([CallIndex]) reads only what it knows of a journal's lines, as
	// [CallKeysOf] does, and leaves the journal's checks to its reader.
	lenient bool
	// decode, if set, decodes a line (with its newline) in
	// json.Unmarshal's place: a reader that needs only part of a long
	// file's lines reads them without decoding each whole.
	decode func(line []byte, e *T) error
	off    int64       // where the next line starts: the end of the lines read
	last   []byte      // the line that ends at off, read or appended last; nil when none is known
	skip   bool        // off is inside a line (a tail begun while it was being written): skip up to its newline
	file   os.FileInfo // the file the lines read came from; nil when none was read
}

// read calls fn with each entry whose whole line was appended since the
// last read, and the offset just past its line, and returns the offset
// it read from (0: the file's start). f is the file opened already, or
// nil. When the file must be read again from its start, it calls restart
// first. A line that is not an entry is an error naming the file and the
// line's byte offset; the entries before it are read.
func (fl *follower[T]) read(f *os.File, restart func(), fn func(T, int64)) (int64, error) {
	if f == nil {
		var err error
		f, err = os.Open(fl.path)
		if errors.Is(err, os.ErrNotExist) {
			fl.forget()
			if !fl.tail {
				restart()
			}
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		defer f.Close()
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	replaced := fl.file != nil && !os.SameFile(fl.file, fi)
	if replaced || fi.Size() < fl.off || !fl.holdsLine(f) {
		if fl.tail {
			err := fl.seekEnd(f, fi.Size())
			fl.file = fi
			return fl.off, err
		}
		restart()
		fl.forget()
	}
	fl.file = fi
	from := fl.off
	if fi.Size() == fl.off {
		return from, nil
	}
	br := bufio.NewReader(io.NewSectionReader(f, fl.off, 1<<62))
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return from, nil // a line not yet whole, or none
		}
		if err != nil {
			return from, err
		}
		if fl.skip {
			fl.off, fl.skip = fl.off+int64(len(line)), false
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var e T
			decode := fl.decode
			if decode == nil {
				decode = func(line []byte, e *T) error { return json.Unmarshal(line, e) }
			}
			if err := decode(line, &e); err != nil || !fl.valid(&e) {
				if !fl.lenient {
					return from, fmt.Errorf("%s: the line at byte %d is not %s", fl.path, fl.off, fl.what)
				}
			} else {
				fn(e, fl.off+int64(len(line)))
			}
		}
		fl.off, fl.last = fl.off+int64(len(line)), line
	}
}

// holdsLine reports whether f still holds the line read last where it
// was read, ending at fl.off.
func (fl *follower[T]) holdsLine(f *os.File) bool {
	if fl.off == 0 || len(fl.last) == 0 {
		return true
	}
	b := make([]byte, len(fl.last))
	_, err := f.ReadAt(b, fl.off-int64(len(b)))
	return err == nil && bytes.Equal(b, fl.last)
}

// seekEnd moves a tail to the end of f, size bytes long, noting whether
// that end is inside a line.
func (fl *follower[T]) seekEnd(f *os.File, size int64) error {
	fl.off, fl.last, fl.skip = size, nil, false
	if size > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, size-1); err != nil {
			return err
		}
		fl.skip = b[0] != '\n'
	}
	return nil
}

// appended notes lines this process appended at the end of the lines
// read and synced: they are read, as if another had appended them.
func (fl *follower[T]) appended(buf []byte) {
	if len(buf) == 0 {
		return
	}
	fl.off += int64(len(buf))
	start := bytes.LastIndexByte(buf[:len(buf)-1], '\n') + 1
	fl.last = bytes.Clone(buf[start:])
}

// forget has the next read begin at the file's start.
func (fl *follower[T]) forget() {
	fl.off, fl.last, fl.skip, fl.file = 0, nil, false, nil
}

// readAll reads every entry of the whole lines of f, as fl would from
// the file's start, and returns how many bytes those lines take.
func readAll[T any](fl follower[T], f *os.File, fn func(T, int64)) (int64, error) {
	_, err := fl.read(f, func() {}, fn)
	return fl.off, err
}
