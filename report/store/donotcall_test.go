package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// dncKinds are the two do-not-call lists, each fresh for a test; open
// again within one test gives another handle on the same list, as
// another process or machine would have.
var dncKinds = []struct {
	name string
	open func(t *testing.T) DoNotCallList
}{
	{"files", func(t *testing.T) DoNotCallList { return OpenDoNotCallFile(sharedDir(t, "home")) }},
	{"postgres", func(t *testing.T) DoNotCallList {
		return pgList(openPostgres(t, sharedURL(t), "any", 0, 1))
	}},
}

func has(t *testing.T, l DoNotCallList, number string) bool {
	t.Helper()
	on, err := l.Has(context.Background(), number)
	if err != nil {
		t.Fatal(err)
	}
	return on
}

// TestDoNotCallAddRemoveKeepsHistory: an addition is seen by another
// handle at once, a second addition of the same number and a removal of
// a number not on the list write nothing, and a removal is kept as an
// entry with its reason, never deleting the addition.
func TestDoNotCallAddRemoveKeepsHistory(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			a, b := k.open(t), k.open(t)
			if has(t, b, "+14155550100") {
				t.Fatal("an empty list has a number")
			}
			at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			wrote, err := a.Add(ctx, []DoNotCallEntry{
				{Number: "+14155550100", At: at, Source: "delivery k1 of campaign spring"},
				{Number: "+14155550100", At: at, Source: "twice in one call"},
				{Number: "+14155550101", Removed: true, Source: "suppress remove", Reason: "not on it"},
			})
			if err != nil || len(wrote) != 1 {
				t.Fatalf("Add: %v, %v; want the one addition written", wrote, err)
			}
			if !has(t, b, "+14155550100") || has(t, b, "+14155550101") {
				t.Fatal("another handle does not see the addition")
			}
			if wrote, err := b.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "suppress add"}}); err != nil || len(wrote) != 0 {
				t.Fatalf("adding a number on the list again: %v, %v", wrote, err)
			}
			if wrote, err := b.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Removed: true, Source: "suppress remove", Reason: "asked to be called back"}}); err != nil || len(wrote) != 1 {
				t.Fatalf("removing: %v, %v", wrote, err)
			}
			if has(t, a, "+14155550100") {
				t.Fatal("a removed number is still on the list")
			}
			es, err := a.Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 2 || es[0].Removed || es[0].Source != "delivery k1 of campaign spring" || !es[0].At.Equal(at) ||
				!es[1].Removed || es[1].Reason != "asked to be called back" {
				t.Fatalf("entries: %+v", es)
			}
			if on := OnDoNotCall(es); len(on) != 0 {
				t.Fatalf("on the list after the removal: %v", on)
			}
		})
	}
}

// TestDoNotCallWritersAtOnce: writers in several goroutines, each with
// its own handle (as several processes would), each adding numbers of its
// own and one shared number: every number is on the list, the shared one
// added once.
func TestDoNotCallWritersAtOnce(t *testing.T) {
	ctx := context.Background()
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			const writers, each = 4, 25
			lists := make([]DoNotCallList, writers)
			for w := range lists {
				lists[w] = k.open(t)
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						es := []DoNotCallEntry{{Number: fmt.Sprintf("+1415555%d%03d", w, i), Source: "test"}, {Number: "+12125550100", Source: fmt.Sprint("writer ", w)}}
						if _, err := lists[w].Add(ctx, es); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			es, err := k.open(t).Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != writers*each+1 {
				t.Fatalf("%d entries, want %d (the shared number once)", len(es), writers*each+1)
			}
			if on := OnDoNotCall(es); len(on) != writers*each+1 {
				t.Fatalf("%d numbers on the list, want %d", len(on), writers*each+1)
			}
		})
	}
}

