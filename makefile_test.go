package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstallsSayWhatAndNoRecommends: every apt-get install of the
// Makefile leaves out what Debian only recommends (for Chromium: udev,
// upower and what they bring), and `make browser` as root says what it
// installs before it does, here with apt-get and id played by scripts
// that record what they are asked.
func TestMakeInstallsSayWhatAndNoRecommends(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(e2eBin.pkgDir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	installs := 0
	for i, l := range strings.Split(string(mk), "\n") {
		if strings.Contains(l, "apt-get install") {
			installs++
			if !strings.Contains(l, "--no-install-recommends") {
				t.Errorf("Makefile line %d installs what Debian recommends too: %s", i+1, strings.TrimSpace(l))
			}
		}
	}
	if installs < 4 {
		t.Errorf("%d apt-get install lines in the Makefile, want the PostgreSQL and browser installs and their hints", installs)
	}

	makeCmd, bash := makeAndBash(t)
	bin := t.TempDir()
	writeScript := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!"+bash+"\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeScript("id", "echo 0\n")                    // root
	writeScript("apt-get", `echo "apt-get $*"`+"\n") // records, installs nothing
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makeCmd, "-s", "-C", e2eBin.pkgDir, "browser")
	cmd.Env = exampleEnv("PATH="+bin, "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, "CI=", "CALLRUN_TEST_BROWSER=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make browser: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "make: installing Debian's chromium-headless-shell and fonts-liberation") ||
		!strings.Contains(lines[0], "--no-install-recommends") || lines[1] != "apt-get update -qq" ||
		lines[2] != "apt-get install -y -qq --no-install-recommends chromium-headless-shell fonts-liberation" {
		t.Errorf("make browser as root said and ran:\n%s", out)
	}
}

// TestMakeTestSaysWhereTheScreenshotsAre: make test says where the
// browser test writes its screenshots (go test shows nothing of a package
// that passes), after the tests, whether they pass or fail, and gives the
// tests that directory; here go is played by a script that prints what it
// is given and exits as told.
func TestMakeTestSaysWhereTheScreenshotsAre(t *testing.T) {
	makeCmd, bash := makeAndBash(t)
	bin, tmp := t.TempDir(), t.TempDir()
	fakeGo := filepath.Join(bin, "go")
	script := "#!" + bash + "\necho \"go $* screenshots=$CALLRUN_SCREENSHOT_DIR\"\nexit $GO_EXIT\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, "callrun-report-screenshots")
	for _, exit := range []string{"0", "1"} {
		cmd := exec.Command(makeCmd, "-s", "-C", e2eBin.pkgDir, "test", "GO="+fakeGo)
		// The installs have nothing to do: a database and a browser are named.
		cmd.Env = append(exampleEnv("PATH="+os.Getenv("PATH"), "HOME="+t.TempDir()), "TMPDIR="+tmp, "GO_EXIT="+exit,
			"CALLRUN_TEST_DATABASE_URL=postgres://127.0.0.1:1/none", "CALLRUN_TEST_BROWSER=/nonexistent/chromium")
		out, err := cmd.CombinedOutput()
		if (err == nil) != (exit == "0") {
			t.Errorf("go exits %s, make test: %v", exit, err)
		}
		ran := strings.Index(string(out), "\ngo test -race -count=1 -timeout 30m ./... screenshots="+want+"\n")
		said := strings.Index(string(out), "\nthe browser test's screenshots of report.html (when it ran): "+want+"\n")
		if ran < 0 || said < ran {
			t.Errorf("go exits %s, make test printed:\n%s", exit, out)
		}
	}
}

// makeAndBash returns the paths of make and bash, which the Makefile's
// recipes run in, or skips the test.
func makeAndBash(t *testing.T) (string, string) {
	t.Helper()
	makeCmd, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	return makeCmd, bash
}
