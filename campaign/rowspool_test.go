package campaign

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/sheet"
)

// spoolSheet is a sheet with what the sheet's reader reads besides plain
// rows: a title block above the header, a row with more fields than the
// header (an error of its own), a quoted field over two lines, groups of
// rows under titles of their own (one saying do not call), a do-not-call
// column that flags a number on a later row than another row with it, a
// consent column, and a report's footer.
func spoolSheet() string {
	var b strings.Builder
	b.WriteString("Leads export\n\nName,Phone,DNC,Consent\n")
	b.WriteString("Ada,+14155550101,,2024-03-05\n")
	b.WriteString("Bea,+14155550102,,2024-03-05\n")
	b.WriteString("Cy,+14155550103,,2024-03-05,extra,fields\n")
	b.WriteString("\"Di\nDee\",+14155550104,,revoked\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Lead %d,+1415555%04d,,2024-03-05\n", i, 1000+i)
	}
	b.WriteString("Flagged later,+14155550102,1,2024-03-05\n")
	b.WriteString("\nNicht anrufen\nName,Phone,DNC,Consent\nEd,+14155550105,,2024-03-05\nAda again,+14155550101,,\n")
	b.WriteString("\nCustomers\nName,Phone,DNC,Consent\nFay,+14155550106,maybe,2024-03-05\nGus,+14155550107,,2024-03-05\n")
	b.WriteString("\nExported by the CRM\nPage 1 of 1\n")
	return b.String()
}

