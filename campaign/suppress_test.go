package campaign

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/xuri/excelize/v2"
)

// suppressCampaign is a campaign of six contacts, rows 2 to 7 of s.csv,
// with the suppress: list given.
func suppressCampaign(suppress string) map[string]string {
	return map[string]string{
		"c.yaml": "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}]\nsuppress: " + suppress + "\n",
		"s.csv":  "Phone\n+14155550132\n+14155550133\n+14155550134\n+14155550135\n+14155550136\n+14155550137\n",
	}
}

func suppressedRows(cs []Contact) []int {
	var rows []int
	for _, c := range cs {
		if c.Status == Suppressed {
			rows = append(rows, c.Row)
		}
	}
	return rows
}

// TestSuppressionFilesAsTheyAre: the do-not-call lists people keep and
// CRMs export each block the numbers they hold: without a header, of one
// line, with the record id in the first column, with the column named.
func TestSuppressionFilesAsTheyAre(t *testing.T) {
	for _, tc := range []struct {
		name, suppress string
		files          map[string]string
		want           string
	}{
		{"no header", "[dnc.csv]", map[string]string{"dnc.csv": "+14155550132\n(415) 555-0133\n"}, "[2 3]"},
		{"one line", "[dnc.csv]", map[string]string{"dnc.csv": "4155550134\n"}, "[4]"},
		{"record id first", "[crm.csv]", map[string]string{"crm.csv": "Record ID,First Name,Phone Number,Do Not Call\n0035g00000XyZ01AAB,Ann,+1 415 555 0135,true\n0035g00000XyZ02AAB,Bo,+1 415 555 0136,true\n"}, "[5 6]"},
		{"column named", "[{file: crm.csv, column: Mobile}]", map[string]string{"crm.csv": "Id;Phone;Mobile\n1;+14155550199;+14155550137\n2;;\n"}, "[7]"},
		{"both forms", "[dnc.csv, {file: crm.csv, column: Phone}]", map[string]string{"dnc.csv": "Telefon\n+14155550132\n", "crm.csv": "Phone,Id\n+14155550133,9\n"}, "[2 3]"},
		{"Téléphone header", "[dnc.csv]", map[string]string{"dnc.csv": "Nom;Téléphone\nDupont;4155550134\nMartin;\n"}, "[4]"},
		{"Windows-1252 named", "[{file: dnc.csv, encoding: windows-1252}]", map[string]string{"dnc.csv": "Nom;T\xe9l\xe9phone\nM\xfcller;4155550134\n"}, "[4]"},
		{"UTF-16 with its mark", "[dnc.csv]", map[string]string{"dnc.csv": "\xff\xfe4\x001\x005\x005\x005\x005\x000\x001\x003\x004\x00\n\x00"}, "[4]"},
		{"lines ended by a bare CR", "[dnc.csv]", map[string]string{"dnc.csv": "Phone\r+14155550132\r(415) 555-0133\r"}, "[2 3]"},
		{"CSV (Macintosh): Mac Roman, CR", "[{file: dnc.csv, encoding: macintosh}]", map[string]string{"dnc.csv": "Nom,T\x8el\x8ephone\rFran\x8dois,4155550134\rH\x8erve,4155550135\r"}, "[4 5]"},
		{"a Salesforce do-not-call report: Phone and Mobile", "[sf.csv]", map[string]string{"sf.csv": salesforceDNC}, "[2 3 4 5]"},
		{"Phone and Mobile named", "[{file: sf.csv, columns: [Phone, Mobile]}]", map[string]string{"sf.csv": salesforceDNC}, "[2 3 4 5]"},
		{"Mobile named alone", "[{file: sf.csv, columns: [Mobile]}]", map[string]string{"sf.csv": salesforceDNC}, "[3 5]"},
		{"a Mobile column empty in the first rows", "[sf.csv]", map[string]string{"sf.csv": sparseMobile}, "[2 7]"},
		{"registry download: area code, number, no header", "[ftc.txt]", map[string]string{"ftc.txt": "415,5550132\r\n415,5550133\r\n"}, "[2 3]"},
		{"registry download with a header", "[state.csv]", map[string]string{"state.csv": "Area Code,Phone Number\n415,5550134\n415,555-0135\n"}, "[4 5]"},
		{"registry change list: area code, number, date, action", "[changes.txt]", map[string]string{"changes.txt": "415,5550136,2026-05-01,A\n415,5550137,2026-05-01,A\n"}, "[6 7]"},
		{"registry file with its number column named", "[{file: state.csv, column: PHONE}]", map[string]string{"state.csv": "NPA;PHONE;ADDED\n415;5550132;20260105\n(415);555 0133;20260105\n"}, "[2 3]"},
		{"registry file with its area code column named", "[{file: state.csv, column: NPA}]", map[string]string{"state.csv": "NPA;PHONE;ADDED\n415;5550132;20260105\n"}, "[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := suppressCampaign(tc.suppress)
			for k, v := range tc.files {
				files[k] = v
			}
			got := suppressedRows(judgeFiles(t, files))
			if got := fmt.Sprint(got); got != tc.want {
				t.Errorf("rows suppressed %v, want %s", got, tc.want)
			}
		})
	}
}

