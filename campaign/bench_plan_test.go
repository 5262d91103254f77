package campaign

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The plan benchmark: `callrun plan --offline` on a generated sheet of
// 1,000,000 distinct contacts. Targets (from the issues): the plan in at
// most 2.5 s (400,000 rows/s), and at most 256 MiB of peak memory.
//
// What is measured is the real path of runPlan: Load of a campaign file,
// CheckSheets, LoadSuppression, BuildPlan (offline), on files in
// b.TempDir(). Peak memory is measured two ways:
//
//   - peak-heap-MiB: in this process, the largest heap in use seen by a
//     goroutine that samples runtime/metrics every millisecond, where heap
//     in use is /memory/classes/heap/objects + /memory/classes/heap/unused
//     + /memory/classes/heap/stacks (runtime.MemStats HeapInuse +
//     StackInuse, read without stopping the world). It includes what the
//     test binary holds besides the plan.
//   - child-VmHWM-MiB: the peak resident set (VmHWM of /proc/self/status)
//     of a fresh process (this test binary re-executed, see
//     TestPlanBenchChild) that does one plan and nothing else: what a user
//     of `callrun plan` would see, runtime and all. child-rows/s is that
//     process's rate, start-up of the normaliser included, and
//     child-cpu-s the CPU time it used. (Not the child's ru_maxrss from
//     wait4: os/exec starts children with vfork, so that starts at this
//     process's resident set.)
//
// CALLRUN_BENCH_PLAN_ROWS changes the number of rows (default 1,000,000).

const planBenchChildEnv = "CALLRUN_BENCH_PLAN_CHILD" // the campaign file the child plans

func planBenchRows(b *testing.B) int {
	if s := os.Getenv("CALLRUN_BENCH_PLAN_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("CALLRUN_BENCH_PLAN_ROWS=%q: give a positive number", s)
		}
		return n
	}
	return 1_000_000
}

// writePlanBenchCampaign writes an offline campaign file, a HighLevel-like
// sheet of rows contacts with distinct phone numbers, and a suppression
// file of 1,000 of them into dir, and returns the campaign file's path.
//
// Every row's number is distinct (the worst case for the dedupe set, and
// what a CRM export holds), written in the shapes exports hold: E.164,
// national with punctuation, 1-prefixed, a few Excel-damaged ("1.2125550123E+10",
// repaired with a warning) and 1% invalid cells; 8% are UK mobiles.
func writePlanBenchCampaign(tb testing.TB, dir string, rows int) string {
	tb.Helper()
	return writePlanBenchCampaignFlagged(tb, dir, rows, 0, benchNoColumn)
}

// benchColumns are the signal columns writePlanBenchCampaignFlagged adds.
type benchColumns int

const (
	benchNoColumn    benchColumns = iota
	benchDoNotCall                // "Do Not Call", under do_not_call:
	benchConsent                  // "Consent Date", under consent:
	benchBothColumns              // both
)

