package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

// benchWorkbookRows is the size of the workbook BenchmarkWorkbookRead
// reads: a large CRM export saved as .xlsx.
const benchWorkbookRows = 100_000

// BenchmarkWorkbookRead reads a generated 100,000-row workbook (.xlsx, the
// phone numbers stored as numbers, names and e-mails as text): rows/s, and
// the peak heap in use while reading.
func BenchmarkWorkbookRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "contacts.xlsx")
	writeBenchWorkbook(b, path, benchWorkbookRows)
	benchReadSheet(b, path, benchWorkbookRows)
}

func writeBenchWorkbook(b *testing.B, path string, rows int) {
	b.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		b.Fatal(err)
	}
	if err := sw.SetRow("A1", []any{"First Name", "Last Name", "Phone", "Email", "Contact Id"}); err != nil {
		b.Fatal(err)
	}
	for i := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		row := []any{"Ada", "Lovelace", 14155550000 + int64(i%10000), "ada@example.com", "c-" + string(rune('a'+i%26))}
		if err := sw.SetRow(cell, row); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		b.Fatal(err)
	}
}

// writeSignalsWorkbook writes a workbook of rows contacts with distinct
// numbers (stored as numbers, as Excel keeps them), a "Do Not Call"
// column that says 1 on one row in fifty and a "Consent Date" column
// that says revoked on another in fifty and a date on the others, and
// beside it a campaign file that maps both columns, and returns the
// campaign file's path.
func writeSignalsWorkbook(tb testing.TB, dir string, rows int) string {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		tb.Fatal(err)
	}
	if err := sw.SetRow("A1", []any{"First Name", "Last Name", "Phone", "Email", "Do Not Call", "Consent Date"}); err != nil {
		tb.Fatal(err)
	}
	for i := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		dnc, consent := "", "2024-03-05"
		switch i % 50 {
		case 7:
			dnc = "1"
		case 31:
			consent = "revoked"
		}
		row := []any{"Ada", "Lovelace", 12125550000 + int64(i%10000) + int64(i/10000)*10_000_000, fmt.Sprintf("ada%d@example.com", i), dnc, consent}
		if err := sw.SetRow(cell, row); err != nil {
			tb.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.SaveAs(filepath.Join(dir, "contacts.xlsx")); err != nil {
		tb.Fatal(err)
	}
	yml := `name: workbook
agents:
  - name: Bench
    prompt: hello
sheets:
  - file: contacts.xlsx
    agent: Bench
    fields: {phone_number: Phone, first_name: First Name, last_name: Last Name, email: Email}
region: US
do_not_call: {column: Do Not Call}
consent: {column: Consent Date, required: true}
hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}
`
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkPlanWorkbook100k plans, offline, a campaign of one workbook
// of 100,000 rows with a do-not-call and a consent column: the pass for
// those columns and the contacts' share one unpacking of the workbook.
// unpacked is how many times it was unpacked (1).
func BenchmarkPlanWorkbook100k(b *testing.B) {
	path := writeSignalsWorkbook(b, b.TempDir(), benchWorkbookRows)
	unpacked := 0
	b.ResetTimer()
	for range b.N {
		f, err := Load(path, LoadOptions{Offline: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := planLoaded(context.Background(), f)
		if err != nil {
			b.Fatal(err)
		}
		if p.Totals.Rows != benchWorkbookRows {
			b.Fatalf("plan counted %+v", p.Totals)
		}
		unpacked = f.workbooks.Unpacked()
	}
	b.ReportMetric(float64(b.N*benchWorkbookRows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(unpacked), "unpacked")
}