// salesforceDNC is a Salesforce report of contacts marked do not call,
// as exported: a number under Phone for some, under Mobile for others,
// both for one, and the report's footer.
const salesforceDNC = `"Contact ID","First Name","Last Name","Phone","Mobile","Email","Do Not Call"
"0035g00000XyZ01AAB","Ann","Lee","(415) 555-0132","","ann@example.com","1"
"0035g00000XyZ02AAB","Bo","Ng","","(415) 555-0133","bo@example.com","1"
"0035g00000XyZ03AAB","Cy","Ho","+1 415 555 0134","","cy@example.com","1"
"0035g00000XyZ04AAB","Di","Vo","(415) 555-0199","415.555.0135","di@example.com","1"

"Do Not Call Contacts"
"Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved."
`

// sparseMobile is a do-not-call export whose Mobile column is empty in
// every row the number columns are chosen from, and holds a number
// further down.
var sparseMobile = func() string {
	var b strings.Builder
	b.WriteString("Name,Phone,Mobile\nAnn,+14155550132,\n")
	for i := range 70 {
		fmt.Fprintf(&b, "Filler %d,+1212555%04d,\n", i, 1000+i)
	}
	b.WriteString("Bo,,+14155550137\n")
	return b.String()
}()

// TestSuppressionFromTheUKRegisters: the files TPS and CTPS send their
// subscribers, twelve characters a line, with a space between the
// national dialling code and the rest or without one (then padded with
// spaces), CRLF, no header, block the numbers of a UK campaign.
func TestSuppressionFromTheUKRegisters(t *testing.T) {
	files := map[string]string{
		"c.yaml":   "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}]\nregion: GB\nsuppress: [tps.txt, ctps.txt]\n",
		"s.csv":    "Phone\n020 7378 7244\n+44 1635 506160\n07860 338653\n0191 565 7153\n020 7946 0018\n",
		"tps.txt":  "0207 3787244\r\n01635 506160\r\n07860 338653\r\n",
		"ctps.txt": "01915657153 \r\n",
	}
	if got := fmt.Sprint(suppressedRows(judgeFiles(t, files))); got != "[2 3 4 5]" {
		t.Errorf("rows suppressed %v, want [2 3 4 5]", got)
	}
}

