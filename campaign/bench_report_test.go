package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// BenchmarkWriteReport writes the report files of a campaign of 20,000
// and 100,000 contacts (the plan benchmark's sheet: 1% invalid, 0.1%
// suppressed; nine in ten of the others sent, the rest pending), part by
// part and whole. read is the pass over the sheets and the journal that
// every row needs (reading and normalising the sheet, looking the contact
// up in the journal); csv is that and report.csv with what report.html
// gathers; xlsx that and report.xlsx; html writes report.html from what
// was gathered; all is WriteReport, which writes both files in one pass.
// µs/contact is a part's time over the contacts, cpu-µs/contact this
// process's CPU time (the wall clock of a shared machine counts others'
// work).
func BenchmarkWriteReport(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprintf("contacts=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			path := writePlanBenchCampaign(b, dir, n)
			f, err := Load(path, LoadOptions{Offline: true})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			sup, err := f.LoadSuppression(ctx)
			if err != nil {
				b.Fatal(err)
			}
			st := benchReportState(b, f, sup, filepath.Join(dir, "journal.jsonl"))
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				b.Fatal(err)
			}
			at := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
			newSum := func() *report.Summary {
				s := &report.Summary{Campaign: f.Name, StartedAt: at.Add(-20 * time.Second), CallsThisRun: n, Ending: report.EndComplete}
				s.Finish(at)
				return s
			}
			of := reportOf{at: func() time.Time { return at }, end: func() RunEnd { return RunEnd{Ending: report.EndComplete} }}
			// part measures fn, given a page that writeRows gathered
			// (made before, unmeasured: writing the page uses it up).
			part := func(name string, fn func(sum *report.Summary, page *report.Page) error) {
				b.Run(name, func(b *testing.B) {
					var cpu time.Duration
					for range b.N {
						b.StopTimer()
						page, err := writeRows(ctx, f, st, sup, nil, nil, out, newSum(), of, nil)
						if err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						c0 := benchRusage()
						if err := fn(newSum(), page); err != nil {
							b.Fatal(err)
						}
						cpu += benchRusage() - c0
						page.Close()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*n), "µs/contact")
					b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*n), "cpu-µs/contact")
					b.ReportMetric(0, "ns/op")
				})
			}
			// each passes over the sheets as the report does, and calls fn
			// with each contact's row.
			each := func(sum *report.Summary, fn func(c *Contact, row report.Row) error) error {
				return f.NewContactReader(sup).Each(ctx, func(c *Contact) error {
					row := ReportRow(f, st, c)
					sum.Add(row)
					return fn(c, row)
				})
			}
			part("read", func(sum *report.Summary, _ *report.Page) error {
				return each(sum, func(*Contact, report.Row) error { return nil })
			})
			part("csv", func(sum *report.Summary, _ *report.Page) error {
				w, err := report.NewCSVWriter(filepath.Join(out, ReportCSV), report.Columns{Extra: f.AccountFields()})
				if err != nil {
					return err
				}
				hours, _ := f.CallingHours()
				page := newReportPage(f, hours, of, out)
				defer page.Close()
				if err := each(sum, func(c *Contact, row report.Row) error {
					page.add(c, &row, page.explain(c, &row))
					return w.Write(row)
				}); err != nil {
					return err
				}
				return w.Commit()
			})
			part("xlsx", func(sum *report.Summary, _ *report.Page) error {
				w, err := report.NewXLSXWriter(filepath.Join(out, ReportXLSX), report.Columns{Extra: f.AccountFields()})
				if err != nil {
					return err
				}
				if err := each(sum, func(_ *Contact, row report.Row) error { return w.Write(row) }); err != nil {
					return err
				}
				return w.Commit()
			})
			part("html", func(sum *report.Summary, page *report.Page) error {
				return report.WriteHTML(filepath.Join(out, ReportHTML), sum, page)
			})
			part("summary", func(sum *report.Summary, _ *report.Page) error {
				return report.WriteSummary(filepath.Join(out, SummaryJSON), sum)
			})
			part("all", func(sum *report.Summary, _ *report.Page) error {
				return WriteReport(ctx, f, st, sup, nil, out, sum)
			})
		})
	}
}

// benchReportState writes a journal in which nine in ten of the contacts
// to call were sent, and replays it.
func benchReportState(b *testing.B, f *File, sup *Suppression, path string) *store.State {
	b.Helper()
	jf, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(jf)
	at := time.Date(2026, 11, 25, 17, 59, 40, 0, time.UTC)
	write := func(r store.Record) {
		if err := enc.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	write(store.Record{Type: store.TypeRun, Note: "bench", At: at})
	i := 0
	err = f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Status != ToCall {
			return nil
		}
		if i++; i%10 == 0 {
			return nil
		}
		at = at.Add(time.Millisecond)
		r := store.Record{Type: store.TypeIntent, Agent: f.Agents[c.Agent].Name, Phone: c.Phone, N: c.N, AgentID: "agent_1",
			Sheet: f.Sheets[c.Sheet].File, Row: c.Row, Attempt: 1, At: at}
		write(r)
		r.Type, r.Status, r.HTTP, r.Body = store.TypeOutcome, store.OutcomeSent, 200, `{"status":"success","call_id":"call_1"}`
		write(r)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	write(store.Record{Type: store.TypeEnd, Note: report.EndComplete, At: at})
	if err := jf.Close(); err != nil {
		b.Fatal(err)
	}
	j, st, err := store.OpenJournal(path, store.JournalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		j.Close()
		st.Close()
	})
	return st
}
