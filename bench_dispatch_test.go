package main

// Dispatch benchmarks, against the sandbox on loopback. They print numbers
// (b.ReportMetric); none of them passes or fails on timing. Targets from
// the issues:
//
//   - BenchmarkDispatchRate: the rate achieved within 2% of per_second.
//   - BenchmarkDispatch1M: at most 384 MiB of peak memory for a run of
//     1,000,000 contacts.
//   - BenchmarkCrashBound: a kill -9 leaves at most pace.concurrency
//     contacts uncertain.
//
// Environment:
//
//	CALLRUN_BENCH_CONTACTS           contacts of BenchmarkDispatch1M/unpaced (default 1000000)
//	CALLRUN_BENCH_BINARY_CONTACTS    contacts of BenchmarkDispatch1M/binary (default 30000)
//	CALLRUN_BENCH_HEAP_PROFILE       a file for BenchmarkDispatch1M/unpaced's child to write
//	                                 a heap profile to at its live heap's peak (go tool
//	                                 pprof -sample_index=inuse_space); -memprofile is the
//	                                 benchmark's own process, which holds the sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"golang.org/x/time/rate"
)

const benchAgent = "Bench Caller"

// benchEnvInt reads a positive count from the environment, else def.
func benchEnvInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: give a positive number", name, s)
	}
	return n
}

// benchPhone is the i-th of a sequence of distinct, valid US numbers in
// E.164, as (area, exchange, line) parts.
func benchPhone(i int) (area string, exch, line int) {
	areas := []string{"212", "213", "303", "312", "404", "415", "512", "617", "646", "702", "718", "773", "808", "917"}
	k := (i / len(areas) * 7919) % 8_000_000 // 7919 is prime to 8e6: a bijection
	return areas[i%len(areas)], 200 + k/10_000, k % 10_000
}

