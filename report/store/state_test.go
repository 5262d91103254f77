package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPackKey(t *testing.T) {
	seen := map[uint64]string{}
	for _, tt := range []struct {
		phone string
		agent uint32
		n     int
		ok    bool
	}{
		{"+1", 0, 0, true},
		{"+999999999999999", maxPackedAgent, maxPackedN, true},
		{"+14155550100", 3, 0, true},
		{"+14155550100", 4, 0, true},
		{"+14155550100", 3, 1, true},
		{"+01", 0, 0, false}, // would collide with +1
		{"+1000000000000000", 0, 0, false},
		{"14155550100", 0, 0, false},
		{"+1415555010x", 0, 0, false},
		{"+", 0, 0, false},
		{"", 0, 0, false},
		{"+14155550100", maxPackedAgent + 1, 0, false},
		{"+14155550100", 0, maxPackedN + 1, false},
		{"+14155550100", 0, -1, false},
	} {
		k, ok := packKey(tt.phone, tt.agent, tt.n)
		if ok != tt.ok {
			t.Errorf("packKey(%q, %d, %d) ok = %v", tt.phone, tt.agent, tt.n, ok)
			continue
		}
		if !ok {
			continue
		}
		if k == 0 {
			t.Errorf("packKey(%q, %d, %d) = 0, the empty slot", tt.phone, tt.agent, tt.n)
		}
		id := fmt.Sprint(tt.phone, tt.agent, tt.n)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s pack alike", id, other)
		}
		seen[k] = id
	}
}

func TestPackEntry(t *testing.T) {
	for _, e := range []entry{
		{},
		{last: 100, first: 100, attempts: 1, status: stUncertain},
		{last: maxOffset, first: maxOffset - deltaSpill + 1, attempts: attSpilled - 1, status: stSent},
		{last: 5, status: stPending}, // an outcome with no intent
		{last: 1 << 30, first: 10, attempts: 2, status: stFailed},
		{last: 100, first: 50, attempts: 1000, status: stSent},
	} {
		v, sp := e.pack()
		got, gotSp := unpack(v)
		if sp != gotSp {
			t.Errorf("%+v: pack spilled %v, unpack %v", e, sp, gotSp)
		}
		if got.last != e.last || got.status != e.status {
			t.Errorf("%+v: unpacked %+v", e, got)
		}
		if !sp && (got.attempts != e.attempts || (e.attempts > 0 && got.first != e.first)) {
			t.Errorf("%+v: unpacked %+v", e, got)
		}
		wantSpill := e.attempts >= attSpilled || e.last-e.first >= deltaSpill && e.attempts > 0
		if sp != wantSpill {
			t.Errorf("%+v: spilled %v, want %v", e, sp, wantSpill)
		}
	}
}

// TestStateIndex checks the compact index against a plain map, with keys
// that pack, keys that do not, and entries that spill.
func TestStateIndex(t *testing.T) {
	s := newState("", nil)
	oracle := map[Key]entry{}
	rng := rand.New(rand.NewPCG(1, 2))
	phones := []string{"+0123", "+1 555", "12345", "+123456789012345678"} // do not pack
	for range 3000 {
		phones = append(phones, fmt.Sprintf("+1%09d", rng.IntN(1e9)))
	}
	agents := make([]string, 300) // more than 256: some do not pack
	for i := range agents {
		agents[i] = fmt.Sprintf("agent-%d", i)
	}
	var off int64
	for range 100_000 {
		k := Key{agents[rng.IntN(len(agents))], phones[rng.IntN(len(phones))], rng.IntN(3) * rng.IntN(40)}
		off += int64(1 + rng.IntN(20_000)) // big steps: some deltas spill
		r := Record{Agent: k.Agent, Phone: k.Phone, N: k.N, Type: TypeIntent}
		if rng.IntN(2) == 0 {
			r.Type, r.Status = TypeOutcome, []string{OutcomeSent, OutcomeFailed, OutcomeUncertain, OutcomeRetry, OutcomeSkipped}[rng.IntN(5)]
		}
		s.apply(&r, off)

		e := oracle[k]
		if r.Type == TypeIntent {
			if e.attempts == 0 {
				e.first = off
			}
			e.attempts++
			e.status = stUncertain
		} else {
			e.status = outcomeStatus(r.Status)
			if r.Status == OutcomeSkipped && e.attempts > 0 {
				e.attempts--
			}
		}
		e.last = off
		oracle[k] = e
	}
	if s.Len() != len(oracle) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(oracle))
	}
	var counts [numStatuses]int
	for k, want := range oracle {
		got, ok := s.get(k)
		if !ok || got.last != want.last || got.status != want.status || got.attempts != want.attempts || (want.attempts > 0 && got.first != want.first) {
			t.Fatalf("%v: got %+v, %v; want %+v", k, got, ok, want)
		}
		counts[want.status]++
	}
	if counts != s.counts {
		t.Errorf("counts %v, want %v", s.counts, counts)
	}
	if len(s.wide) == 0 || len(s.spill) == 0 {
		t.Errorf("the test did not reach the spill paths: %d wide, %d spilled", len(s.wide), len(s.spill))
	}
	for _, k := range []Key{{"agent-1", "+19999999999", 0}, {"nobody", phones[5], 0}, {"agent-1", "+999", 0}} {
		if _, ok := s.get(k); ok {
			t.Errorf("%v found", k)
		}
	}
}

