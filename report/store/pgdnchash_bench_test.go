package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/callrun/callrun/report/store/pgtest"
)

// BenchmarkPGAppendChecked appends intents from 32 goroutines to a
// PostgreSQL journal that checks the database's do-not-call list (one
// plain entry; with hashed, one erased person's hash too) and reports
// durable intents/s: what the list's hashed look costs each commit.
func BenchmarkPGAppendChecked(b *testing.B) {
	for _, hashed := range []bool{false, true} {
		b.Run(fmt.Sprintf("hashed=%v", hashed), func(b *testing.B) {
			ctx := context.Background()
			p := openPostgres(b, pgtest.URL(b), "bench", 0, 1)
			l := pgList(p)
			if _, err := l.Add(ctx, []DoNotCallEntry{{Number: "+14155550100", Source: "bench"}}); err != nil {
				b.Fatal(err)
			}
			if hashed {
				keys := pgMakeKey(b, p)
				if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) VALUES ('', $1, now(), false, 'erase', '')`, keys.Hashes("+14155550101")[0]); err != nil {
					b.Fatal(err)
				}
			}
			unlock, err := p.Lock(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer unlock()
			j, st, err := p.OpenJournal(ctx, JournalOptions{DoNotCall: l})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			const goroutines, each = 32, 100
			b.ResetTimer()
			for op := range b.N {
				var wg sync.WaitGroup
				for g := range goroutines {
					wg.Go(func() {
						for i := range each {
							n := (op*goroutines+g)*each + i
							if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: fmt.Sprintf("+1%010d", 2_000_000_000+n), Attempt: 1}); err != nil {
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
			b.ReportMetric(float64(b.N*goroutines*each)/b.Elapsed().Seconds(), "intents/s")
		})
	}
}

// BenchmarkPGDoNotCallOne adds one number to, and asks one number
// of, a PostgreSQL do-not-call list that holds erased people's hashes,
// as listen's intake does for each opt-out: what one look costs as the
// erased people on the list grow.
func BenchmarkPGDoNotCallOne(b *testing.B) {
	for _, erased := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("erased=%d", erased), func(b *testing.B) {
			ctx := context.Background()
			p := openPostgres(b, pgtest.URL(b), "bench", 0, 1)
			l := pgList(p)
			keys := pgMakeKey(b, p)
			hashes := make([]string, erased)
			for i := range hashes {
				hashes[i] = keys.Hashes(fmt.Sprintf("+1212%07d", i))[0]
			}
			if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason) SELECT '', h, now(), false, 'erase', '' FROM unnest($1::text[]) AS u(h)`, hashes); err != nil {
				b.Fatal(err)
			}
			if _, err := p.pool.Exec(ctx, `ANALYZE callrun_do_not_call`); err != nil {
				b.Fatal(err)
			}
			b.Run("Add", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if _, err := l.Add(ctx, []DoNotCallEntry{{Number: fmt.Sprintf("+1415%07d", i), Source: "bench"}}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Has", func(b *testing.B) {
				for b.Loop() {
					if _, err := l.Has(ctx, "+14155550100"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
