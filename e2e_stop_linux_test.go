//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestSIGTERMDuringPlanOfALargeSheet stops `plan` with SIGTERM while it
// reads a sheet of 1,000,000 rows: it exits 130 within 2 s of the signal,
// says it was interrupted and leaves no report of rows it did not judge. The
// child's /proc/PID/io tells when it is reading the sheet (Linux only).
func TestSIGTERMDuringPlanOfALargeSheet(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a sheet of 1,000,000 rows")
	}
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(1), perSecond: 10, concurrency: 1})
	f, err := os.Create(filepath.Join(e.dir, "contacts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("Contact Id,First Name,Phone,Email\n")
	for i := range 1_000_000 {
		area, exch, line := benchPhone(i)
		fmt.Fprintf(w, "c-%d,Name %d,(%s) %d-%04d,c%d@example.com\n", i, i, area, exch, line, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	report := filepath.Join(t.TempDir(), "plan")

	p := e.start("plan", "--offline", "--report", report, e.path)
	// Reading: more than 4 MiB of the 60 MiB sheet read, and not ended.
	waitFor(t, 60*time.Second, "plan reading the sheet", func() bool {
		select {
		case <-p.done:
			t.Fatalf("plan ended before the signal: %s", p.result())
		default:
		}
		return readBytes(t, p.pid()) > 4<<20
	})
	p.signal(t, syscall.SIGTERM)
	sigAt := time.Now()
	res := p.wait(t, 30*time.Second)
	stopIn := p.ended.Sub(sigAt)
	if res.code != exitInterrupted {
		t.Fatalf("after SIGTERM: %s", res)
	}
	if stopIn > 2*time.Second {
		t.Errorf("plan exited %v after SIGTERM, want within 2s", stopIn)
	}
	if !strings.Contains(res.stderr, "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", res.stderr)
	}
	for _, name := range []string{"report.csv", "report.html", "summary.json"} {
		if _, err := os.Stat(filepath.Join(report, name)); !os.IsNotExist(err) {
			t.Errorf("an interrupted plan left %s in %s (stat: %v)", name, report, err)
		}
	}
	t.Logf("plan exited 130 %v after SIGTERM", stopIn.Round(time.Millisecond))
}

// readBytes is the rchar of process pid: the bytes it has read so far;
// 0 once it has ended.
func readBytes(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
