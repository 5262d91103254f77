package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// dncLine is an entry's line as Add writes it.
func dncLine(t *testing.T, e DoNotCallEntry) string {
	t.Helper()
	if e.At.IsZero() {
		e.At = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// writeHistory writes the lines as the list's history in dir.
func writeHistory(t *testing.T, dir string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, DoNotCallFileName), []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendHistory(t *testing.T, dir string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, DoNotCallFileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		t.Fatal(err)
	}
}

// onNow asks a fresh handle, as another process would, which of numbers
// are on the list in dir, by Has and by OnList, which must agree.
func onNow(t *testing.T, dir string, numbers ...string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	on, err := OpenDoNotCallFile(dir).OnList(ctx, numbers)
	if err != nil {
		t.Fatal(err)
	}
	l := OpenDoNotCallFile(dir)
	for _, n := range numbers {
		if h := has(t, l, n); h != on[n] {
			t.Fatalf("%s: Has says %v, OnList %v", n, h, on[n])
		}
	}
	return on
}

func indexHeaderOf(t *testing.T, dir string) *dncIndex {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, DoNotCallFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ix, _, err := readIndex(filepath.Join(dir, DoNotCallIndexName), f, fi.Size())
	if err != nil || ix == nil {
		t.Fatalf("reading the index: %v, %v", ix, err)
	}
	return ix
}

// TestDoNotCallIndexFollowsTheHistory: the index is built on the first
// look and covers the history; a removal then a re-addition, entries
// appended after the index was built (as listen appends an opt-out), a
// number not in "+digits" form and "+1..." beside "+01..." are each
// answered as the history says, by Has and OnList.
func TestDoNotCallIndexFollowsTheHistory(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir,
		dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550101", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550101", Removed: true, Source: "suppress remove", Reason: "asked"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550102", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550102", Removed: true, Source: "suppress remove", Reason: "asked"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550102", Source: "again"}),
		dncLine(t, DoNotCallEntry{Number: "+1415", Source: "a"}),
		`{"source":"by hand","number":"tel:0800 123"}`+"\n",
	)
	all := []string{"+14155550100", "+14155550101", "+14155550102", "+1415", "+01415", "tel:0800 123", "+14155550199"}
	want := map[string]bool{"+14155550100": true, "+14155550102": true, "+1415": true, "tel:0800 123": true}
	if got := onNow(t, dir, all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("on the list: %v, want %v", got, want)
	}
	ix := indexHeaderOf(t, dir)
	fi, _ := os.Stat(filepath.Join(dir, DoNotCallFileName))
	if ix.covered != fi.Size() || ix.count != 3 || len(ix.others) != 1 {
		t.Fatalf("index covers %d of %d bytes, %d keys, %d others", ix.covered, fi.Size(), ix.count, len(ix.others))
	}

	// An opt-out appended after the index was built, and a removal, are
	// read from the history's tail by a handle that loaded the index.
	l := OpenDoNotCallFile(dir)
	if !has(t, l, "+14155550100") {
		t.Fatal("a number on the list is not")
	}
	appendHistory(t, dir,
		dncLine(t, DoNotCallEntry{Number: "+14155550177", Source: "delivery k9 of campaign spring"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550100", Removed: true, Source: "suppress remove", Reason: "asked"}),
		dncLine(t, DoNotCallEntry{Number: "+01415", Source: "a"}),
	)
	if !has(t, l, "+14155550177") || has(t, l, "+14155550100") || !has(t, l, "+01415") || !has(t, l, "+1415") {
		t.Fatal("the entries appended after the index are not seen")
	}
	want = map[string]bool{"+14155550102": true, "+1415": true, "+01415": true, "tel:0800 123": true, "+14155550177": true}
	if got := onNow(t, dir, append(all, "+14155550177")...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("on the list after the appends: %v, want %v", got, want)
	}
	if ix2 := indexHeaderOf(t, dir); ix2.covered != ix.covered {
		t.Fatalf("the index was built again (%d, was %d) for a short tail", ix2.covered, ix.covered)
	}

	// Each, current, gives each number's addition in force, in the
	// history's order.
	var got []string
	if err := l.Each(context.Background(), true, func(e DoNotCallEntry) error {
		got = append(got, e.Number+" "+e.Source)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if w := "[+14155550102 again +1415 a tel:0800 123 by hand +14155550177 delivery k9 of campaign spring +01415 a]"; fmt.Sprint(got) != w {
		t.Fatalf("Each(current): %v, want %v", got, w)
	}
}

// TestDoNotCallIndexBuiltAgain: an index that no longer matches its
// history is built again, not trusted: the history replaced by another
// of the same length, truncated, ending in a torn line, and an index
// file that is corrupt or of another version.
func TestDoNotCallIndexBuiltAgain(t *testing.T) {
	a := dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"})
	b := dncLine(t, DoNotCallEntry{Number: "+14155550101", Source: "a"})
	bOff := dncLine(t, DoNotCallEntry{Number: "+14155550101", Removed: true, Source: "a"})
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   map[string]bool
	}{
		{"history replaced, same length", func(t *testing.T, dir string) {
			writeHistory(t, dir, a, dncLine(t, DoNotCallEntry{Number: "+14155550109", Source: "a"}))
		}, map[string]bool{"+14155550100": true, "+14155550109": true}},
		{"history truncated", func(t *testing.T, dir string) {
			writeHistory(t, dir, a)
		}, map[string]bool{"+14155550100": true}},
		{"history cut inside what the index covers, then appended to", func(t *testing.T, dir string) {
			writeHistory(t, dir, a, bOff, b[:10])
		}, map[string]bool{"+14155550100": true}},
		{"a torn last line", func(t *testing.T, dir string) {
			appendHistory(t, dir, bOff[:len(bOff)-5])
		}, map[string]bool{"+14155550100": true, "+14155550101": true}},
		{"index corrupt", func(t *testing.T, dir string) {
			p := filepath.Join(dir, DoNotCallIndexName)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-3], 0o600)
		}, map[string]bool{"+14155550100": true, "+14155550101": true}},
		{"index of another version", func(t *testing.T, dir string) {
			p := filepath.Join(dir, DoNotCallIndexName)
			data, _ := os.ReadFile(p)
			data[len(data)-1] = '9' // the trailer's magic ends in the version
			os.WriteFile(p, data, 0o600)
		}, map[string]bool{"+14155550100": true, "+14155550101": true}},
		{"index deleted", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, DoNotCallIndexName))
		}, map[string]bool{"+14155550100": true, "+14155550101": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeHistory(t, dir, a, b)
			l := OpenDoNotCallFile(dir)
			if !has(t, l, "+14155550101") {
				t.Fatal("not on the list before the change")
			}
			c.change(t, dir)
			numbers := []string{"+14155550100", "+14155550101", "+14155550109"}
			if got := onNow(t, dir, numbers...); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("a fresh handle: %v, want %v", got, c.want)
			}
			got := map[string]bool{}
			for _, n := range numbers {
				if has(t, l, n) {
					got[n] = true
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("the handle that read the list before: %v, want %v", got, c.want)
			}
			hist, _ := os.ReadFile(filepath.Join(dir, DoNotCallFileName))
			whole := int64(strings.LastIndexByte(string(hist), '\n') + 1)
			if ix := indexHeaderOf(t, dir); ix.covered != whole {
				t.Fatalf("the index covers %d bytes, the history's whole lines %d", ix.covered, whole)
			}
		})
	}
}

