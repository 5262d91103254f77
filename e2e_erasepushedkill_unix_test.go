//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// The kill test runs this test binary again as a helper process that
// erases and kills itself (SIGKILL) mid-rewrite: TestErasePushedKillHelper
// does it when erasePushedKill names the file whose rewrite to kill, and
// is a no-op otherwise.
const erasePushedKill = "CALLRUN_TEST_ERASE_KILL"

// TestErasePushedKillHelper is the helper process: it erases the number
// CALLRUN_TEST_ERASE_NUMBER from campaign CALLRUN_TEST_ERASE_CAMPAIGN,
// on CALLRUN_TEST_ERASE_HOME (the test binary's TestMain sets a
// CALLRUN_HOME of its own), and sends itself SIGKILL once the copy of
// the file erasePushedKill names is written and about to replace it.
func TestErasePushedKillHelper(t *testing.T) {
	target := os.Getenv(erasePushedKill)
	if target == "" {
		return
	}
	os.Setenv("CALLRUN_HOME", os.Getenv("CALLRUN_TEST_ERASE_HOME"))
	dir, base := filepath.Split(target)
	err := run.Erase(context.Background(), nolog, run.EraseOptions{
		Path:    os.Getenv("CALLRUN_TEST_ERASE_CAMPAIGN"),
		Numbers: []string{os.Getenv("CALLRUN_TEST_ERASE_NUMBER")},
		BeforeReplace: func() error {
			if tmps, _ := filepath.Glob(filepath.Join(dir, "."+base+".*.tmp")); len(tmps) > 0 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return nil
		},
	}, io.Discard)
	os.Stderr.WriteString("the erase ended without reaching the rewrite: " + errString(err) + "\n")
	os.Exit(3)
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestErasePushedKilledMidRewrite kills (SIGKILL) an erase of a pushed
// campaign's person while it rewrites a pushed file, with the new copy
// written beside the old file and not yet put in its place: the file is
// left whole and old, holding the person, with the copy beside it. The
// erase run again finishes the job: no file under the state directory or
// CALLRUN_HOME, the copy included, holds the person.
func TestErasePushedKilledMidRewrite(t *testing.T) {
	for _, c := range []struct{ name, file string }{
		{"journal", store.JournalFile},            // in the pushed state directory
		{"call starts", store.CallStartsFileName}, // in CALLRUN_HOME
	} {
		t.Run(c.name, func(t *testing.T) {
			const a, b = "+14155550188", "+14155550189"
			path, state, home := pushedCampaign(t, a, b)
			target := filepath.Join(state, c.file)
			if c.file == store.CallStartsFileName {
				target = filepath.Join(home, c.file)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestErasePushedKillHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), erasePushedKill+"="+target, "CALLRUN_TEST_ERASE_HOME="+home,
				"CALLRUN_TEST_ERASE_CAMPAIGN="+path, "CALLRUN_TEST_ERASE_NUMBER="+a)
			var stderr e2eBuffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the erase was not killed mid-rewrite (%v):\n%s", err, stderr.String())
			}
			tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+c.file+".*.tmp"))
			if len(tmps) == 0 {
				t.Fatalf("the killed erase left no copy of %s: it was not killed mid-rewrite", target)
			}
			old, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(old), a) {
				t.Fatalf("%s no longer holds A after the kill: it was replaced, not killed mid-rewrite", target)
			}
			code, out := runAppOut(t, "erase", path, a)
			if code != 0 {
				t.Fatalf("erase again: exit %d\n%s", code, out)
			}
			noneLeft(t, state, home, a, b)
		})
	}
}
