package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockTimeout bounds one command block: `make quickstart` builds callrun
// (a link, with the build cache the test binary's build filled) and runs
// the quickstart, which waits up to 30 seconds for its webhooks.
const blockTimeout = 4 * time.Minute

// TestDocsBlocksRun runs every sh block of README.md and docs/*.md as
// written, but those marked <!-- not-run: reason -->: each page's blocks
// in order, as a reader goes down the page, with sh -e (a command that
// fails fails the block), in a copy of the repository holding the callrun
// the tests built (as ./callrun, and callrun on PATH), with a HOME of the
// page's own and no CALLRUN_ variable. Where the system lets it (Linux
// with user namespaces), each block runs in a network namespace of its
// own, with only a loopback: the ports the docs name (8080, 8089) are the
// block's, and nothing beyond the machine can be reached; elsewhere the
// pages run one at a time on the machine's loopback. A block that leaves a
// process running (a sandbox started with & and never stopped) fails.
func TestDocsBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the docs' commands, the quickstart among them; skipped with -short")
	}
	bin := binDir(t)
	goenv, err := exec.Command("go", "env", "GOROOT", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	g := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	if len(g) != 3 {
		t.Fatalf("go env: %q", goenv)
	}
	env := exampleEnv("PATH="+bin+":"+filepath.Join(g[0], "bin")+":/usr/local/bin:/usr/bin:/bin",
		"GOCACHE="+g[1], "GOMODCACHE="+g[2], "GOPROXY=off", "GOTOOLCHAIN=local")
	isolate, why := blockNamespace()
	if isolate == nil {
		t.Logf("the blocks run on this machine's loopback, one page at a time, and need its ports 8080 and 8089: %s", why)
	}
	for _, page := range commandPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		var run []docBlock
		for _, b := range docBlocks(page, string(text)) {
			if blockShells[b.lang] != "" && !b.marked {
				run = append(run, b)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(page, func(t *testing.T) {
			if isolate != nil {
				t.Parallel()
			}
			dir := t.TempDir()
			repo, home := filepath.Join(dir, "repo"), filepath.Join(dir, "home")
			copyRepo(t, repo)
			copyFile(t, callrunBinary(t), filepath.Join(repo, "callrun"), 0o755)
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			env := append(env[:len(env):len(env)], "HOME="+home)
			for _, b := range run {
				start := time.Now()
				out, code, left := runBlock(t, repo, env, isolate, b)
				t.Logf("%s line %d: exit %d in %v", b.page, b.line, code, time.Since(start).Round(100*time.Millisecond))
				if code != 0 {
					t.Errorf("%s line %d: the block exits %d:\n%s\n--- its output (the end):\n%s", b.page, b.line, code, b.body, tail(out, 60))
				}
				if left != "" {
					t.Errorf("%s line %d: the block leaves %s running: end what it starts in the background (kill $!)", b.page, b.line, left)
				}
			}
		})
	}
}

// runBlock runs one block with sh -e (bash -e for a bash block) in dir,
// in a network namespace of its own when isolate is not nil (the argv to
// prefix), for at most blockTimeout. It returns the block's output, its
// exit code (-1 for a timeout) and the processes it left running, which it
// then kills.
func runBlock(t *testing.T, dir string, env []string, isolate []string, b docBlock) (string, int, string) {
	t.Helper()
	shell := blockShells[b.lang]
	argv := []string{shell, "-e", "-c", b.body}
	if isolate != nil {
		argv = append(isolate, shell, b.body)
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	// A file, not a pipe, takes the output: a process left in the
	// background must not keep Wait waiting.
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	timer := time.AfterFunc(blockTimeout, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	err = cmd.Wait()
	timedOut := !timer.Stop()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		t.Fatalf("%s line %d: %v", b.page, b.line, err)
	}
	if timedOut {
		code = -1
		fmt.Fprintf(out, "\n(killed after %v)\n", blockTimeout)
	}
	// What the block stopped gets a moment to exit; what it left is
	// named, then killed.
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if left = groupProcesses(pgid); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	b2, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b2), code, strings.Join(left, ", ")
}

// groupProcesses lists the live processes (not zombies) of process group
// pgid, by their command lines, from /proc.
func groupProcesses(pgid int) []string {
	var procs []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		procs = append(procs, fmt.Sprintf("%q", strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	return procs
}

// blockNamespace returns the argv prefix that runs a shell in a network
// namespace of its own with its loopback up (a user namespace makes that
// possible without privileges), or nil and why it cannot.
func blockNamespace() ([]string, string) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "no unshare command"
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, "no ip command to bring the loopback up"
	}
	// $0 is the shell, $1 the block.
	prefix := []string{unshare, "--user", "--map-root-user", "--net", "sh", "-c", ip + ` link set lo up && exec "$0" -e -c "$1"`}
	if out, err := exec.Command(prefix[0], append(prefix[1:], "sh", "true")...).CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("no network namespace (%v: %s)", err, bytes.TrimSpace(out))
	}
	return prefix, ""
}

// copyRepo copies the repository's files to dst, without what is not its
// source: dot files and directories (.git, state directories), the
// callrun a build left and make dist's dist/.
func copyRepo(t *testing.T, dst string) {
	t.Helper()
	src := e2eBin.pkgDir
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "dist" || rel == "callrun") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyFile copies src to dst with mode perm.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
