package sheet

import (
	"bytes"
	"io"
)

// lineEnds reads a text whose lines end with LF, CRLF or a bare CR and
// hands each line end on as one LF. Excel for Mac ("CSV (Macintosh)",
// "Comma Separated Values") and Numbers end lines with a bare CR, which
// encoding/csv reads as part of a field, so that a whole sheet would be
// one row; a file that mixes the three (rows pasted from one into
// another) keeps every row. A CR inside a quoted field becomes an LF too,
// as encoding/csv makes a CRLF there one: a field reads the same whatever
// line ends the file has. The Reader reads every sheet through it, after
// decoding and before any other judgement (delimiter, header, title), so
// row and line numbers count a bare CR as a line end, as a spreadsheet
// does. It converts in place, as it reads, so memory does not grow with
// the file.
type lineEnds struct {
	r io.Reader
	// afterCR says the last byte handed on was a CR, written as an LF:
	// an LF that follows it is the same line end and is dropped.
	afterCR bool
	// bareCR says a line ended with a CR alone.
	bareCR bool
}

func (l *lineEnds) Read(p []byte) (int, error) {
	for {
		read, err := l.r.Read(p)
		n := 0
		if read > 0 {
			n = l.convert(p[:read])
		}
		if err != nil && l.afterCR {
			l.bareCR = true // a CR ends the file
		}
		if n > 0 || err != nil || read == 0 {
			return n, err
		}
		// All that was read was the LF of a CRLF whose CR went out
		// with the last read: read on.
	}
}

// convert rewrites the line ends of b in place and returns the length of
// what is left.
func (l *lineEnds) convert(b []byte) int {
	i := 0
	if l.afterCR {
		l.afterCR = false
		if b[0] == '\n' {
			i = 1
		} else {
			l.bareCR = true
		}
	}
	w := 0
	for {
		j := bytes.IndexByte(b[i:], '\r')
		if j < 0 {
			if w != i {
				w += copy(b[w:], b[i:])
			} else {
				w = len(b)
			}
			return w
		}
		if w != i {
			copy(b[w:], b[i:i+j])
		}
		w += j
		b[w] = '\n'
		w++
		i += j + 1
		switch {
		case i == len(b):
			l.afterCR = true
			return w
		case b[i] == '\n':
			i++
		default:
			l.bareCR = true
		}
	}
}