// TestSuppressionRowsThatDoNotRead: a row of a suppression file that
// cannot be read (more fields than the header) is listed with the
// entries that are no number, and a file most of whose rows cannot be
// read stops plan and run, as one whose entries are no numbers does.
func TestSuppressionRowsThatDoNotRead(t *testing.T) {
	files := suppressCampaign("[dnc.csv]")
	files["dnc.csv"] = "Phone\n+14155550132\n+14155550133,+14155550134\n+14155550135\n"
	contacts, sup := judgeFilesSuppressing(t, files)
	if got := fmt.Sprint(suppressedRows(contacts)); got != "[2 5]" {
		t.Errorf("rows suppressed %v, want [2 5]", got)
	}
	if sup.Ignored != 1 || len(sup.Problems) != 1 || sup.Problems[0].Row != 3 || !strings.Contains(sup.Problems[0].Message, "has 2 fields but the header has 1") {
		t.Errorf("problems %+v (ignored %d), want row 3's", sup.Problems, sup.Ignored)
	}

	dir := t.TempDir()
	for k, v := range suppressCampaign("[dnc.csv]") {
		os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "dnc.csv"), []byte("+14155550132\n+14155550133,x\n+14155550134,y\n"), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.LoadSuppression(context.Background())
	if err == nil || !strings.Contains(err.Error(), "2 of its 3 entries") || !strings.Contains(err.Error(), "row 2: has 2 fields but the header has 1") {
		t.Errorf("a file of unreadable rows: %v", err)
	}
}

// TestSuppressionFileThatDoesNotRead: a file most of whose entries are
// no number stops plan and run, naming the file, the column tried and two
// of its cells.
func TestSuppressionFileThatDoesNotRead(t *testing.T) {
	for name, tc := range map[string]struct{ suppress, file string }{
		"ids only":                 {"[crm.csv]", "Record ID,Name\n0035g00000XyZ01AAB,Ann\n0035g00000XyZ02AAB,Bo\n0035g00000XyZ03AAB,Cy\n"},
		"wrong column":             {"[{file: crm.csv, column: Name}]", "Name,Phone\nAnn,+14155550132\nBo,+14155550133\n"},
		"one of the columns named": {"[{file: crm.csv, columns: [Phone, Name]}]", "Name,Phone\nAnn,+14155550132\nBo,+14155550133\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for k, v := range suppressCampaign(tc.suppress) {
				os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644)
			}
			os.WriteFile(filepath.Join(dir, "crm.csv"), []byte(tc.file), 0o644)
			f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.LoadSuppression(context.Background())
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("LoadSuppression = %v, want a *FileError", err)
			}
			msg := err.Error()
			for _, want := range []string{"crm.csv", "do not read as phone numbers", "row 2:", "row 3:", "suppress[0]"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if !strings.Contains(msg, `column "Record ID"`) && !strings.Contains(msg, `column "Name"`) {
				t.Errorf("error %q does not name the column tried", msg)
			}
		})
	}
}

// TestSuppressionFileWithBlankLines: a do-not-call list of one column with
// a blank line in it loses no number after the blank line (the sheet
// reader's footer rule, one-field lines after a blank one, must not end
// a list of numbers), nor a first line the reader could take for a title.
func TestSuppressionFileWithBlankLines(t *testing.T) {
	files := suppressCampaign("[dnc.csv]")
	files["dnc.csv"] = "+14155550132\n\n+14155550133\n+14155550134\n\n\n+14155550135\n"
	if got := fmt.Sprint(suppressedRows(judgeFiles(t, files))); got != "[2 3 4 5]" {
		t.Errorf("rows suppressed %v, want [2 3 4 5]", got)
	}
	files["dnc.csv"] = "Do not call\n\nPhone\n+14155550136\n\n+14155550137\n"
	if got := fmt.Sprint(suppressedRows(judgeFiles(t, files))); got != "[6 7]" {
		t.Errorf("with a title: rows suppressed %v, want [6 7]", got)
	}
}

// TestSuppressColumnsKey: suppress: takes columns: beside column:, not
// both, and no empty or repeated name.
func TestSuppressColumnsKey(t *testing.T) {
	bad := strings.Replace(goodCampaign, "suppress: [dnc.csv]", "suppress: [{file: dnc.csv, column: Phone, columns: [Mobile]}, {file: dnc.csv, columns: [Phone, \" \", phone]}]", 1)
	if bad == goodCampaign {
		t.Fatal("test bug: goodCampaign has no suppress: [dnc.csv]")
	}
	expectProblems(t, problems(t, bad, LoadOptions{}),
		"suppress[0]: suppression file dnc.csv has both column: and columns:",
		"suppress[1].columns: suppression file dnc.csv lists an empty column name",
		`suppress[1].columns: suppression file dnc.csv lists the column "phone" twice`)
}

