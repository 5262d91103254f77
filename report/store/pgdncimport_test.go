package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPGDoNotCallAddAsksTheRange: a batch's numbers are checked against
// the entries between its least and greatest number when those are few,
// and one by one when there are more; both give the same answer, with
// numbers on the list, taken off, on again, and entries of numbers in
// the range that the batch does not hold.
func TestPGDoNotCallAddAsksTheRange(t *testing.T) {
	ctx := context.Background()
	const on, off, again, outside, fresh = "+14155550110", "+14155550120", "+14155550130", "+14155550135", "+14155550140"
	for _, crowded := range []bool{false, true} {
		t.Run(fmt.Sprintf("crowded=%v", crowded), func(t *testing.T) {
			l := pgList(openPostgres(t, pgURL(t), "any", 0, 1))
			history := []DoNotCallEntry{
				{Number: on, Source: "s"},
				{Number: off, Source: "s"}, {Number: off, Removed: true, Source: "suppress remove"},
				{Number: again, Source: "s"}, {Number: again, Removed: true, Source: "suppress remove"}, {Number: again, Source: "s"},
				{Number: outside, Source: "s"},
			}
			if crowded {
				// More entries in the batch's range than it has numbers:
				// the numbers are asked one by one.
				for i := range 20 {
					history = append(history, DoNotCallEntry{Number: fmt.Sprintf("+141555501%02d", 21+i%9), Source: "crowd"})
				}
			}
			for _, e := range history {
				if _, err := l.Add(ctx, []DoNotCallEntry{e}); err != nil {
					t.Fatal(err)
				}
			}
			// Ten numbers not on the list make each batch longer than the
			// entries in its range, unless crowded.
			padded := func(es []DoNotCallEntry, first int, removed bool) []DoNotCallEntry {
				for i := range 10 {
					es = append(es, DoNotCallEntry{Number: fmt.Sprintf("+141555501%02d", first+i), Removed: removed, Source: "pad"})
				}
				return es
			}
			written := func(es []DoNotCallEntry) string {
				var numbers []string
				for _, e := range es {
					if e.Source != "pad" {
						numbers = append(numbers, e.Number)
					}
				}
				return fmt.Sprint(numbers)
			}
			wrote, err := l.Add(ctx, padded([]DoNotCallEntry{
				{Number: on, Source: "import"}, {Number: off, Source: "import"},
				{Number: again, Source: "import"}, {Number: fresh, Source: "import"},
			}, 90, false))
			if w := fmt.Sprint([]string{off, fresh}); err != nil || written(wrote) != w || len(wrote) != 12 {
				t.Fatalf("Add wrote %s (%d in all), %v; want %s (taken off before, new) and the ten others", written(wrote), len(wrote), err, w)
			}
			// Taking off: only what is on is taken off.
			wrote, err = l.Add(ctx, padded([]DoNotCallEntry{
				{Number: on, Removed: true, Source: "r"}, {Number: "+14155550115", Removed: true, Source: "r"}, {Number: again, Removed: true, Source: "r"},
			}, 80, true))
			if w := fmt.Sprint([]string{on, again}); err != nil || written(wrote) != w || len(wrote) != 2 {
				t.Fatalf("Add (taking off) wrote %s (%d in all), %v; want %s", written(wrote), len(wrote), err, w)
			}
		})
	}
}

// TestPGDoNotCallHashCheckPlannedByIndex: on a list of many entries
// whose table was never analyzed (as just after a large import), the
// check whether the list holds a keyed hash is answered by the partial
// index, not by reading the whole table.
func TestPGDoNotCallHashCheckPlannedByIndex(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "any", 0, 1)
	if _, err := p.pool.Exec(ctx, `ALTER TABLE callrun_do_not_call SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call (number, at, source) SELECT '+1415' || lpad(i::text, 7, '0'), now(), 'import' FROM generate_series(1, 200000) AS i`); err != nil {
		t.Fatal(err)
	}
	var analyzed bool
	if err := p.pool.QueryRow(ctx, `SELECT reltuples >= 0 FROM pg_class WHERE relname = 'callrun_do_not_call'`).Scan(&analyzed); err != nil || analyzed {
		t.Fatalf("the table was analyzed (%v, %v): the test needs one that is not", analyzed, err)
	}
	rows, err := p.pool.Query(ctx, `EXPLAIN SELECT `+pgListHoldsHash)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "callrun_do_not_call_hash") {
		t.Fatalf("the check is planned as:\n%s\nwant the partial index callrun_do_not_call_hash", plan)
	}
	var holds bool
	if err := p.pool.QueryRow(ctx, `SELECT `+pgListHoldsHash).Scan(&holds); err != nil || holds {
		t.Fatalf("the list holds a hash: %v, %v; want false", holds, err)
	}
}

// TestPGDoNotCallImportSideBySide: sorted batches, which go in two at
// once, and batches whose numbers meet, which wait for those before
// them, put each number on once, whatever order the batches commit in.
func TestPGDoNotCallImportSideBySide(t *testing.T) {
	ctx := context.Background()
	l := pgList(openPostgres(t, pgURL(t), "any", 0, 1))
	var batches [][]DoNotCallEntry
	var all []string
	for b := range 6 {
		var es []DoNotCallEntry
		for i := range 50 {
			n := fmt.Sprintf("+1415555%d%03d", b, i)
			all = append(all, n)
			es = append(es, DoNotCallEntry{Number: n, Source: "import"})
		}
		batches = append(batches, es)
	}
	// A seventh batch holds numbers of the first and the last: it waits
	// for them, and finds them on.
	batches = append(batches, []DoNotCallEntry{{Number: all[0], Source: "import"}, {Number: all[len(all)-1], Source: "import"}})
	wrote, err := l.Import(ctx, func() ([]DoNotCallEntry, error) {
		if len(batches) == 0 {
			return nil, nil
		}
		b := batches[0]
		batches = batches[1:]
		return b, nil
	})
	if err != nil || wrote != len(all) {
		t.Fatalf("Import wrote %d, %v; want %d", wrote, err, len(all))
	}
	es, err := l.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Number)
	}
	slices.Sort(got)
	if !slices.Equal(got, all) {
		t.Fatalf("%d entries, want each of the %d numbers once", len(got), len(all))
	}
}
