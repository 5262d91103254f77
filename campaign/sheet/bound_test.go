package sheet

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader is n bytes of c, made as they are read.
type repeatReader struct {
	c byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range p[:n] {
		p[i] = r.c
	}
	r.n -= n
	return n, nil
}

// TestSheetLongFieldStopsTheSheet: a 50 MB field without any quote stops
// the sheet with an error naming its row and line, after the rows before
// it; the field is never held whole in memory.
func TestSheetLongFieldStopsTheSheet(t *testing.T) {
	const fieldSize = 50 << 20
	in := io.MultiReader(
		strings.NewReader("Name,Phone,Notes\r\nAda,1,\"a\nb\"\r\n\r\nBob,2,"),
		&repeatReader{c: 'x', n: fieldSize},
		strings.NewReader("\r\nAlan,3,c\r\n"),
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := newReader("big.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	rows, fatal := readSheet(t, s)
	runtime.ReadMemStats(&after)
	checkRows(t, rows, []sheetRow{{row: 2, fields: []string{"Ada", "1", "a\nb"}}})
	const want = "big.csv row 4: the row on line 5 of the file is larger than 4 MiB, far more than a contact's row holds: check that line (a field pasted from a file, or a file that is not a contact sheet)"
	if fatal == nil || fatal.Error() != want {
		t.Errorf("reading ended with %v; want %q", fatal, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("reading allocated %d MiB for a 50 MiB field: it must not be held whole", alloc>>20)
	}
}

// TestSheetBound reads sheets with at most 16 bytes and 3 lines to a
// row: a row past either stops the sheet there, after the rows before it.
func TestSheetBound(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		rows  []sheetRow
		fatal string
	}{
		{
			name:  "an unquoted field",
			in:    "a,b\n1,2\n\n1,0123456789abcdefghij\n3,4\n",
			rows:  []sheetRow{{row: 2, fields: []string{"1", "2"}}},
			fatal: "s.csv row 4: the row on line 4 of the file is larger than 16 bytes",
		},
		{
			name:  "a quoted field on one line, with quotes and delimiters in it",
			in:    "a,b\n\"0123456789\"\"abc,def\",2\n3,4\n",
			fatal: "s.csv row 2: the row on line 2 of the file is larger than 16 bytes",
		},
		{
			name: "rows just within the bounds, blank lines between them",
			in:   "a;b\r\n\r\n\r\n12345678;1234\r\n\r\n\"x\r\ny\r\nz\";1\r\n;\r\n",
			rows: []sheetRow{{row: 4, fields: []string{"12345678", "1234"}}, {row: 6, fields: []string{"x\ny\nz", "1"}}},
		},
		{
			name:  "a quote never closed, over many short lines",
			in:    "a,b\n1,2\n\"3,4\n5,6\n7,8\n9,1\n",
			rows:  []sheetRow{{row: 2, fields: []string{"1", "2"}}},
			fatal: "s.csv row 3: a quoted field of the row that starts on line 3 of the file runs over more than 3 lines: probably a quote that is never closed, so the rows after it cannot be read; check the quotes of that row",
		},
		{
			name:  "a quoted field over two lines and 16 bytes",
			in:    "a,b\n1,2\n3,\"0123456\n789abcdefghij\"\n5,6\n",
			rows:  []sheetRow{{row: 2, fields: []string{"1", "2"}}},
			fatal: "s.csv row 3: a quoted field of the row that starts on line 3 of the file runs over 2 lines and more than 16 bytes: probably a quote that is never closed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, too: the bound must not depend on how
			// the bytes arrive.
			for _, r := range []io.Reader{strings.NewReader(tt.in), &oneByteReader{strings.NewReader(tt.in)}} {
				s, err := newReaderBound("s.csv", r, 16, 3)
				if err != nil {
					t.Fatal(err)
				}
				checkSheet(t, s, tt.rows, tt.fatal)
			}
		})
	}
	if _, err := newReaderBound("s.csv", strings.NewReader("0123456789,abcdefghij\n1,2\n"), 16, 3); err == nil || err.Error() != "s.csv: the header row is larger than 16 bytes: the file is probably not a CSV sheet" {
		t.Errorf("a header past the bound: %v", err)
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }
