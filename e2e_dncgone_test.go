package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestMissingDoNotCallListStopsBeforeAnyCall moves the do-not-call list's
// file away from CALLRUN_HOME, its index left there: plan and run refuse,
// naming the file and saying to restore it, and the sandbox's ledger
// holds no call; listen answers an opt-out 503 and makes no new list.
// The file restored, plan counts its number suppressed again; with the
// index removed too, the store is new, and plan and run call everyone.
func TestMissingDoNotCallListStopsBeforeAnyCall(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	contacts := e2ePhones(3)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2})
	home := filepath.Join(e.dir, "callrun-home")
	e.env = append(e.env, "CALLRUN_HOME="+home)
	list, index := filepath.Join(home, store.DoNotCallFileName), filepath.Join(home, store.DoNotCallIndexName)

	if res := e.run(30*time.Second, "suppress", "add", e.path, contacts[0].E164); res.code != 0 {
		t.Fatalf("suppress add: %s", res)
	}
	if p := e.plan(); p.Totals.Suppressed != 1 || p.Totals.ToCall != 2 {
		t.Fatalf("plan with the list: %+v, want 1 suppressed, 2 to call", p.Totals)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("the list's index: %v", err)
	}
	if err := os.Rename(list, filepath.Join(e.dir, "away.jsonl")); err != nil {
		t.Fatal(err)
	}

	refused := func(res e2eResult) {
		t.Helper()
		if res.code == 0 || !strings.Contains(res.stderr, list) || !strings.Contains(res.stderr, "restore") || !strings.Contains(res.stderr, index) {
			t.Errorf("with the list's file gone: %s\nwant a failure naming %s, its index, and saying to restore it", res, list)
		}
	}
	refused(e.run(30*time.Second, "plan", "--offline", e.path))
	refused(e.run(time.Minute, "run", e.path))
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("run with the list's file gone: the sandbox received %d calls, want none", len(calls))
	}

	// listen, started now: an opt-out is not acknowledged, and no list
	// holding only it is made.
	path := writeListenCampaign(t, e.dir, "spring")
	e2eOptOuts(t, path)
	t.Setenv("CALLRUN_HOME", home)
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	if got := sendOptOut(t, base, "+14155550132"); got != http.StatusServiceUnavailable {
		t.Errorf("an opt-out with the list's file gone: answered %d, want 503", got)
	}
	if _, err := os.Stat(list); !os.IsNotExist(err) {
		t.Errorf("listen made a new list: %v", err)
	}
	if !strings.Contains(logs.String(), list) {
		t.Errorf("listen's log does not name the list:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}

	// Restored: suppressed again.
	if err := os.Rename(filepath.Join(e.dir, "away.jsonl"), list); err != nil {
		t.Fatal(err)
	}
	if p := e.plan(); p.Totals.Suppressed != 1 || p.Totals.ToCall != 2 {
		t.Errorf("plan with the list restored: %+v, want 1 suppressed, 2 to call", p.Totals)
	}

	// Both gone: a new store, read as an empty list.
	if err := os.Remove(list); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if p := e.plan(); p.Totals.Suppressed != 0 || p.Totals.ToCall != 3 {
		t.Errorf("plan with neither the list nor its index: %+v, want 3 to call", p.Totals)
	}
	if res := e.run(time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run on a new store: %s", res)
	}
	if l := e.ledger(); len(l.placed) != 3 {
		t.Errorf("run on a new store placed calls to %d numbers, want 3", len(l.placed))
	}
}

// TestListenRefusesOptOutsWhenTheListGoesUnderIt removes, or replaces,
// the do-not-call list's file under a running listen (with a removal,
// its index too, so that only listen knows the list existed): every
// opt-out after is answered 503 and written nowhere, until the file is
// back.
func TestListenRefusesOptOutsWhenTheListGoesUnderIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(t *testing.T, list, index string)
	}{
		{"list and index removed", func(t *testing.T, list, index string) {
			if err := os.Rename(list, list+".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(index); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}},
		{"list replaced by an empty file", func(t *testing.T, list, _ string) {
			if err := os.Rename(list, list+".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(list, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			t.Setenv("CALLRUN_HOME", home)
			path := writeListenCampaign(t, dir, "spring")
			e2eOptOuts(t, path)
			list, index := filepath.Join(home, store.DoNotCallFileName), filepath.Join(home, store.DoNotCallIndexName)
			var logs e2eBuffer
			base, stop := startListen(t, &logs, path)
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("listen: %v", err)
				}
			}()
			if got := sendOptOut(t, base, "+14155550132"); got != http.StatusOK {
				t.Fatalf("the first opt-out: answered %d", got)
			}
			tc.gone(t, list, index)
			if got := sendOptOut(t, base, "+14155550133"); got != http.StatusServiceUnavailable {
				t.Errorf("an opt-out after the list went: answered %d, want 503", got)
			}
			if b, err := os.ReadFile(list); err == nil && strings.Contains(string(b), "+14155550133") {
				t.Errorf("listen wrote the opt-out into a new list: %q", b)
			}
			// Back: the retry is stored, beside what was there.
			os.Remove(list)
			if err := os.Rename(list+".away", list); err != nil {
				t.Fatal(err)
			}
			if got := sendOptOut(t, base, "+14155550133"); got != http.StatusOK {
				t.Errorf("the retry with the list back: answered %d, want 200", got)
			}
			b, err := os.ReadFile(list)
			if err != nil || !strings.Contains(string(b), "+14155550132") || !strings.Contains(string(b), "+14155550133") {
				t.Errorf("the list after the retry: %q, %v", b, err)
			}
		})
	}
}

// e2eOptOuts gives the listen campaign at path outcomes.opt_out and a
// region.
func e2eOptOuts(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "  opt_out: {field: disposition, values: [do_not_call]}\nregion: US\n"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sendOptOut sends listen at base an opt-out of phone for campaign
// spring and returns the status it answered.
func sendOptOut(t *testing.T, base, phone string) int {
	t.Helper()
	resp, err := http.PostForm(base+"/callrun/spring/"+hookSecret, url.Values{"event": {"call.ended"}, "phone_number": {phone}, "disposition": {"do_not_call"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
