package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// TestSheetsAsExcelWritesThem: a workbook (.xlsx), Excel's "Unicode Text"
// (UTF-16 with a byte order mark, tab or comma separated), a CSV in
// the Windows code page with encoding:, and Excel for Mac's CSV files
// (lines ended by a bare CR; Mac Roman with encoding:, or UTF-8 with its
// mark) are planned with exact counts and
// run against the sandbox, whose ledger shows every name spelled as in
// the sheet (the form fields go out in UTF-8) and everyone called once.
func TestSheetsAsExcelWritesThem(t *testing.T) {
	contacts := e2ePhones(20)
	contacts[0].First = "Jürgen Müller"
	contacts[1].First = "Zoë Ørsted"
	header := []string{"Contact Id", "First Name", "Phone", "Email"}
	row := func(c e2eContact) []string {
		return []string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"}
	}
	text := func(delim string) string {
		var b strings.Builder
		b.WriteString(strings.Join(header, delim) + "\r\n")
		for _, c := range contacts {
			b.WriteString(strings.Join(row(c), delim) + "\r\n")
		}
		return b.String()
	}
	utf16 := func(s string) []byte {
		b, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(b)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().String(text(";"))
	if err != nil {
		t.Fatal(err)
	}
	// Excel for Mac ends lines with a bare CR, and writes "CSV
	// (Macintosh)" in Mac Roman.
	macText := strings.ReplaceAll(text(","), "\r\n", "\r")
	macRoman, err := charmap.Macintosh.NewEncoder().String(macText)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, settings string
		write                func(path string)
	}{
		{name: "xlsx", file: "contacts.xlsx", write: func(path string) { writeContactsWorkbook(t, path, header, contacts, row) }},
		{name: "xlsx as Apache POI writes it", file: "contacts.xlsx", write: func(path string) {
			// Every number stored as a number cell, its digits alone.
			writeContactsWorkbook(t, path, header, contacts, func(c e2eContact) []string {
				r := row(c)
				r[2] = strings.TrimPrefix(c.E164, "+")
				return r
			})
			javaNumbers(t, path)
		}},
		{name: "xlsx worksheet", file: "contacts.xlsx", settings: "    worksheet: Contacts\n", write: func(path string) {
			writeContactsWorkbook(t, path, header, contacts, row, "Notes")
		}},
		{name: "UTF-16 tabs", file: "contacts.txt", write: func(path string) { writeFile(t, path, utf16(text("\t"))) }},
		{name: "UTF-16 commas", file: "contacts.csv", write: func(path string) { writeFile(t, path, utf16(text(","))) }},
		{name: "windows-1252", file: "contacts.csv", settings: "    encoding: windows-1252\n", write: func(path string) { writeFile(t, path, []byte(cp1252)) }},
		{name: "Excel for Mac CSV (Macintosh)", file: "contacts.csv", settings: "    encoding: macintosh\n", write: func(path string) { writeFile(t, path, []byte(macRoman)) }},
		{name: "Excel for Mac CSV UTF-8", file: "contacts.csv", write: func(path string) { writeFile(t, path, []byte("\ufeff"+macText)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 200, concurrency: 4})
			e.t = t
			if err := os.Remove(filepath.Join(e.dir, "contacts.csv")); err != nil {
				t.Fatal(err)
			}
			tt.write(filepath.Join(e.dir, tt.file))
			yaml, err := os.ReadFile(e.path)
			if err != nil {
				t.Fatal(err)
			}
			y := strings.Replace(string(yaml), "  - file: contacts.csv\n", "  - file: "+tt.file+"\n"+tt.settings, 1)
			writeFile(t, e.path, []byte(y))

			p := e.checkPlanAllValid()
			if p.Totals.ToCall != len(contacts) {
				t.Errorf("plan: %d to call, want %d", p.Totals.ToCall, len(contacts))
			}
			if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
				t.Fatalf("run: %s", res)
			}
			l := e.ledger() // checks each call's fields against the sheet's, names included
			l.checkNobodyTwice(t)
			if n := l.totalPlaced(); n != len(contacts) {
				t.Errorf("the sandbox placed %d calls, want %d", n, len(contacts))
			}
			for _, name := range []string{"Jürgen Müller", "Zoë Ørsted"} {
				found := false
				for _, c := range l.calls {
					found = found || c.Form.Get("first_name") == name
				}
				if !found {
					t.Errorf("no call carried first_name %q", name)
				}
			}
		})
	}
}