// TestDoNotCallFileTornLine: a writer killed mid-line leaves a torn last
// line; readers ignore it, and the next writer cuts it before appending.
func TestDoNotCallFileTornLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := OpenDoNotCallFile(dir)
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "a"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, DoNotCallFileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"number":"+14155550199","at":"2026-11-25T10:00:00Z","sou`)
	f.Close()
	reader := OpenDoNotCallFile(dir)
	if !has(t, reader, "+14155550100") || has(t, reader, "+14155550199") {
		t.Fatal("a reader took the torn line, or missed the whole one")
	}
	if _, err := OpenDoNotCallFile(dir).Add(ctx, []DoNotCallEntry{{Number: "+14155550101", Source: "b"}}); err != nil {
		t.Fatal(err)
	}
	es, err := reader.Entries(ctx)
	if err != nil || len(es) != 2 || es[1].Number != "+14155550101" {
		t.Fatalf("after the next writer: %+v, %v", es, err)
	}
	if !has(t, reader, "+14155550101") {
		t.Fatal("the reader does not see the entry written after the torn line was cut")
	}
}

// TestDoNotCallHome: CALLRUN_HOME names the list's directory; unset, the
// user's XDG state directory.
func TestDoNotCallHome(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CALLRUN_HOME", dir)
	if h, err := Home(); err != nil || h != dir {
		t.Fatalf("Home with CALLRUN_HOME: %q, %v", h, err)
	}
	t.Setenv("CALLRUN_HOME", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	h, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "state", "callrun"); h != want && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Fatalf("Home with XDG_STATE_HOME: %q, want %q", h, want)
	}
}

// TestJournalRefusesIntentsOnTheList: a journal opened with the list
// does not write an intent whose number is on it (Append says
// ErrDoNotCall), writes the other records of the same batch, and goes
// on; an outcome of a number on the list is written.
func TestJournalRefusesIntentsOnTheList(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			s, l := storeAndList(t, sk.open)
			if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "test"}}); err != nil {
				t.Fatal(err)
			}
			j := openListedJournal(t, s, l)
			// Submitted together, so that they share one commit.
			q1, _ := j.Submit(intent("A", "+14155550101"))
			q2, _ := j.Submit(intent("A", "+14155550100"))
			q3, _ := j.Submit(Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550100", Attempt: 1, Status: OutcomeSent})
			if err := q1.Wait(); err != nil {
				t.Fatalf("an intent of a number not on the list: %v", err)
			}
			if err := q2.Wait(); !errors.Is(err, ErrDoNotCall) {
				t.Fatalf("an intent of a number on the list: %v, want ErrDoNotCall", err)
			}
			if err := q3.Wait(); err != nil {
				t.Fatalf("an outcome of a number on the list: %v", err)
			}
			if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550101", Source: "opted out mid-run"}}); err != nil {
				t.Fatal(err)
			}
			if err := j.Append(intent("A", "+14155550101")); !errors.Is(err, ErrDoNotCall) {
				t.Fatalf("an intent of a number added since the journal opened: %v, want ErrDoNotCall", err)
			}
			if err := j.Append(intent("A", "+14155550102")); err != nil {
				t.Fatalf("the journal after a refusal: %v", err)
			}
			again := replayClosed(t, s, j, map[string]Status{"+14155550101": Uncertain, "+14155550100": Sent, "+14155550102": Uncertain})
			if n := again.Attempts(Key{Agent: "A", Phone: "+14155550101"}); n != 1 {
				t.Errorf("+14155550101 has %d attempts on record, want the one intent written before it opted out", n)
			}
		})
	}
}

// storeAndList opens campaign spring in the store open makes, and the
// do-not-call list a run checks there: the database's own, or the file
// in the test's home.
func storeAndList(t *testing.T, open func(t *testing.T, campaign string, index, count int) Store) (Store, DoNotCallList) {
	t.Helper()
	s := open(t, "spring", 0, 1)
	if p, ok := s.(*Postgres); ok {
		return s, pgList(p)
	}
	return s, OpenDoNotCallFile(sharedDir(t, "home"))
}

// openListedJournal takes s's lock and opens its journal checking the
// list l, both released when the test ends.
func openListedJournal(t *testing.T, s Store, l DoNotCallList) *Journal {
	t.Helper()
	unlock := lockStore(t, s)
	t.Cleanup(func() { unlock() })
	j, st, err := s.OpenJournal(context.Background(), JournalOptions{DoNotCall: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(); st.Close() })
	return j
}

