package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/gofrs/flock"
)

// pushedCampaign runs a campaign from files calling a and b, puts a on
// CALLRUN_HOME's do-not-call list, and moves the campaign to PostgreSQL
// with `callrun state push`, which leaves its files where they were
// (marked PUSHED-TO-POSTGRES), holding both people as they were pushed.
// It returns the campaign file, its state directory and CALLRUN_HOME.
func pushedCampaign(t *testing.T, a, b string, beforePush ...func(path string)) (path, state, home string) {
	t.Helper()
	db := e2eDatabase(t, "postgres")
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	path = on("spring", "")
	writePeople(t, filepath.Dir(path), a, b)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	for _, fn := range beforePush {
		fn(path)
	}
	t.Setenv("CALLRUN_DATABASE_URL", db)
	t.Setenv(store.TokenKeyVar, e2eTokenKey)
	appendFile(t, path, "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n")
	if code, out := runAppOut(t, "state", "push", path); code != 0 {
		t.Fatalf("state push: exit %d\n%s", code, out)
	}
	state, home = stateDirOf(t, path), os.Getenv("CALLRUN_HOME")
	if _, err := os.Stat(filepath.Join(state, store.PushedFile)); err != nil {
		t.Fatal(err)
	}
	// The push left the person in the files: in the state directory's
	// journal, and in CALLRUN_HOME's list and call starts.
	for _, dir := range []string{state, home} {
		if len(findForms(t, dir, personForms(a, "Person A"))) == 0 {
			t.Fatalf("%s holds nothing of A after the push: the test sees none of the files it is about", dir)
		}
	}
	return path, state, home
}

// pushedForms are the forms a pushed person is searched for in:
// personForms', and the number as JSON writes it with its plus escaped
// (a writer other than Go's encoding/json may), and its national form
// as a sheet or a delivery may spell it.
func pushedForms(e164, name string) []string {
	forms := personForms(e164, name)
	d := e164[2:] // +1 and ten digits
	return append(forms, `\u002b`+e164[1:], "("+d[:3]+") "+d[3:6]+"-"+d[6:], d[:3]+"-"+d[3:6]+"-"+d[6:])
}

// noneLeft fails the test for each file under the state directory and
// CALLRUN_HOME (temporary copies included) that still holds a, and for
// a journal that no longer holds b, whom nobody erased.
func noneLeft(t *testing.T, state, home, a, b string) {
	t.Helper()
	for _, dir := range []string{state, home} {
		for p, form := range findForms(t, dir, pushedForms(a, "Person A")) {
			t.Errorf("%s still holds A (as %q)", p, form)
		}
	}
	journal, err := os.ReadFile(filepath.Join(state, store.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(journal), b) {
		t.Errorf("the pushed journal no longer holds B, whom nobody erased:\n%s", journal)
	}
	if !strings.Contains(string(journal), `"erased"`) {
		t.Errorf("the pushed journal holds no tombstone for A:\n%s", journal)
	}
}

// TestEraseErasesThePushedFiles: a campaign run from files, then moved
// to PostgreSQL with `callrun state push`, leaves its files where they
// were, holding every person. Erasing one of them rewrites the database
// and those files too (the journal, and CALLRUN_HOME's do-not-call list
// and call starts), as it rewrites a campaign's own files: afterwards no
// file under the state directory or CALLRUN_HOME holds the person in any
// form, and erase says which pushed files it erased.
func TestEraseErasesThePushedFiles(t *testing.T) {
	const a, b = "+14155550186", "+14155550187"
	path, state, home := pushedCampaign(t, a, b)
	code, out := runAppOut(t, "erase", path, a)
	if code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "pushed files: erased") || !strings.Contains(out, state) {
		t.Errorf("erase does not say it erased the pushed files in %s:\n%s", state, out)
	}
	noneLeft(t, state, home, a, b)
	// Run again, it changes no file.
	before := snapshotFiles(t, state, home)
	if code, out := runAppOut(t, "erase", path, a); code != 0 {
		t.Fatalf("erase again: exit %d\n%s", code, out)
	}
	after := snapshotFiles(t, state, home)
	for p, body := range before {
		if filepath.Base(p) == run.AuditFileName {
			continue
		}
		if after[p] != body {
			t.Errorf("the second erase changed %s", p)
		}
	}
}

