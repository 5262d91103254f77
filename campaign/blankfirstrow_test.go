package campaign

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// TestBlankFirstRowCSVAndWorkbook: a sheet whose first row was left
// empty above its header. Excel saves a worksheet as CSV with every row
// of its used range padded with delimiters to its width, an empty row
// as ",," (as the hex dump in
// https://mrexcel.com/board/threads/vba-edit-hex-of-existing-csv-style-file.1140952
// shows for tabs). The CSV was refused, "the first row is empty", while
// the same rows as an .xlsx workbook were read, the blank row skipped
// without a word. Both are now read alike: the blank row skipped and
// noted, the header row 2, the rows numbered as the spreadsheet shows
// them (Mia's number too short, row 4 in both). Nothing was lost by
// skipping it: it holds nothing, and the columns are still found by
// the names in the header.
func TestBlankFirstRowCSVAndWorkbook(t *testing.T) {
	dir := t.TempDir()
	dtWrite(t, filepath.Join(dir, "leads.csv"), ",,\r\nPhone,First Name,Email\r\n+14155550100,Ada,ada@example.com\r\n555-1234,Mia,\r\n")
	book := excelize.NewFile()
	for cell, v := range map[string]string{
		"A2": "Phone", "B2": "First Name", "C2": "Email",
		"A3": "+14155550123", "B3": "Grace", "C3": "grace@example.com",
		"A4": "555-1234", "B4": "Mia",
	} {
		if err := book.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := book.SaveAs(filepath.Join(dir, "leads.xlsx")); err != nil {
		t.Fatal(err)
	}
	book.Close()
	yaml := `name: blank-first-row
agents:
  - name: Alpha
    prompt: Say hello.
sheets:
  - file: leads.csv
    agent: Alpha
    fields: {phone_number: Phone, first_name: First Name}
  - file: leads.xlsx
    agent: Alpha
    fields: {phone_number: Phone, first_name: First Name}
region: US
pace: {per_second: 1, concurrency: 1}
`
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, yaml)
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatalf("CheckSheets: %v", err)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Now: time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Sheets {
		if want := (Counts{Rows: 2, ToCall: 1, Invalid: 1}); s.Counts != want || s.Error != "" {
			t.Errorf("%s: %+v %s; want %+v", s.File, s.Counts, s.Error, want)
		}
	}
	var rows []int
	for _, p := range plan.Problems {
		rows = append(rows, p.Row)
	}
	if want := []int{4, 4}; !reflect.DeepEqual(rows, want) {
		t.Errorf("invalid rows %v; want %v (the rows a spreadsheet shows)", rows, want)
	}
	for _, name := range []string{"leads.csv", "leads.xlsx"} {
		n := f.Path(name) + ": row 1 is blank, above the header, and skipped: the header is row 2"
		if c := count(plan.Warnings, n); c != 1 {
			t.Errorf("note %q is among the warnings %d times; warnings:\n%s", n, c, strings.Join(plan.Warnings, "\n"))
		}
	}
}

// TestWorksheetOfATextFileRefused: a sheet that names a worksheet but
// whose file is a text file (the CSV beside the workbook meant, say)
// was read whole, the worksheet key ignored, and its rows called; a
// suppression file so named is refused. The sheet is refused the same
// way before any call, naming the key and the file.
func TestWorksheetOfATextFileRefused(t *testing.T) {
	dir := t.TempDir()
	dtWrite(t, filepath.Join(dir, "leads.csv"), "Phone,First Name\n+14155550132,Ada\n")
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, `name: worksheet-of-a-csv
agents:
  - name: Alpha
    prompt: Say hello.
sheets:
  - file: leads.csv
    worksheet: Contacts
    agent: Alpha
    fields: {phone_number: Phone, first_name: First Name}
region: US
`)
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckSheets()
	want := `campaign.yaml line 7, sheets[0].worksheet: sheet leads.csv names the worksheet "Contacts", but it is a text file, not an .xlsx workbook`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckSheets: %v; want an error holding %q", err, want)
	}
}
