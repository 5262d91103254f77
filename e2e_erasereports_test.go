package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// TestReportOfErasedPeople, files and PostgreSQL: a campaign calls A, B
// and C; A is erased from the journal (a tombstone), and `callrun report`
// writes A erased; A is then put in the erased set, and D, never called,
// is in the erased set alone. A run, then
// `callrun report` with D's row added to the sheet, write report.csv,
// report.xlsx, report.html and summary.json that hold neither A's nor
// D's number in any form, nor their names or e-mails; their rows stay,
// by sheet and row, as erased, and the summary counts two erased. The
// run after the erase calls nobody (the sandbox's ledger).
func TestReportOfErasedPeople(t *testing.T) {
	for _, kind := range []string{"files", "postgres"} {
		t.Run(kind, func(t *testing.T) { testReportOfErasedPeople(t, kind) })
	}
}

func testReportOfErasedPeople(t *testing.T, kind string) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	srv, path := erasureCampaign(t, db)
	const a, b, c, d = "+14155550142", "+14155550143", "+14155550144", "+14155550145"
	yaml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yaml = []byte(strings.Replace(string(yaml), "first_name: First Name}", "first_name: First Name, email: E-mail}", 1))
	if err := os.WriteFile(path, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	names := map[string]string{a: "Adelheid", b: "Bertrand", c: "Cosima", d: "Dagobert"}
	sheet := func(phones ...string) {
		t.Helper()
		body := "Phone,First Name,E-mail\n"
		for _, p := range phones {
			body += p + "," + names[p] + "," + strings.ToLower(names[p]) + "@example.com\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sheet(a, b, c)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}

	s, erasure, keys := openErasure(t, path, campaign.LoadOptions{}, false)
	stateDir := s.ReportDir()
	now := time.Now()
	if _, err := s.EraseJournal(ctx, []string{a}, store.EraseOptions{Keys: keys, At: now}); err != nil {
		t.Fatal(err)
	}
	// The journal's tombstone alone: `callrun report` writes A erased.
	if code, out := runAppOut(t, "report", path); code != 0 {
		t.Fatalf("callrun report after the journal's erase: exit %d\n%s", code, out)
	}
	checkErasedReport(t, stateDir, []string{a}, []string{b, c}, names)
	if _, err := erasure.AddErased(ctx, []store.ErasedEntry{
		{Hash: keys.Hashes(a)[0], At: now, Why: "erase"},
		{Hash: keys.Hashes(d)[0], At: now, Why: "erase"},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	before := len(srv.Calls())
	if code, out := runAppOut(t, "run", path); code != 0 || len(srv.Calls()) != before {
		t.Fatalf("the run after the erase: exit %d, %d calls\n%s", code, len(srv.Calls())-before, out)
	}
	checkErasedReport(t, stateDir, []string{a}, []string{b, c}, names)

	sheet(a, b, c, d)
	if code, out := runAppOut(t, "report", path); code != 0 {
		t.Fatalf("callrun report: exit %d\n%s", code, out)
	}
	checkErasedReport(t, stateDir, []string{a, d}, []string{b, c}, names)
	if n := len(srv.Calls()); n != 3 {
		t.Errorf("the sandbox's ledger has %d calls; want A, B and C once each", n)
	}
}

// checkErasedReport checks the report files in dir: the rows of the
// people erased (by sheet row, in order after the header, the sheet
// listing erased then kept as the test wrote it: a first) are erased and
// hold none of their data, in any of the four files; the people kept are
// there with their numbers.
func checkErasedReport(t *testing.T, dir string, erased, kept []string, names map[string]string) {
	t.Helper()
	rows := readReportBy(t, "row", filepath.Join(dir, "report.csv"))
	byNumber := readReportRows(t, filepath.Join(dir, "report.csv"))
	for _, p := range kept {
		if r := byNumber[p]; r["status"] != string(store.Sent) || r["first_name"] != names[p] {
			t.Errorf("%s's row: %v; want sent, with the name", p, r)
		}
	}
	erasedRows := 0
	for _, r := range rows {
		if r["status"] != string(store.Erased) {
			continue
		}
		erasedRows++
		for col, v := range r {
			if v != "" && col != "sheet" && col != "row" && col != "status" && col != "reason" && col != "agent" && col != "attempts" {
				t.Errorf("erased row %s: column %s holds %q", r["row"], col, v)
			}
		}
	}
	if erasedRows != len(erased) || len(rows) != len(erased)+len(kept) {
		t.Errorf("report.csv has %d rows, %d erased; want %d rows, %d erased", len(rows), erasedRows, len(erased)+len(kept), len(erased))
	}
	if rows["2"]["status"] != string(store.Erased) {
		t.Errorf("row 2 (A): %v; want erased", rows["2"])
	}

	files := map[string]string{}
	for _, name := range []string{"report.csv", "report.html", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	zr, err := zip.OpenReader(filepath.Join(dir, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var xlsx strings.Builder
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&xlsx, rc)
		rc.Close()
	}
	files["report.xlsx"] = xlsx.String()
	for name, text := range files {
		for _, p := range erased {
			for _, form := range []string{p, strings.TrimPrefix(p, "+"), p[2:], p[5:], names[p], strings.ToLower(names[p]) + "@example.com"} {
				if strings.Contains(text, form) {
					t.Errorf("%s holds an erased person's %q", name, form)
				}
			}
		}
		for _, p := range kept {
			if name != "summary.json" && !strings.Contains(text, p) {
				t.Errorf("%s lost %s", name, p)
			}
		}
	}
	var sum struct{ Counts map[string]int }
	if err := json.Unmarshal([]byte(files["summary.json"]), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Counts[string(store.Erased)] != len(erased) || sum.Counts[string(store.Sent)] != len(kept) {
		t.Errorf("summary.json counts %v; want %d erased, %d sent", sum.Counts, len(erased), len(kept))
	}
	if !strings.Contains(files["report.html"], "Erased") {
		t.Error("report.html has no Erased section")
	}
}

// openErasure opens the store of the campaign at path (a rehearsal's
// with rehearsal) and its erasure store, with a key made: for a test to
// erase people as an erase would. The store is closed at the test's end
// (closing it again is harmless).
func openErasure(t *testing.T, path string, opts campaign.LoadOptions, rehearsal bool) (store.Store, store.ErasureStore, *store.ErasureKeys) {
	t.Helper()
	ctx := context.Background()
	f, err := campaign.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.OpenStore(ctx, rehearsal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	erasure, err := s.Erasure()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := erasure.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, erasure, keys
}
