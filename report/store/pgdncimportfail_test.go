package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPGDoNotCallImportFailsWhole: when a batch of an import fails while
// another goes in beside it, Import returns that batch's error, and what
// it says it wrote is what the list holds: whole batches, nothing of the
// one that failed nor of those after it. A cancelled import does the same.
func TestPGDoNotCallImportFailsWhole(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"bad batch", "cancelled"} {
		t.Run(how, func(t *testing.T) {
			l := pgList(openPostgres(t, pgURL(t), "any", 0, 1))
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var batches [][]DoNotCallEntry
			for b := range 8 {
				var es []DoNotCallEntry
				for i := range 200 {
					es = append(es, DoNotCallEntry{Number: fmt.Sprintf("+1415%d%06d", b, i), Source: "import"})
				}
				batches = append(batches, es)
			}
			if how == "bad batch" {
				// PostgreSQL refuses a NUL in text: the fourth batch's COPY fails.
				batches[3][150].Source = "imp\x00ort"
			}
			asked := 0
			wrote, err := l.Import(ctx, func() ([]DoNotCallEntry, error) {
				if asked == 4 && how == "cancelled" {
					cancel()
				}
				if asked == len(batches) {
					return nil, nil
				}
				asked++
				return batches[asked-1], nil
			})
			if err == nil {
				t.Fatalf("Import wrote %d and returned no error", wrote)
			}
			if how == "cancelled" && !errors.Is(err, context.Canceled) {
				t.Fatalf("Import returned %v; want context.Canceled", err)
			}
			if how == "bad batch" && !strings.Contains(err.Error(), "do-not-call") {
				t.Fatalf("Import returned %v; want the write's error", err)
			}
			es, err2 := l.Entries(context.Background())
			if err2 != nil {
				t.Fatal(err2)
			}
			if len(es) != wrote || wrote%200 != 0 {
				t.Fatalf("Import says it wrote %d (%v); the list holds %d entries; want whole batches of 200, the same", wrote, err, len(es))
			}
			held := map[string]bool{}
			for _, e := range es {
				held[e.Number] = true
			}
			for b, batch := range batches {
				in := 0
				for _, e := range batch {
					if held[e.Number] {
						in++
					}
				}
				if in != 0 && in != len(batch) {
					t.Fatalf("batch %d: %d of its %d numbers on the list", b, in, len(batch))
				}
				if how == "bad batch" && b == 3 && in != 0 {
					t.Fatalf("the failed batch is on the list")
				}
			}
			t.Logf("%s: wrote %d, asked %d batches: %v", how, wrote, asked, err)
		})
	}
}
