package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkDoNotCall10M keeps a do-not-call list of 10,000,000 numbers
// (CALLRUN_BENCH_DNC_NUMBERS changes it) in files, and in PostgreSQL (a
// new database on pgtest's server, skipped without it), each step the callrun
// binary in a process of its own: `suppress import` of a CSV of the
// numbers (import-seconds, import-peak-RSS-MiB; targets 30 s and
// 512 MiB), then `plan` (offline with files) and `run` against the sandbox of a
// 100-contact campaign, ten of whose numbers are on the list
// (plan-seconds, run-seconds and their peak RSS; targets 2 s and
// 256 MiB each), then `listen`: first-opt-out-ms is how long the first
// opt-out it is sent after it says it is listening takes to be answered
// (target 100 ms), listen-peak-RSS-MiB its peak resident set after it.
// The -cpu-seconds are each command's user and system time: on a busy
// machine its wall time is mostly waiting for a core.
func BenchmarkDoNotCall10M(b *testing.B) {
	for _, kind := range e2eStores {
		b.Run("store="+kind, func(b *testing.B) { benchDoNotCall(b, kind) })
	}
}

// benchDoNotCall is BenchmarkDoNotCall10M on one kind of store.
func benchDoNotCall(b *testing.B, kind string) {
	n := benchEnvInt(b, "CALLRUN_BENCH_DNC_NUMBERS", 10_000_000)
	bin := callrunBinary(b)
	for range b.N {
		srv := benchSandbox(b)
		dir := b.TempDir()
		const contacts = 100
		path := benchWriteCampaign(b, dir, srv.URL, e2eDatabase(b, kind), contacts, 1000, 1000, 16)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "outcomes:\n  url: https://hooks.example.com/callrun/bench/%s\n  opt_out: {field: disposition, values: [opted_out]}\n", hookSecret)
		f.Close()
		// The list: the numbers of contacts 90 to 99, and n-10 others.
		csvPath := writeRegistry(b, dir, contacts-10, n)
		env := os.Environ()
		imp := benchChild(b, env, bin, "--no-progress", "suppress", "import", path, csvPath)
		if !strings.Contains(imp.out, fmt.Sprintf("%d number(s) of", n)) {
			b.Fatalf("suppress import:\n%s", imp.out)
		}
		planArgs := []string{"--no-progress", "plan", "--format", "json", path}
		if kind == "files" {
			planArgs = slices.Insert(planArgs, 2, "--offline") // as fast, asking no service
		}
		plan := benchChild(b, env, bin, planArgs...)
		if !strings.Contains(plan.out, `"suppressed": 10`) {
			b.Fatalf("plan did not find the ten contacts on the list:\n%s", plan.out)
		}
		run := benchChild(b, env, bin, "--log-level", "warn", "--no-progress", "run", path)
		if st := srv.Stats(); st.CallsPlaced != contacts-10 {
			b.Fatalf("%d calls placed, want %d:\n%s", st.CallsPlaced, contacts-10, run.out)
		}
		srv.Close()
		firstOptOut, listenRSS := benchListenOptOut(b, bin, env, path)
		b.ReportMetric(imp.elapsed.Seconds(), "import-seconds")
		b.ReportMetric(imp.cpu.Seconds(), "import-cpu-seconds")
		b.ReportMetric(imp.rssMiB, "import-peak-RSS-MiB")
		b.ReportMetric(plan.elapsed.Seconds(), "plan-seconds")
		b.ReportMetric(plan.cpu.Seconds(), "plan-cpu-seconds")
		b.ReportMetric(plan.rssMiB, "plan-peak-RSS-MiB")
		b.ReportMetric(run.elapsed.Seconds(), "run-seconds")
		b.ReportMetric(run.cpu.Seconds(), "run-cpu-seconds")
		b.ReportMetric(run.rssMiB, "run-peak-RSS-MiB")
		b.ReportMetric(float64(firstOptOut.Microseconds())/1000, "first-opt-out-ms")
		b.ReportMetric(listenRSS, "listen-peak-RSS-MiB")
	}
}

var benchListening = regexp.MustCompile(`listening on (http://[^\s"]+)`)

// benchListenOptOut starts `callrun listen` on the campaign at path, sends
// it one opt-out once it says it is listening, and returns how long the
// answer took and listen's peak resident set after it; then stops it.
func benchListenOptOut(b *testing.B, bin string, env []string, path string) (time.Duration, float64) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "listen", "--addr", addr, path)
	cmd.Env = env
	out, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	base := ""
	sc := bufio.NewScanner(out)
	var said strings.Builder
	for base == "" && sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if m := benchListening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		b.Fatalf("listen did not say where it listens:\n%s", said.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	area, exch, line := benchPhone(5)
	start := time.Now()
	resp, err := http.PostForm(base+"/callrun/bench/"+hookSecret, url.Values{"event": {"call.ended"}, "phone_number": {fmt.Sprintf("+1%s%d%04d", area, exch, line)}, "disposition": {"opted_out"}})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("the opt-out was answered %d", resp.StatusCode)
	}
	kib := benchVmHWM(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	return took, float64(kib) / 1024
}
