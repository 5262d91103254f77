package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestHistoryAndHeldAcrossCampaigns: two campaigns on one CALLRUN_HOME
// share a number; the second run holds it back (pending, exit 75 as for
// any contact left for later) and its report says until when, `plan`
// counts it held, and `callrun history` lists the one call start, by the
// first campaign.
func TestHistoryAndHeldAcrossCampaigns(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	first := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	home := os.Getenv("CALLRUN_HOME") // testCampaign's own
	if err := authLogin(context.Background(), nolog, first, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(context.Background(), nolog, runOptions{Path: first}, io.Discard); err != nil {
		t.Fatalf("the first campaign: %v", err)
	}
	// A second campaign, with a token of its own, on the same home.
	second := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	t.Setenv("CALLRUN_HOME", home)
	yaml, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte(strings.Replace(string(yaml), "name: ", "name: second-", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := authLogin(context.Background(), nolog, second, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	code, out := runAppOut(t, "plan", "--format", "json", second)
	var plan struct {
		Totals struct {
			ToCall int `json:"to_call"`
			Held   int `json:"held"`
		} `json:"totals"`
		HeldUntil string `json:"held_until"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &plan); err != nil || code != 0 || plan.Totals.Held != 1 || plan.Totals.ToCall != 0 || plan.HeldUntil == "" {
		t.Fatalf("plan of the second campaign: exit %d, %+v (%v)\n%s", code, plan, err, out)
	}
	if code, out := runAppOut(t, "plan", "--strict", second); code != 0 || !strings.Contains(out, "Held back by contact pressure: 1 contact(s)") {
		t.Errorf("plan --strict with a held row: exit %d, want 0\n%s", code, out)
	}
	if n := len(srv.Placed()); n != 1 {
		t.Fatalf("%d calls placed by the first campaign, want 1", n)
	}
	code, out = runAppOut(t, "run", second)
	if code != 75 || len(srv.Placed()) != 1 {
		t.Fatalf("the second campaign: exit %d, %d calls placed; want 75 and the one call of the first\n%s", code, len(srv.Placed()), out)
	}
	reportCSV := filepath.Join(filepath.Dir(second), ".callrun", "second-"+campaignName(t, first), "report.csv")
	for _, by := range []string{"run", "callrun report"} {
		if by == "callrun report" {
			os.Remove(reportCSV)
			if code, out := runAppOut(t, "report", second); code != 0 {
				t.Fatalf("callrun report: exit %d\n%s", code, out)
			}
		}
		report, err := os.ReadFile(reportCSV)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(report), "held back: called once within 24 hours on this store") {
			t.Errorf("the report written by %s does not say the contact is held back:\n%s", by, report)
		}
	}
	code, out = runAppOut(t, "history", "--format", "json", second, "+14155550132")
	var hist []store.CallStart
	if err := json.Unmarshal([]byte(out), &hist); err != nil || code != 0 || len(hist) != 1 || hist[0].Campaign != campaignName(t, first) || hist[0].Released {
		t.Errorf("history: exit %d, %+v (%v)\n%s", code, hist, err, out)
	}
	if code, out := runAppOut(t, "history", second, "(415) 555-0132"); code != 0 || !strings.Contains(out, "may be called again from") {
		t.Errorf("history text: exit %d\n%s", code, out)
	}
	// A number that does not read: a usage error naming it; history
	// changes nothing, so it does not say "nothing was changed".
	if code, out := runAppOut(t, "history", second, "12"); code != run.ExitUsage || !strings.Contains(out, `"12" is not a valid phone number`) || strings.Contains(out, "nothing was changed") {
		t.Errorf("history of a number that does not read: exit %d\n%s", code, out)
	}
}

// campaignName reads the name: of the campaign file at path.
func campaignName(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "name: "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no name: in " + path)
	return ""
}

// TestRunMovesOldCallStartsAside: a run on a CALLRUN_HOME whose call
// starts file holds months-old starts moves them into the archive at its
// start, calls as before, and `callrun history` still finds them.
func TestRunMovesOldCallStartsAside(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	home := os.Getenv("CALLRUN_HOME")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-60 * 24 * time.Hour).UTC()
	var buf []byte
	const n = 15000 // about 1.4 MiB
	for i := range n {
		line, err := json.Marshal(store.CallStart{Number: fmt.Sprintf("+1212555%04d", i%10000), At: old.Add(time.Duration(i) * time.Second), ID: fmt.Sprint("spring ", i), Campaign: "spring", Agent: "A"})
		if err != nil {
			t.Fatal(err)
		}
		buf = append(append(buf, line...), '\n')
	}
	// And one start of an hour ago: the store is in use (a compaction
	// measures what is old by its latest start too, see
	// TestRunPressureCompactionWithAClockAhead in campaign).
	line, err := json.Marshal(store.CallStart{Number: "+12125559999", At: time.Now().Add(-time.Hour).UTC(), ID: "autumn 1", Campaign: "autumn", Agent: "A"})
	if err != nil {
		t.Fatal(err)
	}
	buf = append(append(buf, line...), '\n')
	if err := os.WriteFile(filepath.Join(home, store.CallStartsFileName), buf, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path}, io.Discard); err != nil || len(srv.Placed()) != 1 {
		t.Fatalf("the run: %v, %d calls placed; want its one contact called", err, len(srv.Placed()))
	}
	for name, want := range map[string]int{store.CallStartsArchiveName: n, store.CallStartsFileName: 2} {
		b, err := os.ReadFile(filepath.Join(home, name))
		if got := strings.Count(string(b), "\n"); err != nil || got != want {
			t.Errorf("%s: %d lines (%v), want %d", name, got, err, want)
		}
	}
	for number, campaign := range map[string]string{"+12125550007": "spring", "+14155550132": campaignName(t, path)} {
		code, out := runAppOut(t, "history", "--format", "json", path, number)
		var hist []store.CallStart
		if err := json.Unmarshal([]byte(out), &hist); err != nil || code != 0 || len(hist) == 0 || hist[0].Campaign != campaign {
			t.Errorf("history of %s: exit %d, %+v (%v)\n%s", number, code, hist, err, out)
		}
	}
}

// TestPressureOffStillCounts: a campaign with pressure: {off: true} is
// held back by no limit, but its call starts count for every other
// campaign on the store, with files and with PostgreSQL: a second
// campaign, under the default pressure, does not call the number again
// the same day (one call start in the sandbox's ledger), and `callrun
// history` lists the first campaign's call.
func TestPressureOffStillCounts(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testPressureOffStillCounts(t, kind) })
	}
}

func testPressureOffStillCounts(t *testing.T, kind string) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	phones := e2ePhones(2)
	db := e2eDatabase(t, kind)
	home := filepath.Join(t.TempDir(), "callrun-home")
	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:1], perSecond: 50, concurrency: 1, postgres: db})
	a.rename("pressure-off")
	a.env = append(a.env, "CALLRUN_HOME="+home)
	a.appendYAML("pressure: {off: true}\n")
	if res := a.run(60*time.Second, "run", a.path); res.code != 0 || len(srv.Placed()) != 1 {
		t.Fatalf("the campaign with pressure off: %d calls placed, %s", len(srv.Placed()), res)
	}
	b := newE2ECampaign(t, srv, e2eSetup{contacts: phones, perSecond: 50, concurrency: 1, postgres: db, noLogin: db != ""})
	b.rename("pressure-on")
	b.env = append(b.env, "CALLRUN_HOME="+home)
	if res := b.run(60*time.Second, "run", b.path); res.code != 75 {
		t.Errorf("the second campaign: want exit 75 (one contact held back), got %s", res)
	}
	n := callsByNumber(srv.Placed())
	if n[phones[0].E164] != 1 || n[phones[1].E164] != 1 {
		t.Errorf("the sandbox's ledger: %v; want %s once (by the campaign with pressure off) and %s once", n, phones[0].E164, phones[1].E164)
	}
	res := b.run(30*time.Second, "history", "--format", "json", b.path, phones[0].E164)
	if res.code != 0 || !strings.Contains(res.stdout, `"campaign": "pressure-off"`) {
		t.Errorf("history does not list the call of the campaign with pressure off: %s", res)
	}
}