// benchWriteCampaign writes a campaign of n contacts with distinct valid
// numbers (30% in E.164, the rest national) for the service at baseURL
// into dir, logs in to it (CALLRUN_TOKEN_FILE is set to dir/token.json
// for the benchmark, and its children) and returns the campaign file's
// path. The agent has no webhook. With database set (a PostgreSQL URL),
// the campaign keeps its journal and lock there (state: {postgres: ...},
// through CALLRUN_DATABASE_URL), else in state_dir. CALLRUN_HOME is set
// to a directory of its own too: each campaign calls the same numbers,
// which contact pressure would otherwise hold back for a day.
func benchWriteCampaign(b *testing.B, dir, baseURL, database string, n int, perSecond float64, burst, concurrency int) string {
	b.Helper()
	b.Setenv("CALLRUN_HOME", filepath.Join(dir, "callrun-home"))
	f, err := os.Create(filepath.Join(dir, "contacts.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("Contact Id,First Name,Last Name,Phone,Email\n")
	for i := range n {
		area, exch, line := benchPhone(i)
		phone := fmt.Sprintf("(%s) %d-%04d", area, exch, line)
		if i%10 < 3 {
			phone = fmt.Sprintf("+1%s%d%04d", area, exch, line)
		}
		fmt.Fprintf(w, "hl_%07d,Ada,Lovelace,%s,ada%d@example.com\n", i, phone, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	yml := fmt.Sprintf(`name: bench
service:
  base_url: %s
  client_id: %s
  client_secret: %s
  redirect_uri: http://127.0.0.1:8765/callback
agents:
  - name: %s
    prompt: hello
sheets:
  - file: contacts.csv
    agent: %s
    fields: {phone_number: Phone, first_name: First Name, last_name: Last Name, email: Email, ghl_contact_id: Contact Id}
    set: {local_presence_number: "No"}
region: US
dedupe: campaign
pace: {per_second: %g, burst: %d, concurrency: %d}
state_dir: state
unsafe_ignore_called_person_hours: true # measures dispatch at any hour
`, baseURL, sandbox.DefaultClientID, sandbox.DefaultClientSecret, benchAgent, benchAgent, perSecond, burst, concurrency)
	if database != "" {
		yml += "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"
		b.Setenv("CALLRUN_DATABASE_URL", database)
		b.Setenv("CALLRUN_TOKEN_KEY", e2eTokenKey) // the token is kept in the database
	}
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("CALLRUN_TOKEN_FILE", filepath.Join(dir, "token.json"))
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchSandbox starts a sandbox that keeps out of the way: no webhooks (the
// agent has none), no faults, no logging.
func benchSandbox(b *testing.B) *sandbox.Server {
	// Started under a label, so its goroutines carry it: side=sandbox in a
	// -cpuprofile.
	var srv *sandbox.Server
	pprof.Do(context.Background(), pprof.Labels("side", "sandbox"), func(context.Context) {
		srv = sandbox.NewServer(sandbox.Options{CallDuration: time.Millisecond})
	})
	b.Cleanup(srv.Close)
	return srv
}

// benchRunUnpaced is runCampaign without its output, with a limiter that
// never waits (a campaign file cannot ask for more than 1000/s): lock,
// journal, login, agents, call endpoints, suppression, campaign.Run with
// the report written alongside (campaign.StartReport), and the report
// files finished. It returns how long campaign.Run took,
// the CPU time this process used meanwhile, and what it did.
func benchRunUnpaced(path string) (elapsed, cpu time.Duration, res *campaign.RunResult, err error) {
	// Labelled, so that a -cpuprofile tells callrun's side (the goroutines
	// it starts, its HTTP connections' included) from the sandbox's:
	// go tool pprof -tagfocus side=callrun.
	pprof.Do(context.Background(), pprof.Labels("side", "callrun"), func(ctx context.Context) {
		elapsed, cpu, res, err = benchRunUnpacedLabelled(ctx, path)
	})
	return elapsed, cpu, res, err
}

func benchRunUnpacedLabelled(ctx context.Context, path string) (elapsed, cpu time.Duration, res *campaign.RunResult, err error) {
	f, err := campaign.Load(path, campaign.LoadOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	if err := f.CheckSheets(); err != nil {
		return 0, 0, nil, err
	}
	stateDir := f.Path(f.StateDir)
	var st store.Store = store.Files{Dir: stateDir}
	unlock, err := st.Lock(ctx)
	if err != nil {
		return 0, 0, nil, err
	}
	defer unlock()
	journal, state, err := st.OpenJournal(ctx, store.JournalOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	defer state.Close()
	defer journal.Close()
	svc, err := run.NewService(context.Background(), nolog, f, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	defer svc.Close()
	agents, err := campaign.EnsureAgents(ctx, svc.Client, f.Agents, campaign.EnsureOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	if err := campaign.WaitReady(ctx, svc.Client, agents, 0, func(string, ...any) {}); err != nil {
		return 0, 0, nil, err
	}
	endpoints, err := callEndpoints(ctx, svc, f, agents)
	if err != nil {
		return 0, 0, nil, err
	}
	suppress, err := f.LoadSuppression(ctx)
	if err != nil {
		return 0, 0, nil, err
	}
	ropts := campaign.RunOptions{
		Calls: svc.Client, Agents: agents, Endpoints: endpoints, Journal: journal, State: state,
		Suppress: suppress,
	}
	start, cpu0 := time.Now(), benchCPU()
	rep := campaign.StartReport(ctx, f, &ropts, nil, stateDir)
	res, err = campaign.Run(ctx, f, rate.NewLimiter(rate.Inf, 1), ropts)
	elapsed, cpu = time.Since(start), benchCPU()-cpu0
	if err != nil {
		return elapsed, cpu, res, err
	}
	sum := &report.Summary{Campaign: f.Name, StartedAt: res.StartedAt, CallsThisRun: res.Started, Ending: report.EndComplete}
	sum.Finish(time.Now())
	if err := rep.Finish(ctx, sum); err != nil {
		return elapsed, cpu, res, err
	}
	return elapsed, cpu, res, journal.Close()
}

// BenchmarkDispatchRate runs `callrun run` (runCampaign, the command's
// code, in this process) at per_second 1, 50, 200 and 1000 (burst 1, with
// a concurrency to suit each rate) for about 4 seconds each and measures
// the rate the sandbox saw: calls placed minus one over the time from the
// first call's arrival to the last's. achieved/configured is that over
// per_second (target: 0.98 to 1.02). The fsync=10ms cases add 10ms to every
// fsync of the journal, as a spinning disk or a stalling one would.
//
// The store=postgres case keeps the journal and the lock in PostgreSQL
// (a new database on pgtest's server for each run; skipped without
// PostgreSQL): each group commit is an INSERT that checks the lock in the
// same statement. pgtest runs the server with fsync off, so a commit
// there costs the round trip and the statement, not a disk flush; it has
// no switch for fsync on (fsync=off is on the server's command line,
// which ALTER SYSTEM cannot override), so to measure a server that
// flushes, point CALLRUN_TEST_DATABASE_URL at one.
func BenchmarkDispatchRate(b *testing.B) {
	const seconds = 4
	// Each worker makes one call at a time, its intent's fsync (or INSERT)
	// included, so the concurrency a rate needs grows with the store's and
	// the service's latency: rate x (2 commits + the answer), with room to
	// spare.
	for _, bc := range []struct {
		postgres    bool // else the files of state_dir
		perSecond   int
		syncDelay   time.Duration
		concurrency int
		pressureOff bool // pressure: {off: true}, to see what contact pressure costs
	}{
		{false, 1, 0, 4, false}, {false, 50, 0, 4, false}, {false, 200, 0, 4, false}, {false, 1000, 0, 32, false}, {false, 1000, 0, 32, true},
		{false, 50, 10 * time.Millisecond, 4, false}, {false, 200, 10 * time.Millisecond, 16, false}, {false, 1000, 10 * time.Millisecond, 64, false},
		{true, 200, 0, 4, false}, {true, 1000, 0, 32, false}, {true, 1000, 0, 32, true},
	} {
		name := fmt.Sprintf("per_second=%d/concurrency=%d", bc.perSecond, bc.concurrency)
		if bc.postgres {
			name = "store=postgres/" + name
		}
		if bc.syncDelay > 0 {
			name += fmt.Sprintf("/fsync=%v", bc.syncDelay)
		}
		if bc.pressureOff {
			name += "/pressure=off"
		}
		b.Run(name, func(b *testing.B) {
			n := bc.perSecond*seconds + 1
			var opts runOptions
			if bc.syncDelay > 0 {
				opts.Journal.BeforeSync = func() error { time.Sleep(bc.syncDelay); return nil }
			}
			var achieved float64
			for range b.N {
				var database string
				if bc.postgres {
					database = pgtest.URL(b) // a journal of its own
				}
				srv := benchSandbox(b)
				opts.Path = benchWriteCampaign(b, b.TempDir(), srv.URL, database, n, float64(bc.perSecond), 1, bc.concurrency)
				if bc.pressureOff {
					appendFile(b, opts.Path, "pressure: {off: true}\n")
				}
				if err := runCampaign(context.Background(), nolog, opts, io.Discard); err != nil {
					b.Fatal(err)
				}
				calls := srv.Placed()
				if len(calls) != n {
					b.Fatalf("%d calls placed, want %d", len(calls), n)
				}
				times := make([]time.Time, len(calls))
				for i, c := range calls {
					times[i] = c.ReceivedAt
				}
				slices.SortFunc(times, time.Time.Compare)
				achieved += float64(n-1) / times[n-1].Sub(times[0]).Seconds()
				srv.Close()
			}
			achieved /= float64(b.N)
			b.ReportMetric(achieved, "achieved-per-s")
			b.ReportMetric(achieved/float64(bc.perSecond), "achieved/configured")
		})
	}
}

// appendFile appends text to the file at path.
func appendFile(tb testing.TB, path, text string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tb.Fatal(err)
	}
}

// dispatchBenchChildEnv names the campaign file that TestDispatchBenchChild
// runs.
const dispatchBenchChildEnv = "CALLRUN_BENCH_DISPATCH_CHILD"

// childRun is what benchChild saw of a child process.
type childRun struct {
	rssMiB  float64       // peak resident set
	elapsed time.Duration // from start to exit
	cpu     time.Duration // user and system time
	out     string        // standard output and error
}

// benchChild runs a child process of the benchmark, name with args and
// env, and returns what it printed, its peak resident set in MiB, how
// long it ran and the CPU time it used.
//
// The peak is the child's ru_maxrss (its VmHWM) as GNU time reports it
// (/usr/bin/time -f %M), else the last VmHWM read from /proc/<pid>/status
// every 5ms while it runs. The benchmark's own wait4 rusage is no good
// here: os/exec starts children with vfork (CLONE_VM), so a child's
// ru_maxrss starts at this process's resident set when it spawned the
// child, and this process holds the sandbox's ledger. GNU time forks its
// child from a small process of its own.
func benchChild(b *testing.B, env []string, name string, args ...string) childRun {
	b.Helper()
	timeOut := filepath.Join(b.TempDir(), "maxrss")
	useTime := false
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		useTime = true
		args = append([]string{"-f", "%M", "-o", timeOut, name}, args...)
		name = "/usr/bin/time"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var hwm atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	if !useTime {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				if kib := benchVmHWM(status); kib > 0 {
					hwm.Store(kib)
				}
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
	}
	err := cmd.Wait()
	elapsed := time.Since(start)
	close(done)
	wg.Wait()
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	if useTime {
		data, err := os.ReadFile(timeOut)
		if err != nil {
			b.Fatal(err)
		}
		fields := strings.Fields(string(data))
		kib, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			b.Fatalf("/usr/bin/time wrote %q", data)
		}
		hwm.Store(kib)
	}
	if hwm.Load() == 0 {
		b.Skip("cannot measure a child's peak resident set here")
	}
	// The rusage of wait4 covers the child and the children it waited
	// for: callrun's, when /usr/bin/time runs it.
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return childRun{rssMiB: float64(hwm.Load()) / 1024, elapsed: elapsed, cpu: cpu, out: out.String()}
}

// benchVmHWM returns VmHWM from a /proc/<pid>/status file, in KiB; 0 if
// there is none.
func benchVmHWM(status string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkDispatch1M measures the peak memory of a run of 1,000,000
// distinct contacts (CALLRUN_BENCH_CONTACTS) in a process of its own,
// against a sandbox served by this process (the sandbox's ledger, which
// holds every call, stays out of the measure). peak-RSS-MiB is the
// child's peak resident set (VmHWM), see benchChild. The work is done once
// per b.N.
//
// unpaced: this test binary run again as TestDispatchBenchChild, which does
// what `callrun run` does (benchRunUnpaced: journal, login, agents,
// dispatch, then the report files, as WriteReport writes them) with pacing
// off. The callrun
// binary cannot go faster than per_second 1000, the most a campaign file
// may ask, and 1,000,000 contacts at 1000/s take 17 minutes.
//
// binary: the callrun binary, built with `go build`, running `callrun run`
// at per_second 1000 and burst 1000 over CALLRUN_BENCH_BINARY_CONTACTS
// contacts (default 30000, about 30 seconds): the real command, at a size
// that fits in `make bench`.
//
// Both use concurrency 16; contacts/s is over the child's whole life.
func BenchmarkDispatch1M(b *testing.B) {
	b.Run("unpaced", func(b *testing.B) {
		n := benchEnvInt(b, "CALLRUN_BENCH_CONTACTS", 1_000_000)
		for range b.N {
			srv := benchSandbox(b)
			dir := b.TempDir()
			path := benchWriteCampaign(b, dir, srv.URL, "", n, 1000, 1000, 16)
			// The child is the test binary, running the campaign as
			// `callrun run` does, in a process of its own.
			env := append(os.Environ(), dispatchBenchChildEnv+"="+path)
			run := benchChild(b, env,
				os.Args[0], "-test.run=^TestDispatchBenchChild$", "-test.count=1", "-test.timeout=0")
			if st := srv.Stats(); st.CallsPlaced != n {
				b.Fatalf("%d calls placed, want %d", st.CallsPlaced, n)
			}
			srv.Close()
			b.ReportMetric(run.rssMiB, "peak-RSS-MiB")
			b.ReportMetric(float64(n)/run.elapsed.Seconds(), "contacts/s")
		}
	})
	b.Run("binary", func(b *testing.B) {
		n := benchEnvInt(b, "CALLRUN_BENCH_BINARY_CONTACTS", 30_000)
		bin := callrunBinary(b)
		for range b.N {
			srv := benchSandbox(b)
			path := benchWriteCampaign(b, b.TempDir(), srv.URL, "", n, 1000, 1000, 16)
			run := benchChild(b, os.Environ(), bin, "--log-level", "warn", "--log-format", "json", "--no-progress", "run", path)
			if st := srv.Stats(); st.CallsPlaced != n {
				b.Fatalf("%d calls placed, want %d", st.CallsPlaced, n)
			}
			srv.Close()
			b.ReportMetric(run.rssMiB, "peak-RSS-MiB")
			b.ReportMetric(float64(n)/run.elapsed.Seconds(), "contacts/s")
		}
	})
}

// TestDispatchBenchChild is not a test: BenchmarkDispatch1M runs this test
// binary again with CALLRUN_BENCH_DISPATCH_CHILD set to a campaign file, to
// run it once, unpaced, in a process of its own.
func TestDispatchBenchChild(t *testing.T) {
	path := os.Getenv(dispatchBenchChildEnv)
	if path == "" {
		t.Skip("a helper process of BenchmarkDispatch1M")
	}
	if out := os.Getenv("CALLRUN_BENCH_HEAP_PROFILE"); out != "" {
		stop := benchHeapPeaks(t, out)
		defer stop()
	}
	d, cpu, res, err := benchRunUnpaced(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("dispatch-bench-child sent=%d run_seconds=%g run_cpu_seconds=%g\n", res.Sent, d.Seconds(), cpu.Seconds())
}

// benchHeapPeaks writes a heap profile to path each time the live heap
// (as of the last collection) passes its highest by 4 MiB, looking every
// 100 ms, until stop is called: the last one written is of the peak.
func benchHeapPeaks(t *testing.T, path string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var top uint64
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(live)
			if v := live[0].Value.Uint64(); v > top+4<<20 {
				top = v
				var b bytes.Buffer
				if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
					t.Error(err)
					return
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// BenchmarkCrashBound kills the callrun binary with SIGKILL at random
// moments while it calls, and counts the contacts each kill leaves
// uncertain (an intent in the journal without an outcome: someone must
// check them by hand), as `callrun status` shows them. The design
// promises at most pace.concurrency, the calls in flight.
//
// Each case (store, the sandbox's latency) runs 16 workers at per_second
// 1000 over a campaign of its own and kills it 5 times per b.N, each time
// 0 to 150 ms (at random) after the run's first call reaches the sandbox;
// each run after the first resumes the campaign, which always has
// contacts left. uncertain/kill-max and uncertain/kill-mean are over
// those kills (the increase of status's uncertain count at each one);
// bound is the concurrency. A kill that leaves more than the bound fails
// the benchmark: that is a broken promise, not a slow machine.
//
// The files case keeps the journal in state_dir, the postgres case in a
// new database on pgtest's server (skipped without PostgreSQL, as the
// tests are).
func BenchmarkCrashBound(b *testing.B) {
	const (
		concurrency = 16
		kills       = 5
		maxDelay    = 150 * time.Millisecond
		// Enough that 5 runs at 1000/s, each killed at most 150 ms
		// after its first call, leave contacts to call.
		contacts = 3000
	)
	for _, kind := range e2eStores {
		for _, latency := range []time.Duration{200 * time.Millisecond, time.Millisecond} {
			b.Run(fmt.Sprintf("store=%s/latency=%s/concurrency=%d", kind, latency, concurrency), func(b *testing.B) {
				worst, total, count := 0, 0, 0
				for range b.N {
					srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: latency}})
					b.Cleanup(srv.Close)
					e := newE2ECampaign(b, srv, e2eSetup{contacts: benchE2EContacts(contacts), perSecond: 1000,
						concurrency: concurrency, postgres: e2eDatabase(b, kind)})
					before := 0 // uncertain before this kill
					for k := range kills {
						received := srv.Stats().CallsReceived
						p := e.start("run", e.path)
						killRound(p, rand.N(maxDelay+1), false, func() bool { return srv.Stats().CallsReceived > received })
						if res := p.result(); !res.signaled {
							b.Fatalf("kill %d: the run ended before the kill: %s", k+1, res)
						}
						st := e.status()
						if st["pending"] == 0 {
							b.Fatalf("kill %d: no contact left to call; status %v", k+1, st)
						}
						u := st["uncertain"] - before
						before = st["uncertain"]
						if u > concurrency {
							b.Errorf("kill %d left %d contacts uncertain, more than the %d calls in flight; status %v", k+1, u, concurrency, st)
						}
						worst, total, count = max(worst, u), total+u, count+1
					}
				}
				b.ReportMetric(float64(worst), "uncertain/kill-max")
				b.ReportMetric(float64(total)/float64(count), "uncertain/kill-mean")
				b.ReportMetric(concurrency, "bound")
			})
		}
	}
}

// benchE2EContacts returns n distinct valid US numbers (benchPhone's) as
// e2eContacts, for newE2ECampaign: more than e2ePhones's 800.
func benchE2EContacts(n int) []e2eContact {
	out := make([]e2eContact, n)
	for i := range n {
		area, exch, line := benchPhone(i)
		e164 := fmt.Sprintf("+1%s%d%04d", area, exch, line)
		out[i] = e2eContact{Raw: e164, E164: e164, First: fmt.Sprintf("Ada %d", i), ID: fmt.Sprintf("c-%07d", i)}
	}
	return out
}

// BenchmarkWholeRunPace runs the callrun binary over a campaign of
// CALLRUN_BENCH_PACE_CONTACTS contacts (default 20,000) at per_second 1000,
// burst 1, concurrency 32, against a sandbox served by this process, and
// measures the whole run's pace: contacts over the time from the process's
// start to its exit (start-up and every report included), over the
// configured rate (whole/configured; target: at least 0.98). It also says
// where the time went, from the sandbox's ledger: start-up-s from the
// process's start to the first call's arrival, calling-s from the first
// call's to the last's (calling/configured: the rate in that span), and
// end-s from the last call's arrival to the exit (the last answers, the
// journal's close, report.csv, report.xlsx, report.html, summary.json).
// callrun-report-s is `callrun report` run after it, which writes the
// same report files from the journal the run left, its own start-up
// included. metrics-file runs it with --metrics-file as well.
func BenchmarkWholeRunPace(b *testing.B) {
	const perSecond = 1000
	n := benchEnvInt(b, "CALLRUN_BENCH_PACE_CONTACTS", 20_000)
	bin := callrunBinary(b)
	for _, metrics := range []bool{false, true} {
		name := "plain"
		if metrics {
			name = "metrics-file"
		}
		b.Run(name, func(b *testing.B) {
			var whole, calling, startUp, end, report, cpu float64
			for range b.N {
				srv := benchSandbox(b)
				dir := b.TempDir()
				path := benchWriteCampaign(b, dir, srv.URL, "", n, perSecond, 1, 32)
				args := []string{"--log-level", "warn", "--log-format", "json", "--no-progress", "run"}
				if metrics {
					args = append(args, "--metrics-file", filepath.Join(dir, "callrun.prom"))
				}
				cmd := exec.Command(bin, append(args, path)...)
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v\n%s", err, out.String())
				}
				exit := time.Now()
				cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
				calls := srv.Placed()
				if len(calls) != n {
					b.Fatalf("%d calls placed, want %d", len(calls), n)
				}
				first, last := calls[0].ReceivedAt, calls[0].ReceivedAt
				for _, c := range calls {
					if c.ReceivedAt.Before(first) {
						first = c.ReceivedAt
					}
					if c.ReceivedAt.After(last) {
						last = c.ReceivedAt
					}
				}
				srv.Close()
				// The report files again, as `callrun report` writes them
				// from the journal the run left: the end's largest part.
				rep := exec.Command(bin, "--log-level", "warn", "--no-progress", "report", path)
				rep.Stdout, rep.Stderr = &out, &out
				t0 := time.Now()
				if err := rep.Run(); err != nil {
					b.Fatalf("callrun report: %v\n%s", err, out.String())
				}
				report += time.Since(t0).Seconds()
				whole += float64(n) / exit.Sub(start).Seconds() / perSecond
				calling += float64(n-1) / last.Sub(first).Seconds() / perSecond
				startUp += first.Sub(start).Seconds()
				end += exit.Sub(last).Seconds()
			}
			k := float64(b.N)
			b.ReportMetric(whole/k, "whole/configured")
			b.ReportMetric(calling/k, "calling/configured")
			b.ReportMetric(startUp/k, "start-up-s")
			b.ReportMetric(end/k, "end-s")
			b.ReportMetric(report/k, "callrun-report-s")
			b.ReportMetric(cpu/k, "cpu-s")
		})
	}
}
