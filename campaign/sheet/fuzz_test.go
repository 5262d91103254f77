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
	"slices"
	"strings"
	"testing"
)

// FuzzSheetReader reads arbitrary bytes as a sheet: it must not panic, row
// numbers must increase strictly, and every record must either have one
// field per header column or an error. Read again with small bounds to a
// record, the records must be the same up to where the bound stops the
// sheet: the bound only ever stops the reading early. Read again with
// every line end written as a bare CR, as Excel for Mac writes them, the
// records and errors must be the same. Read again parsed ahead on a
// goroutine from the first record, two records at a time, the records,
// the error that ends the reading and the notes must be the same.
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
		"a,b\n1,0123456789abcdefghijklmnopqrstuvwxyz\n3,4\n", "a,b\n\"1\n2\n3\n4\n5\",6\n", "a,b,c\n1,2\n3,4,5,\n", "Title\n\na,b\n1,2\n",
		"a,b\n1,2\n\nReport\n\"Copyright (c) x\"\n", "a,b\n1,2\n\nReport\n3,4\n", "Title,,\nSub,,\na,b,c\n1,2,3\n",
		"Name,Phone\rAda,1\r\"Gr\race\",2\r", "\ufeffsep=;\rName;Phone\r\r;\rAda;1\r\n\"x\r\ny\";2\r\r\r", "a,b\r\n1,2\r3,\"4\r\n", "a\r\r\n\r",
		"Board\nG1\na,b\n1,2\n,\n\nG2\na,b\n3,4\na,b\n\nG3\n\na,b\n5,6\n\nFooter\n", "a,b\n1,2\n\nText\n\nG\na,b\n3,4\n",
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
		all, _ := readAllRecords(newReader("fuzz.csv", bytes.NewReader(data)))
		bounded, fatal := readAllRecords(newReaderBound("fuzz.csv", bytes.NewReader(data), 24, 3))
		if len(bounded) > len(all) {
			t.Fatalf("%d records with a bound, %d without", len(bounded), len(all))
		}
		for i, r := range bounded {
			if a := all[i]; a.Row != r.Row || !slices.Equal(a.Fields, r.Fields) || errText(a.Err) != errText(r.Err) {
				t.Fatalf("with a bound: row %d %q %v; without: row %d %q %v", r.Row, r.Fields, r.Err, a.Row, a.Fields, a.Err)
			}
		}
		if fatal == nil && len(bounded) != len(all) {
			t.Fatalf("%d records with a bound and no error, %d without", len(bounded), len(all))
		}
		plain, perr := newReader("fuzz.csv", bytes.NewReader(data))
		early, eerr := newReader("fuzz.csv", bytes.NewReader(data))
		if early != nil {
			early.aheadAfter, early.aheadBatch = 0, 2
		}
		plainRecs, plainFatal := readAllRecords(plain, perr)
		earlyRecs, earlyFatal := readAllRecords(early, eerr)
		if errText(earlyFatal) != errText(plainFatal) || len(earlyRecs) != len(plainRecs) {
			t.Fatalf("parsed ahead: %d records, error %v; not: %d, error %v", len(earlyRecs), earlyFatal, len(plainRecs), plainFatal)
		}
		for i, r := range earlyRecs {
			if a := plainRecs[i]; a.Row != r.Row || !slices.Equal(a.Fields, r.Fields) || errText(a.Err) != errText(r.Err) || a.Group != nil != (r.Group != nil) {
				t.Fatalf("parsed ahead: row %d %q %v; not: row %d %q %v", r.Row, r.Fields, r.Err, a.Row, a.Fields, a.Err)
			}
		}
		if early != nil {
			if !slices.Equal(early.Notes(), plain.Notes()) {
				t.Fatalf("parsed ahead, the notes %q; not: %q", early.Notes(), plain.Notes())
			}
			early.Close()
		}
		mac := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\r")), []byte("\n"), []byte("\r"))
		// The one message that differs: what is not UTF-8 names the Mac's
		// code page when the lines end with a bare CR.
		allErr := errText(fatalOf(newReader("fuzz.csv", bytes.NewReader(data))))
		allErr = strings.Replace(allErr, (&Reader{}).notUTF8(), (&Reader{ends: &lineEnds{bareCR: true}}).notUTF8(), 1)
		macRecs, macFatal := readAllRecords(newReader("fuzz.csv", bytes.NewReader(mac)))
		if errText(macFatal) != allErr || len(macRecs) != len(all) {
			t.Fatalf("with CR line ends: %d records, error %v; with the file's own: %d, error %s", len(macRecs), macFatal, len(all), allErr)
		}
		for i, r := range macRecs {
			if a := all[i]; a.Row != r.Row || !slices.Equal(a.Fields, r.Fields) || errText(a.Err) != errText(r.Err) {
				t.Fatalf("with CR line ends: row %d %q %v; with the file's own: row %d %q %v", r.Row, r.Fields, r.Err, a.Row, a.Fields, a.Err)
			}
		}
	})
}

func readAllRecords(s *Reader, err error) (rows []Record, fatal error) {
	if err != nil {
		return nil, err
	}
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

// fatalOf is the error that ends the reading of a sheet, nil if none.
func fatalOf(s *Reader, err error) error {
	_, fatal := readAllRecords(s, err)
	return fatal
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