// TestHeldDespiteASkewedStart: a call start in the shared call starts
// written by a machine whose clock ran two months ahead does not let a
// second campaign call again the number the first called minutes ago:
// the sandbox's ledger holds one call.
func TestHeldDespiteASkewedStart(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	first := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	home := os.Getenv("CALLRUN_HOME") // testCampaign's own
	if err := authLogin(context.Background(), nolog, first, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if code, out := runAppOut(t, "run", first); code != 0 || len(srv.Placed()) != 1 {
		t.Fatalf("the first campaign: exit %d, %d calls placed\n%s", code, len(srv.Placed()), out)
	}
	skewed := fmt.Sprintf(`{"number":"+14155550199","at":%q,"id":"elsewhere +14155550199 0 1","campaign":"skewed","agent":"A"}`+"\n",
		time.Now().Add(60*24*time.Hour).UTC().Format(time.RFC3339Nano))
	f, err := os.OpenFile(filepath.Join(home, store.CallStartsFileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(skewed)
	f.Close()
	second := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	t.Setenv("CALLRUN_HOME", home)
	yaml, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte(strings.Replace(string(yaml), "name: ", "name: second-", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := authLogin(context.Background(), nolog, second, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if code, out := runAppOut(t, "run", second); code != 75 || len(srv.Placed()) != 1 {
		t.Errorf("the second campaign: exit %d, %d calls placed; want 75 and the one call of the first\n%s", code, len(srv.Placed()), out)
	}
}
