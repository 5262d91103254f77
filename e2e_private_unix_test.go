//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestPersonalDataStaysPrivate: under umask 000, a state directory and a
// CALLRUN_HOME made open to every user beforehand are closed by the run,
// and every file in them, the reports among them, is the owner's alone; a
// state directory a team shares through its group (set-group-ID, 2770)
// keeps the group, and its reports are the team's (0660). Run as root, a
// state directory open to all that belongs to another user is refused
// before any call: the sandbox's ledger counts none.
func TestPersonalDataStaysPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 2})
	home := filepath.Join(e.dir, "home")
	e.env = append(e.env, "CALLRUN_HOME="+home)
	for _, d := range []string{home, e.stateDir} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	for _, d := range []string{home, e.stateDir} {
		checkModes(t, d, 0o700, 0o600)
	}
	for _, name := range []string{"report.csv", "report.xlsx", "report.html", "summary.json", "journal.jsonl"} {
		if _, err := os.Stat(filepath.Join(e.stateDir, name)); err != nil {
			t.Errorf("the run wrote no %s: %v", name, err)
		}
	}

	// A team's state directory: the reports are the group's too.
	if err := os.Chmod(e.stateDir, 0o770|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if res := e.run(60*time.Second, "report", e.path); res.code != 0 {
		t.Fatalf("report: %s", res)
	}
	for _, name := range []string{"report.csv", "report.xlsx", "report.html", "summary.json"} {
		if fi, err := os.Stat(filepath.Join(e.stateDir, name)); err != nil || fi.Mode().Perm() != 0o660 {
			t.Errorf("%s in a team's state directory: %v, %v; want mode 0660", name, fi.Mode(), err)
		}
	}

	if os.Getuid() != 0 {
		t.Log("not root: the refusal of another user's directory is tested by report/private's TestCheck only when root")
		return
	}
	other := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 100, concurrency: 2})
	other.env = append(other.env, "CALLRUN_HOME="+filepath.Join(other.dir, "home"))
	if err := os.MkdirAll(other.stateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other.stateDir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(other.stateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Calls())
	res := other.run(60*time.Second, "run", other.path)
	if res.code == 0 || !strings.Contains(res.stderr, other.stateDir) || !strings.Contains(res.stderr, "open to every user of this machine") || !strings.Contains(res.stderr, "chmod o-rwx") {
		t.Errorf("run with a state directory of another user's, open to all: %s; want it refused, naming the directory and what to do", res)
	}
	if n := len(srv.Calls()) - before; n != 0 {
		t.Errorf("the refused run placed %d calls; want none", n)
	}
	if fi, err := os.Stat(other.stateDir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("the other user's directory: %v, %v; want it left 0777", fi.Mode(), err)
	}
}

// checkModes checks that dir has mode dirMode and every file under it
// fileMode (the directories under it dirMode too).
func checkModes(t *testing.T, dir string, dirMode, fileMode fs.FileMode) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fileMode
		if d.IsDir() {
			want = dirMode
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v; want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
