package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestRetention: a campaign's retention: erases, at the start of its run,
// the data of the people nobody on the store called within it, from
// every campaign there; keeps the do-not-call list; and nobody is called
// twice. Files and PostgreSQL, over the sandbox's ledger.
func TestRetention(t *testing.T) {
	for _, kind := range []string{"files", "postgres"} {
		t.Run(kind, func(t *testing.T) { testRetention(t, kind) })
	}
}

func testRetention(t *testing.T, kind string) {
	ctx := context.Background()
	db := e2eDatabase(t, kind)
	srv, spring, autumn := retentionStore(t, db)
	const a, b, c = retainedA, retainedB, retainedC
	ago := func(days int) func() time.Time {
		return func() time.Time { return time.Now().Add(-time.Duration(days) * 24 * time.Hour) }
	}

	// The run erases A alone (B was called 20 days ago, by autumn), and
	// calls nobody.
	before := len(srv.Calls())
	if code, out := runAppOut(t, "run", spring); code != 0 || len(srv.Calls()) != before {
		t.Fatalf("the run with retention: exit %d, %d calls\n%s", code, len(srv.Calls())-before, out)
	}
	home := os.Getenv("CALLRUN_HOME")
	forms := personForms(a, "Person A")
	for _, dir := range []string{stateDirOf(t, spring), stateDirOf(t, autumn), home} {
		for p, form := range findForms(t, dir, forms) {
			if !strings.HasPrefix(filepath.Base(p), "do-not-call") { // retention keeps the list
				t.Errorf("%s still holds A as %q", p, form)
			}
		}
	}
	if db != "" {
		tables := pgText(t, db, `SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'callrun\_%' AND table_name <> 'callrun_do_not_call'`)
		for _, table := range strings.Split(tables, ",") {
			rows := pgText(t, db, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM `+table+` t`)
			for _, form := range forms {
				if strings.Contains(rows, form) {
					t.Errorf("the table %s still holds A as %q", table, form)
				}
			}
		}
	}
	report := readReportBy(t, "row", filepath.Join(stateDirOf(t, spring), "report.csv"))
	if row := report["2"]; row["status"] != string(store.Erased) || row["phone_number"] != "" {
		t.Errorf("A's report row: %v; want erased and blank", row)
	}
	for _, r := range []string{"3", "4"} {
		if row := report[r]; row["status"] != string(store.Sent) || row["phone_number"] == "" {
			t.Errorf("report row %s: %v; want B and C as they were", r, row)
		}
	}
	if audit := readAudit(t, home); len(audit) != 2 || audit[1].Why != "retention" || audit[1].People != 1 || !audit[1].Done {
		t.Errorf("audit: %+v; want a retention of one person, begun and done", audit)
	}

	// A is still on the do-not-call list: autumn, with pressure off, does
	// not call them; nor does a run of spring, nor one a day later.
	writePeople(t, filepath.Dir(autumn), a, b)
	for _, p := range []string{autumn, spring} {
		if code, out := runAppOut(t, "run", "--retry-uncertain", "--retry-failed", p); code != 0 {
			t.Fatalf("a run of %s after the retention: exit %d\n%s", p, code, out)
		}
	}
	if err := runCampaign(ctx, nolog, runOptions{Path: spring, Now: ago(-1)}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := callsByNumber(srv.Calls()); n[a] != 1 || n[b] != 2 || n[c] != 1 {
		t.Errorf("ledger after: %v; want it as it was", n)
	}

	// erase --older-than: nobody else is due at 31 days; less is refused.
	if code, out := runAppOut(t, "erase", "--older-than", "31d", spring); code != 0 || !strings.Contains(out, "nothing to erase") {
		t.Errorf("erase --older-than 31d: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "erase", "--older-than", "30d", spring); code != run.ExitUsage || !strings.Contains(out, "less than 31d") {
		t.Errorf("erase --older-than 30d: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "erase", "--older-than", "15d", spring); code != run.ExitUsage {
		t.Errorf("erase --older-than 15d: exit %d\n%s", code, out)
	}
}

// The people of retentionStore.
const retainedA, retainedB, retainedC = "+14155550162", "+14155550163", "+14155550164"

// retentionStore starts a sandbox and two campaigns on one store (in the
// database db, "": files), spring with retention: 90d and autumn, and
// runs them in the past: spring called A and B 95 days ago, and A asked
// not to be called again; spring called C 10 days ago, and autumn B 20
// days ago. A alone is due.
func retentionStore(t *testing.T, db string) (_ *sandbox.Server, spring, autumn string) {
	t.Helper()
	ctx := context.Background()
	srv, _ := erasureCampaign(t, db)
	on := campaignsOnOneStore(t, srv.URL, db)
	spring, autumn = on("spring", "retention: 90d\n"), on("autumn", "pressure: {off: true}\n")
	const a, b, c = retainedA, retainedB, retainedC
	runAt := func(path string, days int) {
		t.Helper()
		now := func() time.Time { return time.Now().Add(-time.Duration(days) * 24 * time.Hour) }
		if err := runCampaign(ctx, nolog, runOptions{Path: path, Now: now}, io.Discard); err != nil {
			t.Fatalf("run of %s %d days ago: %v", path, days, err)
		}
	}
	writePeople(t, filepath.Dir(spring), a, b)
	runAt(spring, 95)
	if code, out := runAppOut(t, "suppress", "add", spring, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	writePeople(t, filepath.Dir(spring), a, b, c)
	runAt(spring, 10)
	if err := os.WriteFile(filepath.Join(filepath.Dir(autumn), "contacts.csv"), []byte("Phone,First Name\n"+b+",Person B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runAt(autumn, 20)
	if n := callsByNumber(srv.Calls()); n[a] != 1 || n[b] != 2 || n[c] != 1 {
		t.Fatalf("ledger before the retention: %v; want A once, B twice, C once", n)
	}
	return srv, spring, autumn
}

// TestRetentionKilledAtEachStep: a retention stopped at any step calls
// nobody, and the next run's retention finishes it.
func TestRetentionKilledAtEachStep(t *testing.T) {
	crash := errors.New("killed")
	for k := 1; ; k++ {
		steps, killed := 0, ""
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			srv, spring, _ := retentionStore(t, "")
			before := len(srv.Calls())
			_, err := run.Retain(context.Background(), nolog, run.RetainOptions{Path: spring, BeforeStep: func(name string) error {
				if steps++; steps == k {
					killed = name
					return crash
				}
				return nil
			}}, io.Discard)
			if killed != "" && !errors.Is(err, crash) || killed == "" && err != nil {
				t.Fatalf("retention killed at %q: %v", killed, err)
			}
			if code, out := runAppOut(t, "run", "--retry-uncertain", "--retry-failed", spring); code != 0 || len(srv.Calls()) != before {
				t.Fatalf("the run after a retention killed at %q: exit %d, %d calls\n%s", killed, code, len(srv.Calls())-before, out)
			}
			for _, dir := range []string{stateDirOf(t, spring), os.Getenv("CALLRUN_HOME")} {
				for p, form := range findForms(t, dir, personForms(retainedA, "Person A")) {
					if !strings.HasPrefix(filepath.Base(p), "do-not-call") { // retention keeps the list
						t.Errorf("after a retention killed at %q and a run, %s still holds A as %q", killed, p, form)
					}
				}
			}
		})
		if killed == "" {
			if k < 8 {
				t.Fatalf("the retention ran %d steps; want every step killed once", steps)
			}
			return
		}
	}
}

// TestListenRetention: listen, as it starts (and daily), erases from the
// deliveries file it holds those of the people its campaign's
// retention: makes due, and goes on storing deliveries.
func TestListenRetention(t *testing.T) {
	spring, addr, write, stop := listenWithAAndB(t)
	stop()

	write(true)
	stop = listenOn(t, spring, addr)
	waitFor(t, 30*time.Second, "listen's retention to finish", func() bool {
		b, _ := os.ReadFile(filepath.Join(os.Getenv("CALLRUN_HOME"), run.AuditFileName))
		return bytes.Contains(b, []byte(`"why":"retention"`)) && bytes.HasSuffix(b, []byte(`"done":true}`+"\n"))
	})
	postEnded(t, addr, retainedB, "Person B", "call_b2")
	stop()
	for p, form := range findForms(t, stateDirOf(t, spring), personForms(retainedA, "Person A")) {
		t.Errorf("%s still holds A as %q", p, form)
	}
	deliveries := filepath.Join(stateDirOf(t, spring), store.DeliveriesFile)
	if b, err := os.ReadFile(deliveries); err != nil || bytes.Count(b, []byte("\n")) != 3 || bytes.Count(b, []byte(retainedB)) < 2 || bytes.Contains(b, []byte("Person A")) {
		t.Errorf("deliveries after the retention (%v):\n%s\nwant A's erased and B's two", err, b)
	}
}

// firstCallIDTo is the call id of the first call the sandbox placed to
// number; "" when none.
func firstCallIDTo(srv *sandbox.Server, number string) string {
	for _, c := range srv.Placed() {
		if c.Form.Get("phone_number") == number {
			return c.CallID
		}
	}
	return ""
}

// listenOn starts run.Listen on path at addr and returns its stop.
func listenOn(t *testing.T, path, addr string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run.Listen(ctx, nolog, run.ListenOptions{Paths: []string{path}, Addr: addr}, io.Discard)
	}()
	waitFor(t, 10*time.Second, "listen to start", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("listen: %v", err)
		}
	}
}

// postEnded posts a call.ended delivery of number and name to listen.
func postEnded(t *testing.T, addr, number, name, callID string) {
	t.Helper()
	postEndedWith(t, addr, number, name, callID, "")
}

// postEndedWith is postEnded with more members of its data (extra,
// each followed by a comma).
func postEndedWith(t *testing.T, addr, number, name, callID, extra string) {
	t.Helper()
	// A duration of 0: the delivery records no conversation, which, by
	// the time listen received it, would be a contact since the limit and
	// keep the person from being due.
	body := `{"event":"call.ended","data":{` + extra + `"call_id":"` + callID + `","duration":0,"status":"completed","disposition":"interested","customer":{"number":"` + number + `","name":"` + name + `"},"transcript":"Agent: Am I speaking with ` + name + `?"}}`
	resp, err := http.Post("http://"+addr+"/callrun/e2e/"+hookSecret, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delivery of %s: %s", callID, resp.Status)
	}
}

// withOutcomes returns spring's campaign file with an outcomes: block
// on addr, with or without its retention: 90d.
func withOutcomes(t *testing.T, spring, addr string, retention bool) (write func(retention bool)) {
	t.Helper()
	t.Setenv("E2E_HOOK_SECRET", hookSecret)
	body, err := os.ReadFile(spring)
	if err != nil {
		t.Fatal(err)
	}
	without := strings.Replace(string(body), "retention: 90d\n", "", 1) +
		"outcomes:\n  url: http://" + addr + "/callrun/e2e/${E2E_HOOK_SECRET}\n  fields: [disposition, transcript]\n"
	write = func(retention bool) {
		yaml := without
		if retention {
			yaml += "retention: 90d\n"
		}
		if err := os.WriteFile(spring, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(retention)
	return write
}

// TestRetentionBesideAListen: a run's retention while a listen (without
// retention: of its own) holds the campaign's deliveries asks that
// listen to erase A's deliveries, and waits for it: after the run,
// deliveries.jsonl holds A in no form, and erase --older-than, a run and
// a listen after it find nobody left.
func TestRetentionBesideAListen(t *testing.T) {
	spring, addr, write, stop := listenWithAAndB(t)

	// The run's retention, while listen holds the deliveries.
	write(true)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	deliveries := filepath.Join(stateDirOf(t, spring), store.DeliveriesFile)
	if b, err := os.ReadFile(deliveries); err != nil || bytes.Contains(b, []byte("Person A")) || !bytes.Contains(b, []byte("Person B")) {
		t.Errorf("after the run's retention beside listen (%v), %s:\n%s\nwant A erased and B kept", err, deliveries, b)
	}
	stop()

	// listen stopped: erase --older-than, a run, and a listen with
	// retention: each should finish what the first left.
	if code, out := runAppOut(t, "erase", "--older-than", "90d", spring); code != 0 {
		t.Errorf("erase --older-than 90d: exit %d\n%s", code, out)
	} else if !strings.Contains(out, "nothing to erase") {
		t.Errorf("erase --older-than 90d after the run's retention found more:\n%s", out)
	}
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Errorf("run: exit %d\n%s", code, out)
	}
	stop = listenOn(t, spring, addr)
	stop()
	b, err := os.ReadFile(deliveries)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("Person A")) || bytes.Contains(b, []byte(retainedA)) {
		t.Errorf("A, due and tombstoned in the journal, is still in %s after a retention, erase --older-than and a listen's retention:\n%s", deliveries, b)
	}
}

// listenWithAAndB is retentionStore's spring with an outcomes: block
// (without its retention:), a listen of it running, and a delivery of A
// and one of B stored; it returns the campaign file, listen's address,
// the campaign's writer (with or without retention:) and listen's stop.
func listenWithAAndB(t *testing.T) (spring, addr string, write func(retention bool), stop func()) {
	t.Helper()
	srv, spring, _ := retentionStore(t, "")
	addr = freePort(t)
	write = withOutcomes(t, spring, addr, false)
	stop = listenOn(t, spring, addr)
	// The call ids of spring's calls, 95 days ago: a call id no journal
	// holds is a call the service placed on its own, today, which a call
	// start counts and which keeps its person from being due.
	postEnded(t, addr, retainedA, "Person A", firstCallIDTo(srv, retainedA))
	postEnded(t, addr, retainedB, "Person B", firstCallIDTo(srv, retainedB))
	return spring, addr, write, stop
}

// retainedTwice sets up a campaign with retention: 90d, dedupe as
// given and pressure off, whose sheets hold x twice under its first
// agent and once under a second, and y; runs it 95 days ago, then now
// (its retention erases x and y, on no do-not-call list). It returns the
// sandbox's ledger before the retention.
func retainedTwice(t *testing.T, dedupe, x, y string) (path string, calls func() map[string]int, before map[string]int) {
	t.Helper()
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	path = on("solo", "retention: 90d\ndedupe: "+dedupe+"\npressure: {off: true}\n")
	addAgentSheet(t, path, "Second", "more.csv", "Phone,First Name\n"+x+",Person X\n")
	writePeople(t, filepath.Dir(path), x, y, x) // x twice: dedupe: none calls it twice
	now95 := func() time.Time { return time.Now().Add(-95 * 24 * time.Hour) }
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path, Now: now95}, io.Discard); err != nil {
		t.Fatal(err)
	}
	calls = func() map[string]int { return callsByNumber(srv.Calls()) }
	before = calls()
	if before[x] == 0 || before[y] != 1 {
		t.Fatalf("ledger 95 days ago: %v", before)
	}
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run with retention: exit %d\n%s", code, out)
	}
	return path, calls, before
}

// TestRetainedNotCalledAgain: people retention erased who are not
// on the do-not-call list (the e2e tests' A is) are not called again by
// a run of the same sheets, with --retry-uncertain and --retry-failed,
// for each dedupe, one of them under two agents.
func TestRetainedNotCalledAgain(t *testing.T) {
	const x, y = "+14155550170", "+14155550171"
	for _, dedupe := range []string{"campaign", "agent", "none"} {
		t.Run(dedupe, func(t *testing.T) {
			path, calls, before := retainedTwice(t, dedupe, x, y)
			if code, out := runAppOut(t, "run", "--retry-uncertain", "--retry-failed", path); code != 0 {
				t.Fatalf("run after the retention: exit %d\n%s", code, out)
			}
			if after := calls(); after[x] != before[x] || after[y] != before[y] {
				t.Errorf("ledger: %v before the retention, %v after it and a run; want no call more", before, after)
			}
		})
	}
}

// TestRetainedDuplicateRowsBlank: a retained person's rows that the
// report calls duplicate hold their number and name nowhere in
// report.csv, report.xlsx and report.html, though retention puts nobody
// in the erased set: the journal's tombstone blanks them.
func TestRetainedDuplicateRowsBlank(t *testing.T) {
	const x, y = "+14155550170", "+14155550171"
	for _, dedupe := range []string{"campaign", "agent"} {
		t.Run(dedupe, func(t *testing.T) {
			path, _, _ := retainedTwice(t, dedupe, x, y)
			for p, form := range findForms(t, stateDirOf(t, path), append(personForms(x, "Person A"), "Person C", "Person X")) {
				t.Errorf("after the retention %s holds X as %q", p, form)
			}
		})
	}
}

// TestRetainedRowSaysRetention: the report row of a person retention
// erased says so, not that the person asked, and report.html does not
// say callrun never calls them again: a later campaign may.
func TestRetainedRowSaysRetention(t *testing.T) {
	path, _, _ := retainedTwice(t, "none", "+14155550170", "+14155550171")
	report := readReportBy(t, "row", filepath.Join(stateDirOf(t, path), "report.csv"))
	for r, row := range report {
		if row["status"] == string(store.Erased) && (strings.Contains(row["reason"], "request") || !strings.Contains(row["reason"], "retention")) {
			t.Errorf("report row %s of a retained person: reason %q; want it to say retention", r, row["reason"])
		}
	}
	page, err := os.ReadFile(filepath.Join(stateDirOf(t, path), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"at their request", "never calls the number again"} {
		if bytes.Contains(page, []byte(claim)) {
			t.Errorf("report.html, of people retention erased, says %q", claim)
		}
	}
}

// TestRetentionBesideAnotherRun: a run of a campaign with
// retention: while a run of another campaign on the store holds its lock
// puts the retention off and runs.
func TestRetentionBesideAnotherRun(t *testing.T) {
	srv, spring, autumn := retentionStore(t, "")
	unlock, err := store.Lock(stateDirOf(t, autumn))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	before := len(srv.Calls())
	code, out := runAppOut(t, "run", spring)
	if code != 0 || len(srv.Calls()) != before {
		t.Fatalf("run beside another campaign's run: exit %d, %d calls\n%s", code, len(srv.Calls())-before, out)
	}
	if !strings.Contains(out, "put off") {
		t.Errorf("the run does not say its retention was put off:\n%s", out)
	}
}

// TestRetentionBesideAMissingSheet: another campaign on the store
// whose sheet is gone (a finished campaign's CSV deleted, its state
// kept) does not make spring's retention fail its runs.
func TestRetentionBesideAMissingSheet(t *testing.T) {
	srv, spring, autumn := retentionStore(t, "")
	if err := os.Remove(filepath.Join(filepath.Dir(autumn), "contacts.csv")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		before := len(srv.Calls())
		code, out := runAppOut(t, "run", spring)
		if code != 0 {
			t.Errorf("run %d of spring, whose retention met autumn's missing sheet: exit %d\n%s", i+1, code, out)
		}
		if n := len(srv.Calls()) - before; n != 0 {
			t.Errorf("run %d: %d calls", i+1, n)
		}
	}
}

// addAgentSheet adds to the campaign at path an agent of name, first in
// its agents, and a sheet of it, file, whose text is body (columns Phone
// and First Name).
func addAgentSheet(t *testing.T, path, name, file, body string) {
	t.Helper()
	yaml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(yaml), "agents:\n", "agents:\n  - name: "+name+"\n    prompt: hello from "+name+"\n", 1)
	text = strings.Replace(text, "sheets:\n", "sheets:\n  - file: "+file+"\n    agent: "+name+"\n    fields: {phone_number: Phone, first_name: First Name}\n", 1)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), file), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
