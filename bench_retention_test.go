package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkRetentionDeliveries measures what a retention holds in memory
// while it reads the deliveries: a store whose journal holds 10 contacts
// called an hour ago, and whose deliveries.jsonl holds 1,000,000
// (CALLRUN_BENCH_RETENTION_DELIVERIES) deliveries of as many other
// people, whom no journal holds (the other end of inbound calls), each
// naming its number in data.customer.number as the service's call.ended
// does. `callrun erase --older-than 90d` runs in a process of its own,
// three times on a fresh store each: young (every delivery received an
// hour ago: nobody due, every delivery read and its numbers kept, the
// most the deliveries' pass holds), due (every delivery received 100
// days ago: every person erased, their deliveries rewritten) and again
// (the due store once more: every delivery erased, nobody due). Each
// reports its wall time, CPU time, peak RSS, and peak-heap-MiB: the
// largest heap the Go runtime's GC trace (GODEBUG=gctrace=1) saw at the
// start or end of a collection, a lower bound of the true peak.
func BenchmarkRetentionDeliveries(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_RETENTION_DELIVERIES", 1_000_000)
	bin := callrunBinary(b)
	for range b.N {
		for _, c := range []struct {
			name string
			ago  time.Duration
			says []string
		}{
			{name: "young", ago: time.Hour, says: []string{"nothing to erase"}},
			{name: "due", ago: 100 * 24 * time.Hour, says: []string{fmt.Sprintf("Erased the data of %d people", n), "nothing to erase"}},
		} {
			b.StopTimer()
			dir := writeRetentionDeliveries(b, n, c.ago)
			b.StartTimer()
			env := append(os.Environ(), "CALLRUN_HOME="+filepath.Join(dir, "home"), "GODEBUG=gctrace=1")
			for i, says := range c.says {
				name := c.name
				if i > 0 {
					name = "again"
				}
				run := benchChild(b, env, bin, "--no-progress", "erase", "--older-than", "90d", filepath.Join(dir, "c.yaml"))
				if !strings.Contains(run.out, says) {
					b.Fatalf("erase --older-than 90d (%s) did not say %q:\n%s", name, says, benchTail(run.out))
				}
				b.ReportMetric(run.elapsed.Seconds(), name+"-seconds")
				b.ReportMetric(run.cpu.Seconds(), name+"-cpu-seconds")
				b.ReportMetric(run.rssMiB, name+"-peak-RSS-MiB")
				b.ReportMetric(gcPeakHeapMiB(run.out), name+"-peak-heap-MiB")
			}
		}
	}
}

// gcTraceHeap is a GC trace line's heap sizes: at the start, at the end,
// and live, in MB.
var gcTraceHeap = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// gcPeakHeapMiB returns the largest heap a GC trace (GODEBUG=gctrace=1)
// in out reports, at a collection's start or end.
func gcPeakHeapMiB(out string) float64 {
	peak := 0
	for _, m := range gcTraceHeap.FindAllStringSubmatch(out, -1) {
		for _, s := range m[1:3] {
			if v, _ := strconv.Atoi(s); v > peak {
				peak = v
			}
		}
	}
	return float64(peak) * 1e6 / (1 << 20)
}

// benchTail is the end of a child's output, without its GC trace.
func benchTail(out string) string {
	var keep []string
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "gc ") {
			keep = append(keep, line)
		}
	}
	if len(keep) > 40 {
		keep = keep[len(keep)-40:]
	}
	return strings.Join(keep, "")
}

// writeRetentionDeliveries writes BenchmarkRetentionDeliveries' campaign
// and store: a sheet and journal of 10 contacts called an hour ago, and
// n deliveries received ago ago, each of a person of its own.
func writeRetentionDeliveries(b *testing.B, n int, ago time.Duration) string {
	b.Helper()
	dir := b.TempDir()
	state, home := filepath.Join(dir, ".callrun", "c"), filepath.Join(dir, "home")
	for _, d := range []string{state, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	at, heard := now.Add(-time.Hour).Format(time.RFC3339Nano), now.Add(-ago).Format(time.RFC3339Nano)
	phone := func(i int) string {
		area, exch, line := benchPhone(i)
		return fmt.Sprintf("+1%s%d%04d", area, exch, line)
	}
	var sheet, journal strings.Builder
	sheet.WriteString("Phone,Name\n")
	fmt.Fprintf(&journal, `{"t":"run","note":"callrun run c.yaml","at":%q}`+"\n", at)
	for i := range 10 {
		fmt.Fprintf(&sheet, "%s,Person %d\n", phone(i), i)
		for _, t := range []string{`"t":"intent"`, `"t":"outcome","status":"sent","http":201`} {
			fmt.Fprintf(&journal, `{%s,"agent":"A","phone":%q,"sheet":"people.csv","row":%d,"attempt":1,"at":%q}`+"\n", t, phone(i), i+2, at)
		}
	}
	for path, body := range map[string]string{
		filepath.Join(dir, "people.csv"):      sheet.String(),
		filepath.Join(state, "journal.jsonl"): journal.String(),
		filepath.Join(dir, "c.yaml"):          "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: people.csv, agent: A, fields: {phone_number: Phone, first_name: Name}}]\npressure: {off: true}\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(state, "deliveries.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, `{"key":"k%d","at":%q,"event":"call.ended","call_id":"call_%d","fields":{"data.customer.number":%q,"data.status":"completed"}}`+"\n", i, heard, i, phone(10+i))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return dir
}
