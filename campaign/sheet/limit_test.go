package sheet

import (
	"bytes"
	"errors"
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

// TestSheetLongFieldIsTheRowsProblem: a 50 MB field without any quote is
// that row's problem, named with its row, column, size and line; the rows
// after it are read, and the field is never held whole in memory.
func TestSheetLongFieldIsTheRowsProblem(t *testing.T) {
	const fieldSize = 50 << 20
	in := io.MultiReader(
		strings.NewReader("Name,Phone,Notes\r\nAda,1,short\r\nBob,2,"),
		&repeatReader{c: 'x', n: fieldSize},
		strings.NewReader("\r\nAlan,3,\"a\nb\"\r\n\r\nGrace,4,c\r\nJoe \"JJ\",5,d\r\n"),
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
	if fatal != nil {
		t.Fatalf("reading ended with %v", fatal)
	}
	checkRows(t, rows, []sheetRow{
		{row: 2, fields: []string{"Ada", "1", "short"}},
		{row: 3, err: `big.csv row 3, column "Notes": the row is 50.0 MiB long, on line 3 of the file, and a row may hold at most 4 MiB (this field takes it past the limit): it is not read`},
		{row: 4, fields: []string{"Alan", "3", "a\nb"}},
		{row: 6, fields: []string{"Grace", "4", "c"}},
		// Lines are counted past the field: the error names line 8.
		{row: 7, err: "row 7: a field that is not in quotes contains a quote (line 8, character 5 of the file)"},
	})
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fieldSize*3/4 {
		t.Errorf("reading allocated %d MiB for a 50 MiB field: it must not be held whole", alloc>>20)
	}
}

// TestSheetLimit reads sheets with a limit of 16 bytes to a row: each row
// past it is that row's problem, unless a quoted field that runs over
// line breaks takes it there (a quote never closed, most likely).
func TestSheetLimit(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		rows  []sheetRow
		fatal string
	}{
		{
			name: "an unquoted field",
			in:   "a,b\n1,2\n1,0123456789abcdefghij\n3,4\n",
			rows: []sheetRow{{row: 2, fields: []string{"1", "2"}}, {row: 3, err: `s.csv row 3, column "b": the row is 23 bytes long, on line 3 of the file, and a row may hold at most 16 bytes (this field takes it past the limit): it is not read`}, {row: 4, fields: []string{"3", "4"}}},
		},
		{
			name: "a quoted field on one line, with quotes and delimiters in it",
			in:   "a,b\n\"0123456789\"\"abc,def\",2\n3,4\n",
			rows: []sheetRow{{row: 2, err: `column "a": the row is 24 bytes long, on line 2`}, {row: 3, fields: []string{"3", "4"}}},
		},
		{
			name: "more fields than the header",
			in:   "a,b\n1,2,3,4,5,6,7,8,9,10\n3,4\n",
			rows: []sheetRow{{row: 2, err: `s.csv row 2: the row is 21 bytes long, on line 2 of the file, and a row may hold at most 16 bytes (its field 9 (the header has 2) takes it past the limit)`}, {row: 3, fields: []string{"3", "4"}}},
		},
		{
			name: "a quote never closed on the last line",
			in:   "a,b\n3,4\n1,\"0123456789abcdefghij",
			rows: []sheetRow{{row: 2, fields: []string{"3", "4"}}, {row: 3, err: `column "b": the row is 23 bytes long, on line 3 of the file, and a row may hold at most 16 bytes (this field takes it past the limit): it is not read; a quote opened on line 3 is never closed`}},
		},
		{
			name: "a bare quote before the limit: the size is the problem told",
			in:   "a,b\n1,x\"0123456789abcdefghij\n3,4\n",
			rows: []sheetRow{{row: 2, err: `column "b": the row is 25 bytes long, on line 2`}, {row: 3, fields: []string{"3", "4"}}},
		},
		{
			name: "two long rows in a row, blank lines and CRLF",
			in:   "a;b\r\n1;0123456789abcdefghij\r\n\r\n2;0123456789abcdefghij\r\n3;\"x\r\ny\"\r\n\"q\"x\r\n",
			rows: []sheetRow{
				{row: 2, err: "on line 2 of the file"}, {row: 4, err: "on line 4 of the file"},
				{row: 5, fields: []string{"3", "x\ny"}},
				{row: 6, err: "a quoted field is not closed properly (line 7, character 3 of the file)"},
			},
		},
		{
			name:  "a quoted field that closes on the same line, after others that hold line breaks",
			in:    "a,b\n\"x\ny\",2\n\"1\n2\",\"0123456789abcdefghij\"\n3,4\n",
			rows:  []sheetRow{{row: 2, fields: []string{"x\ny", "2"}}},
			fatal: "s.csv row 3: the row is larger than 16 bytes, with a quoted field that opens on line 4 of the file and runs over line breaks",
		},
		{
			name:  "a quote never closed, over many lines",
			in:    "a,b\n1,2\n\"3,4\n5,6\n7,8\n9,10\n11,12\n",
			rows:  []sheetRow{{row: 2, fields: []string{"1", "2"}}},
			fatal: "s.csv row 3: the row is larger than 16 bytes, with a quoted field that opens on line 3 of the file and runs over line breaks: probably a quote that is never closed",
		},
		{
			name:  "a long quoted field that then breaks a line",
			in:    "a,b\n1,2\n3,\"0123456789abcdefghij\nk\"\n5,6\n",
			rows:  []sheetRow{{row: 2, fields: []string{"1", "2"}}},
			fatal: "s.csv row 3: the row is larger than 16 bytes, with a quoted field that opens on line 3 of the file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, too: the cut must not depend on how the
			// bytes arrive.
			for _, r := range []io.Reader{strings.NewReader(tt.in), &oneByteReader{strings.NewReader(tt.in)}} {
				s, err := newReaderLimit("s.csv", r, 16)
				if err != nil {
					t.Fatal(err)
				}
				checkSheet(t, s, tt.rows, tt.fatal)
			}
		})
	}
	if _, err := newReaderLimit("s.csv", strings.NewReader("0123456789,abcdefghij\n1,2\n"), 16); err == nil || !strings.Contains(err.Error(), "s.csv: the header row is larger than 16 bytes") {
		t.Errorf("a header past the limit: %v", err)
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

// FuzzSheetLimit reads the same bytes with a small limit to a row and
// with the real one: the rows must be the same but for those the small
// limit cuts, which it reports as too large. This holds limiter's
// idea of where records start and end to encoding/csv's.
func FuzzSheetLimit(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,0123456789abcdefghij\n3,4\n", "a,b\n\"01234567\"\"89,abc\",2\n3,4\n", "a,b\n1,x\"0123456789abcdefghij\n3,4\n",
		"a;b\r\n1;0123456789abcdefghij\r\n\r\n2;0123456789abcdefghij\r\n3;\"x\r\ny\"\r\n\"q\"x\r\n", "a,b\n\"1\n2\",\"0123456789abcdefghij\"\n3,4\n",
		"a,b\n\"abc\"x0123456789abcdefghij\n1,2\n", "a,b\n\"abc\"\r0123456789abcdefghij\n1,2\n", "a,b\n,,,,,,,,,,,,,,,,,,,,,,,\n1,2\n",
		"a\tb\n\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\tx\n1\t2\n", "sep=|\na|b\n1|0123456789abcdefghij\n2|3\n",
	} {
		f.Add([]byte(s), uint8(16))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		if limit < 4 {
			return
		}
		small, smallFatal := readAllRecords(newReaderLimit("f.csv", bytes.NewReader(data), int(limit)))
		if small == nil {
			return // the header is past the limit, or not a sheet
		}
		big, bigFatal := readAllRecords(newReader("f.csv", bytes.NewReader(data)))
		j := 0
		for _, r := range small {
			for j < len(big) && big[j].Row < r.Row {
				if smallFatal == nil && bigFatal == nil {
					t.Fatalf("row %d (%q %v) is missing with a limit of %d", big[j].Row, big[j].Fields, big[j].Err, limit)
				}
				j++
			}
			if r.Err != nil && strings.Contains(r.Err.Error(), "a row may hold at most") {
				if j < len(big) && big[j].Row == r.Row {
					j++
				}
				continue
			}
			if j == len(big) {
				if bigFatal == nil {
					t.Fatalf("row %d (%q %v) with a limit of %d is not there without one", r.Row, r.Fields, r.Err, limit)
				}
				return
			}
			b := big[j]
			j++
			if b.Row != r.Row || !slicesEqual(b.Fields, r.Fields) || errText(b.Err) != errText(r.Err) {
				t.Fatalf("with a limit of %d: row %d %q %v; without: row %d %q %v", limit, r.Row, r.Fields, r.Err, b.Row, b.Fields, b.Err)
			}
		}
		if smallFatal == nil && bigFatal == nil && j < len(big) {
			t.Fatalf("row %d (%q %v) is missing with a limit of %d", big[j].Row, big[j].Fields, big[j].Err, limit)
		}
	})
}

func readAllRecords(s *Reader, err error) (rows []Record, fatal error) {
	if err != nil {
		return nil, err
	}
	rows = []Record{}
	for {
		rec, err := s.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, rec)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
