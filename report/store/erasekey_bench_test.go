package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkErasedSet is a machine's erased set of 10,000 people, one
// key: a first read of the set by a new process (first-read), and
// OnErased of a run's 100,000 numbers once it is read (on-erased-100k),
// the cost a run over a sheet would pay per number.
func BenchmarkErasedSet(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	keys, err := OpenErasureFile(dir).MakeKey(ctx)
	if err != nil {
		b.Fatal(err)
	}
	erased := make([]ErasedEntry, 10_000)
	for i := range erased {
		erased[i] = ErasedEntry{Hash: keys.Hashes(fmt.Sprintf("+1415%07d", i))[0], Why: "erase"}
	}
	if _, err := OpenErasureFile(dir).AddErased(ctx, erased); err != nil {
		b.Fatal(err)
	}
	numbers := make([]string, 100_000)
	for i := range numbers {
		numbers[i] = fmt.Sprintf("+1415%07d", i*7)
	}
	b.Run("first-read", func(b *testing.B) {
		for b.Loop() {
			if _, err := OpenErasureFile(dir).OnErased(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("on-erased-100k", func(b *testing.B) {
		f := OpenErasureFile(dir)
		for b.Loop() {
			on, err := f.OnErased(ctx, numbers)
			if err != nil || len(on) != 10_000/7+1 {
				b.Fatalf("%d erased, %v", len(on), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(numbers)), "ns/number")
	})
}
