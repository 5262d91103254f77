package campaign

import (
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
