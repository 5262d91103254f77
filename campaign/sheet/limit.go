package sheet

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// limiter sits between a sheet's bytes and encoding/csv and keeps
// one record from taking more than limit bytes of memory. It follows the
// records as encoding/csv reads them (a quote opens a quoted field only at
// the start of a field, "" inside one is a quote, a line break outside
// quotes ends the record, and a malformed record ends with its line), so
// it knows where each record starts and ends. A record that grows past
// the limit is cut there: its first limit bytes go to encoding/csv with a
// *overLimit error, the rest of it is read and dropped, and the bytes
// after it are passed on as usual, so the next record is read as if
// nothing had happened. Reader uses it; see Reader.takeOver.
type limiter struct {
	r     *bufio.Reader
	delim byte
	limit int

	state     lexState
	fieldHead bool // outside quotes, the next byte starts a field
	recBytes  int  // bytes of the current record so far
	recLine   int  // line of the file the current record starts on
	lines     int  // line breaks read so far
	field     int  // index of the current field in its record
	quoteLine int  // line the current quoted field opened on
	breakLine int  // line of a quoted field of this record that holds a line break; 0 if none

	over    *overLimit // the record cut last, until Reader takes it
	carry   []byte     // bytes read past a cut record, still to pass on
	err     error      // what every later Read returns (a cut that ends the reading, or a read error)
	scratch []byte
}

// lexState is where limiter is in the CSV syntax.
type lexState uint8

const (
	lexOutside lexState = iota // outside quotes (fieldHead says whether at a field's start)
	lexQuoted                  // inside a quoted field
	lexQuote                   // just after a quote inside a quoted field: "" or its end
	lexBadLine                 // the record is malformed: encoding/csv drops the rest of the line
)

// overLimit is a record that grew past the limit, as limiter
// found it. It is the error limiter's Read returns at the cut.
type overLimit struct {
	limit     int
	startLine int   // line of the file the record starts on
	endLines  int   // line breaks read up to the record's end: the last line of the record, or the one before the end of the file
	field     int   // index of the field in which the record passed the limit
	size      int64 // the record's length in bytes, line break included
	unclosed  bool  // the file ended inside a quoted field of the record
	// quoteLine, when not 0, is the line on which a quoted field of the
	// record that holds line breaks opened: it may have swallowed rows, so
	// the reading stops.
	quoteLine int
}

func (o *overLimit) Error() string {
	return fmt.Sprintf("row larger than %s", humanSize(int64(o.limit)))
}

// newLimiter reads from r, a sheet's bytes from its header on.
func newLimiter(r *bufio.Reader, delim rune, limit int) *limiter {
	return &limiter{r: r, delim: byte(delim), limit: limit, fieldHead: true, recLine: 1}
}

// Read passes the sheet's bytes on, cutting a record that grows past the
// limit (see limiter).
func (l *limiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	var n int
	if len(l.carry) > 0 {
		n = copy(p, l.carry)
		l.carry = l.carry[n:]
	} else {
		var err error
		if n, err = l.r.Read(p); n == 0 {
			return 0, err
		}
	}
	cut := l.scan(p[:n], false)
	if cut < 0 {
		return n, nil
	}
	o := l.skip(p[cut:n])
	return cut, o
}

// skip reads and drops the rest of the record that passed the limit, rest
// being its first bytes after the cut, and returns what it found. Bytes
// after the record are kept in l.carry.
func (l *limiter) skip(rest []byte) *overLimit {
	o := &overLimit{limit: l.limit, startLine: l.recLine, field: l.field, quoteLine: l.breakLine}
	size := int64(l.recBytes)
	carry := l.carry
	l.carry = nil
	for o.quoteLine == 0 {
		end := l.scan(rest, true)
		if end >= 0 {
			size += int64(end)
			// Keep what follows the record: the rest of this buffer, then
			// whatever of the carry was not read yet.
			l.carry = append(append([]byte(nil), rest[end:]...), carry...)
			break
		}
		size += int64(len(rest))
		if l.breakLine > 0 {
			o.quoteLine = l.breakLine
			break
		}
		if len(carry) > 0 {
			rest, carry = carry, nil
			continue
		}
		if l.scratch == nil {
			l.scratch = make([]byte, 64<<10)
		}
		n, err := l.r.Read(l.scratch)
		if n == 0 {
			if err != io.EOF {
				l.err = err
			}
			o.unclosed = l.state == lexQuoted
			l.endRecord()
			break
		}
		rest = l.scratch[:n]
	}
	o.size = size
	o.endLines = l.lines
	if o.quoteLine > 0 {
		l.err = o // the rows after it cannot be told from the field
	}
	l.over = o
	return o
}

