package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/report/store"
)

// TestEraseNamesThePushedFiles: a campaign run from files, then moved
// to PostgreSQL with `callrun state push`, leaves its files where they
// were (marked PUSHED-TO-POSTGRES), holding the people as they were
// pushed. Erase rewrites the database, not them: it must say so, naming
// the state directory, so that the person is not left in them unknown.
func TestEraseNamesThePushedFiles(t *testing.T) {
	db := e2eDatabase(t, "postgres")
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	path := on("spring", "")
	const a, b = "+14155550186", "+14155550187"
	writePeople(t, filepath.Dir(path), a, b)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	t.Setenv("CALLRUN_DATABASE_URL", db)
	t.Setenv(store.TokenKeyVar, e2eTokenKey)
	appendFile(t, path, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n")
	if code, out := runAppOut(t, "state", "push", path); code != 0 {
		t.Fatalf("state push: exit %d\n%s", code, out)
	}
	state := stateDirOf(t, path)
	if _, err := os.Stat(filepath.Join(state, store.PushedFile)); err != nil {
		t.Fatal(err)
	}
	code, out := runAppOut(t, "erase", path, a)
	if code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "pushed files:") || !strings.Contains(out, state) {
		t.Errorf("erase does not name the pushed files in %s:\n%s", state, out)
	}
	if n := len(findForms(t, state, personForms(a, "Person A"))); n == 0 {
		t.Errorf("the pushed files no longer hold A: erase reaches them, and need not say so")
	}
}
