package campaign

// Fuzz targets for the sheet reader and the phone normaliser. Run them
// with, for example:
//
//	go test ./campaign -run '^$' -fuzz FuzzNormalize -fuzztime 30s
//	go test ./campaign -run '^$' -fuzz FuzzSheetReader -fuzztime 30s
//
// Inputs that failed once are kept in testdata/fuzz/<target>/ and run as
// ordinary tests by go test.

import (
	"bytes"
	"errors"
	"fmt"
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
		data, err := os.ReadFile(filepath.Join("..", "testdata", "sheets", name))
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
		s, err := NewSheetReader("fuzz.csv", bytes.NewReader(data))
		if err != nil {
			var se *SheetError
			if !errors.As(err, &se) || se.File != "fuzz.csv" {
				t.Fatalf("NewSheetReader error %v is not a *SheetError naming the file", err)
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

// FuzzNormalize normalises arbitrary text: it must not panic, the fast
// path must agree with the plain library (normalizeSlow) exactly, and any
// result must be E.164 that normalises to itself.
func FuzzNormalize(f *testing.F) {
	for _, s := range []struct{ raw, region string }{
		{"+1 415-555-0100", "US"}, {"(415) 555-0123", "US"}, {"1.4155550142E+10", "US"}, {"1.55512E+10", "US"},
		{"442079460123", "US"}, {"4930123456", "DE"}, {"61138585", "DE"}, {"030 12345678", "DE"}, {"0049 30 12345678", "US"},
		{"011 44 20 7946 0000", "US"}, {"tel:+44 20 7946 0000", ""}, {"+44 (0)20 7946 0123", "GB"}, {"", "US"},
		{"415 555 0100 x12", "US"}, {"N/A", "US"}, {"+7 912 345 67 89", "RU"}, {"0810 1234 5678", "AR"},
		{"+39 06 1234 5678", "IT"}, {"06 1234 5678", "IT"}, {"+262 262 12 34 56", "RE"}, {"+800 1234 5678", ""},
		{"8005550100", "US"}, {"+1 268 460 1234", "AG"}, {"4601234", "AG"}, {"1 268 460 1234", "US"}, {"98765 43210", "in"},
	} {
		f.Add(s.raw, s.region)
	}
	p := NewPhoneNormalizer()
	f.Fuzz(func(t *testing.T, raw, region string) {
		got, warn, err := p.Normalize(raw, region)
		sg, sw, serr := normalizeSlow(raw, region)
		if got != sg || warn != sw || fmt.Sprint(err) != fmt.Sprint(serr) {
			t.Fatalf("Normalize(%q, %q) = %q, %q, %v; normalizeSlow = %q, %q, %v", raw, region, got, warn, err, sg, sw, serr)
		}
		if err != nil {
			if got != "" || warn != "" {
				t.Fatalf("Normalize(%q, %q) returned %q, %q with error %v", raw, region, got, warn, err)
			}
			return
		}
		if len(got) < 3 || got[0] != '+' || got[1] == '0' || !phoneAllDigits(got[1:]) {
			t.Fatalf("Normalize(%q, %q) = %q: not E.164", raw, region, got)
		}
		for _, r := range []string{"", region} {
			again, w, err := p.Normalize(got, r)
			if err != nil || again != got || w != "" {
				t.Fatalf("Normalize(%q, %q) = %q, %q, %v; want %q unchanged", got, r, again, w, err, got)
			}
		}
		// The digit-level readings agree too, for the digits of the input.
		if d := digitsOnly(raw); d != "" {
			reg := phoneRegion(region)
			for _, plus := range []bool{false, true} {
				fe, fok := phoneFastCore(plus, d, reg)
				le, lok := phoneLibraryCore(plus, d, reg)
				if fe != le || fok != lok {
					t.Fatalf("plus=%v %s region %q: fast %+v %v, library %+v %v", plus, d, reg, fe, fok, le, lok)
				}
			}
		}
	})
}

// digitsOnly returns the ASCII digits of s, or "" when there are more than
// phoneMaxDigits.
func digitsOnly(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	if len(b) > phoneMaxDigits {
		return ""
	}
	return string(b)
}
