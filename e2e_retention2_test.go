package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// TestRetainedDuplicateRowSaysRetention: with dedupe: campaign or agent,
// a retained person's duplicate rows are blanked from the journal's
// tombstone, and say retention erased them, as their first row does.
func TestRetainedDuplicateRowSaysRetention(t *testing.T) {
	const x, y = "+14155550170", "+14155550171"
	for _, dedupe := range []string{"campaign", "agent"} {
		t.Run(dedupe, func(t *testing.T) {
			path, _, _ := retainedTwice(t, dedupe, x, y)
			report := readReportBy(t, "row", filepath.Join(stateDirOf(t, path), "report.csv"))
			erased := 0
			for r, row := range report {
				if row["status"] != string(store.Erased) {
					continue
				}
				erased++
				if strings.Contains(row["reason"], "request") || !strings.Contains(row["reason"], "retention") {
					t.Errorf("report.csv row %s (sheet %s) of a person retention erased: reason %q; want it to say retention", r, row["sheet"], row["reason"])
				}
			}
			if erased < 3 {
				t.Errorf("%d erased rows; want X's two rows and Y's", erased)
			}
		})
	}
}

// TestDuplicateOfACalledPersonNotBlanked: retention erased X (dedupe:
// agent, on no do-not-call list); a later sheet gives X, twice, to a new
// agent, which calls X anew. X's duplicate row under that agent keeps
// its number: the old tombstone is another agent's contact.
func TestDuplicateOfACalledPersonNotBlanked(t *testing.T) {
	const x, y = "+14155550170", "+14155550171"
	path, calls, before := retainedTwice(t, "agent", x, y)
	addAgentSheet(t, path, "Third", "third.csv", "Phone,First Name\n"+x+",Person X\n"+x+",Person X\n")
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run with agent Third: exit %d\n%s", code, out)
	}
	if after := calls(); after[x] != before[x]+1 {
		t.Fatalf("ledger: %v before the retention, %v after the run with Third; want X called once more, by Third", before, after)
	}
	rows := (&e2eCampaign{t: t, stateDir: stateDirOf(t, path)}).reportRows()
	seen := 0
	for _, row := range rows {
		if row["sheet"] != "third.csv" {
			continue
		}
		seen++
		t.Logf("third.csv row %s: status %s, phone %q, reason %q", row["row"], row["status"], row["phone_number"], row["reason"])
		if row["status"] == string(store.Erased) {
			t.Errorf("third.csv row %s, X's, whom Third just called: status erased, reason %q, number %q; want sent or duplicate, as the sheet holds it", row["row"], row["reason"], row["phone_number"])
		}
	}
	if seen != 2 {
		t.Errorf("%d rows of third.csv in the report; want 2", seen)
	}
}

