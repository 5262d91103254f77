package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestPlanWarnsOfAnEmptySuppressionFile: a suppression file that holds a
// header and no numbers (a CRM's do-not-call export that came out empty)
// suppressed nobody without a word: plan counted everyone to call and
// said nothing of the file. It now warns, naming the file.
func TestPlanWarnsOfAnEmptySuppressionFile(t *testing.T) {
	path := writeCampaign(t, goodCampaign)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "dnc.csv"), []byte("phone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Getenv: testEnv, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Suppress: sup})
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, w := range plan.Warnings {
		if strings.Contains(w, "dnc.csv") && strings.Contains(w, "no numbers") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning names the empty suppression file dnc.csv: %q", plan.Warnings)
	}
}

// TestEmptySuppressionFileIsNamedSo: a suppression file of 0 bytes (a
// do-not-call export that failed, or was cut short before its first
// line) stopped plan with "dnc.csv: the sheet is empty: it has no header
// row", as if it were a contact sheet, and said nothing of what to do.
// It still stops plan and run (it blocks nobody), and the message now
// names it as the suppression file it is, says why that matters and what
// to do. So do a file of blank lines and a workbook whose worksheet read
// is empty while another tab is not.
func TestEmptySuppressionFileIsNamedSo(t *testing.T) {
	emptyTab := func(t *testing.T, path string) {
		book := excelize.NewFile()
		defer book.Close()
		if _, err := book.NewSheet("DNC"); err != nil {
			t.Fatal(err)
		}
		if err := book.SetCellValue("DNC", "A1", "+14155550132"); err != nil {
			t.Fatal(err)
		}
		if err := book.SaveAs(path); err != nil {
			t.Fatal(err)
		}
	}
	// A workbook of one tab, left empty: no blank line is in it.
	oneEmptyTab := func(t *testing.T, path string) {
		book := excelize.NewFile()
		defer book.Close()
		if err := book.SaveAs(path); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, file string
		write      func(t *testing.T, path string)
		want       string
	}{
		{"0 bytes", "dnc.csv", func(t *testing.T, path string) { dtWrite(t, path, "") }, "suppression file dnc.csv is empty (0 bytes), no phone numbers: it would stop nobody from being called"},
		{"0 bytes, named .xlsx", "dnc.xlsx", func(t *testing.T, path string) { dtWrite(t, path, "") }, "suppression file dnc.xlsx is empty (0 bytes), no phone numbers"},
		{"blank lines", "dnc.csv", func(t *testing.T, path string) { dtWrite(t, path, "\r\n\r\n") }, "suppression file dnc.csv has blank lines alone, no phone numbers"},
		{"a workbook of one empty worksheet", "dnc.xlsx", oneEmptyTab, "suppression file dnc.xlsx has an empty worksheet, no phone numbers"},
		{"an empty worksheet", "dnc.xlsx", emptyTab, `suppression file dnc.xlsx has an empty worksheet (worksheet "Sheet1" was read; the workbook's tabs are "Sheet1", "DNC": if the numbers are on another, name it in the campaign file, worksheet: "DNC"), no phone numbers`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := suppressCampaign("[" + tc.file + "]")
			dir := t.TempDir()
			for k, v := range files {
				dtWrite(t, filepath.Join(dir, k), v)
			}
			tc.write(t, filepath.Join(dir, tc.file))
			f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.LoadSuppression(context.Background())
			if err == nil {
				t.Fatal("LoadSuppression read an empty suppression file; want it to stop plan and run")
			}
			msg := err.Error()
			for _, want := range []string{"suppress[0]", tc.want, "export the do-not-call list into it again"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "the sheet") {
				t.Errorf("error %q calls the suppression file a sheet", msg)
			}
		})
	}
}
