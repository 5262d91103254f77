package campaign

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// readContacts loads a one-sheet campaign with extra top-level YAML and
// returns its contacts' statuses and reasons, in order.
func readContacts(t *testing.T, extra, sheet string) []Contact {
	t.Helper()
	dir := t.TempDir()
	yaml := `name: c
agents: [{name: A, prompt: p}, {name: B, prompt: p}]
sheets:
  - {file: s.csv, agent: A, fields: {phone_number: Phone, email: Email, local_presence_number: LP}}
  - {file: s2.csv, agent: B, fields: {phone_number: Phone}}
suppress: [dnc.csv]
` + extra
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644)
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(sheet), 0o644)
	os.WriteFile(filepath.Join(dir, "s2.csv"), []byte("Phone\n+14155550132\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "dnc.csv"), []byte("Do Not Call\n(312) 555-0182\nnot a number\n"), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sup.Problems) != 1 || sup.Problems[0].Row != 3 || sup.Len() != 1 {
		t.Errorf("suppression: %d numbers, problems %+v", sup.Len(), sup.Problems)
	}
	var out []Contact
	err = f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		out = append(out, *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const contactSheet = `Phone,Email,LP
+14155550132,ada@example.com,yes
bogus,,no
(312) 555-0182,,
+1 415 555 0132,,
+12125550199,not-an-email,
+12025550143,,maybe
`

func statuses(cs []Contact) string {
	var b []string
	for _, c := range cs {
		b = append(b, c.Status)
	}
	return strings.Join(b, " ")
}

func TestContactJudgement(t *testing.T) {
	cs := readContacts(t, "", contactSheet)
	// Sheet 1 rows 2-7, then sheet 2's one row (a duplicate across sheets).
	want := "to_call invalid suppressed duplicate invalid invalid duplicate"
	if got := statuses(cs); got != want {
		t.Fatalf("statuses %q, want %q", got, want)
	}
	if cs[0].Fields[FieldLocalPresence] != "Yes" || cs[0].Phone != "+14155550132" || cs[0].Form().Get("email") != "ada@example.com" {
		t.Errorf("row 2: %+v", cs[0])
	}
	if cs[1].Field != "phone_number" || cs[1].Column != "Phone" || cs[1].Row != 3 {
		t.Errorf("row 3: %+v", cs[1])
	}
	if cs[4].Field != "email" || !strings.Contains(cs[4].Reason, "not an e-mail") {
		t.Errorf("row 6: %+v", cs[4])
	}
	if cs[5].Field != "local_presence_number" {
		t.Errorf("row 7: %+v", cs[5])
	}
}

func TestDedupeModes(t *testing.T) {
	sheet := "Phone,Email,LP\n+14155550132,,\n+14155550132,,\n"
	for _, tc := range []struct{ mode, want string }{
		{"campaign", "to_call duplicate duplicate"},
		{"agent", "to_call duplicate to_call"},
		{"none", "to_call to_call to_call"},
	} {
		cs := readContacts(t, "dedupe: "+tc.mode+"\n", sheet)
		if got := statuses(cs); got != tc.want {
			t.Errorf("dedupe %s: %q, want %q", tc.mode, got, tc.want)
		}
		if tc.mode == "none" && (cs[0].N != 0 || cs[1].N != 1 || cs[2].N != 0) {
			t.Errorf("dedupe none: occurrences %d %d %d, want 0 1 0 (per agent)", cs[0].N, cs[1].N, cs[2].N)
		}
	}
}

// TestContactReadersShareNumbersSeen: readers that share one table of
// the numbers seen, as a run and its report do, each judge every row as a
// reader alone does, under every dedupe mode: one reading after the
// other (the second finds every number recorded by the first) and both
// at once. Duplicates within a sheet, across sheets and across agents.
func TestContactReadersShareNumbersSeen(t *testing.T) {
	for _, tc := range []struct{ mode, want, occurrences string }{
		{"campaign", "to_call duplicate invalid duplicate suppressed to_call duplicate duplicate duplicate", "0 0 0 0 0 0 0 0 0"},
		{"agent", "to_call duplicate invalid duplicate suppressed to_call to_call to_call duplicate", "0 0 0 0 0 0 0 0 0"},
		{"none", "to_call to_call invalid to_call suppressed to_call to_call to_call to_call", "0 1 0 2 0 0 0 0 1"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"c.yaml": `name: c
agents: [{name: A, prompt: p}, {name: B, prompt: p}]
sheets:
  - {file: s.csv, agent: A, fields: {phone_number: Phone}}
  - {file: s2.csv, agent: B, fields: {phone_number: Phone}}
suppress: [dnc.csv]
region: US
dedupe: ` + tc.mode + "\n",
				"s.csv":   "Phone\n+14155550132\n+14155550132\nbogus\n+1 415 555 0132\n(312) 555-0182\n+12125550199\n",
				"s2.csv":  "Phone\n(415) 555-0132\n+12125550199\n+12125550199\n",
				"dnc.csv": "Do Not Call\n(312) 555-0182\n",
			}
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			sup, err := f.LoadSuppression(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			read := func(seen *numbersSeen, yield bool) []Contact {
				cr := f.NewContactReader(sup)
				if seen != nil {
					cr.seen = seen
				}
				var out []Contact
				err := cr.Each(context.Background(), func(c *Contact) error {
					out = append(out, *c)
					if yield {
						runtime.Gosched()
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
				return out
			}
			judged := func(cs []Contact) string {
				var b []string
				for _, c := range cs {
					b = append(b, fmt.Sprintf("%s %q N=%d", c.Status, c.Reason, c.N))
				}
				return strings.Join(b, "\n")
			}
			alone := read(nil, false)
			if got := statuses(alone); got != tc.want {
				t.Fatalf("alone: %q, want %q", got, tc.want)
			}
			var ns []string
			for _, c := range alone {
				ns = append(ns, strconv.Itoa(c.N))
			}
			if got := strings.Join(ns, " "); got != tc.occurrences {
				t.Fatalf("alone: occurrences %q, want %q", got, tc.occurrences)
			}
			want := judged(alone)

			seen := newNumbersSeen(nil)
			if got := judged(read(seen, false)); got != want {
				t.Errorf("the first of two readers:\n%s\nwant:\n%s", got, want)
			}
			if got := judged(read(seen, false)); got != want {
				t.Errorf("the second of two readers:\n%s\nwant:\n%s", got, want)
			}

			for range 20 {
				seen := newNumbersSeen(nil)
				var both [2][]Contact
				var wg sync.WaitGroup
				for i := range both {
					wg.Go(func() { both[i] = read(seen, true) })
				}
				wg.Wait()
				for i, cs := range both {
					if got := judged(cs); got != want {
						t.Fatalf("reader %d of two at once:\n%s\nwant:\n%s", i, got, want)
					}
				}
			}
		})
	}
}

// TestContactTimezoneNeededButUnknown: a number no zone is known for (an
// international non-geographic one, allowed here) cannot be held to the
// called person's hours, so it is invalid.
func TestContactTimezoneNeededButUnknown(t *testing.T) {
	hours := "allow_number_kinds: [international_non_geographic]\n"
	cs := readContacts(t, hours, "Phone,Email,LP\n+80012345678,,\n+14155550132,,\n")
	if cs[0].Status != Invalid || !strings.Contains(cs[0].Reason, "no time zone is known") {
		t.Errorf("+800 number: %+v", cs[0])
	}
	if cs[1].Status != ToCall {
		t.Errorf("+1 415 number: %+v", cs[1])
	}
}

// TestEncodeFormMatchesURLValues: the body callrun sends is exactly what
// url.Values would encode from the contact's form.
func TestEncodeFormMatchesURLValues(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	pieces := []string{"", "a", "Ada", " ", "+", "&", "=", "%", "é", "😀", "@", ".", "-", "_", "~", "/", "?", "#", "\x00", "\n", "\xff", "+12125550101", "O'Brien"}
	value := func() string {
		var b strings.Builder
		for range rng.Intn(4) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	// Account fields sort before, between and after the seven, as
	// File.AccountFields sorts them (capitals first).
	accountSets := [][]string{nil, {"city"}, {"Custom_1", "address", "city", "country", "phone_number1", "zip_code", "zzz"}, {"a", "ghl_contact_idx"}}
	for n := range 5000 {
		var c Contact
		for i := range c.Fields {
			c.Fields[i] = value()
		}
		for _, name := range accountSets[n%len(accountSets)] {
			c.Extra = append(c.Extra, FormValue{Name: name, Value: value()})
		}
		if got, want := c.EncodeForm(), c.Form().Encode(); got != want {
			t.Fatalf("fields %q %q:\n got %q\nwant %q", c.Fields, c.Extra, got, want)
		}
	}
}

// TestSuppressionCoversEveryReading: a suppression entry suppresses every
// number it may mean, read with the campaign's region and each sheet's,
// with and without a lost '+', and each number of a cell that holds
// several; an entry that is no number at all is a problem. Each case is
// one an adversarial pass found called against the list.
func TestSuppressionCoversEveryReading(t *testing.T) {
	files := map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets:
  - {file: de.csv, agent: A, fields: {phone_number: Phone}, region: DE}
suppress: [dnc.csv]
`,
		// The sheet's cells, as the sheet reads them.
		"de.csv": "Phone\n15123459031\n0151 23459033\n030 1234567\n+49 30 12345\n+49 30 54321\n0151 23459039\n",
		// Bare digits Excel stripped the 0 of (ambiguous with +1 512 ...),
		// German numbers under the top-level region (US by default), two
		// numbers in one cell, and one entry that is no number.
		"dnc.csv": "number\n15123459031\n0151 23459033\n030 1234567\n+49 30 12345 / +49 30 54321\nnot a number\n",
	}
	contacts, sup := judgeFilesSuppressing(t, files)
	if len(sup.Problems) != 1 || sup.Problems[0].Row != 6 {
		t.Errorf("suppression problems %+v, want row 6 alone", sup.Problems)
	}
	var got []string
	for _, c := range contacts {
		got = append(got, c.Status)
	}
	want := []string{Suppressed, Suppressed, Suppressed, Suppressed, Suppressed, ToCall}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

// TestSheetHeaderProblemsNameTheirKey: a column the sheet lacks is a
// problem at the line of the key that maps it, not at the sheet's file:
// a field, a sheet's consent, the campaign's do_not_call, a timezone
// column.
func TestSheetHeaderProblemsNameTheirKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("Phone,Email\n+14155550101,a@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `name: keys
agents:
  - {name: A, prompt: Hello.}
sheets:
  - file: a.csv
    agent: A
    fields: {phone_number: Phone, email: E-mail}
    timezone_column: TZ
    consent: {column: Consent Date, required: true}
region: US
unsafe_ignore_called_person_hours: true
do_not_call: {column: Do Not Call}
`
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var fe *FileError
	if err := f.CheckSheets(); !errors.As(err, &fe) {
		t.Fatalf("CheckSheets: %v, want a *FileError", err)
	}
	want := map[string]int{"sheets[0].fields.email": 7, "sheets[0].timezone_column": 8, "sheets[0].consent.column": 9, "do_not_call": 12}
	got := map[string]int{}
	for _, p := range fe.Problems {
		got[p.Key] = p.Line
		if p.File != path || !strings.Contains(p.Msg, "has no column") {
			t.Errorf("problem %+v: want file %s and the missing column", p, path)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("problems at %v, want %v", got, want)
	}
}

// TestNumbersSeenMatchesAMap: the dedupe table answers as a map of first
// rows would, over keys that collide in its slots, the key 0, and a table
// that grows many times from its least size (warm read between batches).
func TestNumbersSeenMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	seen := newNumbersSeen(nil)
	model := map[uint64]rowAt{}
	keys := []uint64{0, 1<<60 - 1, 1 << 50, 14155550132} // no dedupe key reaches bit 63
	for range 20_000 {
		switch rng.Intn(3) {
		case 0: // a number again
			keys = append(keys, keys[rng.Intn(len(keys))])
		case 1: // one next to another: the same slot, or the next
			keys = append(keys, keys[rng.Intn(len(keys))]+uint64(rng.Intn(3)))
		default:
			keys = append(keys, uint64(rng.Int63n(1<<50))|uint64(rng.Intn(4))<<50)
		}
	}
	for i, key := range keys {
		if i%100 == 0 {
			seen.warm(keys[i:min(i+100, len(keys))])
		}
		at := rowAt{sheet: int32(i % 3), row: int32(i)}
		want, ok := model[key]
		if !ok {
			model[key], want = at, at
		}
		if got := seen.firstRow(key, at); got != want {
			t.Fatalf("key %d at row %d: first row %v, want %v", key, i, got, want)
		}
	}
	if seen.used != len(model) || 2*seen.used > len(seen.slots) {
		t.Errorf("%d keys in %d slots, want %d keys in at least twice as many", seen.used, len(seen.slots), len(model))
	}
}

// BenchmarkNumbersSeen records 1,000,000 distinct numbers in the dedupe
// table in batches as the contact reader settles them, with and without
// reading each batch's slots ahead ([numbersSeen.warm]): ns per number.
func BenchmarkNumbersSeen(b *testing.B) {
	const n = 1_000_000
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = 10_000_000_000 + uint64(i)*7919%9_000_000_000
	}
	for _, warm := range []bool{false, true} {
		b.Run(fmt.Sprintf("warm=%v", warm), func(b *testing.B) {
			for range b.N {
				seen := newNumbersSeen(nil)
				seen.size(n)
				for start := 0; start < n; start += rowBatchSize {
					batch := keys[start:min(start+rowBatchSize, n)]
					if warm {
						seen.warm(batch)
					}
					for i, key := range batch {
						seen.firstRow(key, rowAt{row: int32(start + i)})
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/number")
		})
	}
}