// endLine ends the record at a line break outside quotes.
func (l *limiter) endLine() {
	l.lines++
	l.endRecord()
}

// endRecord starts a new record after a line break (endLine) or at the
// end of the file.
func (l *limiter) endRecord() {
	l.state, l.fieldHead = lexOutside, true
	l.recBytes, l.recLine, l.field, l.breakLine = 0, l.lines+1, 0, 0
}

// scan follows b through the CSV syntax. Reading (skipping false), it
// returns the index of the first byte that takes the current record past
// the limit, or -1 when all of b was taken. Skipping, it follows b without
// a limit and returns the index just past the end of the current record,
// or -1 when b ends first or a quoted field breaks a line (l.breakLine).
func (l *limiter) scan(b []byte, skipping bool) int {
	i := 0
	// take accounts for the n bytes from i on, or says where the limit
	// cuts them.
	take := func(n int) (int, bool) {
		if !skipping && l.recBytes+n > l.limit {
			n = l.limit - l.recBytes
			l.recBytes = l.limit
			return n, true
		}
		l.recBytes += n
		return n, false
	}
	nq := -1 // the index of the next quote in b, once nq >= i: each byte is searched once
	nextQuote := func() int {
		if nq < i {
			nq = len(b)
			if k := bytes.IndexByte(b[i:], '"'); k >= 0 {
				nq = i + k
			}
		}
		return nq
	}
	for i < len(b) {
		switch l.state {
		case lexOutside:
			j := nextQuote()
			if k := bytes.IndexByte(b[i:j], '\n'); k >= 0 {
				j = i + k
			}
			n, cut := take(j - i)
			if n > 0 {
				run := b[i : i+n]
				l.field += bytes.Count(run, []byte{l.delim})
				l.fieldHead = run[n-1] == l.delim
			}
			i += n
			if cut {
				return i
			}
			if i == len(b) {
				return -1
			}
			if _, cut := take(1); cut {
				return i
			}
			if b[i] == '\n' {
				l.endLine()
				if skipping {
					return i + 1
				}
			} else if l.fieldHead { // a quote opens a quoted field
				l.state, l.quoteLine = lexQuoted, l.lines+1
			} else { // a bare quote: encoding/csv drops the line
				l.state = lexBadLine
			}
			i++
		case lexQuoted:
			n, cut := take(nextQuote() - i)
			if breaks := bytes.Count(b[i:i+n], []byte{'\n'}); breaks > 0 {
				l.lines += breaks
				if l.breakLine == 0 {
					l.breakLine = l.quoteLine
				}
				if skipping {
					return -1
				}
			}
			i += n
			if cut {
				return i
			}
			if i < len(b) {
				if _, cut := take(1); cut {
					return i
				}
				l.state = lexQuote
				i++
			}
		case lexQuote:
			if _, cut := take(1); cut {
				return i
			}
			switch b[i] {
			case '"':
				l.state = lexQuoted
			case l.delim:
				l.state, l.fieldHead = lexOutside, true
				l.field++
			case '\n':
				l.endLine()
				if skipping {
					return i + 1
				}
			default: // `"x`, or `"\r\n` whose end the line break makes
				l.state = lexBadLine
			}
			i++
		case lexBadLine:
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			n, cut := take(j)
			i += n
			if cut {
				return i
			}
			if i < len(b) {
				if _, cut := take(1); cut {
					return i
				}
				l.endLine()
				i++
				if skipping {
					return i
				}
			}
		}
	}
	return -1
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
