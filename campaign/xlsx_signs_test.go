package campaign

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/xuri/excelize/v2"
)

// signsWorkbook is a workbook of the contacts dtPhone(0) to dtPhone(n-1),
// in rows 2 to n+1 under the header Phone, First Name, Notes, Do Not
// Call, as a CRM's export writes one; edit changes it before it is saved.
func signsWorkbook(t *testing.T, n int, edit func(f *excelize.File)) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	set := func(cell string, v any) {
		t.Helper()
		if err := f.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range []string{"Phone", "First Name", "Notes", "Do Not Call"} {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		set(cell, h)
	}
	for i := range n {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		set(cell, dtPhone(i))
		cell, _ = excelize.CoordinatesToCellName(2, i+2)
		set(cell, "Name")
	}
	edit(f)
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// signsCampaign is dtCampaign reading leads.xlsx, its Do Not Call column
// mapped.
func signsCampaign() string {
	return strings.Replace(dtCampaign(1000, 2, "do_not_call: {column: Do Not Call}\n"), "file: leads.csv", "file: leads.xlsx", 1)
}

// TestWorkbookFormulaNeverComputedCallsNobody: a workbook written by a
// program (excelize here) whose mapped Do Not Call column holds a formula
// it never computed cannot be read: the checks of the sheets that plan
// and run make first refuse it, naming the file, worksheet and cell, the
// pass over the do-not-call column fails, and no contact of it is to
// call. Saved with its value, as Excel saves it, the formula reads, and
// the row it flags is not called.
func TestWorkbookFormulaNeverComputedCallsNobody(t *testing.T) {
	book := signsWorkbook(t, 6, func(f *excelize.File) {
		if err := f.SetCellFormula("Sheet1", "D5", `IF(C5="dnc",TRUE,FALSE)`); err != nil {
			t.Fatal(err)
		}
	})
	f, err := dncCampaign(t, map[string]string{"leads.xlsx": book}, "do_not_call: {column: Do Not Call}\n", "")
	want := `leads.xlsx row 5: worksheet "Sheet1", cell D5: it holds a formula whose value was never computed (the file was written by a program, not saved by Excel): open it in Excel or LibreOffice and save it, then run again`
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckSheets: %v; want a *FileError containing %q", err, want)
	}
	if _, err := f.LoadSuppression(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("LoadSuppression: %v; want %q", err, want)
	}
	contacts := 0
	err = f.NewContactReader(nil).Each(context.Background(), func(c *Contact) error {
		contacts++
		return nil
	})
	if err == nil || contacts != 0 {
		t.Errorf("Each: %d contacts, %v; want none and the error", contacts, err)
	}

	// The same formula with its value saved (TRUE) reads.
	book = signsWorkbook(t, 6, func(f *excelize.File) {
		f.SetCellBool("Sheet1", "D5", true)
		if err := f.SetCellFormula("Sheet1", "D5", `IF(C5="dnc",TRUE,FALSE)`); err != nil {
			t.Fatal(err)
		}
	})
	e := newDtEnv(t, sandbox.Options{}, signsCampaign(), map[string]string{"leads.xlsx": book})
	if _, err := e.run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	placed := dtPlaced(e.srv)
	for i := range 6 {
		if want := i != 3; (placed[dtPhone(i)] == 1) != want {
			t.Errorf("row %d (%s) placed %d times; want called: %v", i+2, dtPhone(i), placed[dtPhone(i)], want)
		}
	}
}

// TestWorkbookMergedDoNotCall: a "Yes" merged down a mapped Do Not Call
// column (D2:D4) keeps each row it covers from being called, and so does
// one merged across from the Notes column beside it (C6:D6); a title
// merged across the row above the header, a range past the last row (its
// "Yes" a footer) and one right of the header's columns change nothing:
// everyone else is called once.
func TestWorkbookMergedDoNotCall(t *testing.T) {
	book := signsWorkbook(t, 8, func(f *excelize.File) {
		f.SetCellValue("Sheet1", "D2", "Yes")
		f.SetCellValue("Sheet1", "C6", "Yes")
		f.SetCellValue("Sheet1", "A20", "Yes")
		for _, r := range [][2]string{{"D2", "D4"}, {"C6", "D6"}, {"F8", "G9"}, {"A20", "D22"}} {
			if err := f.MergeCell("Sheet1", r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		// A title above the header, merged across it.
		if err := f.InsertRows("Sheet1", 1, 1); err != nil {
			t.Fatal(err)
		}
		f.SetCellValue("Sheet1", "A1", "Call list")
		if err := f.MergeCell("Sheet1", "A1", "D1"); err != nil {
			t.Fatal(err)
		}
	})
	e := newDtEnv(t, sandbox.Options{}, signsCampaign(), map[string]string{"leads.xlsx": book})
	if _, err := e.run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	placed := dtPlaced(e.srv)
	for i := range 8 {
		// Rows 2-4 and 6 before the title was put above them.
		if want := i != 0 && i != 1 && i != 2 && i != 4; placed[dtPhone(i)] != map[bool]int{true: 1}[want] {
			t.Errorf("contact %d (%s) placed %d times; want called: %v", i, dtPhone(i), placed[dtPhone(i)], want)
		}
	}
	if len(placed) != 4 {
		t.Errorf("placed %v; want 4 numbers", placed)
	}
}