// TestDoNotCallUnreadableLineFailsClosed: a line of the history that is
// no entry stops every look-up with an error naming the file and the
// line's byte: nobody is called on a list that cannot be read.
func TestDoNotCallUnreadableLineFailsClosed(t *testing.T) {
	dir := t.TempDir()
	a := dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"})
	writeHistory(t, dir, a, "{\"number\": 14155550101}\n")
	l := OpenDoNotCallFile(dir)
	_, err := l.Has(context.Background(), "+14155550101")
	want := fmt.Sprintf("%s: the line at byte %d is not a do-not-call entry", filepath.Join(dir, DoNotCallFileName), len(a))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Has: %v, want an error saying %q", err, want)
	}
	if _, err := l.OnList(context.Background(), []string{"+14155550101"}); err == nil {
		t.Fatal("OnList read a list it cannot read")
	}
	if _, err := l.Add(context.Background(), []DoNotCallEntry{{Number: "+14155550102", Source: "a"}}); err == nil {
		t.Fatal("Add wrote to a list it cannot read")
	}

	// The same line appended after the index was built.
	dir = t.TempDir()
	writeHistory(t, dir, a)
	l = OpenDoNotCallFile(dir)
	has(t, l, "+14155550100")
	appendHistory(t, dir, "not json\n")
	if _, err := l.Has(context.Background(), "+14155550100"); err == nil || !strings.Contains(err.Error(), "is not a do-not-call entry") {
		t.Fatalf("Has after an unreadable line was appended: %v", err)
	}
}