// replayClosed closes j, replays s's journal and checks the status of
// each number of agent A that want gives; the state is closed when the
// test ends.
func replayClosed(t *testing.T, s Store, j *Journal, want map[string]Status) *State {
	t.Helper()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := s.ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	for phone, w := range want {
		if got, _ := again.Status(Key{Agent: "A", Phone: phone}); got != w {
			t.Errorf("%s replays as %q, want %q", phone, got, w)
		}
	}
	return again
}

// TestDoNotCallImportOverHistory: an import over a list with removals and
// re-additions, with a number twice in a batch, one added and removed in
// a batch and one in two batches, gives the same OnList and Each answers
// on files and PostgreSQL. The file list writes the number of two
// batches twice (each batch is checked against the list as it was before
// the import), the database once.
func TestDoNotCallImportOverHistory(t *testing.T) {
	ctx := context.Background()
	const a, b, c, d, e, f, g = "+14155550100", "+14155550101", "+14155550102", "+14155550103", "+14155550104", "+14155550105", "+14155550106"
	for _, k := range dncKinds {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t)
			for _, en := range []DoNotCallEntry{
				{Number: a, Source: "a"},
				{Number: b, Source: "b"},
				{Number: b, Removed: true, Source: "suppress remove", Reason: "asked"},
				{Number: c, Source: "c"},
				{Number: c, Removed: true, Source: "suppress remove", Reason: "asked"},
				{Number: c, Source: "again"},
			} {
				if _, err := l.Add(ctx, []DoNotCallEntry{en}); err != nil {
					t.Fatal(err)
				}
			}
			batches := [][]DoNotCallEntry{
				{{Number: a, Source: "import 1"}, {Number: b, Source: "import 1"}, {Number: d, Source: "import 1"}, {Number: d, Source: "import 1"},
					{Number: e, Source: "import 1"}, {Number: e, Removed: true, Source: "import 1", Reason: "in the file"}},
				{{Number: b, Source: "import 2"}, {Number: f, Source: "import 2"}},
			}
			wrote, err := l.Import(ctx, func() ([]DoNotCallEntry, error) {
				if len(batches) == 0 {
					return nil, nil
				}
				batch := batches[0]
				batches = batches[1:]
				return batch, nil
			})
			if want := map[string]int{"files": 6, "postgres": 5}[k.name]; err != nil || wrote != want {
				t.Fatalf("Import: %d, %v; want %d written", wrote, err, want)
			}
			other := k.open(t)
			on, err := other.OnList(ctx, []string{a, b, c, d, e, f, g})
			if err != nil {
				t.Fatal(err)
			}
			if w := fmt.Sprintf("map[%s:true %s:true %s:true %s:true %s:true]", a, b, c, d, f); fmt.Sprint(on) != w {
				t.Fatalf("OnList: %v, want %v", on, w)
			}
			var current []string
			if err := other.Each(ctx, true, func(en DoNotCallEntry) error {
				current = append(current, en.Number+" "+en.Source)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if w := fmt.Sprintf("[%s a %s again %s import 1 %s import 1 %s import 2]", a, c, b, d, f); fmt.Sprint(current) != w {
				t.Fatalf("Each(current): %v, want %v", current, w)
			}
			es, err := other.Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var imported []string
			for _, en := range es[6:] {
				imported = append(imported, fmt.Sprintf("%s %s %v", en.Number, en.Source, en.Removed))
			}
			w := []string{b + " import 1 false", d + " import 1 false", e + " import 1 false", e + " import 1 true"}
			if k.name == "files" {
				w = append(w, b+" import 2 false")
			}
			if w = append(w, f+" import 2 false"); fmt.Sprint(imported) != fmt.Sprint(w) {
				t.Fatalf("the import's entries: %v, want %v", imported, w)
			}
		})
	}
}

