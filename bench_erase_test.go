package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
)

// BenchmarkErase erases 10,000 people from a store whose campaign has
// 1,000,000 contacts, each called once: a journal of an intent and an
// outcome a contact, as many call starts and webhook deliveries, a
// do-not-call list of 10,000 numbers and the sheet, with the callrun
// binary in a process of its own (`callrun erase --file`, every step,
// the report of 1,000,000 rows rewritten). erase-seconds is its wall
// time, erase-cpu-seconds its user and system time, peak-RSS-MiB its
// peak resident set. The bound is 60 s. CALLRUN_BENCH_ERASE_CONTACTS
// changes the campaign's size; a hundredth of it is erased.
func BenchmarkErase(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_ERASE_CONTACTS", 1_000_000)
	bin := callrunBinary(b)
	for range b.N {
		b.StopTimer()
		dir, people := writeEraseStore(b, n, 0)
		b.StartTimer()
		run, first := benchEraseChild(b, bin, dir, people, n)
		for _, f := range []string{".callrun/c/journal.jsonl", ".callrun/c/deliveries.jsonl", ".callrun/c/report.csv", "home/call-starts.jsonl", "home/do-not-call.jsonl"} {
			if body, err := os.ReadFile(filepath.Join(dir, f)); err != nil || strings.Contains(string(body), first) {
				b.Fatalf("%s after the erase: holds the first erased person %v, %v", f, err == nil, err)
			}
		}
		b.ReportMetric(run.elapsed.Seconds(), "erase-seconds")
		b.ReportMetric(run.cpu.Seconds(), "erase-cpu-seconds")
		b.ReportMetric(run.rssMiB, "peak-RSS-MiB")
	}
}

