package store

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

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
	j, s, err := OpenJournal(filepath.Join(b.TempDir(), "journal"), JournalOptions{})
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
