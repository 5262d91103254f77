package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkEraseJournal1M erases 10,000 people from the journal of a
// campaign of 1,000,000 contacts, each called once (an intent and a sent
// outcome, as a run writes them: about 390 MB): the file rewrite of
// [Files.EraseJournal] (erase), and a resume's replay of the journal
// with the keys and a Status of every contact, erased (resume) and, for
// the cost of finding the erased by hash, not (resume-unerased).
func BenchmarkEraseJournal1M(b *testing.B) {
	const contacts, erased = 1_000_000, 10_000
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	src := filepath.Join(b.TempDir(), "src.jsonl")
	numbers := writeBenchJournal(b, src, at, contacts)
	gone := make([]string, 0, erased)
	for i := 0; i < contacts; i += contacts / erased {
		gone = append(gone, numbers[i])
	}
	fresh := func(b *testing.B) Files {
		s := Files{Dir: b.TempDir()}
		copyFile(b, src, s.Journal())
		return s
	}
	b.Run("erase", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := fresh(b)
			b.StartTimer()
			n, err := s.EraseJournal(context.Background(), gone, EraseOptions{Keys: theTestKeys, At: at})
			if err != nil || n.Tombstones != erased {
				b.Fatalf("%+v, %v", n, err)
			}
		}
	})
	resume := func(b *testing.B, erase bool) {
		s := fresh(b)
		if erase {
			if _, err := s.EraseJournal(context.Background(), gone, EraseOptions{Keys: theTestKeys, At: at}); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			j, st, err := OpenJournal(s.Journal(), JournalOptions{Keys: theTestKeys})
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range numbers {
				if _, ok := st.Status(Key{Agent: "Spring Promo", Phone: p}); !ok {
					b.Fatalf("%s has no status", p)
				}
			}
			j.Close()
			st.Close()
		}
	}
	b.Run("resume", func(b *testing.B) { resume(b, true) })
	b.Run("resume-unerased", func(b *testing.B) { resume(b, false) })
}

// writeBenchJournal writes a journal of n contacts at path, each an
// intent and a sent outcome, and returns their numbers.
func writeBenchJournal(b *testing.B, path string, at time.Time, n int) []string {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	numbers := make([]string, n)
	for i := range n {
		numbers[i] = fmt.Sprintf("+1415%07d", i)
		for _, r := range []Record{
			{Type: TypeIntent, Agent: "Spring Promo", Phone: numbers[i], AgentID: "agent_8f2c1d", Sheet: "leads.csv", Row: i + 2, Attempt: 1, At: at},
			{Type: TypeOutcome, Agent: "Spring Promo", Phone: numbers[i], AgentID: "agent_8f2c1d", Sheet: "leads.csv", Row: i + 2, Attempt: 1,
				Status: OutcomeSent, HTTP: 201, Body: `{"status":"success","call_id":"call_` + numbers[i][1:] + `"}`, CallID: "call_" + numbers[i][1:], At: at},
		} {
			line, err := encodeRecord(&r)
			if err != nil {
				b.Fatal(err)
			}
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return numbers
}
