package sheet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign/phone"
)

// sheetRow is what a test expects of one Record: fields, or a
// substring of its error.
type sheetRow struct {
	row    int
	fields []string
	err    string
}

// readSheet reads every record; fatal is the error that ended the
// reading, if any.
func readSheet(t *testing.T, s *Reader) (rows []Record, fatal error) {
	t.Helper()
	for {
		rec, err := s.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			if _, again := s.Next(); again == nil || again.Error() != err.Error() {
				t.Errorf("Next after a fatal error returned %v; want the same error again", again)
			}
			return rows, err
		}
		rows = append(rows, rec)
	}
}

// checkSheet reads every record of s and checks them against want, and
// the error that ends the reading against fatal: none when fatal is "",
// else one containing it.
func checkSheet(t *testing.T, s *Reader, want []sheetRow, fatal string) {
	t.Helper()
	rows, err := readSheet(t, s)
	checkRows(t, rows, want)
	switch {
	case fatal == "" && err != nil:
		t.Errorf("reading ended with %v", err)
	case fatal != "" && (err == nil || !strings.Contains(err.Error(), fatal)):
		t.Errorf("reading ended with %v; want an error containing %q", err, fatal)
	}
}

func checkRows(t *testing.T, got []Record, want []sheetRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d:", len(got), len(want))
		for _, r := range got {
			t.Errorf("  row %d %q %v", r.Row, r.Fields, r.Err)
		}
		return
	}
	for i, w := range want {
		g := got[i]
		if g.Row != w.row {
			t.Errorf("record %d: row %d, want %d", i, g.Row, w.row)
		}
		if w.err != "" {
			if g.Err == nil || !strings.Contains(g.Err.Error(), w.err) {
				t.Errorf("row %d: error %v, want one containing %q", g.Row, g.Err, w.err)
			}
			if g.Fields != nil {
				t.Errorf("row %d: fields %q with an error", g.Row, g.Fields)
			}
			continue
		}
		if g.Err != nil || !reflect.DeepEqual(g.Fields, w.fields) {
			t.Errorf("row %d: %q, %v; want %q", g.Row, g.Fields, g.Err, w.fields)
		}
	}
}

func TestSheetReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		header []string
		delim  rune
		rows   []sheetRow
		open   string // substring of the newReader error
		fatal  string // substring of the error that ends reading
	}{
		{
			name:   "comma LF",
			in:     "Phone,First Name\n+14155550100,Ada\n+14155550123,Grace\n",
			header: []string{"Phone", "First Name"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"+14155550100", "Ada"}}, {row: 3, fields: []string{"+14155550123", "Grace"}}},
		},
		{
			name:   "BOM and CRLF, no final newline",
			in:     "\ufeffPhone,Name\r\n1,a\r\n2,b",
			header: []string{"Phone", "Name"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"1", "a"}}, {row: 3, fields: []string{"2", "b"}}},
		},
		{
			name:   "header names trimmed",
			in:     " Phone \t,\" First Name \",\u00a0Email\n1,2,3\n",
			header: []string{"Phone", "First Name", "Email"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"1", "2", "3"}}},
		},
		{
			name:   "semicolon",
			in:     "Vorname;Telefon;E-Mail\nHans;030 12345678;h@example.de\n",
			header: []string{"Vorname", "Telefon", "E-Mail"}, delim: ';',
			rows: []sheetRow{{row: 2, fields: []string{"Hans", "030 12345678", "h@example.de"}}},
		},
		{
			name:   "semicolon with commas inside quotes",
			in:     "\"Name, full\";\"Phone, main\";Email\n\"Doe, Jane\";1;x\n",
			header: []string{"Name, full", "Phone, main", "Email"}, delim: ';',
			rows: []sheetRow{{row: 2, fields: []string{"Doe, Jane", "1", "x"}}},
		},
		{
			name:   "tab",
			in:     "First Name\tPhone\nAda\t+14155550100\n",
			header: []string{"First Name", "Phone"}, delim: '\t',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "+14155550100"}}},
		},
		{
			name:   "comma wins a tie",
			in:     "a,b;c\n1,2;3\n",
			header: []string{"a", "b;c"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"1", "2;3"}}},
		},
		{
			name:   "single column (a suppression list)",
			in:     "phone\n+14155550100\n+14155550123\n",
			header: []string{"phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"+14155550100"}}, {row: 3, fields: []string{"+14155550123"}}},
		},
		{
			name:   "Excel sep line",
			in:     "sep=;\r\nName;Phone\r\nAda;1\r\n",
			header: []string{"Name", "Phone"}, delim: ';',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}},
		},
		{
			name:   "quoted newlines: one row per record",
			in:     "Name,Note,Phone\nAda,\"line one\r\nline two\nline three\",1\nGrace,\"x\",2\n\"Alan\nTuring\",y,3\n",
			header: []string{"Name", "Note", "Phone"}, delim: ',',
			rows: []sheetRow{
				{row: 2, fields: []string{"Ada", "line one\nline two\nline three", "1"}},
				{row: 3, fields: []string{"Grace", "x", "2"}},
				{row: 4, fields: []string{"Alan\nTuring", "y", "3"}},
			},
		},
		{
			name:   "blank rows are skipped but counted, trailing ones are not reported",
			in:     "Name,Phone\r\nAda,1\r\n\r\n,\r\n , \r\nGrace,2\r\n,\r\n\r\n,,\r\n\r\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 6, fields: []string{"Grace", "2"}}},
		},
		{
			name:   "short rows read their missing trailing fields as empty",
			in:     "a,b,c\n1,2,3\n1,2\n1\n4,5,6\n",
			header: []string{"a", "b", "c"}, delim: ',',
			rows: []sheetRow{
				{row: 2, fields: []string{"1", "2", "3"}},
				{row: 3, fields: []string{"1", "2", ""}},
				{row: 4, fields: []string{"1", "", ""}},
				{row: 5, fields: []string{"4", "5", "6"}},
			},
		},
		{
			name:   "one empty field past the header is dropped, a full one is an error",
			in:     "a,b,c\n1,2,3,\n1,2,3, \n1,2,3,4\n1,2,3,,\n4,5,6\n",
			header: []string{"a", "b", "c"}, delim: ',',
			rows: []sheetRow{
				{row: 2, fields: []string{"1", "2", "3"}},
				{row: 3, fields: []string{"1", "2", "3"}},
				{row: 4, err: "row 4: has 4 fields but the header has 3 (an extra comma, or a field holding one that is not in quotes?)"},
				{row: 5, err: "has 5 fields but the header has 3"},
				{row: 6, fields: []string{"4", "5", "6"}},
			},
		},
		{
			name:   "a trailing comma on every row, the header's too",
			in:     "a,b,c,\n1,2,3,\n4,5,\n",
			header: []string{"a", "b", "c", ""}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"1", "2", "3", ""}}, {row: 3, fields: []string{"4", "5", "", ""}}},
		},
		{
			name:   "bare quote and bad quote are row errors",
			in:     "Name,Phone\nJoe \"JJ\" Smith,1\nAda,2\n\"Grace\"x,3\nAlan,4\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{
				{row: 2, err: `row 2: a field that is not in quotes contains a quote (line 2, character 5 of the file)`},
				{row: 3, fields: []string{"Ada", "2"}},
				{row: 4, err: "a quoted field is not closed properly (line 4"},
				{row: 5, fields: []string{"Alan", "4"}},
			},
		},
		{
			name:   "a bad quote on the last line",
			in:     "Name,Phone\nAda,1\nGrace,\"2",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 3, err: "a quoted field is not closed properly"}},
		},
		{
			name:   "a quote never closed is fatal",
			in:     "Name,Phone\nAda,1\n\"Grace,2\nAlan,3\nEdsger,4\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows:  []sheetRow{{row: 2, fields: []string{"Ada", "1"}}},
			fatal: "sheet.csv row 3: a quote opened on line 3 of the file is not closed properly",
		},
		{
			name:   "empty header cells are kept",
			in:     "Name,,Phone,\na,b,c,d\n",
			header: []string{"Name", "", "Phone", ""}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"a", "b", "c", "d"}}},
		},
		{
			name:   "blank lines before the header",
			in:     "\n\nName,Phone\nAda,1\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 4, fields: []string{"Ada", "1"}}},
		},
		{
			name:   "invalid UTF-8 in a row is fatal",
			in:     "Name,Phone\nAda,1\nJos\xe9,2\nAlan,3\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows:  []sheetRow{{row: 2, fields: []string{"Ada", "1"}}},
			fatal: "sheet.csv row 3: the sheet is not UTF-8 text (it was probably saved in another encoding): in Excel use File > Save As > CSV UTF-8",
		},
		// Excel for Mac ("CSV (Macintosh)") and Numbers end lines with
		// a bare CR; a file may mix the three line ends. Each case is
		// read again with LF line ends, and must read the same.
		{
			name:   "CSV (Macintosh)",
			in:     "First Name,Last Name,Phone,Email\r\"Ada\",\"Lovelace\",\"(415) 555-0100\",ada@example.com\rGrace,Hopper,(212) 555-0123,grace@example.com\r",
			header: []string{"First Name", "Last Name", "Phone", "Email"}, delim: ',',
			rows: []sheetRow{
				{row: 2, fields: []string{"Ada", "Lovelace", "(415) 555-0100", "ada@example.com"}},
				{row: 3, fields: []string{"Grace", "Hopper", "(212) 555-0123", "grace@example.com"}},
			},
		},
		{
			// Read as one line, this header had the column "CA" twice.
			name:   "one line would repeat a column",
			in:     "Name,State,Phone\rAda,CA,4155550100\rGrace,CA,2125550123\r",
			header: []string{"Name", "State", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "CA", "4155550100"}}, {row: 3, fields: []string{"Grace", "CA", "2125550123"}}},
		},
		{
			// Read as one line, the quote after the first row's last
			// field was a quote in an unquoted field.
			name:   "quoted last fields",
			in:     "\"Name\",\"Phone\"\r\"Ada\",\"4155550100\"\r\"Grace\",\"2125550123\"",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "4155550100"}}, {row: 3, fields: []string{"Grace", "2125550123"}}},
		},
		{
			name:   "CSV UTF-8: a byte order mark, semicolons",
			in:     "\ufeffVorname;Telefon\rJürgen;030 1234567\rZoë;030 7654321\r",
			header: []string{"Vorname", "Telefon"}, delim: ';',
			rows: []sheetRow{{row: 2, fields: []string{"Jürgen", "030 1234567"}}, {row: 3, fields: []string{"Zoë", "030 7654321"}}},
		},
		{
			name:   "sep= line",
			in:     "sep=;\rName;Phone\rAda;1\r",
			header: []string{"Name", "Phone"}, delim: ';',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}},
		},
		{
			name:   "tabs",
			in:     "Name\tPhone\rAda\t1\r",
			header: []string{"Name", "Phone"}, delim: '\t',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}},
		},
		{
			name:   "a CR inside quotes is a line break of the field",
			in:     "Name,Notes,Phone\rAda,\"call after 5\rnot Mondays\",1\rGrace,\"two\r\nlines\",2\r",
			header: []string{"Name", "Notes", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "call after 5\nnot Mondays", "1"}}, {row: 3, fields: []string{"Grace", "two\nlines", "2"}}},
		},
		{
			name:   "mixed: CRLF with a stray CR",
			in:     "Name,Phone\r\nAda,1\r\nGrace,2\rAlan,3\r\nKen,4\r\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 3, fields: []string{"Grace", "2"}}, {row: 4, fields: []string{"Alan", "3"}}, {row: 5, fields: []string{"Ken", "4"}}},
		},
		{
			name:   "mixed: LF rows pasted below CR rows",
			in:     "Name,Phone\rAda,1\rGrace,2\nAlan,3\n",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 3, fields: []string{"Grace", "2"}}, {row: 4, fields: []string{"Alan", "3"}}},
		},
		{
			name:   "blank rows count, and the CRs Excel for Mac leaves at the end",
			in:     "Name,Phone\r\rAda,1\r,\rGrace,2\r\r\r\r\r",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 3, fields: []string{"Ada", "1"}}, {row: 5, fields: []string{"Grace", "2"}}},
		},
		{
			name:   "title and footer",
			in:     "Open Contacts - West\r\rName,Phone\rAda,1\r\r\"Generated By: Jane Doe\"\r\"Acme, Inc.\"\r",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 4, fields: []string{"Ada", "1"}}},
		},
		{
			name:   "a row's own error names its row",
			in:     "Name,Phone\rAda,1\rGr\"ace,2\rAlan,3\r",
			header: []string{"Name", "Phone"}, delim: ',',
			rows: []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 3, err: "row 3: a field that is not in quotes contains a quote (line 3"}, {row: 4, fields: []string{"Alan", "3"}}},
		},
		{name: "empty file", in: "", open: "sheet.csv: the sheet is empty: it has no header row"},
		{name: "BOM only", in: "\ufeff", open: "the sheet is empty"},
		{name: "blank lines only", in: "\r\n\r\n\n", open: "the sheet is empty"},
		{
			// Excel's CSV of a worksheet whose first row is left empty:
			// skipped, as a workbook's is (TestBlankFirstRowCSVAndWorkbook).
			name:   "blank first row of delimiters",
			in:     ",,\nName,Phone,Email\nAda,1,a@example.com\n",
			header: []string{"Name", "Phone", "Email"}, delim: ',',
			rows: []sheetRow{{row: 3, fields: []string{"Ada", "1", "a@example.com"}}},
		},
		{name: "blank rows of delimiters only", in: ",,\n,\n\n,,,\n", open: "the sheet is empty: it has no header row"},
		{name: "duplicate header", in: "Phone,Name,Phone\n", open: `sheet.csv: the header has the column "Phone" twice (columns 1 and 3)`},
		{name: "duplicate header after trimming and case", in: "Phone, name ,NAME\n", open: `the header has the columns "name" and "NAME", which differ only in case (columns 2 and 3)`},
		{name: "invalid UTF-8 header", in: "Nom,T\xe9l\xe9phone\n", open: "not UTF-8 text"},
		{name: "xls", in: "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1...", open: "sheet.csv: the file is an old Excel workbook (.xls), which callrun does not read: in Excel use File > Save As > Excel Workbook (.xlsx) or CSV UTF-8"},
		{name: "binary", in: "Name,Phone\n\x00\x01\x02", open: "holds binary data (NUL bytes), not CSV text"},
		{name: "header with a bad quote", in: "\"Name\"x,Phone\n", open: "the header row cannot be read"},
		// A header error names its row, which the blank rows above it
		// make other than 1.
		{name: "header with a bad quote below a blank row", in: ",,\n\"Name\"x,Phone\n", open: "sheet.csv row 2: the header row cannot be read: a quoted field is not closed properly (line 2"},
		{name: "header not UTF-8 below blank rows", in: "\n,\nNom,T\xe9l\xe9phone\n", open: "sheet.csv row 3: the sheet is not UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins := []string{tt.in}
			if strings.Contains(tt.in, "\r") {
				ins = append(ins, strings.ReplaceAll(strings.ReplaceAll(tt.in, "\r\n", "\n"), "\r", "\n"))
			}
			for _, in := range ins {
				s, err := newReader("sheet.csv", strings.NewReader(in))
				if tt.open != "" {
					if err == nil || !strings.Contains(err.Error(), tt.open) {
						t.Fatalf("newReader(%q) error = %v; want one containing %q", in, err, tt.open)
					}
					continue
				}
				if err != nil {
					t.Fatalf("newReader(%q): %v", in, err)
				}
				defer s.Close()
				if !reflect.DeepEqual(s.Header(), tt.header) {
					t.Errorf("%q: Header() = %q; want %q", in, s.Header(), tt.header)
				}
				if s.Delimiter() != tt.delim {
					t.Errorf("%q: Delimiter() = %q; want %q", in, s.Delimiter(), tt.delim)
				}
				checkSheet(t, s, tt.rows, tt.fatal)
			}
		})
	}
}