// snapshotFiles reads every file under dirs.
func snapshotFiles(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRetentionErasesThePushedFiles: a retention of a campaign moved to
// PostgreSQL (`callrun erase --older-than`, or a run's retention:) erases
// the people nobody called within the limit from the files `state push`
// left too, as from the database: the pushed journal and CALLRUN_HOME's
// call starts hold neither person afterwards; only the do-not-call list,
// which a retention keeps as it is, still holds A.
func TestRetentionErasesThePushedFiles(t *testing.T) {
	const a, b = "+14155550190", "+14155550191"
	path, state, home := pushedCampaign(t, a, b)
	later := func() time.Time { return time.Now().Add(100 * 24 * time.Hour) }
	var out e2eBuffer
	got, err := run.Retain(context.Background(), nolog, run.RetainOptions{Path: path, OlderThan: 90 * 24 * time.Hour, Now: later}, &out)
	if err != nil {
		t.Fatalf("retention: %v\n%s", err, out.String())
	}
	if got.People != 2 {
		t.Errorf("retention erased %d people; want A and B\n%s", got.People, out.String())
	}
	for _, dir := range []string{state, home} {
		for p, form := range findForms(t, dir, pushedForms(b, "Person B")) {
			t.Errorf("%s still holds B (as %q)", p, form)
		}
		for p, form := range findForms(t, dir, pushedForms(a, "Person A")) {
			if !strings.HasPrefix(filepath.Base(p), "do-not-call") { // retention keeps the list
				t.Errorf("%s still holds A (as %q)", p, form)
			}
		}
	}
	if !strings.Contains(out.String(), "pushed files: erased") {
		t.Errorf("the retention does not say it erased the pushed files:\n%s", out.String())
	}
}

// TestErasePushedHoldsTheFilesLocks: CALLRUN_HOME's list and call starts
// are still those of every campaign run from files on the machine, and
// such a run may append to them while a campaign moved to PostgreSQL is
// erased. The erase rewrites each pushed file under the lock the file
// store's own erase takes, which those runs take to write it: at each
// rewrite, the moment before the new copy replaces the file, the lock is
// held (another taker is refused), so no line a run appends is lost to
// the replace.
func TestErasePushedHoldsTheFilesLocks(t *testing.T) {
	const a, b = "+14155550192", "+14155550193"
	path, state, home := pushedCampaign(t, a, b)
	locks := []struct{ copyOf, lock string }{
		{filepath.Join(home, store.CallStartsFileName), filepath.Join(home, store.CallStartsLockName)},
		{filepath.Join(home, store.DoNotCallFileName), filepath.Join(home, store.DoNotCallLockName)},
		{filepath.Join(state, store.JournalFile), filepath.Join(state, "lock")},
	}
	seen := map[string]bool{}
	var out e2eBuffer
	err := run.Erase(context.Background(), nolog, run.EraseOptions{Path: path, Numbers: []string{a}, BeforeReplace: func() error {
		for _, l := range locks {
			dir, base := filepath.Split(l.copyOf)
			if tmps, _ := filepath.Glob(filepath.Join(dir, "."+base+".*.tmp")); len(tmps) == 0 {
				continue
			}
			seen[l.copyOf] = true
			fl := flock.New(l.lock)
			ok, err := fl.TryLock()
			if err != nil {
				return err
			}
			if ok {
				fl.Unlock()
				t.Errorf("%s is rewritten without %s held: a files run could append to it meanwhile, and lose its line", l.copyOf, l.lock)
			}
		}
		return nil
	}}, &out)
	if err != nil {
		t.Fatalf("erase: %v\n%s", err, out.String())
	}
	for _, l := range locks {
		if !seen[l.copyOf] {
			t.Errorf("the erase never rewrote %s", l.copyOf)
		}
	}
	noneLeft(t, state, home, a, b)
}

// TestErasePushedHoldResolvedInTheDatabase: an opt-out held when the
// campaign was pushed is copied into the database and stays open in
// CALLRUN_HOME's opt-out-holds.jsonl, where nothing resolves it once the
// campaign runs from PostgreSQL (outcomes resolve writes the database).
// Resolved there, it no longer keeps erase from erasing: the database's
// holds are the campaign's, and the pushed files' copy of the hold is
// not asked.
func TestErasePushedHoldResolvedInTheDatabase(t *testing.T) {
	ctx := context.Background()
	const a, b = "+14155550194", "+14155550195"
	hold := store.OptOutHold{Campaign: "spring", Key: "k-held", At: time.Now().UTC(), Reason: "the opt-out's number did not read"}
	path, state, home := pushedCampaign(t, a, b, func(string) {
		list, err := store.Files{}.DoNotCall()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := list.Hold(ctx, hold); err != nil {
			t.Fatal(err)
		}
	})
	st, err := store.Open(ctx, store.Options{Dir: state, Postgres: os.Getenv("CALLRUN_DATABASE_URL"), Campaign: "spring"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.DoNotCall()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := list.Resolve(ctx, hold.Campaign, hold.Key, "done"); err != nil || !ok {
		t.Fatalf("resolving the pushed hold in the database: %v, %v", ok, err)
	}
	code, out := runAppOut(t, "erase", path, a)
	if code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	noneLeft(t, state, home, a, b)
}

// TestErasePushedNamesTheFilesCampaignsItDoesNotReach: a campaign still
// run from files on the CALLRUN_HOME a campaign was pushed from starts
// calls there; erasing a person of the pushed campaign rewrites that
// home's call starts, but not the files campaign's own journal and
// reports. Erase names it as not reached, for what it is: a campaign on
// files there, not one that "has not run since callrun recorded
// campaigns".
func TestErasePushedNamesTheFilesCampaignsItDoesNotReach(t *testing.T) {
	const a, b, c = "+14155550196", "+14155550197", "+14155550198"
	path, _, home := pushedCampaign(t, a, b, func(spring string) {
		body, err := os.ReadFile(spring)
		if err != nil {
			t.Fatal(err)
		}
		autumn := filepath.Join(t.TempDir(), "autumn.yaml")
		if err := os.WriteFile(autumn, []byte(strings.Replace(string(body), "name: spring\n", "name: autumn\n", 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		writePeople(t, filepath.Dir(autumn), c)
		if code, out := runAppOut(t, "run", autumn); code != 0 {
			t.Fatalf("run autumn: exit %d\n%s", code, out)
		}
	})
	code, out := runAppOut(t, "erase", path, a)
	if code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `campaign "autumn"`) {
			line = l
		}
	}
	if strings.Contains(line, "has not run since") || !strings.Contains(line, "runs from files on "+home) {
		t.Errorf("erase does not name campaign autumn as a campaign on files of %s that it did not reach:\n%s", home, out)
	}
}
