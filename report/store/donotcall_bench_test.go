package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkDoNotCallFileHas is the cost of the check a run makes before
// each call start with the list in a file of 10,000 numbers, nothing
// appended since the last look.
func BenchmarkDoNotCallFileHas(b *testing.B) {
	ctx := context.Background()
	l := OpenDoNotCallFile(b.TempDir())
	es := make([]DoNotCallEntry, 10000)
	for i := range es {
		es[i] = DoNotCallEntry{Number: fmt.Sprintf("+1415555%04d", i), Source: "bench"}
	}
	if _, err := l.Add(ctx, es); err != nil {
		b.Fatal(err)
	}
	reader := OpenDoNotCallFile(l.dir)
	b.ResetTimer()
	for b.Loop() {
		if _, err := reader.Has(ctx, "+12125550100"); err != nil {
			b.Fatal(err)
		}
	}
}