// TestDoNotCallImportStopsBetweenBatches: an import that stops (its next
// fails, or its context is cancelled as the process is killed) leaves
// whole batches and nothing of the one it was reading. When next fails,
// those before it are all on; cancelled, the file list has put on those
// before it, and PostgreSQL, which puts two sorted batches in at once,
// those of the two that had committed.
func TestDoNotCallImportStopsBetweenBatches(t *testing.T) {
	for _, k := range dncKinds {
		for _, how := range []string{"next fails", "cancelled"} {
			t.Run(k.name+"/"+how, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				l := k.open(t)
				var all []string
				batch := 0
				wrote, err := l.Import(ctx, func() ([]DoNotCallEntry, error) {
					batch++
					var es []DoNotCallEntry
					for i := range 100 {
						n := fmt.Sprintf("+1415555%d%03d", batch, i)
						all = append(all, n)
						es = append(es, DoNotCallEntry{Number: n, Source: "import x.csv"})
					}
					if batch == 3 {
						if how == "next fails" {
							return nil, errors.New("the file broke")
						}
						cancel()
					}
					return es, nil
				})
				if err == nil || wrote != 200 && (k.name == "files" || how == "next fails" || wrote%100 != 0 || wrote > 200) {
					t.Fatalf("Import: %d, %v; want an error and 200 written (whole batches of 100, at most 200, cancelled on PostgreSQL)", wrote, err)
				}
				on, err := k.open(t).OnList(context.Background(), all)
				if err != nil {
					t.Fatal(err)
				}
				for b := range 3 {
					whole := on[all[b*100]]
					for _, n := range all[b*100 : b*100+100] {
						if on[n] != whole || b == 2 && on[n] {
							t.Fatalf("%s (batch %d) on the list: %v; want its batch whole, and nothing of batch 3", n, b+1, on[n])
						}
					}
				}
				if len(on) != wrote {
					t.Fatalf("%d numbers on the list, %d written", len(on), wrote)
				}
			})
		}
	}
}

// TestDoNotCallFileMissingIsNotEmpty: a list whose first entry is written
// has its index at once; its file moved away, the index left, every read
// and write fails with ErrDoNotCallGone naming the file, and nothing is
// written; the file back, the list answers again; with neither file nor
// index, the list is new and empty.
func TestDoNotCallFileMissingIsNotEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := OpenDoNotCallFile(dir)
	if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550132", Source: "suppress add"}}); err != nil {
		t.Fatal(err)
	}
	list, index := filepath.Join(dir, DoNotCallFileName), filepath.Join(dir, DoNotCallIndexName)
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("the index after the first entry: %v", err)
	}
	if err := os.Rename(list, list+".away"); err != nil {
		t.Fatal(err)
	}
	fresh := OpenDoNotCallFile(dir) // another process: only the index says the list existed
	for name, err := range map[string]error{
		"OnList": func() error { _, err := fresh.OnList(ctx, []string{"+14155550132"}); return err }(),
		"Has":    func() error { _, err := fresh.Has(ctx, "+14155550132"); return err }(),
		"Each":   fresh.Each(ctx, true, func(DoNotCallEntry) error { return nil }),
		"Add": func() error {
			_, err := fresh.Add(ctx, []DoNotCallEntry{{Number: "+14155550133", Source: "suppress add"}})
			return err
		}(),
		"NumbersUpTo": func() error {
			_, _, err := fresh.NumbersUpTo(ctx, 10)
			return err
		}(),
	} {
		if !errors.Is(err, ErrDoNotCallGone) || !strings.Contains(err.Error(), list) || !strings.Contains(err.Error(), "restore") {
			t.Errorf("%s with the file gone: %v, want ErrDoNotCallGone naming %s", name, err, list)
		}
	}
	if _, err := os.Stat(list); !os.IsNotExist(err) {
		t.Fatalf("a new list was made: %v", err)
	}
	// The process that read the list: even with the index gone too.
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Has(ctx, "+14155550132"); !errors.Is(err, ErrDoNotCallGone) {
		t.Errorf("Has of the list that read the file, file and index gone: %v", err)
	}
	if err := os.Rename(list+".away", list); err != nil {
		t.Fatal(err)
	}
	if on, err := fresh.Has(ctx, "+14155550132"); err != nil || !on {
		t.Errorf("the file back: %v, %v", on, err)
	}
	empty := OpenDoNotCallFile(t.TempDir())
	if on, err := empty.Has(ctx, "+14155550132"); err != nil || on {
		t.Errorf("a new store: %v, %v", on, err)
	}
}