// writeEraseStore writes BenchmarkErase's campaign, its sheet and store
// of n contacts, and the file of the people to erase (every hundredth
// contact, whose number is also on the do-not-call list). With dueAgo,
// those people were called that long ago, and the rest an hour ago: the
// journal holds their records first, as a journal written over time
// would.
func writeEraseStore(b *testing.B, n int, dueAgo time.Duration) (dir, people string) {
	b.Helper()
	dir = b.TempDir()
	state, home := filepath.Join(dir, ".callrun", "c"), filepath.Join(dir, "home")
	for _, d := range []string{state, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	files := map[string]*bufio.Writer{}
	open := func(path string) *bufio.Writer {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		w := bufio.NewWriterSize(f, 1<<20)
		files[path] = w
		return w
	}
	journalPath := filepath.Join(state, "journal.jsonl")
	sheet, journal := open(filepath.Join(dir, "people.csv")), open(journalPath)
	starts, deliveries := open(filepath.Join(home, "call-starts.jsonl")), open(filepath.Join(state, "deliveries.jsonl"))
	dnc, erase := open(filepath.Join(home, "do-not-call.jsonl")), open(filepath.Join(dir, "erase.csv"))
	now := time.Now().UTC()
	at, dueAt := now.Add(-time.Hour).Format(time.RFC3339Nano), now.Add(-time.Hour-dueAgo).Format(time.RFC3339Nano)
	sheet.WriteString("Phone,Name\n")
	erase.WriteString("Phone\n")
	fmt.Fprintf(journal, `{"t":"run","note":"callrun run c.yaml","at":%q}`+"\n", dueAt)
	write := func(i int, at string) {
		area, exch, line := benchPhone(i)
		phone := fmt.Sprintf("+1%s%d%04d", area, exch, line)
		for _, t := range []string{`"t":"intent"`, `"t":"outcome","status":"sent","http":201`} {
			fmt.Fprintf(journal, `{%s,"agent":"A","phone":%q,"sheet":"people.csv","row":%d,"attempt":1,"at":%q}`+"\n", t, phone, i+2, at)
		}
		fmt.Fprintf(starts, `{"number":%q,"at":%q,"id":%q,"campaign":"c","agent":"A"}`+"\n", phone, at, journalPath+" A "+phone+" 0 1")
		fmt.Fprintf(deliveries, `{"key":"k%d","at":%q,"event":"call.ended","call_id":"call_%d","fields":{"data.customer.number":%q,"data.status":"completed"}}`+"\n", i, at, i, phone)
	}
	for i := range n {
		area, exch, line := benchPhone(i)
		phone := fmt.Sprintf("+1%s%d%04d", area, exch, line)
		fmt.Fprintf(sheet, "%s,Person %d\n", phone, i)
		if i%100 == 0 {
			fmt.Fprintf(dnc, `{"number":%q,"at":%q,"source":"suppress add"}`+"\n", phone, at)
			fmt.Fprintf(erase, "%s\n", phone)
			if dueAgo > 0 {
				write(i, dueAt)
				continue
			}
		}
		if dueAgo == 0 {
			write(i, at)
		}
	}
	for i := range n {
		if dueAgo > 0 && i%100 != 0 {
			write(i, at)
		}
	}
	for path, w := range files {
		if err := w.Flush(); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
	}
	yaml := "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: people.csv, agent: A, fields: {phone_number: Phone, first_name: Name}}]\npressure: {off: true}\n"
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	return dir, filepath.Join(dir, "erase.csv")
}

// BenchmarkRetention is a retention over BenchmarkErase's store of
// 1,000,000 contacts (CALLRUN_BENCH_ERASE_CONTACTS), a hundredth of
// them last called 100 days ago, by `callrun erase --older-than` in a
// process of its own, three times: young (200d, older than the journal:
// nothing read but its first line), due (90d: the hundredth erased) and
// again (90d once more: nobody newly due, every journal read, as each
// run of a campaign with retention: pays before it starts, once its
// journal is older than the limit). Each reports its wall time, CPU time
// and peak RSS.
func BenchmarkRetention(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_ERASE_CONTACTS", 1_000_000)
	bin := callrunBinary(b)
	for range b.N {
		b.StopTimer()
		dir, _ := writeEraseStore(b, n, 100*24*time.Hour)
		b.StartTimer()
		env := append(os.Environ(), "CALLRUN_HOME="+filepath.Join(dir, "home"))
		for _, c := range []struct{ name, age, says string }{
			{"young", "200d", "nothing to erase"},
			{"due", "90d", fmt.Sprintf("Erased the data of %d people", n/100)},
			{"again", "90d", "nothing to erase"},
		} {
			run := benchChild(b, env, bin, "--no-progress", "erase", "--older-than", c.age, filepath.Join(dir, "c.yaml"))
			if !strings.Contains(run.out, c.says) {
				b.Fatalf("erase --older-than %s (%s) did not say %q:\n%s", c.age, c.name, c.says, run.out)
			}
			b.ReportMetric(run.elapsed.Seconds(), c.name+"-seconds")
			b.ReportMetric(run.cpu.Seconds(), c.name+"-cpu-seconds")
			b.ReportMetric(run.rssMiB, c.name+"-peak-RSS-MiB")
		}
	}
}

// BenchmarkErasePostgres is BenchmarkErase with the campaign's state in
// PostgreSQL (a throwaway cluster on loopback): the journal, call starts,
// deliveries and do-not-call list of 1,000,000 contacts
// (CALLRUN_BENCH_ERASE_CONTACTS) copied into their tables, then
// `callrun erase --file` of a hundredth of them in a process of its own.
func BenchmarkErasePostgres(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_ERASE_CONTACTS", 1_000_000)
	bin := callrunBinary(b)
	for range b.N {
		b.StopTimer()
		dir, people := writeEraseStore(b, n, 0)
		url := pgtest.URL(b)
		copyEraseStore(b, url, dir)
		b.StartTimer()
		run, first := benchEraseChild(b, bin, dir, people, n, "BENCH_DATABASE_URL="+url, store.TokenKeyVar+"="+e2eTokenKey)
		for _, table := range []string{"callrun_journal", "callrun_call_starts", "callrun_deliveries", "callrun_do_not_call"} {
			if rows := pgText(b, url, `SELECT count(*)::text FROM `+table+` t WHERE t::text LIKE '%`+first+`%'`); rows != "0" {
				b.Fatalf("%s holds the first erased person in %s rows", table, rows)
			}
		}
		b.ReportMetric(run.elapsed.Seconds(), "erase-seconds")
		b.ReportMetric(run.cpu.Seconds(), "erase-cpu-seconds")
		b.ReportMetric(run.rssMiB, "peak-RSS-MiB")
	}
}

// copyEraseStore moves writeEraseStore's journal, call starts,
// deliveries and do-not-call list in dir into the tables of the database
// at url, and points the campaign file at it.
func copyEraseStore(b *testing.B, url, dir string) {
	b.Helper()
	ctx := context.Background()
	p, err := store.OpenPostgres(ctx, url, "c", 0, 1) // makes the tables
	if err != nil {
		b.Fatal(err)
	}
	p.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	lines := func(path string) [][]byte {
		body, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
		return bytes.SplitAfter(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
	}
	state, home := filepath.Join(dir, ".callrun", "c"), filepath.Join(dir, "home")
	copyRows := func(table string, columns []string, src [][]byte, row func([]byte) []any) {
		rows := make([][]any, 0, len(src))
		for _, l := range src {
			rows = append(rows, row(bytes.TrimSuffix(l, []byte("\n"))))
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows)); err != nil {
			b.Fatalf("copying into %s: %v", table, err)
		}
	}
	copyRows("callrun_journal", []string{"campaign", "line"}, lines(filepath.Join(state, store.JournalFile)), func(l []byte) []any { return []any{"c", string(l)} })
	type start struct {
		Number, ID, Campaign, Agent string
		At                          time.Time
	}
	copyRows("callrun_call_starts", []string{"number", "at", "start_id", "campaign", "agent"}, lines(filepath.Join(home, store.CallStartsFileName)), func(l []byte) []any {
		var s start
		if err := json.Unmarshal(l, &s); err != nil {
			b.Fatal(err)
		}
		return []any{s.Number, s.At, strings.Replace(s.ID, filepath.Join(state, store.JournalFile), "c shard 0", 1), s.Campaign, s.Agent}
	})
	copyRows("callrun_deliveries", []string{"campaign", "key", "received_at", "delivery"}, lines(filepath.Join(state, store.DeliveriesFile)), func(l []byte) []any {
		var d store.Delivery
		if err := json.Unmarshal(l, &d); err != nil {
			b.Fatal(err)
		}
		return []any{"c", d.Key, d.At, string(l)}
	})
	copyRows("callrun_do_not_call", []string{"number", "at", "source"}, lines(filepath.Join(home, "do-not-call.jsonl")), func(l []byte) []any {
		var e struct {
			Number, Source string
			At             time.Time
		}
		if err := json.Unmarshal(l, &e); err != nil {
			b.Fatal(err)
		}
		return []any{e.Number, e.At, e.Source}
	})
	appendFile(b, filepath.Join(dir, "c.yaml"), "state: {postgres: \"${BENCH_DATABASE_URL}\"}\n")
}

// benchEraseChild runs `callrun erase --file people` of writeEraseStore's
// campaign in dir (n contacts) in a process of its own, with env added
// to the environment, checks that it says it erased a hundredth of them,
// logs its steps' times, and returns it and the digits of the first
// person erased.
func benchEraseChild(b *testing.B, bin, dir, people string, n int, env ...string) (childRun, string) {
	b.Helper()
	env = append(append(os.Environ(), "CALLRUN_HOME="+filepath.Join(dir, "home")), env...)
	run := benchChild(b, env, bin, "--no-progress", "--log-level", "debug", "erase", filepath.Join(dir, "c.yaml"), "--file", people)
	if want := fmt.Sprintf("Erased %d people", n/100); !strings.Contains(run.out, want) {
		b.Fatalf("erase did not say %q:\n%s", want, run.out)
	}
	benchLogSteps(b, run.out)
	area, exch, line := benchPhone(0)
	return run, fmt.Sprintf("1%s%d%04d", area, exch, line)
}

// benchLogSteps logs how long each step of an erase took, from its
// debug log in out.
func benchLogSteps(b *testing.B, out string) {
	b.Helper()
	for _, l := range strings.Split(out, "\n") {
		var e struct{ Step, Message string }
		var took struct {
			Took float64 `json:"took"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Message == "erase step" && json.Unmarshal([]byte(l), &took) == nil {
			b.Logf("%-48s %8.2f s", e.Step, took.Took/1000)
		}
	}
}
