package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestEraseRemovesTheCopiesOfAKilledErase: an erase killed (SIGKILL,
// power lost) while it rewrote a file leaves the copy it was writing,
// ".NAME.<random>.tmp" beside it, holding the person as the file did.
// The erase run again, as a stopped erase is to be, leaves no such copy
// behind: the state directory and CALLRUN_HOME hold the person in no
// form, temporary files included.
func TestEraseRemovesTheCopiesOfAKilledErase(t *testing.T) {
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	path := on("spring", "")
	const a, b = "+14155550182", "+14155550183"
	writePeople(t, filepath.Dir(path), a, b)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	state, home := stateDirOf(t, path), os.Getenv("CALLRUN_HOME")
	planted := 0
	for _, dir := range []string{state, home} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || filepath.Ext(name) != ".jsonl" {
				continue
			}
			body, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(body, []byte(a)) {
				continue
			}
			// What durable.Create names the copy of a rewrite, cut where
			// the kill came.
			tmp := filepath.Join(dir, "."+name+".4242.tmp")
			if err := os.WriteFile(tmp, body[:len(body)*2/3+1], 0o600); err != nil {
				t.Fatal(err)
			}
			planted++
		}
	}
	if planted < 3 {
		t.Fatalf("planted %d copies; want the journal's, the do-not-call list's and the call starts' at least", planted)
	}
	if code, out := runAppOut(t, "erase", path, a); code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	for _, dir := range []string{state, home} {
		for p, form := range findForms(t, dir, personForms(a, "Person A")) {
			t.Errorf("%s still holds A (as %d bytes' form)", p, len(form))
		}
	}
}
