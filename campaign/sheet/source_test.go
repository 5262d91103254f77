package sheet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// readAll opens path with o and returns its header and records.
func readAll(t *testing.T, path string, o Options) ([]string, []Record) {
	t.Helper()
	s, err := OpenWith(path, o)
	if err != nil {
		t.Fatalf("OpenWith(%s): %v", path, err)
	}
	defer s.Close()
	var recs []Record
	for {
		rec, err := s.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	return s.Header(), recs
}

// writeWorkbook writes a workbook of two worksheets, Contacts and Notes,
// as a CRM export or a colleague's hand-kept list has them: phone numbers
// stored as numbers and as text, a formula, a date, an empty row.
func writeWorkbook(t *testing.T) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Contacts"); err != nil {
		t.Fatal(err)
	}
	set := func(sheet, cell string, v any) {
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range []string{"First Name", "Phone", "Signed Up", "Note"} {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		set("Contacts", cell, h)
	}
	set("Contacts", "A2", "Jürgen")
	set("Contacts", "B2", 4915112345678) // a number: Excel shows 4.91511E+12 in a narrow column
	set("Contacts", "C2", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	set("Contacts", "D2", `says "hi", twice`)
	set("Contacts", "A3", "Zoë")
	set("Contacts", "B3", "+4520123456") // a number kept as text
	// Row 4 is empty; row 5 has a formula whose cached value is the number.
	set("Contacts", "A5", "Ana")
	if err := f.SetCellFormula("Contacts", "B5", "=14155550100+32"); err != nil {
		t.Fatal(err)
	}
	set("Contacts", "B5", 14155550132)
	sci, err := f.NewStyle(&excelize.Style{NumFmt: 11}) // 0.00E+00
	if err != nil {
		t.Fatal(err)
	}
	set("Contacts", "A6", "Bo")
	set("Contacts", "B6", 14155550199)
	if err := f.SetCellStyle("Contacts", "B6", "B6", sci); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Notes"); err != nil {
		t.Fatal(err)
	}
	set("Notes", "A1", "Phone")
	set("Notes", "A2", "+14155550111")
	path := filepath.Join(t.TempDir(), "contacts.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWorkbook(t *testing.T) {
	t.Parallel()
	path := writeWorkbook(t)
	header, recs := readAll(t, path, Options{})
	if want := []string{"First Name", "Phone", "Signed Up", "Note"}; !slices.Equal(header, want) {
		t.Errorf("header = %q, want %q", header, want)
	}
	want := []struct {
		row    int
		fields []string
	}{
		{2, []string{"Jürgen", "4915112345678", "2024-03-01", `says "hi", twice`}},
		{3, []string{"Zoë", "+4520123456", "", ""}},
		{5, []string{"Ana", "14155550132", "", ""}},
		{6, []string{"Bo", "14155550199", "", ""}},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		got := recs[i]
		if got.Err != nil || got.Row != w.row || !slices.Equal(got.Fields, w.fields) {
			t.Errorf("record %d = row %d %q (err %v), want row %d %q", i, got.Row, got.Fields, got.Err, w.row, w.fields)
		}
	}

	_, notes := readAll(t, path, Options{Worksheet: "Notes"})
	if len(notes) != 1 || !slices.Equal(notes[0].Fields, []string{"+14155550111"}) {
		t.Errorf("worksheet Notes: %+v", notes)
	}
	_, err := OpenWith(path, Options{Worksheet: "Leads"})
	if err == nil || !strings.Contains(err.Error(), `contacts.xlsx: the workbook has no worksheet "Leads"; its worksheets: "Contacts", "Notes"`) {
		t.Errorf("missing worksheet: %v", err)
	}
}

// TestWorkbookGroups: a workbook laid out as monday.com's board export
// (the board's name, then each group's title, merged across the row, over
// the header repeated, its items with numbers as number cells, a summary
// row, an empty row) reads as its rows, each with its group; the repeated
// headers are neither contacts nor invalid rows.
func TestWorkbookGroups(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	defer f.Close()
	header := []any{"Name", "Subitems", "Status", "Phone", "Item ID (auto generated)"}
	rows := [][]any{
		{"Spring leads"},
		{"Leads"},
		header,
		{"Ana Bell", nil, "New", 12125550501, 18047649001},
		{nil, nil, nil, nil, nil},
		nil,
		{"Do Not Call"},
		header,
		{"Eli Fox", nil, "Contacted", "+1 312 555 0505", 18047649005},
	}
	for r, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, r+1)
		if row != nil {
			if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.MergeCell("Sheet1", "A7", "E7"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "board.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for {
		rec, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil || rec.Err != nil {
			t.Fatalf("row %d: %v %v", rec.Row, err, rec.Err)
		}
		group := "none"
		if rec.Group != nil {
			group = fmt.Sprintf("%s@%d", rec.Group.Title, rec.Group.Row)
		}
		got = append(got, fmt.Sprintf("%d %s %s: %s", rec.Row, rec.Fields[0], rec.Fields[3], group))
	}
	want := []string{"4 Ana Bell 12125550501: Leads@2", "9 Eli Fox +1 312 555 0505: Do Not Call@7"}
	if !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	if notes := s.Notes(); len(notes) != 2 || !strings.Contains(notes[1], `row 8 repeats the header: not read as contacts; the rows are in 2 group(s), each under the title in the row above its header: "Leads" (row 2), "Do Not Call" (row 7)`) {
		t.Errorf("Notes() = %q", notes)
	}
}

// TestWorkbookClosedEarly: a reader closed before the end stops the
// goroutine that reads the workbook.
func TestWorkbookClosedEarly(t *testing.T) {
	f := excelize.NewFile()
	f.SetCellValue("Sheet1", "A1", "Phone")
	for r := 2; r <= 20000; r++ {
		cell, _ := excelize.CoordinatesToCellName(1, r)
		f.SetCellValue("Sheet1", cell, 14155550000+r)
	}
	path := filepath.Join(t.TempDir(), "big.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := runtime.NumGoroutine()
	s, err := OpenWith(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i == 500 {
			t.Fatalf("%d goroutines after Close, %d before: the workbook's reader goes on", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBomless16ZeroLowBytes: UTF-16 without its mark is read when names
// hold characters one of whose bytes is 0 (一 U+4E00, Ā U+0100, Ḁ
// U+1E00), either byte order; a file with a pair of NUL bytes, which no
// text holds, is not taken for it.
func TestBomless16ZeroLowBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "Name,Phone\r\n一郎 山田,+81312345678\r\nĀdam Ḁ,+4915112345678\r\n"
	for name, order := range map[string]unicode.Endianness{"le": unicode.LittleEndian, "be": unicode.BigEndian} {
		b, err := unicode.UTF16(order, unicode.IgnoreBOM).NewEncoder().String(text)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "bare16"+name+".csv")
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(p)
		if err != nil {
			t.Fatalf("UTF-16%s: %v", name, err)
		}
		var got [][]string
		for {
			rec, err := s.Next()
			if err != nil {
				break
			}
			got = append(got, rec.Fields)
		}
		s.Close()
		if want := [][]string{{"一郎 山田", "+81312345678"}, {"Ādam Ḁ", "+4915112345678"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("UTF-16%s: read %q, want %q", name, got, want)
		}
	}
	bin := []byte("N\x00a\x00m\x00e\x00,\x00P\x00\x00\x00\x00\x00h\x00o\x00n\x00e\x00\r\x00\n\x00")
	if _, ok := bomless16(bufio.NewReader(bytes.NewReader(bin))); ok {
		t.Error("bytes with pairs of NULs taken for UTF-16")
	}
}

func TestEncodings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "Vorname;Nachname;Telefon\r\nJürgen;Müller;+4915112345678\r\nZoë;Ørsted;+4520123456\r\n"
	want := [][]string{{"Jürgen", "Müller", "+4915112345678"}, {"Zoë", "Ørsted", "+4520123456"}}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	utf16le, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(strings.ReplaceAll(text, ";", "\t"))
	if err != nil {
		t.Fatal(err)
	}
	utf16be, err := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String(strings.ReplaceAll(text, ";", ","))
	if err != nil {
		t.Fatal(err)
	}
	// Without the mark, as Python's utf-16-le and some exports write it.
	bare16le, err := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	bare16be, err := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder().String(strings.ReplaceAll(text, ";", ","))
	if err != nil {
		t.Fatal(err)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		o          Options
		delim      rune
	}{
		{"UTF-16LE, tabs", write("unicode-text.txt", []byte(utf16le)), Options{}, '\t'},
		{"UTF-16BE, commas", write("utf16be.csv", []byte(utf16be)), Options{}, ','},
		{"UTF-16 whatever encoding says", write("utf16-named.csv", []byte(utf16le)), Options{Encoding: "windows-1252"}, '\t'},
		{"UTF-16LE without its mark", write("utf16le-bare.csv", []byte(bare16le)), Options{}, ';'},
		{"UTF-16BE without its mark", write("utf16be-bare.csv", []byte(bare16be)), Options{}, ','},
		{"windows-1252", write("cp1252.csv", []byte(cp1252)), Options{Encoding: "windows-1252"}, ';'},
		{"latin1 is windows-1252", write("latin1.csv", []byte(cp1252)), Options{Encoding: "Latin1"}, ';'},
		{"UTF-8 named", write("utf8.csv", []byte(text)), Options{Encoding: "UTF-8"}, ';'},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenWith(tt.path, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Delimiter() != tt.delim {
				t.Errorf("delimiter %q, want %q", s.Delimiter(), tt.delim)
			}
			if h := s.Header(); !slices.Equal(h, []string{"Vorname", "Nachname", "Telefon"}) {
				t.Errorf("header %q", h)
			}
			for i, w := range want {
				rec, err := s.Next()
				if err != nil || rec.Err != nil || !slices.Equal(rec.Fields, w) || rec.Row != i+2 {
					t.Errorf("record %d = %+v, %v; want row %d %q", i, rec, err, i+2, w)
				}
			}
		})
	}

	// Without encoding:, a Windows-1252 sheet is refused, and the message
	// names the setting.
	s, err := OpenWith(filepath.Join(dir, "cp1252.csv"), Options{})
	if err != nil {
		t.Fatal(err) // the header is ASCII
	}
	_, err = s.Next()
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "cp1252.csv row 2") || !strings.Contains(err.Error(), "encoding: windows-1252") {
		t.Errorf("cp1252 without encoding: %v", err)
	}
	_, err = OpenWith(filepath.Join(dir, "cp1252.csv"), Options{Encoding: "klingon"})
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `unknown encoding "klingon"`) {
		t.Errorf("unknown encoding: %v", err)
	}
	if err := CheckEncoding("ISO-8859-15"); err != nil {
		t.Errorf("CheckEncoding(ISO-8859-15): %v", err)
	}
}

func TestGuessEncoding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A UTF-8 file of CR-ended lines longer than the part read, with a
	// character of two bytes across its end: the cut is made at a line
	// end, not inside the character.
	long := "Name\r" + strings.Repeat("x", 1<<20-len("Name\r")-1) + "ü\r"
	for _, tt := range []struct {
		name, text, want string
	}{
		{"utf8.csv", "Vorname;Telefon\nJürgen;+4915112345678\n", ""},
		{"ascii.csv", "Name,Phone\nAda,+14155550132\n", ""},
		{"cp1252.csv", "Vorname;Telefon\nJ\xfcrgen;+4915112345678\nZo\xeb \xd8rsted;+4520123456\n", "windows-1252"},
		{"undefined.csv", "Name,Phone\nA\x81da,+14155550132\n", ""},
		{"control.csv", "Name,Phone\nA\x01\xe9,+14155550132\n", ""},
		{"utf16.txt", "\xff\xfeN\x00a\x00\xe9\x00", ""},
		{"mac.csv", "Vorname,Telefon\rJ\x9frgen,+4915112345678\rFran\x8dois,+33612345678\r", "macintosh"},
		{"windows-crlf.csv", "Vorname,Telefon\r\nJ\xfcrgen,+4915112345678\r\n", "windows-1252"},
		{"utf8-cr.csv", "Vorname,Telefon\rJürgen,+4915112345678\r", ""},
		{"utf8-cr-long.csv", long, ""},
	} {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := GuessEncoding(p); got != tt.want {
			t.Errorf("GuessEncoding(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReadAheadClosedEarly: a CSV sheet read past the rows a Reader
// parses itself, so that it parses ahead on a goroutine, and closed
// before its end leaves no goroutine behind; read to its end, its
// records are every row's, in order.
func TestReadAheadClosedEarly(t *testing.T) {
	var b strings.Builder
	b.WriteString("Name,Phone\n")
	rows := 3*defaultAheadAfter + 7
	for i := range rows {
		fmt.Fprintf(&b, "Lead %d,+1415555%04d\n", i, i%10_000)
	}
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range defaultAheadAfter + 1 {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if s.ahead == nil {
		t.Fatal("the reader did not parse ahead")
	}
	s.Close()
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i == 500 {
			t.Fatalf("%d goroutines after Close, %d before: the parsing ahead goes on", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range rows {
		rec, err := s.Next()
		if err != nil || rec.Row != i+2 || rec.Fields[0] != fmt.Sprintf("Lead %d", i) {
			t.Fatalf("record %d: row %d %q (%v)", i, rec.Row, rec.Fields, err)
		}
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("after the last row: %v, want io.EOF", err)
	}
	if _, ok := s.Stamp(); !ok {
		t.Error("read to its end, the sheet has no stamp")
	}
}
