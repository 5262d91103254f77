package store

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The crash and lock tests run this test binary again as a helper process
// (the os/exec pattern): TestHelperProcess does the helper's work when
// REPORT_TEST_HELPER says which, and is a no-op otherwise.
const helperEnv = "REPORT_TEST_HELPER"

func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "journal":
		helperJournal(os.Getenv("REPORT_TEST_PATH"), os.Getenv("REPORT_TEST_ROUND"))
	case "lock":
		helperLock(os.Getenv("REPORT_TEST_PATH"))
	}
	os.Exit(3) // the helpers run until killed
}

// helper starts the helper process and returns it with its stdout.
func helper(t *testing.T, kind string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + kind}, env...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

// helperJournal appends records from 8 goroutines until it is killed. Each
// goroutine writes, for contact i, an intent and then an outcome, and after
// each Append returns prints "I i" or "O i" on stdout (unbuffered: one
// write(2) a line).
func helperJournal(path, round string) {
	j, _, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var next atomic.Int64
	for range 8 {
		go func() {
			for {
				i := next.Add(1)
				phone := fmt.Sprintf("+1%s%08d", round, i)
				r := Record{Type: TypeIntent, Agent: "crash", Phone: phone, Body: strings.Repeat("x", int(i%300))}
				if err := j.Append(r); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				os.Stdout.WriteString("I " + phone + "\n")
				r.Type, r.Status = TypeOutcome, OutcomeSent
				if err := j.Append(r); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				os.Stdout.WriteString("O " + phone + "\n")
			}
		}()
	}
	select {}
}

// TestCrash kills a process that is appending to the journal (SIGKILL, at a
// random moment) and checks that every record whose Append had returned is
// there after, and that the journal opens. It does so several times on the
// same journal, so each round also replays, and cuts, what the kill before
// left.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	const rounds = 6
	for round := range rounds {
		roundID := fmt.Sprintf("%02d", 10+round)
		cmd, out := helper(t, "journal", "REPORT_TEST_PATH="+path, "REPORT_TEST_ROUND="+roundID)

		// Let it acknowledge a random number of records, then wait a random
		// moment more, and kill it.
		want := 1 + rand.IntN(400)
		lines := make(chan string, 1<<16)
		go func() {
			defer close(lines)
			for out.Scan() {
				lines <- out.Text()
			}
		}()
		acked := make(map[string]byte) // phone -> 'I' or 'O'
		record := func(line string) {
			kind, phone, ok := strings.Cut(line, " ")
			if !ok || (kind != "I" && kind != "O") {
				t.Fatalf("helper said %q", line)
			}
			if kind == "O" || acked[phone] == 0 {
				acked[phone] = kind[0]
			}
		}
		deadline := time.After(2 * time.Minute)
		for n := 0; n < want; n++ {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: the helper stopped after %d acknowledgements", round, n)
				}
				record(line)
			case <-deadline:
				t.Fatalf("round %d: %d acknowledgements in 2 minutes", round, n)
			}
		}
		time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for line := range lines { // what it printed before it died
			record(line)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: helper ended with %v, want killed", round, err)
		}

		s, err := ReadState(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for phone, kind := range acked {
			st, ok := s.Status(Key{"crash", phone, 0})
			switch {
			case !ok:
				t.Errorf("round %d: acknowledged intent of %s is missing", round, phone)
			case kind == 'O' && st != Sent:
				t.Errorf("round %d: acknowledged outcome of %s missing: status %q", round, phone, st)
			case kind == 'I' && st != Sent && st != Uncertain:
				t.Errorf("round %d: %s has status %q", round, phone, st)
			}
		}
		t.Logf("round %d: %d contacts acknowledged, %d in the journal", round, len(acked), s.Len())
		s.Close()
	}
	// The journal opens for writing, cutting any torn tail.
	j, s, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := j.Append(intent("crash", "+19999")); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	journalLines(t, path)
}

// helperLock takes the lock on dir, says so, and waits to be killed.
func helperLock(dir string) {
	if _, err := Lock(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Stdout.WriteString("locked\n")
	select {}
}

func TestLockReleasedWhenHolderIsKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	cmd, out := helper(t, "lock", "REPORT_TEST_PATH="+dir)
	if !out.Scan() || out.Text() != "locked" {
		t.Fatalf("helper said %q (%v)", out.Text(), out.Err())
	}
	_, err := Lock(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock while another process holds it: %v; want ErrLocked", err)
	}
	if pid := strconv.Itoa(cmd.Process.Pid); !strings.Contains(err.Error(), "pid "+pid) || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the directory and pid %s", err, pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}