// writeContactsWorkbook writes the contacts as a workbook whose first
// worksheet is Contacts (or, with before, other worksheets first):
// numbers of bare digits stored as number cells, as Excel keeps them, one
// of them as a formula with its cached value.
func writeContactsWorkbook(t *testing.T, path string, header []string, contacts []e2eContact, row func(e2eContact) []string, before ...string) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	first := "Contacts"
	if len(before) > 0 {
		first = before[0]
	}
	if err := f.SetSheetName("Sheet1", first); err != nil {
		t.Fatal(err)
	}
	if len(before) > 0 {
		if err := f.SetCellValue(first, "A1", "Phone"); err != nil {
			t.Fatal(err)
		}
		if err := f.SetCellValue(first, "A2", "+14155550999"); err != nil { // never called: not the worksheet named
			t.Fatal(err)
		}
		if _, err := f.NewSheet("Contacts"); err != nil {
			t.Fatal(err)
		}
	}
	put := func(col, r int, v any) {
		cell, _ := excelize.CoordinatesToCellName(col, r)
		if err := f.SetCellValue("Contacts", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range header {
		put(i+1, 1, h)
	}
	formula := false
	for r, c := range contacts {
		for col, v := range row(c) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && col == 2 {
				put(col+1, r+2, n)
				if !formula {
					cell, _ := excelize.CoordinatesToCellName(col+1, r+2)
					if err := f.SetCellFormula("Contacts", cell, "="+strconv.FormatInt(n-1, 10)+"+1"); err != nil {
						t.Fatal(err)
					}
					formula = true
				}
				continue
			}
			put(col+1, r+2, v)
		}
	}
	if !formula {
		t.Fatal("test bug: no phone number of bare digits to store as a number")
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}

// javaNumbers rewrites the number cells of the workbook at path (those
// of no type, not a formula's text) as Apache POI (behind Salesforce's,
// HubSpot's and Zoho's exports) stores them, Java's Double.toString:
// 14155550100 as 1.41555501E10.
func javaNumbers(t *testing.T, path string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	rewrote := 0
	for _, f := range zr.File {
		b := readZipFile(t, f)
		if strings.HasPrefix(f.Name, "xl/worksheets/") {
			b = regexp.MustCompile(`"><v>\d{8,}</v>`).ReplaceAllFunc(b, func(m []byte) []byte {
				d := string(m[5 : len(m)-4])
				mantissa := strings.TrimRight(d[1:], "0")
				if mantissa == "" {
					mantissa = "0"
				}
				rewrote++
				return []byte(fmt.Sprintf(`"><v>%c.%sE%d</v>`, d[0], mantissa, len(d)-1))
			})
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	zr.Close()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if rewrote == 0 {
		t.Fatal("test bug: no number cell to write as Java does")
	}
	writeFile(t, path, buf.Bytes())
}

func readZipFile(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInitProposesTheCodePage: init drafts a campaign file for a sheet
// in the Windows code page with encoding: windows-1252, and for Excel for
// Mac's "CSV (Macintosh)" (Mac Roman, lines ended by a bare CR) with
// encoding: macintosh, and the file it writes plans (once its prompt is
// written) with every row valid.
func TestInitProposesTheCodePage(t *testing.T) {
	for _, tt := range []struct {
		enc, region, text string
		charmap           *charmap.Charmap
	}{
		{"windows-1252", "DE", "Vorname;Nachname;Telefon\r\nJürgen;Müller;+4915112345678\r\nZoë;Ørsted;+4915112345679\r\n", charmap.Windows1252},
		{"macintosh", "FR", "Prénom,Nom,Téléphone\rJürgen,Müller,06 12 34 56 78\rFrançois,Hervé,+33612345679\rZoë,Ørsted,06 12 34 56 70\r", charmap.Macintosh},
	} {
		t.Run(tt.enc, func(t *testing.T) {
			dir := t.TempDir()
			sheetPath := filepath.Join(dir, "kontakte.csv")
			text, err := tt.charmap.NewEncoder().String(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, sheetPath, []byte(text))
			var out strings.Builder
			if err := initCampaign(t.Context(), nolog, initOptions{sheet: sheetPath, agent: "Berlin", region: tt.region}, &out, io.Discard); err != nil {
				t.Fatalf("init: %v", err)
			}
			if !strings.Contains(out.String(), "encoding: "+tt.enc) {
				t.Errorf("init did not say it chose the code page:\n%s", out.String())
			}
			yamlPath := filepath.Join(dir, "campaign.yaml")
			written, err := os.ReadFile(yamlPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(written), "\n    encoding: "+tt.enc) {
				t.Fatalf("campaign.yaml has no encoding:\n%s", written)
			}
			y := strings.Replace(string(written), `prompt: "TODO: write the agent's prompt"`, `prompt: "You call to say hello. A test; nobody is phoned."`, 1)
			writeFile(t, yamlPath, []byte(y))
			if code := runApp(t, "plan", "--offline", "--strict", yamlPath); code != 0 {
				t.Errorf("plan --offline --strict of init's file: exit %d\n%s", code, y)
			}
		})
	}
}
