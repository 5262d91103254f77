package sheet

// The sheet reader's fuzz target. Run it with:
//
//	go test ./campaign/sheet -run '^$' -fuzz FuzzSheetReader -fuzztime 30s
//
// Inputs that failed once are kept in testdata/fuzz/FuzzSheetReader/ and
// run as ordinary tests by go test.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSheetReader reads arbitrary bytes as a sheet: it must not panic, row
// numbers must increase strictly, and every record must either have one
// field per header column or an error.
func FuzzSheetReader(f *testing.F) {
	for _, name := range []string{"highlevel_export.csv", "european_semicolon.csv", "excel_damaged.csv", "tabs.tsv"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sheets", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "\ufeff", "a,b\n1,2\n", "a;b\r\n1;2\r\n", "a\tb\n1\t2\n", "sep=;\na;b\n1;2\n",
		"a,b\n\"1\n2\",3\n\n\n,\n", "a,b\n1\n1,2,3\n", "a,b\n\"x\"y,1\nx\"y,2\n", "a,b\n\"unclosed,1\n2,3\n",
		"a,A\n", ",,\n", "PK\x03\x04", "a,b\n\x00", "a,b\n\xff,1\n", "\n\na,b\r\n\r\n1,2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newReader("fuzz.csv", bytes.NewReader(data))
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "fuzz.csv" {
				t.Fatalf("newReader error %v is not a *Error naming the file", err)
			}
			return
		}
		header := s.Header()
		if len(header) == 0 {
			t.Fatal("no header and no error")
		}
		last := 0
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatal("more records than bytes")
			}
			rec, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if _, again := s.Next(); again == nil || again.Error() != err.Error() {
					t.Fatalf("after %v, Next returned %v", err, again)
				}
				break
			}
			if rec.Row <= last || rec.Row < 2 {
				t.Fatalf("row %d after row %d", rec.Row, last)
			}
			last = rec.Row
			switch {
			case rec.Err != nil && rec.Fields != nil:
				t.Fatalf("row %d has fields and an error", rec.Row)
			case rec.Err == nil && len(rec.Fields) != len(header):
				t.Fatalf("row %d has %d fields, the header %d", rec.Row, len(rec.Fields), len(header))
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
