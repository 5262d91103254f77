package campaign

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/xuri/excelize/v2"
)

// storedWorkbook returns a workbook of a header and rows, its parts
// stored uncompressed, so that a cell changed from 0 to 1 leaves the
// file the same size.
func storedWorkbook(t *testing.T, rows [][]any) []byte {
	t.Helper()
	x := excelize.NewFile()
	defer x.Close()
	for r, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, r+1)
		if err := x.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	packed, err := x.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(packed.Bytes()), int64(packed.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, zf := range zr.File {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Store, Modified: zf.Modified})
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestSpoolWorkbookChangedUnseen: a workbook whose do-not-call cell
// changed after the pass over its signal columns, its size and time the
// same, is read as it is now: its row is not called, with the records
// the pass kept or without them.
func TestSpoolWorkbookChangedUnseen(t *testing.T) {
	header := []any{"Name", "Phone", "DNC", "Consent"}
	book := func(bobDNC int) []byte {
		return storedWorkbook(t, [][]any{header,
			{"Ann", "+14155550111", 0, "2024-03-05"},
			{"Bob", "+14155550112", bobDNC, "2024-03-05"},
			{"Cy", "+14155550113", 0, "2024-03-05"},
		})
	}
	before, after := book(0), book(1)
	if len(before) != len(after) || bytes.Equal(before, after) {
		t.Fatalf("the workbooks are %d and %d bytes, equal %v: want the same size, not the same bytes", len(before), len(after), bytes.Equal(before, after))
	}
	f, err := dncCampaign(t, map[string]string{"a.xlsx": string(before)}, "do_not_call: {column: DNC}\nconsent: {column: Consent, required: true}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	path := f.Path("a.xlsx")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	rewriteUnseen(t, path, fi, string(after), false)
	kept := checkKeptAsParsed(t, f, sup, func(c Contact) bool { return c.Phone == "+14155550112" })
	if len(kept) != 3 {
		t.Errorf("read %d contacts, want 3: %+v", len(kept), kept)
	}
}
