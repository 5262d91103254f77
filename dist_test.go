package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDist runs `make dist` as a release would, into a temporary
// directory: one archive per system with the binary, README.md and the
// pages it links, LICENSE and every example git tracks, and a SHA256SUMS
// that matches them; every relative link of every page in the archive
// leads to a file it holds.
// The archive for this system then does what the README's install section
// says: its callrun prints its version and, in the unpacked folder, runs
// the quickstart against the sandbox. A
// second build of this system's archive gives the same bytes.
//
// It builds callrun seven times: seconds each once `make cross` (which
// make ci runs first) has filled the build cache with the same flags,
// minutes each on a cold cache and a busy machine, which is why make test
// gives the tests 30 minutes. -short skips it.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds six release binaries; skipped with -short")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	const version = "v0.0.0-disttest"
	docPages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(docPages) == 0 {
		t.Fatalf("docs/*.md: %v, %d pages", err, len(docPages))
	}
	sort.Strings(docPages)
	// The builds stop a minute before the test binary's deadline, so
	// that a slow one fails this test rather than the whole binary.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
		defer cancel()
	}
	// Both builds get the same time for the archives' entries, which is
	// otherwise the commit's: a commit made while the test runs must not
	// fail it.
	const epoch = 1764000000 // 2025-11-24T16:00:00Z
	t.Setenv("SOURCE_DATE_EPOCH", strconv.Itoa(epoch))
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, "make", "dist", "VERSION="+version, "DIST="+out)
	cmd.Dir = e2eBin.pkgDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, b)
	}

	systems := []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64", "windows_arm64"}
	var want []string
	for _, s := range systems {
		ext := ".tar.gz"
		if strings.HasPrefix(s, "windows") {
			ext = ".zip"
		}
		want = append(want, "callrun_0.0.0-disttest_"+s+ext)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if w := append(slices.Clone(want), "SHA256SUMS"); !slices.Equal(got, slices.Sorted(slices.Values(w))) {
		t.Fatalf("make dist wrote %v, want %v", got, w)
	}

	// Every example and picture git tracks, each directory before its
	// first file: the pages link to them, and none of what a rehearsal
	// leaves beside them.
	ls, err := exec.Command("git", "-C", e2eBin.pkgDir, "ls-files", "--", "examples", "docs/images").Output()
	if err != nil {
		t.Fatalf("git ls-files examples: %v", err)
	}
	var examples []string
	made := map[string]bool{"docs/": true} // listed with the pages
	for _, f := range strings.Split(strings.TrimSpace(string(ls)), "\n") {
		parts := strings.Split(f, "/")
		for i := 1; i < len(parts); i++ {
			if dir := strings.Join(parts[:i], "/") + "/"; !made[dir] {
				made[dir] = true
				examples = append(examples, dir)
			}
		}
		examples = append(examples, f)
	}
	for _, f := range []string{"examples/quickstart/campaign.yaml", "examples/outcomes/campaign.yaml", "examples/cron/crontab", "examples/ci/", "examples/kubernetes/listen.yaml"} {
		if !slices.Contains(examples, f) {
			t.Fatalf("git tracks no %s: %v", f, examples)
		}
	}

	sums := readSums(t, filepath.Join(out, "SHA256SUMS"))
	if names := slices.Sorted(func(yield func(string) bool) {
		for n := range sums {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(names, want) {
		t.Errorf("SHA256SUMS lists %v, want %v", names, want)
	}
	for _, name := range want {
		if s := fileSum(t, filepath.Join(out, name)); s != sums[name] {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, s, sums[name])
		}
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
		exe := "callrun"
		if strings.HasSuffix(name, ".zip") {
			exe = "callrun.exe"
		}
		want := []string{"", exe, "README.md", "LICENSE", "ARCHITECTURE.md", "docs/"}
		for _, p := range docPages {
			want = append(want, filepath.ToSlash(p))
		}
		want = append(want, examples...)
		var wantFiles []string
		for _, f := range want {
			wantFiles = append(wantFiles, base+"/"+f)
		}
		if files := archiveNames(t, filepath.Join(out, name), epoch); !slices.Equal(files, wantFiles) {
			t.Errorf("%s holds %v, want %v", name, files, wantFiles)
		}
	}

	host := runtime.GOOS + "_" + runtime.GOARCH
	if !slices.Contains(systems, host) || runtime.GOOS == "windows" {
		t.Logf("not running the binaries: no tar.gz for %s", host)
		return
	}
	name := "callrun_0.0.0-disttest_" + host + ".tar.gz"
	unpacked := t.TempDir()
	untar(t, filepath.Join(out, name), unpacked)
	bin := filepath.Join(unpacked, strings.TrimSuffix(name, ".tar.gz"), "callrun")

	// Every relative link of every page in the archive leads to a file
	// the archive holds (and a heading of it, for an #anchor).
	pages, links, problems, err := checkLinks(filepath.Dir(bin))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("in the archive: %s", p)
	}
	t.Logf("%d relative links of %d pages in the archive lead inside it", links, pages)

	v, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("callrun --version: %v\n%s", err, v)
	}
	commit := "commit " + gitCommit(t)
	for _, part := range []string{"callrun version " + version + " (", commit, runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(string(v), part) {
			t.Errorf("callrun --version printed %q, want it to hold %q", v, part)
		}
	}

	// The quickstart, as the README's install section has a new user run
	// it: in the unpacked folder, with the binary and example it holds.
	work := filepath.Dir(bin)
	run := exec.CommandContext(ctx, bin, "run", "--sandbox", filepath.Join("examples", "quickstart", "campaign.yaml"))
	run.Dir = work
	run.Env = exampleEnv("HOME="+unpacked, "XDG_CONFIG_HOME="+filepath.Join(unpacked, "config"), "PATH=/usr/bin:/bin")
	if b, err := run.CombinedOutput(); err != nil || !strings.Contains(string(b), "sent    5") {
		t.Errorf("callrun run --sandbox examples/quickstart/campaign.yaml in the unpacked archive: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(work, "examples", "quickstart", ".callrun", "quickstart-sandbox", "report.csv")); err != nil {
		t.Errorf("the quickstart's report: %v", err)
	}

	// The same commit again, into another directory: the same bytes.
	again := t.TempDir()
	rebuild := exec.CommandContext(ctx, "go", "run", "./.ci/dist", "-version", version, "-out", again, "-targets", runtime.GOOS+"/"+runtime.GOARCH)
	rebuild.Dir = e2eBin.pkgDir
	if b, err := rebuild.CombinedOutput(); err != nil {
		t.Fatalf("second build: %v\n%s", err, b)
	}
	if s := readSums(t, filepath.Join(again, "SHA256SUMS"))[name]; s != sums[name] {
		t.Errorf("%s built twice: sha256 %s, then %s; the build is not reproducible", name, sums[name], s)
	}
}

// gitCommit returns the first 12 digits of the commit checked out, as
// --version prints them, or "unknown" in a git worktree, where the go
// command stamps no commit (it looks for a .git directory).
func gitCommit(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat(filepath.Join(e2eBin.pkgDir, ".git")); err != nil || !fi.IsDir() {
		return "unknown"
	}
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = e2eBin.pkgDir
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(b))[:12]
}