// spoolCampaign is a campaign of spoolSheet and another sheet, mapping
// its do-not-call and consent columns.
func spoolCampaign(t *testing.T) *File {
	t.Helper()
	f, err := dncCampaign(t, map[string]string{"a.csv": spoolSheet(), "b.csv": "Phone,DNC,Consent\n+14155550107,,2024-03-05\n+14155550108,,2024-03-05\n"},
		"do_not_call: {column: DNC}\nconsent: {column: Consent, required: true}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readAll reads f's contacts with cr, and the notes and signals it tells.
func readAll(t *testing.T, f *File, cr *ContactReader) (contacts []Contact, notes []string, signals [][]PlanSignal) {
	t.Helper()
	cr.SheetNote = func(i int, note string) { notes = append(notes, fmt.Sprintf("%d: %s", i, note)) }
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	cr.Now = func() time.Time { return now }
	if err := cr.Each(context.Background(), func(c *Contact) error {
		contacts = append(contacts, *c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range f.Sheets {
		signals = append(signals, cr.Signals(i))
	}
	return contacts, notes, signals
}

// TestPlanParsesSheetOnce: plan of a campaign with a do-not-call and a
// consent column parses each sheet once: the pass over those columns
// keeps the records, and the contact reader reads them from there. A
// reader without them (the suppression's records dropped) gives the
// same contacts, notes and signals, row errors and groups of rows
// included; so does a sheet changed since the pass, read from the file
// again.
func TestPlanParsesSheetOnce(t *testing.T) {
	f := spoolCampaign(t)
	before := sheetReadings.Load()
	p, sup := signalPlan(t, f)
	if got := sheetReadings.Load() - before; got != int64(len(f.Sheets)) {
		t.Errorf("plan parsed its %d sheets %d times; want once each", len(f.Sheets), got)
	}
	if p.Totals.Rows == 0 || p.Totals.Suppressed == 0 || p.Totals.Invalid == 0 {
		t.Fatalf("plan counted %+v: the sheet's rows of each kind are not all there", p.Totals)
	}

	before = sheetReadings.Load()
	kept, keptNotes, keptSignals := readAll(t, f, f.NewContactReader(sup))
	if got := sheetReadings.Load() - before; got != 0 {
		t.Errorf("the contact reader parsed %d sheets; want none, with the records the pass kept", got)
	}
	cr := f.NewContactReader(sup)
	cr.spools = nil
	parsed, parsedNotes, parsedSignals := readAll(t, f, cr)
	if !reflect.DeepEqual(kept, parsed) {
		for k := range min(len(kept), len(parsed)) {
			if !reflect.DeepEqual(kept[k], parsed[k]) {
				t.Errorf("contact %d from the kept records:\n%+v\nfrom the sheet:\n%+v", k, kept[k], parsed[k])
				break
			}
		}
		t.Fatalf("%d contacts from the kept records, %d from the sheet", len(kept), len(parsed))
	}
	if !reflect.DeepEqual(keptNotes, parsedNotes) || !reflect.DeepEqual(keptSignals, parsedSignals) {
		t.Errorf("notes and signals from the kept records:\n%q\n%+v\nfrom the sheet:\n%q\n%+v", keptNotes, keptSignals, parsedNotes, parsedSignals)
	}
	var statuses []string
	for _, c := range kept {
		statuses = append(statuses, fmt.Sprintf("%d/%d %s %s", c.Sheet, c.Row, c.Status, c.Reason))
	}
	for _, want := range []string{
		"0/4 suppressed the number is in a group of rows whose title says do not call: sheet a.csv, row 53", // a group further down
		"0/5 suppressed the number is marked do not call in sheet a.csv, row 48",                            // a later row
		"0/6 invalid has 6 fields but the header has 4",
		"0/7 invalid no consent on record: the cell says \"revoked\"",
		"0/52 suppressed the row is in the group \"Nicht anrufen\"",
		"0/57 suppressed do-not-call column \"DNC\" says \"maybe\"",
		"1/2 duplicate",
		"1/3 to_call",
	} {
		if !containsPrefix(statuses, want) {
			t.Errorf("no row reads %q; rows:\n%s", want, strings.Join(statuses, "\n"))
		}
	}
	if !containsPrefix(keptNotes, "0: "+f.Path("a.csv")+": rows 60-61 after the data") {
		t.Errorf("notes %q lack the footer", keptNotes)
	}

	// The campaign's numbers, asked of a long do-not-call list, are read
	// from the records kept too.
	before = sheetReadings.Load()
	numbers, err := f.CallNumbers(context.Background(), sup)
	if err != nil {
		t.Fatal(err)
	}
	if got := sheetReadings.Load() - before; got != 0 {
		t.Errorf("CallNumbers parsed %d sheets; want none, with the records the pass kept", got)
	}
	fromSheets, err := f.CallNumbers(context.Background(), &Suppression{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(numbers, fromSheets) || len(numbers) < 45 {
		t.Errorf("CallNumbers from the kept records %q, from the sheets %q", numbers, fromSheets)
	}

	// The sheet changed since the pass: read from the file, as it is now.
	path := f.Path(f.Sheets[1].File)
	if err := os.WriteFile(path, []byte("Phone,DNC,Consent\n+14155550109,,2024-03-05\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = sheetReadings.Load()
	changed, _, _ := readAll(t, f, f.NewContactReader(sup))
	if got := sheetReadings.Load() - before; got != 1 {
		t.Errorf("the contact reader parsed %d sheets after one changed; want that one", got)
	}
	if last := changed[len(changed)-1]; last.Sheet != 1 || last.Phone != "+14155550109" || len(changed) != len(kept)-1 {
		t.Errorf("after b.csv changed, its rows read %+v (%d contacts)", last, len(changed))
	}
}

// containsPrefix reports whether an element of ss starts with
// prefix.
func containsPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestSpoolSheetChangedUnseen: a sheet changed after the pass over its
// signal columns in a way its size and modification time do not show
// (a cell changed in place and the time set back, rows swapped, the file
// replaced by one of the same size and time) is read from the sheet
// again: the contacts read then are those read with no records kept,
// and the row whose do-not-call cell now says yes is not called.
func TestSpoolSheetChangedUnseen(t *testing.T) {
	const before = "Name,Phone,DNC,Consent\nAnn,+14155550111,,2024-03-05\nBob,+14155550112,,2024-03-05\nCy,+14155550113,,2024-03-05\n"
	for _, tc := range []struct {
		name, after string
		rename      bool
		blocked     string // the number not to be called after the change
	}{
		{"cell changed in place", "Name,Phone,DNC,Consent\nAnn,+14155550111,,2024-03-05\nBo,+14155550112,1,2024-03-05\nCy,+14155550113,,2024-03-05\n", false, "+14155550112"},
		{"rows swapped", "Name,Phone,DNC,Consent\nBo,+14155550112,1,2024-03-05\nAnn,+14155550111,,2024-03-05\nCy,+14155550113,,2024-03-05\n", false, "+14155550112"},
		{"replaced by rename", "Name,Phone,DNC,Consent\nAnn,+14155550111,,2024-03-05\nBob,+14155550112,,2024-03-05\nC,+14155550113,1,2024-03-05\n", true, "+14155550113"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.after) != len(before) {
				t.Fatalf("the changed sheet is %d bytes, not %d", len(tc.after), len(before))
			}
			f, err := dncCampaign(t, map[string]string{"a.csv": before}, "do_not_call: {column: DNC}\nconsent: {column: Consent, required: true}\n", "")
			if err != nil {
				t.Fatal(err)
			}
			path := f.Path("a.csv")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			_, sup := signalPlan(t, f)
			if sup.spools[0] == nil {
				t.Fatal("the pass kept no records of the sheet")
			}
			rewriteUnseen(t, path, fi, tc.after, tc.rename)
			checkKeptAsParsed(t, f, sup, func(c Contact) bool { return c.Phone == tc.blocked })
		})
	}
}

// TestSpoolSheetsTwiceSharded: a campaign naming one sheet twice (for two
// agents) and another sheet, read by shard, the other sheet changed
// after the pass with its size and time kept: each shard's contacts read
// with the records the pass kept are those read without them, and the
// row of the changed sheet that says do not call now is not called.
func TestSpoolSheetsTwiceSharded(t *testing.T) {
	dir := t.TempDir()
	var a strings.Builder
	a.WriteString("Name,Phone,DNC,Consent\n")
	for i := range 30 {
		dnc := ""
		if i%4 == 1 {
			dnc = "1"
		}
		fmt.Fprintf(&a, "Lead %d,+1415555%04d,%s,2024-03-05\n", i, 2000+i, dnc)
	}
	const b0 = "Name,Phone,DNC,Consent\nAnn,+14155550111,,2024-03-05\nBob,+14155550112,,2024-03-05\nCy,+14155550113,,2024-03-05\n"
	const b1 = "Name,Phone,DNC,Consent\nAnn,+14155550111,,2024-03-05\nBo,+14155550112,1,2024-03-05\nCy,+14155550113,,2024-03-05\n"
	for name, body := range map[string]string{"a.csv": a.String(), "b.csv": b0} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yaml := "name: twice\nagents:\n  - {name: A, prompt: Hello.}\n  - {name: B, prompt: Hello.}\nsheets:\n" +
		"  - {file: a.csv, agent: A, fields: {phone_number: Phone}}\n" +
		"  - {file: a.csv, agent: B, fields: {phone_number: Phone}}\n" +
		"  - {file: b.csv, agent: A, fields: {phone_number: Phone}}\n" +
		"region: US\nunsafe_ignore_called_person_hours: true\ndo_not_call: {column: DNC}\nconsent: {column: Consent, required: true}\n"
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
		if err != nil {
			t.Fatal(err)
		}
		f.SetShard(Shard{Index: k, Count: 2})
		bPath := f.Path("b.csv")
		if err := os.WriteFile(bPath, []byte(b0), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(bPath)
		if err != nil {
			t.Fatal(err)
		}
		_, sup := signalPlan(t, f)
		if sup.spools[0] == nil || sup.spools[1] == nil {
			t.Fatal("the pass kept no records of a.csv")
		}
		rewriteUnseen(t, bPath, fi, b1, false)
		checkKeptAsParsed(t, f, sup, func(c Contact) bool { return c.Sheet == 2 && c.Phone == "+14155550112" })
	}
}

// TestSpoolSheetChangedInPass: a sheet changed while the pass reads it,
// after the reader's first fill (rows it has parsed written in place with
// the size and time kept, the file replaced by rename, appended to), is
// not read from the records kept: they are those of the bytes the reader
// parsed, and those are not the file's now. Rows changed that the reader
// had not reached yet are parsed as changed, so the records kept are the
// file's as it is now, and are read.
func TestSpoolSheetChangedInPass(t *testing.T) {
	// Far more than the reader's buffers take in at the first fill.
	var b strings.Builder
	b.WriteString("Name,Phone,DNC\n")
	for i := range 20_000 {
		fmt.Fprintf(&b, "Lead %05d,+1415555%04d,\n", i, i%10_000)
	}
	before := b.String()
	first, last := "Lead 00000,+14155550000,\n", "Lead 19999,+14155559999,\n"
	for _, change := range []string{"rows read, in place", "rows not read yet, in place", "rename", "append", "none"} {
		t.Run(change, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.csv")
			if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sheet.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var recs []sheet.Record
			next := func() error {
				rec, err := r.Next()
				if err == nil {
					recs = append(recs, rec)
				}
				return err
			}
			if err := next(); err != nil {
				t.Fatal(err)
			}
			switch change {
			case "rows read, in place", "rename":
				after := strings.Replace(before, first, "Lead 0000,+14155550000,1\n", 1)
				rewriteUnseen(t, path, fi, after, change == "rename")
			case "rows not read yet, in place":
				after := strings.Replace(before, last, "Lead 1999,+14155559999,1\n", 1)
				rewriteUnseen(t, path, fi, after, false)
			case "append":
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("Cy,+14155550113,1\n")
				f.Close()
			}
			for next() == nil {
			}
			w := &spoolWriter{}
			w.write(encodeRecords(nil, recs))
			sp := w.finish(r)
			now, err := sheet.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer now.Close()
			kept := sp != nil && sp.current(path, now)
			switch {
			case change == "rows read, in place" || change == "rename" || change == "append":
				if kept {
					t.Fatalf("the sheet changed (%s) as the pass read it, and the records the pass parsed stand for the file as it is now", change)
				}
			case !kept:
				t.Fatalf("the records the pass parsed are the file's as it is now (%s), and were not kept", change)
			default:
				var want []sheet.Record
				for {
					rec, err := now.Next()
					if err != nil {
						break
					}
					want = append(want, rec)
				}
				reading := sp.reading()
				for i, rec := range want {
					got, err := reading.Next()
					if err != nil || got.Row != rec.Row || !slices.Equal(got.Fields, rec.Fields) {
						t.Fatalf("kept record %d: %+v (%v), the file now has %+v", i, got, err, rec)
					}
				}
				if got, err := reading.Next(); err != io.EOF {
					t.Fatalf("a record kept past the file's: %+v (%v)", got, err)
				}
			}
		})
	}
}

// rewriteUnseen writes body to the file at path, by rename when rename
// is set, with the modification time fi gives: a change its size and
// time do not show, when body is fi's size.
func rewriteUnseen(t *testing.T, path string, fi os.FileInfo, body string, rename bool) {
	t.Helper()
	target := path
	if rename {
		target += ".new"
	}
	if err := os.WriteFile(target, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(target, path); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the changed sheet's size and time %v, want those before (%v)", now, err)
	}
}

// checkKeptAsParsed reads f's contacts with the records the pass of sup
// kept and without them, and fails t when they differ or when a contact
// blocked tells of is to be called. It returns the contacts.
func checkKeptAsParsed(t *testing.T, f *File, sup *Suppression, blocked func(Contact) bool) []Contact {
	t.Helper()
	kept, _, _ := readAll(t, f, f.NewContactReader(sup))
	cr := f.NewContactReader(sup)
	cr.spools = nil
	parsed, _, _ := readAll(t, f, cr)
	if !reflect.DeepEqual(kept, parsed) {
		t.Errorf("contacts with the kept records:\n%+v\nread from the sheets:\n%+v", kept, parsed)
	}
	for _, c := range kept {
		if blocked(c) && c.Status == ToCall {
			t.Errorf("sheet %d row %d (%s), marked do not call since the pass, is to be called", c.Sheet, c.Row, c.Phone)
		}
	}
	return kept
}

// TestSpoolReadingRoundTrip: records kept in a rowSpool read back as they
// were written: empty fields, groups of rows, row errors, and a record
// larger than the reading's buffer. A spool cut short inside a record
// reads as an error, never as fewer records.
func TestSpoolReadingRoundTrip(t *testing.T) {
	group := &sheet.Group{Title: "Nicht anrufen", Row: 40}
	var recs []sheet.Record
	for i := range 3000 {
		rec := sheet.Record{Row: i + 2, Fields: []string{fmt.Sprintf("Lead %d", i), fmt.Sprintf("+1415555%04d", i), "", strings.Repeat("x", i%97)}}
		switch {
		case i == 1500:
			rec.Fields[3] = strings.Repeat("long note ", 300_000) // past the 1 MiB buffer
		case i%500 == 7:
			rec = sheet.Record{Row: i + 2, Err: &sheet.Error{File: "a.csv", Row: i + 2, Field: "Phone", Msg: "a record breaks the rules"}}
		case i >= 40 && i < 60:
			rec.Group = group
		}
		recs = append(recs, rec)
	}
	var encoded []byte
	for start := 0; start < len(recs); start += 100 {
		var ok bool
		if encoded, ok = encodeRecords(encoded, recs[start:min(start+100, len(recs))]); !ok {
			t.Fatal("the records cannot be encoded")
		}
	}
	spoolOf := func(data []byte) *rowSpool {
		f, err := os.CreateTemp(t.TempDir(), "spool")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		return &rowSpool{f: f, size: int64(len(data))}
	}
	readBack := func(sp *rowSpool) ([]sheet.Record, error) {
		r := sp.reading()
		var got []sheet.Record
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return got, nil
			}
			if err != nil {
				return got, err
			}
			got = append(got, rec)
		}
	}
	got, err := readBack(spoolOf(encoded))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records read back, %d written", len(got), len(recs))
	}
	for i, rec := range got {
		want := recs[i]
		if rec.Row != want.Row || !slices.Equal(rec.Fields, want.Fields) || (rec.Group == nil) != (want.Group == nil) ||
			(rec.Group != nil && *rec.Group != *want.Group) || fmt.Sprint(rec.Err) != fmt.Sprint(want.Err) {
			t.Fatalf("record %d read back as %.200v, written as %.200v", i, rec, want)
		}
	}
	if got[41].Group != got[42].Group {
		t.Error("the records of a group do not share its *sheet.Group")
	}
	// Cut inside a record: its length prefix read, its body short.
	for _, cut := range []int{len(encoded) - 1, len(encoded) - 5, 1} {
		got, err := readBack(spoolOf(encoded[:cut]))
		if err == nil || !strings.Contains(err.Error(), "rows kept from the sheet's first reading") {
			t.Errorf("a spool cut at byte %d of %d: %d records and error %v, want an error", cut, len(encoded), len(got), err)
		}
	}
}