// TestDoNotCallDeltaBounded: past maxDelta numbers appended after the
// index, the index is built again to cover them.
func TestDoNotCallDeltaBounded(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir, dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"}))
	l := OpenDoNotCallFile(dir)
	has(t, l, "+14155550100")
	var lines []string
	for i := range maxDelta + 1 {
		lines = append(lines, dncLine(t, DoNotCallEntry{Number: fmt.Sprintf("+1212%07d", i), Source: "a"}))
	}
	appendHistory(t, dir, lines...)
	if !has(t, l, "+12120000007") || !has(t, l, "+14155550100") {
		t.Fatal("the numbers are not on the list")
	}
	if len(l.delta) != 0 {
		t.Fatalf("%d numbers held in memory, want the index built again", len(l.delta))
	}
	if ix := indexHeaderOf(t, dir); ix.count != maxDelta+2 {
		t.Fatalf("the index holds %d numbers, want %d", ix.count, maxDelta+2)
	}
}

// TestDoNotCallImport: Import writes each number not on the list once
// and builds the index at its end; the index's file has the mode of the
// list's.
func TestDoNotCallImport(t *testing.T) {
	dir := t.TempDir()
	l := OpenDoNotCallFile(dir)
	ctx := context.Background()
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "a"}}); err != nil {
		t.Fatal(err)
	}
	wrote, err := l.Import(ctx, importBatches("import x.csv", []string{"+14155550100", "+14155550101"}, []string{"+14155550102", "+14155550103"}))
	if err != nil || wrote != 3 {
		t.Fatalf("Import: %d, %v; want 3 written", wrote, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, DoNotCallFileName))
	if ix := indexHeaderOf(t, dir); ix.covered != fi.Size() || ix.count != 4 {
		t.Fatalf("the index covers %d of %d bytes and %d numbers after the import", ix.covered, fi.Size(), ix.count)
	}
	if ifi, _ := os.Stat(filepath.Join(dir, DoNotCallIndexName)); ifi.Mode().Perm() != fi.Mode().Perm() {
		t.Fatalf("index mode %v, history's %v", ifi.Mode().Perm(), fi.Mode().Perm())
	}
	if got := onNow(t, dir, "+14155550103", "+14155550104"); !got["+14155550103"] || got["+14155550104"] {
		t.Fatalf("after the import: %v", got)
	}
}

// TestDoNotCallOnListEachImport: on both lists, OnList answers for a
// campaign's numbers as Has does (a removal then a re-addition, a number
// taken off), Import writes only numbers not on the list, and Each gives
// the history, or the additions in force.
func TestDoNotCallOnListEachImport(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t)
			for _, e := range []DoNotCallEntry{
				{Number: "+14155550100", Source: "a"},
				{Number: "+14155550101", Source: "a"},
				{Number: "+14155550101", Removed: true, Source: "suppress remove", Reason: "asked"},
				{Number: "+14155550102", Source: "a"},
				{Number: "+14155550102", Removed: true, Source: "suppress remove", Reason: "asked"},
				{Number: "+14155550102", Source: "again"},
			} {
				if _, err := l.Add(ctx, []DoNotCallEntry{e}); err != nil {
					t.Fatal(err)
				}
			}
			wrote, err := l.Import(ctx, importBatches("import x.csv", []string{"+14155550100", "+14155550103"}, []string{"+14155550101"}))
			if err != nil || wrote != 2 {
				t.Fatalf("Import: %d, %v; want 2 written", wrote, err)
			}
			other := k.open(t)
			on, err := other.OnList(ctx, []string{"+14155550100", "+14155550101", "+14155550102", "+14155550103", "+14155550104"})
			if err != nil {
				t.Fatal(err)
			}
			if w := "map[+14155550100:true +14155550101:true +14155550102:true +14155550103:true]"; fmt.Sprint(on) != w {
				t.Fatalf("OnList: %v, want %v", on, w)
			}
			var current, history []string
			if err := other.Each(ctx, true, func(e DoNotCallEntry) error {
				current = append(current, e.Number+" "+e.Source)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := other.Each(ctx, false, func(e DoNotCallEntry) error {
				history = append(history, e.Number)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if w := "[+14155550100 a +14155550102 again +14155550103 import x.csv +14155550101 import x.csv]"; fmt.Sprint(current) != w {
				t.Fatalf("Each(current): %v, want %v", current, w)
			}
			if len(history) != 8 {
				t.Fatalf("Each(history): %d entries, want 8", len(history))
			}
		})
	}
}