// readSums reads a SHA256SUMS file: file name to hex digest.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS line %q is not `<sha256>  <name>`", sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// archiveNames lists the entries of a .zip or .tar.gz, in order, checking
// that each is dated mtime (Unix seconds) and that tar entries are owned
// by uid and gid 0 without names.
func archiveNames(t *testing.T, path string, mtime int64) []string {
	t.Helper()
	var names []string
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.Modified.Unix() != mtime {
				t.Errorf("%s: %s dated %v, want SOURCE_DATE_EPOCH's %v", filepath.Base(path), f.Name, f.Modified, time.Unix(mtime, 0))
			}
			names = append(names, f.Name)
		}
		return names
	}
	walkTar(t, path, func(h *tar.Header, _ io.Reader) {
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: %s owned by %d:%d (%s:%s), want 0:0 without names", filepath.Base(path), h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if h.ModTime.Unix() != mtime {
			t.Errorf("%s: %s dated %v, want SOURCE_DATE_EPOCH's %v", filepath.Base(path), h.Name, h.ModTime, time.Unix(mtime, 0))
		}
		names = append(names, h.Name)
	})
	return names
}

func walkTar(t *testing.T, path string, fn func(*tar.Header, io.Reader)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}

// untar unpacks a .tar.gz into dir, as `tar xzf` would.
func untar(t *testing.T, path, dir string) {
	t.Helper()
	walkTar(t, path, func(h *tar.Header, r io.Reader) {
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, r); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