// TestRetentionWaitsForAHeldOptOut: P opted out in a delivery whose
// number does not read: listen holds the opt-out, and `callrun outcomes`
// finds P through the journal's record of the call. A run with
// retention: 90d, 95 days after P's call, puts its retention off while
// the hold is open (erasing P first would lose whom the hold is of); the
// operator resolves it by listing P, and no campaign calls P after.
// Counted over the sandbox's ledger.
func TestRetentionWaitsForAHeldOptOut(t *testing.T) {
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	spring, autumn := on("spring", ""), on("autumn", "pressure: {off: true}\n")
	const p, q = "+14155550176", "+14155550177"
	addr, yaml := withOptOuts(t, spring)
	writePeople(t, filepath.Dir(spring), p, q)
	now95 := func() time.Time { return time.Now().Add(-95 * 24 * time.Hour) }
	if err := runCampaign(context.Background(), nolog, runOptions{Path: spring, Now: now95}, io.Discard); err != nil {
		t.Fatal(err)
	}
	callID := ""
	journal, err := os.ReadFile(filepath.Join(stateDirOf(t, spring), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(journal), "\n") {
		var r store.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == store.TypeOutcome && r.Phone == p && r.CallID != "" {
			callID = r.CallID
		}
	}
	if callID == "" {
		t.Fatalf("no call id of P in the journal:\n%s", journal)
	}

	// P's opt-out, naming P's call and no number: held.
	postOptOut(t, spring, addr, `{"event":"call.ended","data":{"call_id":"`+callID+`","status":"completed","disposition":"opted_out"}}`)
	key := heldOptOut(t, spring).Key
	// What the operator reads to resolve it: outcomes' row of the held
	// delivery, and the sheet row it matched (its number).
	numberOfHold := func() string {
		t.Helper()
		_, out := runAppOut(t, "outcomes", "--format", "json", spring)
		for _, line := range strings.Split(out, "\n") {
			if !strings.Contains(line, key) {
				continue
			}
			t.Logf("outcomes' line of the held delivery: %s", line)
			var l struct {
				PhoneNumber string `json:"phone_number"`
				Sheet       string `json:"sheet"`
				Row         int    `json:"row"`
			}
			json.Unmarshal([]byte(line), &l)
			if l.PhoneNumber != "" || l.Sheet == "" {
				return l.PhoneNumber
			}
			sheet, err := os.ReadFile(filepath.Join(filepath.Dir(spring), l.Sheet))
			if err != nil {
				t.Fatal(err)
			}
			rows := strings.Split(string(sheet), "\n")
			return strings.Split(rows[l.Row-1], ",")[0]
		}
		return ""
	}
	if n := numberOfHold(); n != p {
		t.Fatalf("before the retention, outcomes gives the held delivery the number %q; want P's", n)
	}

	// The run with retention: 90d.
	if err := os.WriteFile(spring, []byte(yaml+"retention: 90d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runAppOut(t, "run", spring)
	t.Logf("the run with retention, the opt-out held: exit %d\n%s", code, out)
	if key != heldOptOut(t, spring).Key {
		t.Fatal("the hold changed")
	}
	found := numberOfHold()
	if found != "" {
		if code, out := runAppOut(t, "suppress", "add", spring, found); code != 0 {
			t.Fatalf("suppress add: exit %d\n%s", code, out)
		}
	}
	if code, out := runAppOut(t, "outcomes", "resolve", "--note", "number: "+found, spring, key); code != 0 {
		t.Fatalf("outcomes resolve: exit %d\n%s", code, out)
	}
	before := callsByNumber(srv.Calls())[p]
	writePeople(t, filepath.Dir(autumn), p)
	if code, out := runAppOut(t, "run", autumn); code != 0 {
		t.Fatalf("run of autumn: exit %d\n%s", code, out)
	}
	if after := callsByNumber(srv.Calls())[p]; after != before {
		t.Errorf("P, who opted out on a call (held), was called %d more time(s) by autumn: the retention erased the held opt-out's tie to P (outcomes gave it %q after it), and left P off the do-not-call list", after-before, found)
	}
}

// TestRetentionDistrustsAFirstRecordAhead: spring's first run was made
// with the clock a year ahead; its later run called P and Q 95 days ago.
// A retention of 90 days does not take the journal for young from its
// first record, which is after now: it erases P and Q.
func TestRetentionDistrustsAFirstRecordAhead(t *testing.T) {
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	spring := on("spring", "pressure: {off: true}\n")
	const x, p, q = "+14155550178", "+14155550176", "+14155550177"
	at := func(days int) func() time.Time {
		return func() time.Time { return time.Now().Add(time.Duration(days) * 24 * time.Hour) }
	}
	writePeople(t, filepath.Dir(spring), x)
	if err := runCampaign(context.Background(), nolog, runOptions{Path: spring, Now: at(365)}, io.Discard); err != nil {
		t.Fatal(err)
	}
	writePeople(t, filepath.Dir(spring), x, p, q)
	if err := runCampaign(context.Background(), nolog, runOptions{Path: spring, Now: at(-95)}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := callsByNumber(srv.Calls()); n[p] != 1 || n[q] != 1 {
		t.Fatalf("ledger: %v", n)
	}
	code, out := runAppOut(t, "erase", "--older-than", "90d", spring)
	t.Logf("erase --older-than 90d: exit %d\n%s", code, out)
	for i, n := range []string{p, q} {
		for path, form := range findForms(t, stateDirOf(t, spring), personForms(n, "Person "+string(rune('B'+i)))) {
			t.Errorf("after a retention of 90 days, %s still holds %s (last called 95 days ago) as %q", path, n, form)
		}
	}
}

// TestOlderThanSaidAsGiven: erase --older-than 90d says, and writes in
// its audit line, the limit as 90d, not 2160h0m0s.
func TestOlderThanSaidAsGiven(t *testing.T) {
	_, spring, _ := retentionStore(t, "")
	code, out := runAppOut(t, "erase", "--older-than", "90d", spring)
	if code != 0 {
		t.Fatalf("erase --older-than 90d: exit %d\n%s", code, out)
	}
	audit, err := os.ReadFile(filepath.Join(os.Getenv("CALLRUN_HOME"), run.AuditFileName))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"its output": out, "the audit": string(audit)} {
		if strings.Contains(text, "2160h") {
			t.Errorf("%s gives the limit 90d as 2160h0m0s:\n%s", what, text)
		}
	}
}

// TestEraseBlanksOptOutHolds: an opt-out whose number field does not
// read, but one of whose values is P's number, is held, its reason
// naming P's number; a person resolves it with a note that names the
// number. After `callrun erase` of P, the holds (opt-out-holds.jsonl, or
// callrun_opt_out_holds) hold P's number nowhere.
func TestEraseBlanksOptOutHolds(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testEraseBlanksOptOutHolds(t, kind) })
	}
}

