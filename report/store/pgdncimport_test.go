package store

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

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