// writePlanBenchCampaignFlagged is writePlanBenchCampaign with, when
// flagPercent is above 0, a "Do Not Call" column mapped under
// do_not_call: that says 1 on flagPercent rows in a hundred (spread
// through the sheet) and is empty on the others. With benchConsent, the
// column is instead "Consent Date", mapped under consent: with required,
// and says "revoked" on those rows and 2024-03-05 on the others; with
// benchBothColumns the sheet has both, the flag on the rows whose
// consent is withdrawn.
func writePlanBenchCampaignFlagged(tb testing.TB, dir string, rows, flagPercent int, cols benchColumns) string {
	tb.Helper()
	sheet, err := os.Create(filepath.Join(dir, "contacts.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	supp, err := os.Create(filepath.Join(dir, "suppress.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(sheet, 1<<20)
	sw := bufio.NewWriter(supp)
	w.WriteString("\ufeff\"Contact Id\",\"First Name\",\"Last Name\",\"Phone\",\"Email\",\"Tags\"")
	dnc := flagPercent > 0 && (cols == benchDoNotCall || cols == benchBothColumns)
	consent := flagPercent > 0 && (cols == benchConsent || cols == benchBothColumns)
	if dnc {
		w.WriteString(",\"Do Not Call\"")
	}
	if consent {
		w.WriteString(",\"Consent Date\"")
	}
	w.WriteString("\r\n")
	sw.WriteString("phone\n")
	first := []string{"Ada", "Grace", "Alan", "Katherine", "Edsger", "Barbara", "Donald", "Frances", "Margaret", "Linus"}
	last := []string{"Lovelace", "Hopper", "Turing", "Johnson", "Dijkstra", "Liskov", "Knuth", "Allen", "Hamilton", "Torvalds"}
	areas := []string{"212", "213", "303", "312", "404", "415", "512", "617", "646", "702", "718", "773", "808", "917"}
	for i := range rows {
		// (area, exchange, line) is a bijection of i: every number differs.
		k := (i / len(areas) * 7919) % 8_000_000 // 7919 is prime to 8e6
		area, exch, line := areas[i%len(areas)], 200+k/10_000, k%10_000
		var phone, e164 string
		switch x := i % 100; {
		case x < 30:
			phone = fmt.Sprintf("+1%s%d%04d", area, exch, line)
		case x < 55:
			phone = fmt.Sprintf("(%s) %d-%04d", area, exch, line)
		case x < 65:
			phone = fmt.Sprintf("1-%s-%d-%04d", area, exch, line)
		case x < 72:
			phone = fmt.Sprintf("%s.%d.%04d", area, exch, line)
		case x < 80:
			phone, e164 = fmt.Sprintf("+44 7%03d %06d", 400+i/1_000_000%500, i%1_000_000), "-"
		case x < 98:
			phone = fmt.Sprintf("%s %d %04d", area, exch, line)
		case x < 99:
			phone = fmt.Sprintf("1.%s%d%04dE+10", area, exch, line) // Excel
		default:
			phone, e164 = []string{"", "N/A", "555-1234", "12345"}[i/100%4], "-"
		}
		if e164 == "" && i%1000 == 1 {
			fmt.Fprintf(sw, "+1%s%d%04d\n", area, exch, line)
		}
		fn, ln := first[i%len(first)], last[(i/7)%len(last)]
		tags := "lead"
		if i%5 == 0 {
			tags = "lead,spring promo"
		}
		fmt.Fprintf(w, "\"hl_%07d\",\"%s\",\"%s\",\"%s\",\"%s.%s%d@example.com\",\"%s\"",
			i, fn, ln, phone, fn, ln, i, tags)
		flagged := (i*7)%100 < flagPercent
		switch {
		case dnc && flagged:
			w.WriteString(",1")
		case dnc:
			w.WriteString(",")
		}
		switch {
		case consent && flagged:
			w.WriteString(",revoked")
		case consent:
			w.WriteString(",2024-03-05")
		}
		w.WriteString("\r\n")
	}
	for _, f := range []struct {
		w *bufio.Writer
		f *os.File
	}{{w, sheet}, {sw, supp}} {
		if err := f.w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	yml := `name: bench-plan
agents:
  - name: Bench
    prompt: hello
sheets:
  - file: contacts.csv
    agent: Bench
    fields: {phone_number: Phone, first_name: First Name, last_name: Last Name, email: Email, ghl_contact_id: Contact Id}
    set: {local_presence_number: "No"}
suppress: [suppress.csv]
region: US
dedupe: campaign
pace: {per_second: 50, burst: 1, concurrency: 4}
hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}
state_dir: state
`
	if dnc {
		yml += "do_not_call: {column: Do Not Call}\n"
	}
	if consent {
		yml += "consent: {column: Consent Date, required: true}\n"
	}
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// planOffline is runPlan --offline without the printing.
func planOffline(ctx context.Context, path string) (*Plan, error) {
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		return nil, err
	}
	return planLoaded(ctx, f)
}

// planLoaded is planOffline of a campaign file loaded.
func planLoaded(ctx context.Context, f *File) (*Plan, error) {
	if err := f.CheckSheets(); err != nil {
		return nil, err
	}
	suppress, err := f.LoadSuppression(ctx)
	if err != nil {
		return nil, err
	}
	return BuildPlan(ctx, f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: suppress, Now: time.Now()})
}

// heapPeakSampler samples the heap in use (HeapInuse + StackInuse, from
// runtime/metrics, which does not stop the world) every millisecond until
// stop is called; stop returns the largest value seen, in MiB.
func heapPeakSampler() (stop func() float64) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	var (
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		metrics.Read(samples)
		var sum uint64
		for _, s := range samples {
			sum += s.Value.Uint64()
		}
		peak = max(peak, sum)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() float64 {
		close(done)
		wg.Wait()
		sample()
		return float64(peak) / (1 << 20)
	}
}

// vmHWM returns the peak resident set of this process, in KiB, from
// /proc/self/status; 0 where there is none.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkPlan1M plans a campaign of one sheet of 1,000,000 distinct
// contacts offline: rows/s and peak memory (see the comment at the top).
func BenchmarkPlan1M(b *testing.B) {
	benchPlan1M(b, writePlanBenchCampaign(b, b.TempDir(), planBenchRows(b)))
}

// BenchmarkPlan1MDoNotCall is BenchmarkPlan1M on the same sheet with a
// "Do Not Call" column mapped under do_not_call:, saying 1 on 2 % of the
// rows: what the pass over the sheet for the flagged numbers, before the
// contacts are judged, adds to a plan. flag-pass-s is that pass alone
// (File.ReadFlagged), timed once more after the plans.
func BenchmarkPlan1MDoNotCall(b *testing.B) {
	benchPlan1MFlagPass(b, benchDoNotCall)
}

// BenchmarkPlan1MConsent is BenchmarkPlan1MDoNotCall with the column a
// "Consent Date" mapped under consent: (required), saying "revoked" on
// 2 % of the rows and a date on the others: a campaign that maps consent
// and no do_not_call: column pays the same pass, for the numbers whose
// consent is withdrawn.
func BenchmarkPlan1MConsent(b *testing.B) {
	benchPlan1MFlagPass(b, benchConsent)
}

// BenchmarkPlan1MSignals is BenchmarkPlan1MDoNotCall with both columns,
// "Do Not Call" under do_not_call: and "Consent Date" under consent:
// (required), the flag and the withdrawal on the same 2 % of the rows:
// the campaign docs/performance.md compares with BenchmarkPlan1M's, as
// a ratio of the two in one run.
func BenchmarkPlan1MSignals(b *testing.B) {
	benchPlan1MFlagPass(b, benchBothColumns)
}

// benchPlan1MFlagPass is BenchmarkPlan1MDoNotCall, BenchmarkPlan1MConsent
// or BenchmarkPlan1MSignals, by cols.
func benchPlan1MFlagPass(b *testing.B, cols benchColumns) {
	rows := planBenchRows(b)
	path := writePlanBenchCampaignFlagged(b, b.TempDir(), rows, 2, cols)
	benchPlan1M(b, path)
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	fp, err := f.ReadFlagged(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "flag-pass-s")
	if len(fp.Flagged) < rows/100 {
		b.Fatalf("the pass found %d flagged numbers in %d rows", len(fp.Flagged), rows)
	}
}

// benchPlan1M plans the campaign file at path offline b.N times, then
// once in a fresh process (see the comment at the top).
func benchPlan1M(b *testing.B, path string) {
	rows := planBenchRows(b)

	runtime.GC()
	stop := heapPeakSampler()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := benchRusage()
	for range b.N {
		planBench(b, path, rows)
	}
	cpu = benchRusage() - cpu
	b.StopTimer()
	peak := stop()
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(peak, "peak-heap-MiB")

	// One plan in a fresh process, for its peak resident set.
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlanBenchChild$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), planBenchChildEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("plan child: %v\n%s", err, out.String())
	}
	var childRows, hwm int64
	var childSecs float64
	for _, line := range strings.Split(out.String(), "\n") {
		if _, err := fmt.Sscanf(line, "plan-bench-child rows=%d seconds=%g vmhwm_kib=%d", &childRows, &childSecs, &hwm); err == nil {
			break
		}
	}
	if childRows != int64(rows) || hwm == 0 {
		b.Fatalf("plan child said:\n%s", out.String())
	}
	b.ReportMetric(float64(hwm)/1024, "child-VmHWM-MiB")
	b.ReportMetric(float64(childRows)/childSecs, "child-rows/s")
	// The CPU time the child used, start-up included: on a machine other
	// work loads, a steadier measure than the wall clock's.
	b.ReportMetric((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), "child-cpu-s")
}