func testEraseBlanksOptOutHolds(t *testing.T, kind string) {
	db := e2eDatabase(t, kind)
	srv, _ := erasureCampaign(t, db)
	on := campaignsOnOneStore(t, srv.URL, db)
	spring := on("spring", "")
	const p, q = "+14155550176", "+14155550177"
	addr, _ := withOptOuts(t, spring)
	writePeople(t, filepath.Dir(spring), p, q)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	postOptOut(t, spring, addr, `{"event":"call.ended","data":{"call_id":"call_elsewhere","status":"completed","disposition":"opted_out","customer":{"number":"ask reception"},"callback":"`+p+`"}}`)
	hold := heldOptOut(t, spring)
	t.Logf("the hold: %+v", hold)
	if code, out := runAppOut(t, "outcomes", "resolve", "--note", p+", by Ada", spring, hold.Key); code != 0 {
		t.Fatalf("outcomes resolve: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "erase", spring, p); code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	for _, dir := range []string{os.Getenv("CALLRUN_HOME"), stateDirOf(t, spring)} {
		for path, form := range findForms(t, dir, personForms(p, "Person A")) {
			b, _ := os.ReadFile(path)
			t.Errorf("after erase, %s holds P as %q:\n%s", path, form, b)
		}
	}
	if db != "" {
		tables := pgText(t, db, `SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'callrun\_%'`)
		for _, table := range strings.Split(tables, ",") {
			rows := pgText(t, db, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM `+table+` t`)
			for _, form := range personForms(p, "Person A") {
				if strings.Contains(rows, form) {
					t.Errorf("after erase, the table %s holds P as %q", table, form)
				}
			}
		}
	}
}

// TestRunRetentionSaysWhatItLeft: a run's retention erases A, but
// autumn's campaign file is gone, so autumn's state (which called A too)
// still holds A: the run's log names it.
func TestRunRetentionSaysWhatItLeft(t *testing.T) {
	srv, spring, autumn := retentionStore(t, "")
	// autumn called A as well, 95 days ago, before its campaign file went.
	writePeople(t, filepath.Dir(autumn), retainedA)
	if err := runCampaign(context.Background(), nolog, runOptions{Path: autumn, Now: func() time.Time { return time.Now().Add(-95 * 24 * time.Hour) }}, io.Discard); err != nil {
		t.Fatal(err)
	}
	autumnState := stateDirOf(t, autumn)
	if err := os.Rename(autumn, autumn+".gone"); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Calls())
	code, out := runAppOut(t, "run", spring)
	if code != 0 || len(srv.Calls()) != before {
		t.Fatalf("run: exit %d, %d calls\n%s", code, len(srv.Calls())-before, out)
	}
	held := findForms(t, autumnState, personForms(retainedA, "Person A"))
	if len(held) == 0 {
		t.Fatal("autumn's state holds A in no form: the test proves nothing")
	}
	if !strings.Contains(out, autumnState) && !strings.Contains(out, "autumn") {
		t.Errorf("the run's retention erased A but left A in autumn's state (%d files), and its output names neither autumn nor its state directory:\n%s", len(held), out)
	}
}

// TestErasedAfterRetentionSaysRequest: retention erased X; X then asks
// to be erased, and `callrun erase` puts X in the erased set and on the
// do-not-call list. X's report rows say X was erased at their request,
// not by retention.
func TestErasedAfterRetentionSaysRequest(t *testing.T) {
	const x, y = "+14155550170", "+14155550171"
	path, _, _ := retainedTwice(t, "none", x, y)
	if code, out := runAppOut(t, "erase", path, x); code != 0 {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	rows := (&e2eCampaign{t: t, stateDir: stateDirOf(t, path)}).reportRows()
	for _, row := range rows {
		if row["sheet"] == "contacts.csv" && row["row"] == "3" {
			continue // Y's
		}
		if row["status"] != string(store.Erased) || strings.Contains(row["reason"], "retention") {
			t.Errorf("%s row %s, X's, erased at X's request after the retention: status %s, reason %q; want it to say X asked", row["sheet"], row["row"], row["status"], row["reason"])
		}
	}
}

// withOptOuts gives the campaign at path an outcomes: block on a free
// loopback port, whose disposition opted_out is an opt-out, and returns
// the port's address and the campaign file as written.
func withOptOuts(t *testing.T, path string) (addr, yaml string) {
	t.Helper()
	addr = freePort(t)
	t.Setenv("E2E_HOOK_SECRET", hookSecret)
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yaml = string(body) + "outcomes:\n  url: http://" + addr + "/callrun/e2e/${E2E_HOOK_SECRET}\n  fields: [disposition]\n  opt_out: {field: disposition, values: [opted_out]}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return addr, yaml
}

// postOptOut starts listen on the campaign at path, posts body to
// it, and stops it.
func postOptOut(t *testing.T, path, addr, body string) {
	t.Helper()
	stop := listenOn(t, path, addr)
	resp, err := http.Post("http://"+addr+"/callrun/e2e/"+hookSecret, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the opt-out: %s", resp.Status)
	}
}

// heldOptOut returns the one opt-out held on the store, as status says.
func heldOptOut(t *testing.T, path string) store.OptOutHold {
	t.Helper()
	_, out := runAppOut(t, "status", "--format", "json", path)
	var st struct {
		OptOutsHeld []store.OptOutHold `json:"opt_outs_held"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &st); err != nil || len(st.OptOutsHeld) != 1 {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return st.OptOutsHeld[0]
}