// TestAppendEntryAsMarshal: the lines Add writes are json.Marshal's, so
// that the index's fast reading takes them.
func TestAppendEntryAsMarshal(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.FixedZone("x", 3600)).UTC()
	for _, e := range []DoNotCallEntry{
		{Number: "+14155550100", At: at, Source: "import /tmp/a b.csv"},
		{Number: "+14155550100", At: at.Truncate(time.Second), Removed: true, Source: "suppress remove", Reason: `asked "twice" <b> & é` + "\t"},
		{Number: "tel:\u2028x", At: at, Source: "do_not_call column \"DND\" of campaign spring (sheet a.csv, row 4)"},
	} {
		want := dncLine(t, e)
		if got := string(appendEntry(nil, e)); got != want {
			t.Errorf("appendEntry:\n%s\njson.Marshal:\n%s", got, want)
		}
		n, removed, ok := decodeEntry([]byte(want))
		if !ok || n != e.Number || removed != e.Removed {
			t.Errorf("decodeEntry(%s): %q %v %v", want, n, removed, ok)
		}
	}
}

// TestDoNotCallIndexReplacedByAnother: a handle whose index file another
// process built again over a longer history loads the new one and
// answers as the history says.
func TestDoNotCallIndexReplacedByAnother(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir,
		dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550103", Source: "a"}))
	a := OpenDoNotCallFile(dir)
	if !has(t, a, "+14155550100") {
		t.Fatal("not on the list")
	}
	appendHistory(t, dir, dncLine(t, DoNotCallEntry{Number: "+14155550101", Source: "a"}))
	if !has(t, a, "+14155550101") {
		t.Fatal("the appended number is not on the list")
	}
	// Another process builds the index again, over the longer history.
	os.Remove(filepath.Join(dir, DoNotCallIndexName))
	if !has(t, OpenDoNotCallFile(dir), "+14155550101") {
		t.Fatal("the appended number is not in the new index")
	}
	appendHistory(t, dir,
		dncLine(t, DoNotCallEntry{Number: "+14155550102", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550103", Removed: true, Source: "a"}))
	on, err := a.OnList(context.Background(), []string{"+14155550100", "+14155550101", "+14155550102", "+14155550103", "+14155550104"})
	if err != nil {
		t.Fatal(err)
	}
	if w := "map[+14155550100:true +14155550101:true +14155550102:true]"; fmt.Sprint(on) != w {
		t.Fatalf("OnList: %v, want %v", on, w)
	}
	if a.ix.covered != indexHeaderOf(t, dir).covered {
		t.Fatalf("the handle answers from an index covering %d bytes, the file's covers %d", a.ix.covered, indexHeaderOf(t, dir).covered)
	}
}

// importBatches is an Import's next, giving the numbers of each batch in
// turn, each entry with source.
func importBatches(source string, batches ...[]string) func() ([]DoNotCallEntry, error) {
	return func() ([]DoNotCallEntry, error) {
		if len(batches) == 0 {
			return nil, nil
		}
		var es []DoNotCallEntry
		for _, n := range batches[0] {
			es = append(es, DoNotCallEntry{Number: n, Source: source})
		}
		batches = batches[1:]
		return es, nil
	}
}

// TestDoNotCallAddKeepsOrder: entries of one Add are written in their
// order, an addition, its removal and the addition again of one number
// among them.
func TestDoNotCallAddKeepsOrder(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t)
			wrote, err := l.Add(ctx, []DoNotCallEntry{
				{Number: "+14155550100", Source: "a"},
				{Number: "+14155550100", Removed: true, Source: "b", Reason: "asked"},
				{Number: "+14155550101", Source: "c"},
				{Number: "+14155550100", Source: "d"},
			})
			if err != nil || len(wrote) != 4 {
				t.Fatalf("Add: %v, %v", wrote, err)
			}
			var got []string
			if err := k.open(t).Each(ctx, false, func(e DoNotCallEntry) error {
				got = append(got, e.Source)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[a b c d]" {
				t.Fatalf("history %v, want [a b c d]", got)
			}
			if !has(t, k.open(t), "+14155550100") {
				t.Fatal("the number added again is not on the list")
			}
		})
	}
}

// TestDoNotCallIndexStaleTemps: building the index removes the temporary
// file a killed builder left, and not one being written now.
func TestDoNotCallIndexStaleTemps(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir, dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"}))
	old := filepath.Join(dir, "."+DoNotCallIndexName+".123.tmp")
	young := filepath.Join(dir, "."+DoNotCallIndexName+".456.tmp")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-staleTemp - time.Minute)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if !has(t, OpenDoNotCallFile(dir), "+14155550100") {
		t.Fatal("not on the list")
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the killed builder's temporary file is still there: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("the temporary file being written was removed: %v", err)
	}
}