// planBench plans the campaign file at path offline, and checks that it
// read its rows.
func planBench(b *testing.B, path string, rows int) {
	p, err := planOffline(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	if p.Totals.Rows != rows || p.Totals.ToCall < rows*85/100 {
		b.Fatalf("plan counted %+v over %d rows", p.Totals, rows)
	}
}

// BenchmarkPlan1MRatio plans BenchmarkPlan1M's sheet and
// BenchmarkPlan1MSignals' (with a do-not-call and a consent column) one
// after the other, b.N times each, in one process: plain-s and
// signals-s are each plan's wall time, plain-cpu-s and signals-cpu-s its
// CPU time, and ratio is signals-s over plain-s, measured side by side
// on a machine other work may load.
func BenchmarkPlan1MRatio(b *testing.B) {
	rows := planBenchRows(b)
	plain := writePlanBenchCampaign(b, b.TempDir(), rows)
	signals := writePlanBenchCampaignFlagged(b, b.TempDir(), rows, 2, benchBothColumns)
	var wall, cpu [2]time.Duration
	b.ResetTimer()
	for range b.N {
		for k, path := range []string{plain, signals} {
			start, startCPU := time.Now(), benchRusage()
			planBench(b, path, rows)
			wall[k] += time.Since(start)
			cpu[k] += benchRusage() - startCPU
		}
	}
	n := float64(b.N)
	b.ReportMetric(wall[0].Seconds()/n, "plain-s")
	b.ReportMetric(wall[1].Seconds()/n, "signals-s")
	b.ReportMetric(cpu[0].Seconds()/n, "plain-cpu-s")
	b.ReportMetric(cpu[1].Seconds()/n, "signals-cpu-s")
	b.ReportMetric(wall[1].Seconds()/wall[0].Seconds(), "ratio")
}

// TestPlanBenchChild is not a test: BenchmarkPlan1M runs this test binary
// again with CALLRUN_BENCH_PLAN_CHILD set to a campaign file, to plan it
// once in a process of its own and print its peak resident set.
func TestPlanBenchChild(t *testing.T) {
	path := os.Getenv(planBenchChildEnv)
	if path == "" {
		t.Skip("a helper process of BenchmarkPlan1M")
	}
	start := time.Now()
	p, err := planOffline(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("plan-bench-child rows=%d seconds=%g vmhwm_kib=%d\n", p.Totals.Rows, secs, vmHWM())
}
