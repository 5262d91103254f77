package durable

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// leftovers returns the names in dir other than want: temporary files a
// write left behind.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		keep := false
		for _, w := range want {
			keep = keep || e.Name() == w
		}
		if !keep {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileReplacesWithExactMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token.json")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new\n" {
		t.Fatalf("read %q, %v; want the new content", b, err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600 whatever the replaced file's", fi.Mode().Perm())
		}
	}
	if extra := leftovers(t, dir, "token.json"); len(extra) > 0 {
		t.Errorf("files left beside the target: %v", extra)
	}
}

func TestAbortKeepsTheTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.csv")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half a rep")); err != nil {
		t.Fatal(err)
	}
	if extra := leftovers(t, dir, "report.csv"); len(extra) != 1 || filepath.Ext(extra[0]) != ".tmp" || extra[0][:len(".report.csv")] != ".report.csv" {
		t.Errorf("while writing, the directory holds %v beside the target; want one .report.csv.*.tmp", extra)
	}
	w.Abort()
	w.Abort() // twice is harmless, as a deferred Abort after another is
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("after Abort the target reads %q, want the old content", b)
	}
	if extra := leftovers(t, dir, "report.csv"); len(extra) > 0 {
		t.Errorf("files left after Abort: %v", extra)
	}
	if err := w.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

func TestFailedCommitLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	w, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory where the file should go: the rename fails on
	// every system.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("Commit over a directory succeeded")
	}
	if extra := leftovers(t, dir, "summary.json"); len(extra) > 0 {
		t.Errorf("files left after a failed Commit: %v", extra)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("the target changed after a failed Commit: %v, %v", fi, err)
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil {
			t.Error("SyncDir of a missing directory succeeded")
		}
	}
}