// TestDoNotCallNumbersUpTo: a short list is given whole, as the history
// says (the index, the entries after it, a number not "+digits", a
// removal), on files and PostgreSQL; a list longer than asked is not.
func TestDoNotCallNumbersUpTo(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t)
			add := func(es ...DoNotCallEntry) {
				t.Helper()
				if _, err := l.Add(ctx, es); err != nil {
					t.Fatal(err)
				}
			}
			add(DoNotCallEntry{Number: "+14155550100", Source: "a"}, DoNotCallEntry{Number: "+014155", Source: "a"}, DoNotCallEntry{Number: "tel:x", Source: "a"}, DoNotCallEntry{Number: "+14155550101", Source: "a"})
			has(t, k.open(t), "+14155550100") // a fresh handle: the index is built now
			add(DoNotCallEntry{Number: "+14155550101", Removed: true, Source: "b"}, DoNotCallEntry{Number: "+14155550102", Source: "c"})
			// Four numbers on the list, six entries: files count the
			// numbers, the database the entries.
			most := 4
			if k.name == "postgres" {
				most = 6
			}
			numbers, ok, err := k.open(t).NumbersUpTo(ctx, most)
			if err != nil || !ok {
				t.Fatalf("NumbersUpTo(%d): %v, %v, %v", most, numbers, ok, err)
			}
			slices.Sort(numbers)
			if w := "[+014155 +14155550100 +14155550102 tel:x]"; fmt.Sprint(numbers) != w {
				t.Fatalf("NumbersUpTo(%d): %v, want %v", most, numbers, w)
			}
			if numbers, ok, err := k.open(t).NumbersUpTo(ctx, most-1); err != nil || ok || numbers != nil {
				t.Fatalf("NumbersUpTo(%d) of 4 numbers, 6 entries: %v, %v, %v", most-1, numbers, ok, err)
			}
		})
	}
}

// TestDoNotCallNumbersUpToOfAnIndexWithoutKeys: an index built when the
// list had no "+digits" number on it (empty, or every number taken off)
// gives the numbers put on it since, not an error.
func TestDoNotCallNumbersUpToOfAnIndexWithoutKeys(t *testing.T) {
	ctx := context.Background()
	for _, first := range [][]DoNotCallEntry{
		nil,
		{{Number: "+14155550100", Source: "a"}, {Number: "+14155550100", Removed: true, Source: "b"}},
	} {
		dir := t.TempDir()
		l := OpenDoNotCallFile(dir)
		if len(first) > 0 {
			if _, err := l.Add(ctx, first); err != nil {
				t.Fatal(err)
			}
		}
		has(t, OpenDoNotCallFile(dir), "+14155550101") // a fresh handle builds the index, and writes it
		if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550102", Source: "c"}}); err != nil {
			t.Fatal(err)
		}
		numbers, ok, err := OpenDoNotCallFile(dir).NumbersUpTo(ctx, 10) // reads the index from the file
		if err != nil || !ok || fmt.Sprint(numbers) != "[+14155550102]" {
			t.Errorf("after %d entries: NumbersUpTo = %v, %v, %v; want [+14155550102]", len(first), numbers, ok, err)
		}
	}
}

// TestDoNotCallIndexKeptInMemory: an index that cannot be written (here
// a directory stands at its path) is kept in memory, and the list
// answers from it as the history says.
func TestDoNotCallIndexKeptInMemory(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir,
		dncLine(t, DoNotCallEntry{Number: "+14155550100", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550101", Source: "a"}),
		dncLine(t, DoNotCallEntry{Number: "+14155550101", Removed: true, Source: "b"}),
		dncLine(t, DoNotCallEntry{Number: "tel:x", Source: "a"}))
	if err := os.Mkdir(filepath.Join(dir, DoNotCallIndexName), 0o700); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"+14155550100": true, "tel:x": true}
	if got := onNow(t, dir, "+14155550100", "+14155550101", "+14155550102", "tel:x"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("on the list: %v, want %v", got, want)
	}
	l := OpenDoNotCallFile(dir)
	numbers, ok, err := l.NumbersUpTo(context.Background(), 10)
	slices.Sort(numbers)
	if err != nil || !ok || fmt.Sprint(numbers) != "[+14155550100 tel:x]" {
		t.Fatalf("NumbersUpTo: %v, %v, %v", numbers, ok, err)
	}
	if l.ix == nil || l.ix.mem == nil {
		t.Fatal("the index is not kept in memory")
	}
}
