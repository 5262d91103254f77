package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type followed struct {
	N int `json:"n"`
}

// followerOf follows the file at path for tests: an entry is a
// positive n.
func followerOf(path string, tail bool) *follower[followed] {
	return &follower[followed]{path: path, what: "a test entry", valid: func(e *followed) bool { return e.N > 0 }, tail: tail}
}

// next reads what fl has not read yet, as the numbers of the entries,
// with "restart" where it was told to forget what it read.
func next(t *testing.T, fl *follower[followed]) string {
	t.Helper()
	var got []string
	restart := func() { got = append(got, "restart") }
	if fl.tail {
		restart = nil // a tail is never told to forget: it goes on from the end
	}
	if _, err := fl.read(nil, restart, func(e followed, _ int64) { got = append(got, fmt.Sprint(e.N)) }); err != nil {
		t.Fatal(err)
	}
	return strings.Join(got, " ")
}

// writeRaw appends s to the file at path, creating it.
func writeRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestFollowerTornAndReplaced: a follower reads each whole line once,
// leaves a torn last line until its newline comes, and reads again from
// the start a file that shrank under it (a writer cut a torn line, then
// wrote another) or was replaced by one as long whose line read last is
// no longer where it was (a compaction); a file that is gone is empty.
func TestFollowerTornAndReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	fl := followerOf(path, false)
	if got := next(t, fl); got != "restart" {
		t.Errorf("a missing file read %q, want it forgotten", got)
	}
	writeRaw(t, path, `{"n":1}`+"\n"+`{"n":2}`+"\n\n"+`{"n":3`)
	if got := next(t, fl); got != "1 2" {
		t.Errorf("read %q, want 1 2 (3 is torn)", got)
	}
	writeRaw(t, path, "}\n")
	if got := next(t, fl); got != "3" {
		t.Errorf("read %q, want 3 once whole", got)
	}
	if got := next(t, fl); got != "" {
		t.Errorf("read %q again", got)
	}
	// A writer cuts the file shorter than what was read, and writes on.
	if err := os.WriteFile(path, []byte(`{"n":1}`+"\n"+`{"n":4}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := next(t, fl); got != "restart 1 4" {
		t.Errorf("after a cut read %q, want restart 1 4", got)
	}
	// Replaced by a file as long, the line read last not where it was.
	if err := os.WriteFile(path, []byte(`{"n":5}`+"\n"+`{"n":6}`+"\n"+`{"n":7}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := next(t, fl); got != "restart 5 6 7" {
		t.Errorf("after a replace read %q, want restart 5 6 7", got)
	}
	// Lines this process appended itself are read: not read again, and
	// the replace check still holds after them.
	line := []byte(`{"n":8}` + "\n")
	writeRaw(t, path, string(line))
	fl.appended(line)
	writeRaw(t, path, `{"n":9}`+"\n")
	if got := next(t, fl); got != "9" {
		t.Errorf("after its own line read %q, want 9 alone", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := next(t, fl); got != "restart" {
		t.Errorf("a removed file read %q, want it forgotten", got)
	}
}

// TestFollowerBadLine: a line that is not an entry is an error naming
// the file and its byte offset; the entries before it are read once.
func TestFollowerBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	writeRaw(t, path, `{"n":1}`+"\n"+`{"n":0}`+"\n"+`{"n":2}`+"\n")
	fl := followerOf(path, false)
	var got []int
	for range 2 {
		_, err := fl.read(nil, func() { got = nil }, func(e followed, _ int64) { got = append(got, e.N) })
		if want := path + ": the line at byte 8 is not a test entry"; err == nil || err.Error() != want {
			t.Errorf("err %v, want %s", err, want)
		}
	}
	if fmt.Sprint(got) != "[1]" {
		t.Errorf("read %v, want [1] once", got)
	}
}

// TestFollowerTail: a tail begun while a line is being written skips
// that line, and after a cut goes on from the file's end, never reading
// again what it returned.
func TestFollowerTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	writeRaw(t, path, `{"n":1}`+"\n"+`{"n":`)
	fl := followerOf(path, true)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if err := fl.seekEnd(f, fi.Size()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeRaw(t, path, `2}`+"\n"+`{"n":3}`+"\n")
	if got := next(t, fl); got != "3" {
		t.Errorf("read %q, want 3 (2 began before the tail)", got)
	}
	if err := os.WriteFile(path, []byte(`{"n":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := next(t, fl); got != "" {
		t.Errorf("after a cut read %q, want nothing", got)
	}
	writeRaw(t, path, `{"n":4}`+"\n")
	if got := next(t, fl); got != "4" {
		t.Errorf("read %q, want 4", got)
	}
}

// TestFollowerSeesAnotherFileOfTheSameShape: a file replaced by another
// of the same length whose line read last is where it was (an erasure
// that rewrote an earlier line) is read again from its start.
func TestFollowerSeesAnotherFileOfTheSameShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.jsonl")
	fl := followerOf(path, false)
	writeRaw(t, path, `{"n":1}`+"\n"+`{"n":2}`+"\n")
	if got := next(t, fl); got != "1 2" {
		t.Fatalf("read %q, want 1 2", got)
	}
	other := filepath.Join(dir, "other.jsonl")
	writeRaw(t, other, `{"n":7}`+"\n"+`{"n":2}`+"\n")
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if got := next(t, fl); got != "restart 7 2" {
		t.Errorf("after the file was replaced by one of the same shape: %q, want it read again from its start", got)
	}
}
