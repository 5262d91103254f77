package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestPGCallLinesUseIndex: the query listen asks of a call id goes by the
// index of the journal's call ids (migration 12), not by a scan of the
// campaign's lines, in a table of some tens of thousands of lines of two
// campaigns; and it finds the line.
func TestPGCallLinesUseIndex(t *testing.T) {
	ctx := context.Background()
	p := openPostgres(t, pgURL(t), "idx", 0, 1)
	for _, c := range []string{"idx", "other"} {
		if err := fillPGJournal(ctx, p, c, 10000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.pool.Exec(ctx, `ANALYZE callrun_journal`); err != nil {
		t.Fatal(err)
	}
	rows, err := p.pool.Query(ctx, `EXPLAIN `+callLinesSQL, "idx", []string{"call_bench_77"})
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	var line string
	if _, err := pgx.ForEachRow(rows, []any{&line}, func() error { plan = append(plan, line); return nil }); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(plan, "\n"); !strings.Contains(text, "callrun_journal_call_id") || strings.Contains(text, "Seq Scan") {
		t.Errorf("the plan of a call id's lines:\n%s\nwant a scan of the index callrun_journal_call_id", text)
	}
	keys, err := CallKeysOf(ctx, p, map[string]bool{"call_bench_77": true, "call_none": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys["call_bench_77"].Phone != benchPhone(77) {
		t.Errorf("CallKeysOf: %v, want call_bench_77 of %s", keys, benchPhone(77))
	}
}

func benchPhone(i int) string { return fmt.Sprintf("+1415%07d", i) }

// fillPGJournal inserts the lines of n contacts of campaign, an intent
// and an outcome each, as the journal writes them.
func fillPGJournal(ctx context.Context, p *Postgres, campaign string, n int) error {
	_, err := p.pool.Exec(ctx, `
INSERT INTO callrun_journal (campaign, line)
SELECT $1, CASE WHEN k = 0
 THEN '{"t":"intent","agent":"Spring Promo","phone":"+1415' || lpad(i::text, 7, '0') || '","agent_id":"agent_1","sheet":"leads.csv","row":' || i || ',"attempt":1,"at":"2026-11-21T09:30:00.123456789Z"}'
 ELSE '{"t":"outcome","agent":"Spring Promo","phone":"+1415' || lpad(i::text, 7, '0') || '","agent_id":"agent_1","sheet":"leads.csv","row":' || i || ',"attempt":1,"status":"sent","http":201,"body":"{\"status\":\"success\",\"call_id\":\"call_bench_' || i || '\"}","call_id":"call_bench_' || i || '","at":"2026-11-21T09:30:01.123456789Z"}'
 END
FROM generate_series(0, $2::int - 1) AS i, generate_series(0, 1) AS k ORDER BY i, k`, campaign, n)
	return err
}

// fillFileJournal writes the journal file of n contacts, an intent and
// an outcome each, as the journal writes them.
func fillFileJournal(path string, n int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	at := time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC)
	for i := range n {
		r := Record{Type: TypeIntent, Agent: "Spring Promo", Phone: benchPhone(i), AgentID: "agent_1", Sheet: "leads.csv", Row: i, Attempt: 1, At: at}
		if err := enc.Encode(r); err != nil {
			return err
		}
		id := "call_bench_" + strconv.Itoa(i)
		r.Type, r.Status, r.HTTP, r.CallID = TypeOutcome, OutcomeSent, 201, id
		r.Body = `{"status":"success","call_id":"` + id + `"}`
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// BenchmarkNewCallID is what the first delivery of a call id the journal
// does not hold (a call the service placed on its own) costs listen to
// tell it is not callrun's, in a campaign's journal of
// CALLRUN_BENCH_CONTACTS contacts (10000 unless set; 1000000 is a large
// campaign's), an intent and a sent outcome each, in files and in
// PostgreSQL (CALLRUN_BENCH_STORE: files, postgres; both unless set).
// Each op first appends one more contact's lines (the campaign goes on),
// then asks. scan: every question reads the journal (CallKeysOf in
// files, as the branch hredial did; in PostgreSQL the query hredial
// asked, a scan of the campaign's lines decoding JSON). index: the
// CallIndex listen keeps (files: what was appended since; PostgreSQL:
// the index of migration 12). index-first: a CallIndex's first answer
// (a listen started), which reads a journal file whole.
func BenchmarkNewCallID(b *testing.B) {
	n := 10000
	if v := os.Getenv("CALLRUN_BENCH_CONTACTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	which := os.Getenv("CALLRUN_BENCH_STORE")
	ctx := context.Background()
	ask := map[string]bool{"call_service_redial": true}
	if which == "" || which == "files" {
		b.Run(fmt.Sprintf("files/contacts=%d", n), func(b *testing.B) {
			s := Files{Dir: b.TempDir()}
			if err := fillFileJournal(s.Journal(), n); err != nil {
				b.Fatal(err)
			}
			more := n
			grow := func(b *testing.B) {
				f, err := os.OpenFile(s.Journal(), os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				more++
				id := "call_bench_" + strconv.Itoa(more)
				fmt.Fprintf(f, `{"t":"intent","agent":"Spring Promo","phone":"%s","attempt":1,"at":"2026-11-21T09:30:00Z"}`+"\n", benchPhone(more))
				fmt.Fprintf(f, `{"t":"outcome","agent":"Spring Promo","phone":"%s","attempt":1,"status":"sent","call_id":"%s","at":"2026-11-21T09:30:01Z"}`+"\n", benchPhone(more), id)
				f.Close()
			}
			run := func(name string, keys func() func(context.Context, map[string]bool) (map[string]Key, error), perOp bool) {
				b.Run(name, func(b *testing.B) {
					k := keys()
					if !perOp {
						if _, err := k(ctx, ask); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					for range b.N {
						b.StopTimer()
						grow(b)
						if perOp {
							k = keys()
						}
						b.StartTimer()
						got, err := k(ctx, ask)
						if err != nil || len(got) != 0 {
							b.Fatal(got, err)
						}
					}
				})
			}
			run("scan", func() func(context.Context, map[string]bool) (map[string]Key, error) {
				return func(ctx context.Context, ids map[string]bool) (map[string]Key, error) { return CallKeysOf(ctx, s, ids) }
			}, false)
			run("index", func() func(context.Context, map[string]bool) (map[string]Key, error) { return NewCallIndex(s).Keys }, false)
			run("index-first", func() func(context.Context, map[string]bool) (map[string]Key, error) { return NewCallIndex(s).Keys }, true)
		})
	}
	if which == "" || which == "postgres" {
		b.Run(fmt.Sprintf("postgres/contacts=%d", n), func(b *testing.B) {
			p := openPostgres(b, pgtest.URL(b), "bench", 0, 1)
			if err := fillPGJournal(ctx, p, "bench", n); err != nil {
				b.Fatal(err)
			}
			if _, err := p.pool.Exec(ctx, `ANALYZE callrun_journal`); err != nil {
				b.Fatal(err)
			}
			more := n
			grow := func(b *testing.B) {
				more++
				if _, err := p.pool.Exec(ctx, `INSERT INTO callrun_journal (campaign, line) VALUES ('bench', $1), ('bench', $2)`,
					fmt.Sprintf(`{"t":"intent","agent":"Spring Promo","phone":"%s","attempt":1,"at":"2026-11-21T09:30:00Z"}`, benchPhone(more)),
					fmt.Sprintf(`{"t":"outcome","agent":"Spring Promo","phone":"%s","attempt":1,"status":"sent","call_id":"call_bench_%d","at":"2026-11-21T09:30:01Z"}`, benchPhone(more), more)); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("scan", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					grow(b)
					b.StartTimer()
					var mine bool
					// hredial's query (report/store/servicestarts.go at 1d879fb).
					if err := p.pool.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM callrun_journal
WHERE campaign = $1 AND line LIKE '%"call_id":%' AND (line::jsonb ->> 'call_id') = $2)`, "bench", "call_service_redial").Scan(&mine); err != nil || mine {
						b.Fatal(mine, err)
					}
				}
			})
			b.Run("index", func(b *testing.B) {
				x := NewCallIndex(p)
				for range b.N {
					b.StopTimer()
					grow(b)
					b.StartTimer()
					if got, err := x.Keys(ctx, ask); err != nil || len(got) != 0 {
						b.Fatal(got, err)
					}
				}
			})
		})
	}
}
