package store

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCallStarts1M is a machine's call starts file after months of
// campaigns, 1,000,000 starts older than 30 days and 10,000 from the last
// days: a compaction of it (compact), and a run's first read of the file
// (its first batch's), before the compaction (read-before), after it
// (read-after), and after it with the run's call to Compact, which finds
// nothing to move, first (read-after-with-compact).
func BenchmarkCallStarts1M(b *testing.B) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	src := filepath.Join(b.TempDir(), "src.jsonl")
	writeBenchStarts(b, src, now, 1_000_000, 10_000)
	fresh := func(b *testing.B) string {
		dir := b.TempDir()
		copyFile(b, src, filepath.Join(dir, CallStartsFileName))
		return dir
	}
	firstRead := func(b *testing.B, dir string, compact bool) {
		l := OpenCallStartsFile(dir)
		if compact {
			if moved, _, err := l.Compact(now); err != nil || moved != 0 {
				b.Fatalf("moved %d, %v", moved, err)
			}
		}
		tx, err := l.begin()
		if err != nil {
			b.Fatal(err)
		}
		tx.end()
	}
	b.Run("compact", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir := fresh(b)
			l := OpenCallStartsFile(dir)
			b.StartTimer()
			moved, _, err := l.Compact(now)
			if err != nil || moved != 1_000_000 {
				b.Fatalf("moved %d, %v", moved, err)
			}
		}
	})
	b.Run("read-before", func(b *testing.B) {
		dir := fresh(b)
		for b.Loop() {
			firstRead(b, dir, false)
		}
	})
	dir := fresh(b)
	if _, _, err := OpenCallStartsFile(dir).Compact(now); err != nil {
		b.Fatal(err)
	}
	b.Run("read-after", func(b *testing.B) {
		for b.Loop() {
			firstRead(b, dir, false)
		}
	})
	b.Run("read-after-with-compact", func(b *testing.B) {
		for b.Loop() {
			firstRead(b, dir, true)
		}
	})
}

// writeBenchStarts writes old starts from 60 days before now and recent
// ones from the last 5 days to path, with IDs and names as a run writes
// them.
func writeBenchStarts(b *testing.B, path string, now time.Time, old, recent int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var buf []byte
	write := func(at time.Time, i int) {
		line, err := json.Marshal(CallStart{Number: fmt.Sprintf("+1415%07d", i%3_000_000), At: at,
			ID:       fmt.Sprintf("/home/ops/campaigns/.callrun/spring-%d/journal.jsonl agent_7f3a +1415%07d %d 1", i/50_000, i%3_000_000, i),
			Campaign: fmt.Sprintf("spring-%d", i/50_000), Agent: "agent_7f3a"})
		if err != nil {
			b.Fatal(err)
		}
		buf = append(append(buf, line...), '\n')
		if len(buf) > 1<<20 {
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	for i := range old {
		write(now.Add(-60*24*time.Hour).Add(time.Duration(i)*time.Second), i)
	}
	for i := range recent {
		write(now.Add(-5*24*time.Hour).Add(time.Duration(i)*30*time.Second), old+i)
	}
	if _, err := f.Write(buf); err != nil {
		b.Fatal(err)
	}
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
}