func TestSheetColumn(t *testing.T) {
	t.Parallel()
	s, err := newReader("contacts/leads.csv", strings.NewReader("Phone Number,First Name,,Emial,Contact Id\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"Phone Number": 0, "first name": 1, " FIRST NAME ": 1, "Emial": 3, "contact id": 4} {
		if got, err := s.Column(name); err != nil || got != want {
			t.Errorf("Column(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	for name, want := range map[string]string{
		"Phone":     `sheet contacts/leads.csv has no column "Phone" (columns: "Phone Number", "First Name", "Emial", "Contact Id"; did you mean "Phone Number"?)`,
		"Email":     `did you mean "Emial"?)`,
		"FirstName": `did you mean "First Name"?)`,
		"ContactID": `did you mean "Contact Id"?)`,
		"Zip":       `sheet contacts/leads.csv has no column "Zip" (columns: "Phone Number", "First Name", "Emial", "Contact Id")`,
		"":          "a column name is empty",
	} {
		_, err := s.Column(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Column(%q) error = %v; want one containing %q", name, err, want)
		}
	}
}

func TestSheetColumnListIsBounded(t *testing.T) {
	t.Parallel()
	var cols []string
	for i := range 50 {
		cols = append(cols, "Custom Field "+string(rune('A'+i%26))+string(rune('a'+i/26)))
	}
	s, err := newReader("wide.csv", strings.NewReader(strings.Join(cols, ",")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Column("Phone")
	if err == nil || !strings.Contains(err.Error(), "and 20 more)") {
		t.Errorf("Column error = %v; want the list cut after 30 columns", err)
	}
}

func TestSheetError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  Error
		want string
	}{
		{Error{File: "contacts/leads.csv", Row: 14, Field: "Phone", Msg: "bad"}, `contacts/leads.csv row 14, column "Phone": bad`},
		{Error{File: "contacts/leads.csv", Row: 14, Msg: "bad"}, `contacts/leads.csv row 14: bad`},
		{Error{File: "contacts/leads.csv", Field: "Phone", Msg: "bad"}, `contacts/leads.csv, column "Phone": bad`},
		{Error{File: "contacts/leads.csv", Msg: "bad"}, `contacts/leads.csv: bad`},
		{Error{Msg: "bad"}, `bad`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q; want %q", got, tt.want)
		}
	}
	_, err := newReader("x.csv", strings.NewReader(""))
	var se *Error
	if !errors.As(err, &se) || se.File != "x.csv" {
		t.Errorf("newReader error %v is not a *Error naming the file", err)
	}
}

func TestOpenSheet(t *testing.T) {
	t.Parallel()
	_, err := Open(filepath.Join(t.TempDir(), "missing.csv"))
	if err == nil || !strings.Contains(err.Error(), "missing.csv: cannot open the sheet: no such file or directory") {
		t.Errorf("Open(missing) error = %v", err)
	}
	path := filepath.Join(t.TempDir(), "book.xlsx")
	if err := os.WriteFile(path, []byte("PK\x03\x04\x14\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "book.xlsx: the file looks like an Excel workbook (.xlsx) but cannot be read as one") {
		t.Errorf("Open(xlsx) error = %v", err)
	}
	s, err := Open(filepath.Join("..", "..", "testdata", "sheets", "tabs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestSheetRowTooLarge: a quote that is never closed must not make the
// reader hold the rest of a large file in memory.
func TestSheetRowTooLarge(t *testing.T) {
	t.Parallel()
	big := io.MultiReader(
		strings.NewReader("Name,Phone\nAda,1\n\"Grace,2\n"),
		strings.NewReader(strings.Repeat("Alan,3\n", (maxRowBytes/7)+(1<<20))),
	)
	s, err := newReader("big.csv", big)
	if err != nil {
		t.Fatal(err)
	}
	rows, fatal := readSheet(t, s)
	checkRows(t, rows, []sheetRow{{row: 2, fields: []string{"Ada", "1"}}})
	if fatal == nil || fatal.Error() != "big.csv row 3: a quoted field of the row that starts on line 3 of the file runs over more than 1000 lines: probably a quote that is never closed, so the rows after it cannot be read; check the quotes of that row" {
		t.Errorf("fatal error = %v", fatal)
	}
}

// TestSheetLongHeader: the delimiter is found even when the header is
// longer than the read buffer.
func TestSheetLongHeader(t *testing.T) {
	t.Parallel()
	var cols []string
	for i := range 20000 {
		cols = append(cols, fmt.Sprintf("Column %d", i)) // 200 KB of header
	}
	in := strings.Join(cols, ";") + "\n" + strings.Repeat("1;", len(cols)-1) + "1\n"
	s, err := newReader("long.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Delimiter() != ';' || len(s.Header()) != len(cols) {
		t.Fatalf("delimiter %q, %d columns", s.Delimiter(), len(s.Header()))
	}
	rec, err := s.Next()
	if err != nil || rec.Err != nil || len(rec.Fields) != len(cols) || rec.Row != 2 {
		t.Errorf("Next = %d fields, row %d, %v, %v", len(rec.Fields), rec.Row, rec.Err, err)
	}
}

// fixtureRow is what a fixture row should give: the normalised phone
// number, a substring of the warning, or a substring of the error.
type fixtureRow struct {
	row   int
	name  string // value of the sheet's name column, to check alignment
	phone string
	warn  string
	err   string
}

func TestSheetFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file      string
		delim     rune
		header    []string
		nameCol   string
		phoneCol  string
		region    string
		rows      []fixtureRow
		rowErrors map[int]string // rows whose record is an error
	}{
		{
			file: "highlevel_export.csv", delim: ',',
			header:  []string{"Contact Id", "First Name", "Last Name", "Phone", "Email", "Tags"},
			nameCol: "First Name", phoneCol: "phone", region: "US",
			rows: []fixtureRow{
				{row: 2, name: "Ada", phone: "+14155550100"},
				{row: 3, name: "Grace", phone: "+14155550123"},
				{row: 4, name: "Alan", phone: "+14155550142", warn: "scientific notation"},
				{row: 5, name: "Katherine", phone: "+442079460123", warn: "leading +"},
				{row: 6, name: "Edsger", err: "phone number is empty"},
				{row: 7, name: "Barbara", err: `"555-1234" is not a valid phone number for region US`},
				{row: 8, name: "Ada", phone: "+14155550100"}, // the same number as row 2
				{row: 9, name: `=HYPERLINK("https://example.com/x","Click me")`, phone: "+12125550147"},
				{row: 10, name: "Donald", err: "damaged by Excel"},
				{row: 11, name: "Frances", phone: "+13125550111"},
				{row: 12, name: "Margaret", phone: "+16175550134"},
				{row: 13, name: "Linus", phone: "+12125550188"},
			},
		},
		{
			file: "european_semicolon.csv", delim: ';',
			header:  []string{"Vorname", "Nachname", "Telefon", "E-Mail"},
			nameCol: "vorname", phoneCol: "Telefon", region: "DE",
			rows: []fixtureRow{
				{row: 2, name: "Hans", phone: "+493012345678"},
				{row: 3, name: "Erika", phone: "+4930901820"},
				{row: 4, name: "Jürgen", phone: "+4915112345678"},
				{row: 5, name: "Anna", phone: "+498912345678"}, // "Becker\n(Vertrieb)" spans two lines
				{row: 6, name: "Max", phone: "+4940123456"},
				{row: 7, name: "Lena", err: `"12345" is not a valid phone number for region DE`},
				{row: 8, name: "Paul", phone: "+491701234567"},
			},
		},
		{
			file: "excel_damaged.csv", delim: ',',
			header:  []string{"Name", "Phone", "Note"},
			nameCol: "Name", phoneCol: "Phone", region: "US",
			rows: []fixtureRow{
				{row: 2, name: "Sci exact", phone: "+14155550199", warn: `"1.4155550199E+10" (Excel's scientific notation for 14155550199) was read as +14155550199`},
				{row: 3, name: "Sci exact lost plus", phone: "+442079460000", warn: "leading +"},
				{row: 4, name: "Sci lossy", err: `"1.55512E+10" was damaged by Excel`},
				{row: 5, name: "Sci lossy UK", err: "re-export the sheet with the phone column formatted as Text"},
				{row: 6, name: "Sci decimal comma", phone: "+14155550100", warn: "scientific notation"},
				{row: 7, name: "Lost plus DE", phone: "+4930901820", warn: "the + was probably lost"},
				{row: 8, name: "Lost plus GB", phone: "+441614960321", warn: "the + was probably lost"},
				{row: 9, name: "Too short", err: "is not a valid phone number for region US"},
				{row: 10, name: "Too short 2", err: "is not a valid phone number for region US"},
				{row: 11, name: "Fine", phone: "+12125550147"},
			},
		},
		{
			file: "tabs.tsv", delim: '\t',
			header:  []string{"First Name", "Last Name", "Phone", "Email"},
			nameCol: "First Name", phoneCol: "Phone", region: "US",
			rows: []fixtureRow{
				{row: 2, name: "Olivia", phone: "+14155550142"},
				{row: 3, name: "Liam", phone: "+12125550147"},
				{row: 4, name: "Noah", phone: "+14155550199"},
				{row: 5, name: "Emma", err: "phone number is empty"},
				{row: 6, name: "Ava", phone: "+13125550111"}, // no Email field at all
				{row: 7, name: "Mia", err: `"020 7946 0000" is not a valid phone number for region US`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "sheets", tt.file)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Delimiter() != tt.delim || !reflect.DeepEqual(s.Header(), tt.header) {
				t.Fatalf("delimiter %q, header %q", s.Delimiter(), s.Header())
			}
			nameCol, err1 := s.Column(tt.nameCol)
			phoneCol, err2 := s.Column(tt.phoneCol)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			recs, fatal := readSheet(t, s)
			if fatal != nil {
				t.Fatal(fatal)
			}
			want := tt.rows
			for _, rec := range recs {
				if msg, ok := tt.rowErrors[rec.Row]; ok {
					if rec.Err == nil || !strings.Contains(rec.Err.Error(), msg) {
						t.Errorf("row %d: error %v; want %q", rec.Row, rec.Err, msg)
					}
					delete(tt.rowErrors, rec.Row)
					continue
				}
				if rec.Err != nil {
					t.Errorf("row %d: %v", rec.Row, rec.Err)
					continue
				}
				if len(want) == 0 {
					t.Errorf("unexpected row %d: %q", rec.Row, rec.Fields)
					continue
				}
				w := want[0]
				want = want[1:]
				if rec.Row != w.row || rec.Fields[nameCol] != w.name {
					t.Errorf("row %d (%q); want row %d (%q)", rec.Row, rec.Fields[nameCol], w.row, w.name)
				}
				got, warn, err := phone.Normalize(rec.Fields[phoneCol], tt.region)
				switch {
				case w.err != "":
					if err == nil || !strings.Contains(err.Error(), w.err) {
						t.Errorf("row %d: Normalize(%q) = %q, %v; want error %q", rec.Row, rec.Fields[phoneCol], got, err, w.err)
					}
				case err != nil || got != w.phone:
					t.Errorf("row %d: Normalize(%q) = %q, %v; want %q", rec.Row, rec.Fields[phoneCol], got, err, w.phone)
				case (w.warn == "") != (warn == "") || !strings.Contains(warn, w.warn):
					t.Errorf("row %d: warning %q; want one containing %q", rec.Row, warn, w.warn)
				}
			}
			for _, w := range want {
				t.Errorf("row %d (%q) missing", w.row, w.name)
			}
			for row := range tt.rowErrors {
				t.Errorf("row %d: expected an error record", row)
			}
		})
	}
}

// TestSheetTitleAndFooter: a title block above the header and a report
// footer below the data are skipped and noted; rows that only look a
// little like them are read as rows.
func TestSheetTitleAndFooter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		header []string
		rows   []sheetRow
		notes  []string
	}{
		{
			name:   "a Salesforce report footer",
			in:     "\"Name\",\"Phone\"\n\"Ada\",\"+14155550100\"\n\"Grace\",\"+14155550123\"\n\"\"\n\"\"\n\"Open leads\"\n\"Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.\"\n\"Confidential Information - Do Not Distribute\"\n\"Generated By:  Jane Doe  11/25/2026 9:14 AM\"\n\"Acme, Inc.\"\n",
			header: []string{"Name", "Phone"},
			rows:   []sheetRow{{row: 2, fields: []string{"Ada", "+14155550100"}}, {row: 3, fields: []string{"Grace", "+14155550123"}}},
			notes:  []string{`s.csv: rows 6-10 after the data ("Open leads", "Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.", "Confidential Information - Do Not Distribute", ...): a report's footer, not read as contacts`},
		},
		{
			name:   "a footer saved again by Excel, with its delimiters",
			in:     "Name;Phone;Email\r\nAda;030 1234567;\r\n;;\r\nKundenliste;;\r\nStand 25.11.2026;;\r\n",
			header: []string{"Name", "Phone", "Email"},
			rows:   []sheetRow{{row: 2, fields: []string{"Ada", "030 1234567", ""}}},
			notes:  []string{`s.csv: rows 4-5 after the data ("Kundenliste", "Stand 25.11.2026"): a report's footer, not read as contacts`},
		},
		{
			name:   "one-field rows after a blank row, then data again: all rows",
			in:     "Name,Phone\nAda,1\n\nBob\nCarl\nDan,4\n",
			header: []string{"Name", "Phone"},
			rows: []sheetRow{
				{row: 2, fields: []string{"Ada", "1"}}, {row: 4, fields: []string{"Bob", ""}},
				{row: 5, fields: []string{"Carl", ""}}, {row: 6, fields: []string{"Dan", "4"}},
			},
		},
		{
			name:   "one-field rows without a blank row before them: rows",
			in:     "Name,Phone\nAda,1\nBob\n",
			header: []string{"Name", "Phone"},
			rows:   []sheetRow{{row: 2, fields: []string{"Ada", "1"}}, {row: 3, fields: []string{"Bob", ""}}},
		},
		{
			name:   "numbers after a blank row are no footer",
			in:     "Phone,Name\n+14155550100,Ada\n\n+14155550123\n",
			header: []string{"Phone", "Name"},
			rows:   []sheetRow{{row: 2, fields: []string{"+14155550100", "Ada"}}, {row: 4, fields: []string{"+14155550123", ""}}},
		},
		{
			name:   "a one-column sheet has no footer",
			in:     "Phone\n+14155550100\n\nremoved on request\n",
			header: []string{"Phone"},
			rows:   []sheetRow{{row: 2, fields: []string{"+14155550100"}}, {row: 4, fields: []string{"removed on request"}}},
		},
		{
			name:   "a title block",
			in:     "Customer list\nExported 11/25/2026\n\nFirst Name,Last Name,Phone\nAda,Lovelace,+14155550100\n",
			header: []string{"First Name", "Last Name", "Phone"},
			rows:   []sheetRow{{row: 5, fields: []string{"Ada", "Lovelace", "+14155550100"}}},
			notes:  []string{`s.csv: rows 1-3 above the header ("Customer list", "Exported 11/25/2026"): a title, not read as contacts; the header is row 4`},
		},
		{
			name:   "a title written by Excel, with its delimiters, and a footer",
			in:     "Kundenliste;;\r\nName;Telefon;E-Mail\r\nHans;030 1234567;h@example.de\r\n;;\r\nErstellt von Jane;;\r\n",
			header: []string{"Name", "Telefon", "E-Mail"},
			rows:   []sheetRow{{row: 3, fields: []string{"Hans", "030 1234567", "h@example.de"}}},
			notes: []string{
				`s.csv: row 1 above the header ("Kundenliste"): a title, not read as contacts; the header is row 2`,
				`s.csv: row 5 after the data ("Erstellt von Jane"): a report's footer, not read as contacts`,
			},
		},
		{
			name:   "a one-column list whose first row is its header",
			in:     "phone\n+14155550100\n\"Smith, J\",+14155550123\n",
			header: []string{"phone"},
			rows:   []sheetRow{{row: 2, fields: []string{"+14155550100"}}, {row: 3, err: "has 2 fields but the header has 1"}},
		},
		{
			name:   "a row of numbers below a text row is no header",
			in:     "Phone,,\n+14155550100,+14155550123,\n",
			header: []string{"Phone", "", ""},
			rows:   []sheetRow{{row: 2, fields: []string{"+14155550100", "+14155550123", ""}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newReader("s.csv", strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Header(), tt.header) {
				t.Errorf("Header() = %q; want %q", s.Header(), tt.header)
			}
			checkSheet(t, s, tt.rows, "")
			if got := s.Notes(); !reflect.DeepEqual(got, tt.notes) {
				t.Errorf("Notes() = %q;\nwant %q", got, tt.notes)
			}
		})
	}
}

// TestSheetDocExample reads the sheet the campaign file's documentation
// shows, and checks what it says of it.
func TestSheetDocExample(t *testing.T) {
	t.Parallel()
	in := "Open Contacts - West Region\n\nFirst Name,Phone,Email\nAda,(415) 555-0100,ada@example.com,\nGrace,(212) 555-0123\n\n\"Generated By:  Jane Doe  11/25/2026 9:14 AM\"\n\"Acme, Inc.\"\n"
	s, err := newReader("leads.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkSheet(t, s, []sheetRow{
		{row: 4, fields: []string{"Ada", "(415) 555-0100", "ada@example.com"}},
		{row: 5, fields: []string{"Grace", "(212) 555-0123", ""}},
	}, "")
	want := []string{
		`leads.csv: rows 1-2 above the header ("Open Contacts - West Region"): a title, not read as contacts; the header is row 3`,
		`leads.csv: rows 7-8 after the data ("Generated By:  Jane Doe  11/25/2026 9:14 AM", "Acme, Inc."): a report's footer, not read as contacts`,
	}
	if got := s.Notes(); !reflect.DeepEqual(got, want) {
		t.Errorf("Notes() = %q;\nwant %q", got, want)
	}
}

// TestSheetGroups: a row that repeats the header is no contact and no
// invalid row but a repeated header, noted once; the line of text just
// above it (or just above the header itself) titles the group of rows
// below, and each record carries its group, as monday.com's board export
// writes a board's groups. A title with a blank row under it titles
// nothing, a header repeat without a title keeps the group, and a footer
// still ends the sheet.
func TestSheetGroups(t *testing.T) {
	t.Parallel()
	type row struct {
		row   int
		first string
		group string // "title@row", or "" for none
	}
	tests := []struct {
		name  string
		in    string
		rows  []row
		notes []string
	}{
		{
			name: "monday.com's board export",
			in: "Spring leads\nLeads\nName,Subitems,Status,Phone\nAna,,New,+1 212 555 0501\nBen,,Do Not Call,+1 212 555 0502\n,,,\n\n" +
				"Do Not Call\nName,Subitems,Status,Phone\nEli,,Contacted,+1 312 555 0505\n\nWon\nName,Subitems,Status,Phone\nGil,,Interested,+1 415 555 0507\n",
			rows: []row{{4, "Ana", "Leads@2"}, {5, "Ben", "Leads@2"}, {10, "Eli", "Do Not Call@8"}, {14, "Gil", "Won@12"}},
			notes: []string{
				`s.csv: rows 1-2 above the header ("Spring leads", "Leads"): a title, not read as contacts; the header is row 3`,
				`s.csv: rows 9, 13 repeat the header: not read as contacts; the rows are in 3 group(s), each under the title in the row above its header: "Leads" (row 2), "Do Not Call" (row 8), "Won" (row 12)`,
			},
		},
		{
			name: "a workbook's rows, padded with empty cells, and a title with spaces",
			in:   "Name,Phone,,\n Ana ,+1 212 555 0501,,\n,,,\n  Do Not Call  ,,,\n Name , Phone ,,\nEli,+1 312 555 0505,,\n",
			rows: []row{{2, " Ana ", ""}, {6, "Eli", "Do Not Call@4"}},
			notes: []string{
				`s.csv: row 5 repeats the header: not read as contacts; the rows are in 1 group(s), each under the title in the row above its header: "Do Not Call" (row 4)`,
			},
		},
		{
			name:  "a header repeated without a title keeps the group",
			in:    "Do Not Call\nName,Phone\nAna,1\nName,Phone\nBen,2\n",
			rows:  []row{{3, "Ana", "Do Not Call@1"}, {5, "Ben", "Do Not Call@1"}},
			notes: []string{`s.csv: row 1 above the header ("Do Not Call"): a title, not read as contacts; the header is row 2`, `s.csv: row 4 repeats the header: not read as contacts; the rows are in 1 group(s), each under the title in the row above its header: "Do Not Call" (row 1)`},
		},
		{
			name:  "a title with a blank row under it titles nothing",
			in:    "Name,Phone\nAna,1\n\nDo Not Call\n,\nName,Phone\nBen,2\n",
			rows:  []row{{2, "Ana", ""}, {4, "Do Not Call", ""}, {7, "Ben", ""}},
			notes: []string{`s.csv: row 6 repeats the header: not read as contacts`},
		},
		{
			name: "monday.com's subitems under an item are not contacts",
			in:   "Name,Subitems,Phone\nAna,,+1 212 555 0501\n,Subitems,Owner,Phone\n,Follow-up,Jo,+1 212 555 0599\n,Send deck,Jo,\nBen,,+1 212 555 0502\n",
			rows: []row{{2, "Ana", ""}, {6, "Ben", ""}},
			notes: []string{
				`s.csv: rows 3, 4, 5 are an item's subitems (under a "Subitems" header row, as monday.com exports them): not read as contacts`,
			},
		},
		{
			name:  "a cell that says Subitems alone is a row",
			in:    "Name,Phone\nSubitems,\nBen,2\n",
			rows:  []row{{2, "Subitems", ""}, {3, "Ben", ""}},
			notes: nil,
		},
		{
			name:  "a header in other letters is a row",
			in:    "Name,Phone\nAna,1\nNAME,PHONE\n",
			rows:  []row{{2, "Ana", ""}, {3, "NAME", ""}},
			notes: nil,
		},
		{
			name: "a line of text after the data, then a group, then a footer",
			in:   "Name,Phone\nAna,1\n\nNotes\n\nDNC\nName,Phone\nBen,2\n\nGenerated by Jane\n",
			rows: []row{{2, "Ana", ""}, {4, "Notes", ""}, {8, "Ben", "DNC@6"}},
			notes: []string{
				`s.csv: row 7 repeats the header: not read as contacts; the rows are in 1 group(s), each under the title in the row above its header: "DNC" (row 6)`,
				`s.csv: row 10 after the data ("Generated by Jane"): a report's footer, not read as contacts`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newReader("s.csv", strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := readSheet(t, s)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, r := range recs {
				if r.Err != nil {
					t.Errorf("row %d: %v", r.Row, r.Err)
					continue
				}
				g := ""
				if r.Group != nil {
					g = fmt.Sprintf("%s@%d", r.Group.Title, r.Group.Row)
				}
				got = append(got, row{r.Row, r.Fields[0], g})
			}
			if !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows %v;\nwant %v", got, tt.rows)
			}
			notes := s.Notes()
			slices.Sort(notes)
			want := slices.Clone(tt.notes)
			slices.Sort(want)
			if !reflect.DeepEqual(notes, want) {
				t.Errorf("Notes() = %q;\nwant %q", s.Notes(), tt.notes)
			}
		})
	}
}

// TestNULPastTheSniffIsARowError: a NUL byte in one cell past the first
// bytes that make a file binary (a cell pasted from another program) makes
// its row invalid, naming the row and the column: it was read as text and
// the NUL sent on to the service in the form field, and into report.csv.
func TestNULPastTheSniffIsARowError(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	in.WriteString("Phone,First Name\n")
	n := 0
	for in.Len() < 2*sniffSize {
		fmt.Fprintf(&in, "+1415555%04d,Ada %d\n", n, n)
		n++
	}
	in.WriteString("+14155559999,Bad\x00Name\n+14155559998,Grace\n")
	rows, fatal := readAllRecords(newReader("s.csv", strings.NewReader(in.String())))
	if fatal != nil {
		t.Fatal(fatal)
	}
	if len(rows) != n+2 {
		t.Fatalf("%d rows, want %d", len(rows), n+2)
	}
	bad, good := rows[n], rows[n+1]
	const want = `s.csv row %d: column "First Name" holds a NUL byte`
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), fmt.Sprintf(want, n+2)) || bad.Fields != nil {
		t.Errorf("the row with a NUL: %+v, err %v; want %q", bad.Fields, bad.Err, fmt.Sprintf(want, n+2))
	}
	if good.Err != nil || good.Fields[1] != "Grace" {
		t.Errorf("the row after it: %+v, %v", good.Fields, good.Err)
	}
}

// TestOpenZeroByteSheet: a sheet of 0 bytes (an export that failed or
// was cut short before its first line) was "the sheet is empty: it has
// no header row", said of a file that was never written; it says so,
// and what to do. A file of blank lines keeps the message it had.
func TestOpenZeroByteSheet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct{ content, want string }{
		"leads.csv":  {"", "leads.csv: the sheet is empty (0 bytes): it has no header row; an export that failed or was cut short leaves such a file: export it again"},
		"leads.xlsx": {"", "leads.xlsx: the sheet is empty (0 bytes)"},
		"blank.csv":  {"\r\n\r\n", "blank.csv: the sheet is empty: it has no header row"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !IsEmpty(err) {
			t.Errorf("Open(%s) = %v; want an empty sheet's error holding %q", name, err, tc.want)
		}
	}
}