// TestSuppressionAreaCodeWhereSevenDigitsRead: where the campaign also
// calls a country whose numbers have seven digits (Iceland), the rest of
// a US number reads alone as one of them, and the file's area code
// column is still joined to it: the US number is suppressed.
func TestSuppressionAreaCodeWhereSevenDigitsRead(t *testing.T) {
	files := map[string]string{
		"c.yaml":  "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}, {file: is.csv, agent: A, region: IS, fields: {phone_number: Phone}}]\nsuppress: [ftc.txt]\n",
		"s.csv":   "Phone\n+14155550132\n+14155550133\n",
		"is.csv":  "Phone\n+3545550134\n",
		"ftc.txt": "415,5551234\n415,5550132\n",
	}
	if len(phone.Readings("5550132", []string{"US", "IS"})) == 0 {
		t.Skip("seven digits do not read as an Icelandic number: the case this test is about does not arise")
	}
	var suppressed []string
	for _, c := range judgeFiles(t, files) {
		if c.Status == Suppressed {
			suppressed = append(suppressed, c.Phone)
		}
	}
	if fmt.Sprint(suppressed) != "[+14155550132]" {
		t.Errorf("numbers suppressed %v, want [+14155550132]", suppressed)
	}
}

// TestReadNumbersBatchesInTextOrder: a list that mixes numbers of
// different lengths (German numbers of 10 to 13 digits, US and UK ones)
// comes out of ReadNumbers' batches each number once, as written, and
// every batch after the ones before it as text, as a database's index
// sorts them; a number sorts before the longer numbers it begins.
func TestReadNumbersBatchesInTextOrder(t *testing.T) {
	numbers := []string{"+4930123456", "+14155550132", "+442071234567", "+493012345678", "+4930901820", "+14155550100", "+4915112345678", "+447911123456", "+4930123456", "+12025550143"}
	dir := t.TempDir()
	path := filepath.Join(dir, "dnc.csv")
	if err := os.WriteFile(path, []byte("Phone\n"+strings.Join(numbers, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &File{Region: "US"}
	read, err := f.ReadNumbers(context.Background(), path, "")
	if err != nil || read.Ignored != 0 {
		t.Fatalf("ReadNumbers: %v (%d ignored: %v)", err, read.Ignored, read.Problems)
	}
	next := read.Batches(3)
	var got []string
	for b := next(); len(b) > 0; b = next() {
		if len(got) > 0 && b[0] <= got[len(got)-1] {
			t.Fatalf("batch %v after %v: not after it as text", b, got)
		}
		if !slices.IsSorted(b) {
			t.Fatalf("batch %v is not in text order", b)
		}
		got = append(got, b...)
	}
	want := slices.Clone(numbers)
	slices.Sort(want)
	if want = slices.Compact(want); !slices.Equal(got, want) {
		t.Fatalf("batches gave %v, want %v", got, want)
	}
	for _, k := range []uint64{0, 1, 10, 100, 4930123456, 493012345600, 999999999999999} {
		if back := fromTextKey(textKey(k)); back != k {
			t.Errorf("fromTextKey(textKey(%d)) = %d", k, back)
		}
	}
	if !(textKey(1) < textKey(10) && textKey(10) < textKey(2) && textKey(4930123456) < textKey(493012345600) && textKey(493012345600) < textKey(4931)) {
		t.Error("textKey does not sort as the numbers' text")
	}
}

// TestSuppressionFileWithABlankFirstRow: a do-not-call list without a
// header whose first row was left blank, saved from Excel (",," as in
// TestBlankFirstRowCSVAndWorkbook), was refused; it is read, and its
// first numbers, in row 2 where the reader finds its header, are
// suppressed and named by that row: the example of a cell of several
// numbers said "row 1", the blank row.
func TestSuppressionFileWithABlankFirstRow(t *testing.T) {
	files := suppressCampaign("[dnc.csv]")
	files["dnc.csv"] = ",\r\n\"+14155550132, +14155550133\",Ann\r\n+14155550134,Bo\r\n"
	contacts, sup := judgeFilesSuppressing(t, files)
	if got := fmt.Sprint(suppressedRows(contacts)); got != "[2 3 4]" {
		t.Errorf("rows suppressed %v, want [2 3 4]", got)
	}
	if !strings.HasPrefix(sup.Example, "dnc.csv row 2, ") {
		t.Errorf("example %q; want it to name dnc.csv row 2", sup.Example)
	}
}

// TestSuppressionFileColumnMissingIsNamedSo: a suppression file that
// lacks the column its entry names was "sheet dnc.csv has no column",
// a contact sheet's words, and a workbook's other tabs were offered "if
// the contacts are on another". The message names the suppression file
// and its numbers.
func TestSuppressionFileColumnMissingIsNamedSo(t *testing.T) {
	dir := t.TempDir()
	for k, v := range suppressCampaign("[{file: dnc.csv, column: Phone}, {file: dnc.xlsx, column: Phone}]") {
		dtWrite(t, filepath.Join(dir, k), v)
	}
	dtWrite(t, filepath.Join(dir, "dnc.csv"), "Number\n+14155550132\n")
	book := excelize.NewFile()
	if _, err := book.NewSheet("DNC"); err != nil {
		t.Fatal(err)
	}
	for cell, v := range map[string]string{"A1": "Exported 2026-11-29", "A1@DNC": "Phone", "A2@DNC": "+14155550133"} {
		sheetName, c := "Sheet1", cell
		if before, ok := strings.CutSuffix(cell, "@DNC"); ok {
			sheetName, c = "DNC", before
		}
		if err := book.SetCellValue(sheetName, c, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := book.SaveAs(filepath.Join(dir, "dnc.xlsx")); err != nil {
		t.Fatal(err)
	}
	book.Close()
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.LoadSuppression(context.Background())
	if err == nil {
		t.Fatal("LoadSuppression read a suppression file without the column it names")
	}
	msg := err.Error()
	for _, want := range []string{
		`suppress[0]: suppression file ` + filepath.Join(dir, "dnc.csv") + ` has no column "Phone" (columns: "Number")`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	dtWrite(t, filepath.Join(dir, "dnc.csv"), "Phone\n+14155550132\n")
	if _, err = f.LoadSuppression(context.Background()); err == nil {
		t.Fatal("LoadSuppression read a workbook whose worksheet lacks the column named")
	} else if want := `suppress[1]: suppression file ` + filepath.Join(dir, "dnc.xlsx") + ` has no column "Phone" (columns: "Exported 2026-11-29"); worksheet "Sheet1" was read; the workbook's tabs are "Sheet1", "DNC": if the numbers are on another, name it in the campaign file, worksheet: "DNC"`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if strings.Contains(msg+err.Error(), "sheet "+dir) {
		t.Errorf("errors %q and %q call the suppression file a sheet", msg, err)
	}
}

// TestSuppressionFileNotUTF8IsNamedSo: a suppression file in a legacy
// code page (a Windows export's Jos\xe9) stopped plan with "dnc.csv row
// 2: the sheet is not UTF-8 text"; it is the suppression file that is
// not, and the message says so, with its row and what to do.
func TestSuppressionFileNotUTF8IsNamedSo(t *testing.T) {
	dir := t.TempDir()
	for k, v := range suppressCampaign("[dnc.csv]") {
		dtWrite(t, filepath.Join(dir, k), v)
	}
	dtWrite(t, filepath.Join(dir, "dnc.csv"), "Phone,Name\n+14155550132,Jos\xe9\n")
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.LoadSuppression(context.Background())
	want := "dnc.csv row 2: the suppression file is not UTF-8 text (it was probably saved in another encoding)"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "suppress[0]") {
		t.Errorf("LoadSuppression: %v; want an error holding %q", err, want)
	}
}
