package sheet

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// splitReader hands out its text in pieces cut at the given offsets, so
// that a CR and the LF after it can arrive in different reads.
type splitReader struct {
	text string
	cuts []int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if r.text == "" {
		return 0, io.EOF
	}
	n := len(r.text)
	if len(r.cuts) > 0 {
		n = r.cuts[0]
		r.cuts = r.cuts[1:]
	}
	n = min(n, len(p), len(r.text))
	copy(p, r.text[:n])
	r.text = r.text[n:]
	return n, nil
}

// TestLineEndsConvert: every line end, LF, CRLF or a bare CR, comes out
// as one LF, however the text is cut into reads (a CRLF split between two
// reads included), and a bare CR is noticed.
func TestLineEndsConvert(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		bare     bool
	}{
		{"a,b\n1,2\n", "a,b\n1,2\n", false},
		{"a,b\r\n1,2\r\n", "a,b\n1,2\n", false},
		{"a,b\r1,2\r", "a,b\n1,2\n", true},
		{"a,b\r1,2", "a,b\n1,2", true},
		{"a,b\r\n1,2\r3,4\r\n", "a,b\n1,2\n3,4\n", true},
		{"\"x\ry\",1\r", "\"x\ny\",1\n", true},
		{"a\r\r\nb", "a\n\nb", true},
		{"a\n\rb", "a\n\nb", true},
		{"\r\n\r\n\r", "\n\n\n", true},
		{"", "", false},
		{"\r", "\n", true},
		{"\r\n", "\n", false},
	} {
		for cut := range len(tt.in) + 1 {
			for _, name := range []string{"cut", "one byte"} {
				l := &lineEnds{r: &splitReader{text: tt.in, cuts: []int{cut}}}
				if name == "one byte" {
					l = &lineEnds{r: iotest.OneByteReader(strings.NewReader(tt.in))}
				}
				got, err := io.ReadAll(l)
				if err != nil || string(got) != tt.want || l.bareCR != tt.bare {
					t.Errorf("%q (%s at %d) = %q, bare CR %v, %v; want %q, bare CR %v", tt.in, name, cut, got, l.bareCR, err, tt.want, tt.bare)
				}
			}
		}
	}
	// A reader that hands out the read buffer one byte at a time, as
	// bufio may when its buffer is nearly full.
	l := &lineEnds{r: strings.NewReader("a\r\nb\rc")}
	var out []byte
	for {
		var b [1]byte
		n, err := l.Read(b[:])
		out = append(out, b[:n]...)
		if err == io.EOF {
			break
		}
	}
	if string(out) != "a\nb\nc" {
		t.Errorf("read one byte at a time: %q", out)
	}
}

// TestSheetLineEndsInEveryEncoding: Excel for Mac's CSV files, and a
// bare CR line end in every encoding the reader reads: Mac Roman, as
// Excel for Mac writes "CSV (Macintosh)" and "Comma Separated Values";
// UTF-8 with its mark ("CSV UTF-8"); UTF-16 with its mark; the Windows
// code page. Without encoding:, a Mac Roman sheet is refused with a
// message that names encoding: macintosh, never the quotes.
func TestSheetLineEndsInEveryEncoding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "First Name,Last Name,Phone\rJürgen,Müller,+4915112345678\rZoë,Ørsted,+4520123456\rFrançois,Hervé,+33612345678\r"
	want := [][]string{{"Jürgen", "Müller", "+4915112345678"}, {"Zoë", "Ørsted", "+4520123456"}, {"François", "Hervé", "+33612345678"}}
	encode := func(enc interface{ String(string) (string, error) }, s string) []byte {
		b, err := enc.String(s)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(b)
	}
	macRoman := encode(charmap.Macintosh.NewEncoder(), text)
	if !strings.Contains(string(macRoman), "J\x9frgen") { // ü is 0x9F in Mac Roman
		t.Fatalf("test bug: not Mac Roman: %q", macRoman)
	}
	for _, tt := range []struct {
		name string
		data []byte
		o    Options
	}{
		{"CSV (Macintosh): Mac Roman", macRoman, Options{Encoding: "macintosh"}},
		{"Mac Roman by its other name", macRoman, Options{Encoding: "MacRoman"}},
		{"CSV UTF-8: a byte order mark", append([]byte("\xef\xbb\xbf"), text...), Options{}},
		{"UTF-8", []byte(text), Options{}},
		{"UTF-16LE with its mark", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder(), text), Options{}},
		{"UTF-16BE with its mark", encode(unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder(), text), Options{}},
		{"windows-1252", encode(charmap.Windows1252.NewEncoder(), text), Options{Encoding: "windows-1252"}},
		{"iso-8859-15", encode(charmap.ISO8859_15.NewEncoder(), text), Options{Encoding: "iso-8859-15"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "contacts.csv")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			header, recs := readAll(t, path, tt.o)
			if !slices.Equal(header, []string{"First Name", "Last Name", "Phone"}) {
				t.Errorf("header %q", header)
			}
			if len(recs) != len(want) {
				t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
			}
			for i, w := range want {
				if recs[i].Row != i+2 || !slices.Equal(recs[i].Fields, w) {
					t.Errorf("record %d = row %d %q; want row %d %q", i, recs[i].Row, recs[i].Fields, i+2, w)
				}
			}
		})
	}

	path := filepath.Join(dir, "mac.csv")
	if err := os.WriteFile(path, macRoman, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(path, Options{})
	if err != nil {
		t.Fatal(err) // the header is ASCII
	}
	_, err = s.Next()
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "mac.csv row 2: the sheet is not UTF-8 text: its lines end with a bare CR") ||
		!strings.Contains(err.Error(), "encoding: macintosh") || strings.Contains(err.Error(), "quote") {
		t.Errorf("Mac Roman without encoding: %v", err)
	}
	if GuessEncoding(path) != "macintosh" {
		t.Errorf("GuessEncoding of a Mac Roman sheet with CR line ends = %q, want macintosh", GuessEncoding(path))
	}
}

// eofReader hands out its text and io.EOF in the same read.
type eofReader struct{ text string }

func (r *eofReader) Read(p []byte) (int, error) {
	n := copy(p, r.text)
	r.text = r.text[n:]
	if r.text == "" {
		return n, io.EOF
	}
	return n, nil
}

// TestLineEndsAtTheEnd: a CR that ends the file is a bare CR, whether
// the end comes with the last bytes or after them; a source that gives
// nothing without an error is not read forever.
func TestLineEndsAtTheEnd(t *testing.T) {
	t.Parallel()
	for _, r := range []io.Reader{&eofReader{"a\r"}, strings.NewReader("a\r")} {
		l := &lineEnds{r: r}
		got, err := io.ReadAll(l)
		if err != nil || string(got) != "a\n" || !l.bareCR {
			t.Errorf("%T: %q, bare CR %v, %v", r, got, l.bareCR, err)
		}
	}
	l := &lineEnds{r: iotest.ErrReader(nil)}
	if n, err := l.Read(make([]byte, 8)); n != 0 || err != nil {
		t.Errorf("a source that gives nothing: %d, %v", n, err)
	}
}
