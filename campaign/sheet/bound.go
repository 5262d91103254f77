package sheet

import (
	"bufio"
	"fmt"
)

// feeder hands a sheet's bytes to encoding/csv one line at a time and
// bounds the record being read. encoding/csv keeps a record whole in
// memory, and a quote that is never closed makes it read the rest of the
// file into one field. Because feeder never hands out more than the line
// in progress, the bytes it has handed out end where encoding/csv's last
// record ends: Reader calls startRecord after each record, and feeder
// knows where the next one starts and how large it has grown. A record
// that would pass maxSize bytes or span more than maxLines lines makes
// Read fail with a *tooLarge, which encoding/csv passes on.
type feeder struct {
	r        *bufio.Reader
	rest     []byte // the part of the current line not handed out yet
	err      error  // what the underlying reader returned, once rest is out
	mid      bool   // the last line fetched did not end with a line break
	line     int    // the line of the file being handed out
	start    int    // the line the current record starts on
	size     int    // bytes of the current record handed out
	maxSize  int
	maxLines int
}

// tooLarge is the error feeder returns for a record over its bounds.
type tooLarge struct {
	start int // the line of the file the record starts on
	lines int // lines of the record read so far
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("the record on line %d is too large", e.start)
}

func newFeeder(r *bufio.Reader, maxSize, maxLines int) *feeder {
	return &feeder{r: r, start: 1, maxSize: maxSize, maxLines: maxLines}
}

// startRecord marks the end of a record: what follows belongs to the next.
func (f *feeder) startRecord() {
	f.start, f.size = f.line+1, 0
}

func (f *feeder) Read(p []byte) (int, error) {
	if len(f.rest) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.r.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			f.err = err // handed on once line is out
		}
		if len(line) == 0 {
			return 0, f.err
		}
		if !f.mid {
			f.line++
			switch {
			case f.size == 0 && string(line) == "\n":
				f.start = f.line + 1 // a blank line, which encoding/csv skips
			case f.size > 0 && f.line-f.start >= f.maxLines:
				return 0, &tooLarge{start: f.start, lines: f.line - f.start}
			}
		}
		f.mid = line[len(line)-1] != '\n'
		f.rest = line
	}
	n := min(len(p), len(f.rest))
	if f.line >= f.start {
		if f.size+n > f.maxSize {
			return 0, &tooLarge{start: f.start, lines: f.line - f.start + 1}
		}
		f.size += n
	}
	copy(p, f.rest[:n])
	f.rest = f.rest[n:]
	return n, nil
}

// humanSize writes a size in bytes for people: "4 MiB", "50.3 MiB",
// "512 bytes".
func humanSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
