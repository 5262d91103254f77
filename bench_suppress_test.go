package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSuppression10M plans, offline, a campaign of ten contacts whose
// suppression file holds 10,000,000 distinct numbers (a national
// do-not-call extract: bare ten-digit US numbers, one in ten in E.164, a
// header), with the callrun binary in a process of its own:
// suppress-seconds is the whole command's wall time (the suppression file
// is nearly all of it), suppress-cpu-seconds its user and system time (on
// a busy machine the wall time is mostly waiting for a core), and
// peak-RSS-MiB its peak resident set. The target is at most 15 s and
// 1 GiB. CALLRUN_BENCH_SUPPRESS_NUMBERS changes the
// size of the file.
func BenchmarkSuppression10M(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_SUPPRESS_NUMBERS", 10_000_000)
	bin := callrunBinary(b)
	dir := b.TempDir()
	fh, err := os.Create(filepath.Join(dir, "dnc.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	w.WriteString("Phone Number\n")
	for i := range n {
		area, exch, line := benchPhone(i)
		if i%10 == 0 {
			w.WriteString("+1")
		}
		fmt.Fprintf(w, "%s%d%04d\n", area, exch, line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fh.Close()
	var sheet strings.Builder
	sheet.WriteString("Phone\n")
	for i := range 10 {
		area, exch, line := benchPhone(i) // each in the suppression file
		fmt.Fprintf(&sheet, "(%s) %d-%04d\n", area, exch, line)
	}
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(sheet.String()), 0o644)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte("name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}]\nsuppress: [dnc.csv]\n"), 0o644)
	b.ResetTimer()
	for range b.N {
		run := benchChild(b, os.Environ(), bin, "--no-progress", "plan", "--offline", "--format", "json", path)
		if !strings.Contains(run.out, `"suppressed": 10`) && !strings.Contains(run.out, `"suppressed":10`) {
			b.Fatalf("plan did not suppress the ten contacts:\n%s", run.out)
		}
		b.ReportMetric(run.elapsed.Seconds(), "suppress-seconds")
		b.ReportMetric(run.cpu.Seconds(), "suppress-cpu-seconds")
		b.ReportMetric(run.rssMiB, "peak-RSS-MiB")
	}
}
