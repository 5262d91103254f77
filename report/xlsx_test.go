package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// writeBoth writes rows to report.csv and report.xlsx in dir, with the
// extra columns given.
func writeBoth(t *testing.T, dir string, rows []Row, extra ...string) {
	t.Helper()
	cw, err := NewCSVWriter(filepath.Join(dir, "report.csv"), Columns{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	xw, err := NewXLSXWriter(filepath.Join(dir, "report.xlsx"), Columns{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := cw.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := xw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := xw.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestXLSXKeepsNumbersAsText writes the same rows to report.csv and
// report.xlsx and reads the workbook back with excelize: phone numbers and
// ids are text cells equal to the CSV's, the header is frozen and filtered.
func TestXLSXKeepsNumbersAsText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := []Row{
		{Sheet: "leads.csv", Row: 2, PhoneNumber: "+14155550132", FirstName: "Ada", GHLContactID: "000123456789012345678", Status: "sent", HTTPStatus: 200, Attempts: 1, Agent: "A", AgentID: "1234567890123456"},
		{Sheet: "leads.csv", Row: 3, PhoneNumber: "+442079460123", FirstName: "=HYPERLINK(\"x\")", Status: "uncertain", Reason: "no answer", Attempts: 1, Agent: "A"},
		{Sheet: "leads.csv", Row: 4, PhoneNumber: "1.5551234567E+10", Status: "invalid", Reason: "damaged by Excel", Agent: "A"},
	}
	writeBoth(t, dir, rows)
	got, err := ReadXLSX(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || strings.Join(got[0], ",") != strings.Join(csvHeader(), ",") {
		t.Fatalf("workbook rows: %q", got)
	}
	csvText, _ := os.ReadFile(filepath.Join(dir, "report.csv"))
	for i, r := range rows {
		x := got[i+1]
		if x[2] != r.PhoneNumber || x[6] != r.GHLContactID || x[14] != r.AgentID {
			t.Errorf("row %d: phone %q id %q agent id %q, want %q %q %q", i, x[2], x[6], x[14], r.PhoneNumber, r.GHLContactID, r.AgentID)
		}
		if r.PhoneNumber[0] == '+' && !strings.Contains(string(csvText), ","+r.PhoneNumber+",") {
			t.Errorf("row %d: the CSV does not hold %s as written", i, r.PhoneNumber)
		}
	}
	if got[2][4] != `=HYPERLINK("x")` {
		t.Errorf("a formula-looking name: %q", got[2][4])
	}
	book, err := excelize.OpenFile(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	for _, cell := range []string{"C2", "C3", "G2", "O2", "E3"} {
		typ, err := book.GetCellType(xlsxSheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
			t.Errorf("cell %s has type %v, want text", cell, typ)
		}
		if f, _ := book.GetCellFormula(xlsxSheet, cell); f != "" {
			t.Errorf("cell %s holds a formula %q", cell, f)
		}
	}
	panes, err := book.GetPanes(xlsxSheet)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("header not frozen: %+v %v", panes, err)
	}
	tables, err := book.GetTables(xlsxSheet)
	if err != nil || len(tables) != 1 || tables[0].Range != "A1:S4" {
		t.Errorf("no filterable table over the rows: %+v %v", tables, err)
	}
}

func TestXLSXAbortKeepsThePreviousReport(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.xlsx")
	os.WriteFile(path, []byte("previous"), 0o644)
	w, err := NewXLSXWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Row{Sheet: "s", Row: 2, Status: "sent"})
	w.Abort()
	if b, _ := os.ReadFile(path); string(b) != "previous" {
		t.Error("abort replaced the report")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestXLSXTooLargeIsDroppedAndTheOldOneRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.xlsx")
	os.WriteFile(path, []byte("an older, smaller report"), 0o644)
	w, err := NewXLSXWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxXLSXRows + 1 {
		if err := w.Write(Row{Sheet: "s", Row: i + 2, PhoneNumber: "+14155550132", Status: "sent"}); err != nil {
			t.Fatal(err)
		}
	}
	if !w.TooLarge() {
		t.Fatal("not too large")
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an out-of-date report.xlsx is left beside a larger report.csv (%v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestExtraColumns: the fields an account defines beyond the seven are
// columns after local_presence_number in both report.csv and report.xlsx,
// with the rows' values, escaped like the other cells; a row without
// them has empty cells there.
func TestExtraColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := []string{"city", "phone_number1", "zip_code"}
	rows := []Row{
		{Sheet: "leads.csv", Row: 2, PhoneNumber: "+14155550132", LocalPresenceNumber: "No", Extra: []string{"Springfield", "+14155550199", "=1+1"},
			Status: "sent", HTTPStatus: 200, Attempts: 1, Agent: "A", AgentID: "ag_1"},
		{Sheet: "leads.csv", Row: 3, PhoneNumber: "bogus", Status: "invalid", Reason: "not a number", Agent: "A"},
	}
	writeBoth(t, dir, rows, extra...)
	wantHeader := "sheet,row,phone_number,email,first_name,last_name,ghl_contact_id,override_agent_id,local_presence_number," +
		"city,phone_number1,zip_code,status,reason,http_status,attempts,agent,agent_id,first_attempt_at,last_attempt_at,response,consent"
	f, err := os.Open(filepath.Join(dir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	book, err := ReadXLSX(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	wantCells := [][]string{
		{"No", "Springfield", "+14155550199", "'=1+1", "sent"}, // csv: escaped
		{"", "", "", "", "invalid"},
	}
	for name, got := range map[string][][]string{"report.csv": recs, "report.xlsx": book} {
		if len(got) != 3 || strings.Join(got[0], ",") != wantHeader {
			t.Fatalf("%s: %d rows, header %q, want %q", name, len(got), got[0], wantHeader)
		}
		for i, want := range wantCells {
			if name == "report.xlsx" && i == 0 {
				want = slices.Clone(want)
				want[3] = "=1+1" // a text cell: never run as a formula, shown as written
			}
			if cells := got[i+1][8:13]; !slices.Equal(cells, want) {
				t.Errorf("%s row %d: cells %q, want %q", name, i+1, cells, want)
			}
		}
	}
	x, err := excelize.OpenFile(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if tables, err := x.GetTables(xlsxSheet); err != nil || len(tables) != 1 || tables[0].Range != "A1:V3" {
		t.Errorf("the table does not cover the extra columns: %+v %v", tables, err)
	}
	// More cells than columns is a mistake of the caller, not a shifted row.
	cw, err := NewCSVWriter(filepath.Join(dir, "more.csv"), Columns{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Abort()
	xw, err := NewXLSXWriter(filepath.Join(dir, "more.xlsx"), Columns{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	defer xw.Abort()
	four := Row{Extra: []string{"a", "b", "c", "d"}}
	if err := xw.Write(four); err == nil || !strings.Contains(err.Error(), "4 extra cells for 3 extra columns") {
		t.Errorf("XLSXWriter with four extra cells for three columns: %v", err)
	}
	cw.Write(four) //nolint:errcheck // the error is sticky: Commit reports it
	if err := cw.Commit(); err == nil || !strings.Contains(err.Error(), "4 extra cells for 3 extra columns") {
		t.Errorf("CSVWriter with four extra cells for three columns: %v", err)
	}
}

// TooLarge reports whether the report had more than MaxXLSXRows rows, so
// that no workbook is written. Only this package's tests ask.
func (w *XLSXWriter) TooLarge() bool { return w.tooLarge }

// TestXLSXSaysWhereACellIsCut: a cell holds at most 32,767 characters in
// Excel, and excelize cuts a longer value there without a word, so a
// 100,000-character first name (or service answer) read in the workbook
// as if it were whole. The cut cell says it is cut, how long the value
// is, and that report.csv holds it whole; a cell at the limit is kept.
func TestXLSXSaysWhereACellIsCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("é", 100_000)
	exact := strings.Repeat("a", excelize.TotalCellChars)
	writeBoth(t, dir, []Row{
		{Sheet: "leads.csv", Row: 2, PhoneNumber: "+14155550132", FirstName: long, LastName: exact, Status: "sent", Agent: "A"},
	})
	got, err := ReadXLSX(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	first, last := got[1][4], got[1][5]
	if last != exact {
		t.Errorf("a cell of exactly %d characters was changed (%d characters now)", excelize.TotalCellChars, len([]rune(last)))
	}
	if n := len([]rune(first)); n > excelize.TotalCellChars {
		t.Errorf("the cut cell holds %d characters, more than Excel's %d", n, excelize.TotalCellChars)
	}
	if !strings.HasPrefix(first, strings.Repeat("é", 1000)) || !strings.Contains(first, "100,000 characters") || !strings.Contains(first, "report.csv") {
		t.Errorf("the cut cell does not say it is cut, its length and where it is whole; it ends %q", first[max(0, len(first)-200):])
	}
	csvText, _ := os.ReadFile(filepath.Join(dir, "report.csv"))
	if !strings.Contains(string(csvText), long) {
		t.Error("report.csv does not hold the long value whole")
	}
}