// TestStateConcurrentReaders runs Status and Lookup while a journal is
// being appended to (for the race detector).
func TestStateConcurrentReaders(t *testing.T) {
	j, s := openJournal(t, filepath.Join(t.TempDir(), "journal"))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := Key{"a", fmt.Sprintf("+1555%04d", i%200), 0}
				if st, ok := s.Status(k); ok && st != Uncertain && st != Sent {
					t.Errorf("%v: %q", k, st)
				}
				if e, ok := s.Lookup(k); ok && strings.HasPrefix(e.Reason, "details unavailable") {
					t.Errorf("%v: %s", k, e.Reason)
				}
				s.Counts()
				s.Len()
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := w; i < 200; i += 4 {
				phone := fmt.Sprintf("+1555%04d", i)
				if err := j.Append(intent("a", phone)); err != nil {
					t.Error(err)
				}
				if err := j.Append(outcome("a", phone, OutcomeSent)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if c := s.Counts(); c[Sent] != 200 || c[Uncertain] != 0 {
		t.Errorf("Counts %v", c)
	}
}

// writeJournal writes a journal of n contacts (an intent and an outcome
// each) straight to path, faster than Append would.
func writeJournal(tb testing.TB, path string, n int) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	agents := []string{"sales-east", "sales-west", "support"}
	for i := range n {
		agent := agents[i%len(agents)]
		phone := fmt.Sprintf("+1%010d", 2_000_000_000+i*7)
		fmt.Fprintf(w, `{"t":"intent","agent":%q,"phone":%q,"agent_id":"ag_%d","sheet":"leads.csv","row":%d,"attempt":1,"at":%q}`+"\n", agent, phone, i%3, i+2, at)
		fmt.Fprintf(w, `{"t":"outcome","agent":%q,"phone":%q,"agent_id":"ag_%d","sheet":"leads.csv","row":%d,"attempt":1,"status":"sent","http":201,"body":"{\"call_id\":\"c%d\"}","at":%q}`+"\n", agent, phone, i%3, i+2, i, at)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return 2 * n
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkReplay1M replays a journal of a million contacts and reports the
// heap the State holds after, in MiB and bytes a contact, and the replay
// speed in records/s.
func BenchmarkReplay1M(b *testing.B) {
	const contacts = 1_000_000
	path := filepath.Join(b.TempDir(), "journal")
	records := writeJournal(b, path, contacts)
	b.ResetTimer()
	var inUse uint64
	for range b.N {
		b.StopTimer()
		before := heapInUse()
		b.StartTimer()
		s, err := ReadState(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		inUse = heapInUse() - before
		if s.Len() != contacts {
			b.Fatalf("Len = %d", s.Len())
		}
		runtime.KeepAlive(s)
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(inUse)/(1<<20), "MiB")
	b.ReportMetric(float64(inUse)/contacts, "B/contact")
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppendParallel appends from 32 goroutines and reports the
// journal's throughput in durable records/s, and how many records each
// fsync carried. One op is 20,000 records, so that -benchtime 1x (make
// bench) measures something.
func BenchmarkAppendParallel(b *testing.B) {
	const goroutines, each = 32, 625
	j, s, err := OpenJournal(filepath.Join(b.TempDir(), "journal"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batches := 0
	j.sink.(*fileSink).beforeSync = func() error { batches++; return nil } // one call a commit, on the writer goroutine
	b.ResetTimer()
	for op := range b.N {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					n := (op*goroutines+g)*each + i
					r := Record{Type: TypeIntent, Agent: "sales-east", Phone: fmt.Sprintf("+1%010d", 2_000_000_000+n), AgentID: "ag_1", Sheet: "leads.csv", Row: n, Attempt: 1}
					if err := j.Append(r); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	records := float64(b.N * goroutines * each)
	b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(records/float64(batches), "records/fsync")
}

// BenchmarkLookup reads a contact's details back from the journal, as the
// report does for every row.
func BenchmarkLookup(b *testing.B) {
	const contacts = 100_000
	path := filepath.Join(b.TempDir(), "journal")
	writeJournal(b, path, contacts)
	s, err := ReadState(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	agents := []string{"sales-east", "sales-west", "support"}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		n := i % contacts
		k := Key{agents[n%len(agents)], fmt.Sprintf("+1%010d", 2_000_000_000+n*7), 0}
		if e, ok := s.Lookup(k); !ok || e.Status != Sent || e.HTTP != 201 {
			b.Fatalf("%v: %+v", k, e)
		}
	}
}

func TestFindPhone(t *testing.T) {
	j, s := openJournal(t, filepath.Join(t.TempDir(), "journal.jsonl"))
	mustAppend(t, j, intent("Alpha", "+12125550101"), intent("Beta", "+12125550102"), intent("Gamma", "+12125550102"))
	mustAppend(t, j, Record{Type: TypeIntent, Agent: "Alpha", Phone: "+12125550103", N: 2})
	for _, tt := range []struct {
		phone string
		want  Key
		ok    bool
	}{
		{"+12125550101", Key{Agent: "Alpha", Phone: "+12125550101"}, true},
		{"+12125550102", Key{Agent: "Beta", Phone: "+12125550102"}, true}, // the first agent met
		{"+12125550103", Key{}, false},                                    // only with N 2
		{"+12125550104", Key{}, false},
		{"not a phone", Key{}, false},
	} {
		if got, ok := s.FindPhone(tt.phone); got != tt.want || ok != tt.ok {
			t.Errorf("FindPhone(%q) = %v, %v; want %v, %v", tt.phone, got, ok, tt.want, tt.ok)
		}
	}
}
