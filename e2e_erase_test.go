package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/jackc/pgx/v5"
)

// TestEraseCommand, files and PostgreSQL: campaign spring calls A, B and
// C, A opts out, campaign autumn calls B and C; `callrun erase
// spring.yaml A`. Then both state directories and CALLRUN_HOME hold A in
// no form (the number as E.164, digits, national form, its packed key;
// the name), report.xlsx unzipped too; a run again of either calls
// nobody; a third campaign over the same sheet calls B and C, never A
// (the sandbox's ledger); an erase again changes no file; the audit
// counts and names who erased, never whom.
func TestEraseCommand(t *testing.T) {
	for _, kind := range []string{"files", "postgres"} {
		t.Run(kind, func(t *testing.T) { testEraseCommand(t, kind) })
	}
}

func testEraseCommand(t *testing.T, kind string) {
	db := e2eDatabase(t, kind)
	srv, _ := erasureCampaign(t, db)
	on := campaignsOnOneStore(t, srv.URL, db)
	// Pressure off: only the do-not-call list keeps A from autumn and winter.
	path, second, third := on("spring", ""), on("autumn", "pressure: {off: true}\n"), on("winter", "pressure: {off: true}\n")
	const a, b, c = "+14155550152", "+14155550153", "+14155550154"
	for _, p := range []string{path, second, third} {
		writePeople(t, filepath.Dir(p), a, b, c)
	}
	calls := func() map[string]int { return callsByNumber(srv.Calls()) }
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "run", second); code != 0 {
		t.Fatalf("run of autumn: exit %d\n%s", code, out)
	}

	code, out := runAppOut(t, "erase", path, a)
	if code != 0 || !strings.Contains(out, "Erased 1 person from 2 campaign state(s)") || !strings.Contains(out, "contacts.csv row 2") {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	state, home := stateDirOf(t, path), os.Getenv("CALLRUN_HOME")
	forms := personForms(a, "Person A")
	if db == "" {
		for _, dir := range []string{state, stateDirOf(t, second), home} {
			for p, form := range findForms(t, dir, forms) {
				t.Errorf("%s still holds A as %q", p, form)
			}
		}
	} else {
		// The report files and every callrun_ table hold A in no form.
		for _, dir := range []string{state, stateDirOf(t, second)} {
			for p, form := range findForms(t, dir, forms) {
				t.Errorf("%s still holds A as %q", p, form)
			}
		}
		tables := pgText(t, db, `SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'callrun\_%'`)
		for _, table := range strings.Split(tables, ",") {
			rows := pgText(t, db, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM `+table+` t`)
			for _, form := range forms {
				if strings.Contains(rows, form) {
					t.Errorf("the table %s still holds A as %q", table, form)
				}
			}
		}
	}
	if row := readReportBy(t, "row", filepath.Join(state, "report.csv"))["2"]; row["status"] != string(store.Erased) || row["phone_number"] != "" {
		t.Errorf("A's report row: %v; want erased and blank", row)
	}

	before := len(srv.Calls())
	for _, p := range []string{path, second} {
		if code, out := runAppOut(t, "run", "--retry-uncertain", "--retry-failed", p); code != 0 || len(srv.Calls()) != before {
			t.Errorf("a run of %s after the erase: exit %d, %d calls\n%s", p, code, len(srv.Calls())-before, out)
		}
	}
	if code, out := runAppOut(t, "run", third); code != 0 {
		t.Fatalf("the third campaign: exit %d\n%s", code, out)
	}
	if n := calls(); n[a] != 1 || n[b] != 3 || n[c] != 3 {
		t.Errorf("ledger: %v; want A once (before the erase), B and C three times", n)
	}

	// Erasing again changes nothing but the audit.
	snap := snapshot(t, state, stateDirOf(t, second), home)
	if code, out := runAppOut(t, "erase", path, a); code != 0 {
		t.Fatalf("erase again: exit %d\n%s", code, out)
	}
	if diff := snapshotDiff(snap, snapshot(t, state, stateDirOf(t, second), home)); diff != "" {
		t.Errorf("erasing again changed %s", diff)
	}
	audit := readAudit(t, home)
	if len(audit) != 4 || !audit[1].Done || audit[0].Done || audit[1].People != 1 || !strings.Contains(audit[1].By, "@") || audit[1].Records["journal"] == 0 {
		t.Errorf("audit: %+v; want begun, done, begun, done of one person, with records and user@host", audit)
	}
	body, _ := os.ReadFile(filepath.Join(home, run.AuditFileName))
	for _, form := range append(forms, "h1:") {
		if bytes.Contains(body, []byte(form)) {
			t.Errorf("the audit holds %q:\n%s", form, body)
		}
	}
	if info, err := os.Stat(filepath.Join(home, run.AuditFileName)); err != nil || info.Mode().Perm()&0o077 != 0 {
		t.Errorf("the audit's mode: %v, %v; want 0600", info.Mode(), err)
	}
}

// TestEraseRefusesWhileARunHoldsTheLock: erase changes nothing, and says
// who holds the campaign.
func TestEraseRefusesWhileARunHoldsTheLock(t *testing.T) {
	srv, path := erasureCampaign(t, "")
	writePeople(t, filepath.Dir(path), "+14155550162")
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	_ = srv
	state, home := stateDirOf(t, path), os.Getenv("CALLRUN_HOME")
	unlock, err := store.Lock(state)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	snap := snapshot(t, state, home)
	code, out := runAppOut(t, "erase", path, "+14155550162")
	if code == 0 || !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(out, "nothing was erased") {
		t.Errorf("erase while a run holds the lock: exit %d\n%s", code, out)
	}
	if diff := snapshotDiff(snap, snapshot(t, state, home)); diff != "" {
		t.Errorf("a refused erase changed %s", diff)
	}
}

// TestEraseKilledAtEachStep: an erase stopped before each of its steps
// in turn leaves A, who opted out, called by neither campaign again (the
// sandbox's ledger); the erase run again finishes, and the files hold A
// in no form.
func TestEraseKilledAtEachStep(t *testing.T) {
	ctx := context.Background()
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	path, second := on("spring", ""), on("autumn", "pressure: {off: true}\n") // only the do-not-call list keeps A from it
	const a, b = "+14155550172", "+14155550173"
	writePeople(t, filepath.Dir(path), a, b)
	writePeople(t, filepath.Dir(second), a, b)
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "suppress", "add", path, a); code != 0 {
		t.Fatalf("suppress add: exit %d\n%s", code, out)
	}
	killed := errors.New("killed")
	steps := []string{"make the key", "add to the erased set", "erase from the do-not-call list",
		"erase from the call starts and conversations", "erase from the journal", "erase from the deliveries",
		"rewrite the reports", "find the sheets", "write the audit"}
	for _, at := range steps {
		err := run.Erase(ctx, nolog, run.EraseOptions{Path: path, Numbers: []string{a}, BeforeStep: func(name string) error {
			if name == at {
				return killed
			}
			return nil
		}}, io.Discard)
		if !errors.Is(err, killed) || !strings.Contains(err.Error(), "run it again") {
			t.Fatalf("killed before %q: %v", at, err)
		}
		for _, p := range []string{path, second} {
			if code, out := runAppOut(t, "run", "--retry-uncertain", p); code != 0 {
				t.Fatalf("killed before %q, run of %s: exit %d\n%s", at, p, code, out)
			}
		}
		if n := callsByNumber(srv.Calls()); n[a] != 1 || n[b] != 2 {
			t.Fatalf("killed before %q: ledger %v; want A once (before), B twice", at, n)
		}
	}
	if code, out := runAppOut(t, "erase", path, a); code != 0 {
		t.Fatalf("erase again: exit %d\n%s", code, out)
	}
	for _, dir := range []string{stateDirOf(t, path), os.Getenv("CALLRUN_HOME")} {
		for p, form := range findForms(t, dir, personForms(a, "Person A")) {
			t.Errorf("after the erase finished, %s still holds A as %q", p, form)
		}
	}
}

// stateDirOf is the state directory of the campaign at path.
func stateDirOf(t *testing.T, path string) string {
	t.Helper()
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.IsAbs(f.StateDir) {
		return f.StateDir
	}
	return filepath.Join(filepath.Dir(path), f.StateDir)
}

// personForms are the forms a person is searched for in: the number as
// E.164, its digits, its national form, the 8 bytes of its packed key
// (the do-not-call index's), and the name.
func personForms(e164, name string) []string {
	digits := e164[1:]
	v, _ := strconv.ParseUint(digits, 10, 64)
	packed := binary.BigEndian.AppendUint64(nil, uint64(len(digits))<<56|v)
	return []string{e164, digits, digits[1:], string(packed), name}
}

// findForms returns the files under dir (a zip's entries read unzipped)
// that hold one of forms, with the form.
func findForms(t *testing.T, dir string, forms []string) map[string]string {
	t.Helper()
	found := map[string]string{}
	search := func(name string, body []byte) {
		for _, form := range forms {
			if bytes.Contains(body, []byte(form)) {
				found[name] = form
			}
		}
	}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		search(p, body)
		if zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body))); err == nil {
			for _, zf := range zr.File {
				r, err := zf.Open()
				if err != nil {
					return err
				}
				b, err := io.ReadAll(r)
				r.Close()
				if err != nil {
					return err
				}
				search(p+":"+zf.Name, b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// snapshot reads every file under dirs but the erasure audit, which each
// erase appends to, and the run locks, which hold the pid of the last
// process that took them.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() == run.AuditFileName || e.Name() == "lock" {
				return err
			}
			body, err := os.ReadFile(p)
			info, _ := e.Info()
			out[p] = string(body) + "|" + info.ModTime().String()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// snapshotDiff names the files that differ between two snapshots.
func snapshotDiff(a, b map[string]string) string {
	var diff []string
	for p, body := range a {
		if b[p] != body {
			diff = append(diff, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			diff = append(diff, p+" (new)")
		}
	}
	return strings.Join(diff, ", ")
}

// auditLine is a line of the erasure audit, as a test reads it.
type auditLine struct {
	At      time.Time      `json:"at"`
	By      string         `json:"by"`
	Why     string         `json:"why"`
	People  int            `json:"people"`
	Records map[string]int `json:"records"`
	Done    bool           `json:"done"`
}

func readAudit(t *testing.T, home string) []auditLine {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(home, run.AuditFileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var l auditLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, l)
	}
	return out
}

// pgText runs a query of one text value on the database at db.
func pgText(t testing.TB, db, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEraseWhileListenReceives, files and PostgreSQL: `callrun erase
// --allow-contact` of A while listen is storing deliveries for B, one
// after another. Every delivery listen acknowledged is stored; a late
// delivery for A, an answered call in which A opts out, is stored erased,
// and its conversation (and, in files, its opt-out) kept under A's keyed
// hash; the state directory and CALLRUN_HOME (files) or the deliveries and
// conversations tables (PostgreSQL) hold A's number, name and e-mail in
// no form, and B's are there.
func TestEraseWhileListenReceives(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testEraseWhileListenReceives(t, kind) })
	}
}

func testEraseWhileListenReceives(t *testing.T, kind string) {
	e, listen, addr, home, db := erasureListen(t, kind)
	a, b := e.contacts[0], e.contacts[1]
	postEvent := func(c e2eContact, callID, event, disposition string) bool {
		body := `{"event":"` + event + `","data":{"call_id":"` + callID + `","status":"completed","disposition":"` + disposition + `","customer":{"number":"` + c.E164 + `","name":"` + c.First + `"},"transcript":"Agent: Am I speaking with ` + c.First + `?"}}`
		resp, err := http.Post("http://"+addr+"/callrun/e2e/"+hookSecret, "application/json", strings.NewReader(body))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	post := func(c e2eContact, callID string) bool { return postEvent(c, callID, "call.ended", "interested") }
	if !post(a, "call_a0") || !post(b, "call_b0") {
		t.Fatal("listen did not store the first deliveries")
	}

	stop, acked := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for i := 1; ; i++ {
			select {
			case <-stop:
				acked <- n
				return
			default:
			}
			if post(b, fmt.Sprintf("call_b%d", i)) {
				n++
			}
		}
	}()
	res := e.run(90*time.Second, "erase", "--allow-contact", e.path, a.E164)
	close(stop)
	n := <-acked
	if res.code != 0 || !strings.Contains(res.stdout, "Erased 1 person") {
		t.Fatalf("erase while listen receives: %s", res)
	}
	if db == "" && !strings.Contains(res.stdout, "erased by the listen that holds them") {
		t.Errorf("erase with files did not wait for listen to erase its file: %s", res.stdout)
	}
	if !postEvent(a, "call_a0", "call.answered", "opted_out") {
		t.Fatal("listen did not store A's late delivery")
	}
	listen.signal(t, syscall.SIGTERM)
	if r := listen.wait(t, 30*time.Second); r.code != 0 {
		t.Errorf("listen: %s", r)
	}

	forms := append(personForms(a.E164, a.First), fmt.Sprintf("(%s) %s-%s", a.E164[2:5], a.E164[5:8], a.E164[8:]))
	var stored int
	if db == "" {
		for _, dir := range []string{e.stateDir, home} {
			for p, form := range findForms(t, dir, forms) {
				t.Errorf("%s still holds A as %q", p, form)
			}
		}
		body, err := os.ReadFile(filepath.Join(e.stateDir, store.DeliveriesFile))
		if err != nil {
			t.Fatal(err)
		}
		stored = bytes.Count(body, []byte("\n"))
		if !bytes.Contains(body, []byte(b.E164)) {
			t.Error("B's deliveries are gone")
		}
	} else {
		text := pgText(t, db, `SELECT coalesce(string_agg(key || ' ' || delivery::text, E'\n'), '') FROM callrun_deliveries`)
		conversations := pgText(t, db, `SELECT coalesce(string_agg(c::text, E'\n'), '') FROM callrun_conversations c`)
		for _, form := range forms {
			if strings.Contains(text, form) || strings.Contains(conversations, form) {
				t.Errorf("the deliveries or conversations table still holds A as %q", form)
			}
		}
		if !strings.Contains(text, b.E164) {
			t.Error("B's deliveries are gone")
		}
		stored = strings.Count(text, "\n") + 1
	}
	if want := 2 + n + 1; stored != want {
		t.Errorf("%d deliveries stored; want %d (every one acknowledged)", stored, want)
	}
}

// TestEraseRehearsal: a campaign that has only rehearsed (`run
// --sandbox`) keeps A in its rehearsals' state and CALLRUN_HOME's
// sandbox; `callrun erase` reaches them (the rehearsals' list reads
// Home's erasure key, as their erased set does), counts the rehearsals'
// state once, and leaves A in no form there.
func TestEraseRehearsal(t *testing.T) {
	_, path := erasureCampaign(t, "")
	const a, b = "+14155550182", "+14155550183"
	writePeople(t, filepath.Dir(path), a, b)
	if code, out := runAppOut(t, "run", "--sandbox", path); code != 0 {
		t.Fatalf("run --sandbox: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "suppress", "add", "--sandbox", path, a); code != 0 {
		t.Fatalf("suppress add --sandbox: exit %d\n%s", code, out)
	}
	code, out := runAppOut(t, "erase", path, a)
	if code != 0 || !strings.Contains(out, "Erased 1 person from 1 campaign state(s)") || strings.Count(out, "contacts.csv row 2") != 1 {
		t.Fatalf("erase of a rehearsed campaign: exit %d\n%s", code, out)
	}
	home := os.Getenv("CALLRUN_HOME")
	for _, dir := range []string{stateDirOf(t, path) + "-sandbox", home} {
		for p, form := range findForms(t, dir, personForms(a, "Person A")) {
			t.Errorf("%s still holds A as %q", p, form)
		}
	}
	if row := readReportBy(t, "row", filepath.Join(stateDirOf(t, path)+"-sandbox", "report.csv"))["3"]; row["phone_number"] != b {
		t.Errorf("B's rehearsal report row: %v", row)
	}
}

// TestEraseSharded: a campaign run in two shards (files) keeps A in one
// shard's journal and each shard's report; `callrun erase` erases every
// shard's journal and writes every shard's report again, and the state
// directory holds A in no form.
func TestEraseSharded(t *testing.T) {
	_, path := erasureCampaign(t, "")
	const a, b, c = "+14155550192", "+14155550193", "+14155550194"
	writePeople(t, filepath.Dir(path), a, b, c)
	for _, shard := range []string{"0/2", "1/2"} {
		if code, out := runAppOut(t, "run", "--shard", shard, path); code != 0 {
			t.Fatalf("run --shard %s: exit %d\n%s", shard, code, out)
		}
	}
	if code, out := runAppOut(t, "erase", path, a); code != 0 || !strings.Contains(out, "Erased 1 person") {
		t.Fatalf("erase of a sharded campaign: exit %d\n%s", code, out)
	}
	for p, form := range findForms(t, stateDirOf(t, path), personForms(a, "Person A")) {
		t.Errorf("%s still holds A as %q", p, form)
	}
}

// TestEraseReachesAnotherCampaignsRehearsal: spring ran for real and
// autumn, on the same store, only rehearsed; `callrun erase spring.yaml
// A` reaches autumn's rehearsals too (recorded in the rehearsals' own
// places), which then hold A in no form.
func TestEraseReachesAnotherCampaignsRehearsal(t *testing.T) {
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	spring, autumn := on("spring", ""), on("autumn", "")
	const a, b = "+14155550102", "+14155550103"
	writePeople(t, filepath.Dir(spring), a, b)
	writePeople(t, filepath.Dir(autumn), a, b)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run spring: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "run", "--sandbox", autumn); code != 0 {
		t.Fatalf("run --sandbox autumn: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "erase", spring, a); code != 0 || !strings.Contains(out, "from 2 campaign state(s)") {
		t.Fatalf("erase: exit %d\n%s", code, out)
	}
	for p, form := range findForms(t, stateDirOf(t, autumn)+"-sandbox", personForms(a, "Person A")) {
		t.Errorf("%s still holds A as %q", p, form)
	}
}

// TestEraseAgainAfterAnUnfinishedOne: an erase stopped before it rewrote
// the reports leaves them holding A; another store's erase on the
// machine finishing in between does not keep the erase run again from
// rewriting them, though nothing else is left to change.
func TestEraseAgainAfterAnUnfinishedOne(t *testing.T) {
	srv, _ := erasureCampaign(t, "")
	on := campaignsOnOneStore(t, srv.URL, "")
	spring := on("spring", "")
	const a, b = "+14155550112", "+14155550113"
	writePeople(t, filepath.Dir(spring), a, b)
	if code, out := runAppOut(t, "run", spring); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	killed := errors.New("killed")
	err := run.Erase(context.Background(), nolog, run.EraseOptions{Path: spring, Numbers: []string{a}, BeforeStep: func(name string) error {
		if name == "rewrite the reports" {
			return killed
		}
		return nil
	}}, io.Discard)
	if !errors.Is(err, killed) {
		t.Fatalf("erase killed before the reports: %v", err)
	}
	// Another store's erase on this machine finishes meanwhile: its
	// audit line is the log's last.
	audit := filepath.Join(os.Getenv("CALLRUN_HOME"), run.AuditFileName)
	f, err := os.OpenFile(audit, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"at":%q,"by":"someone@elsewhere","campaign":"other","people":1,"allow_contact":false,"done":true}`+"\n", time.Now().UTC().Format(time.RFC3339))
	f.Close()
	if code, out := runAppOut(t, "erase", spring, a); code != 0 {
		t.Fatalf("erase again: exit %d\n%s", code, out)
	}
	for p, form := range findForms(t, stateDirOf(t, spring), personForms(a, "Person A")) {
		t.Errorf("%s still holds A as %q", p, form)
	}
}

// TestEraseNamesUnrecordedCampaigns: campaigns that started calls on
// the store before callrun recorded campaigns (their records removed
// here), one of them with every call start refused by the service, are
// named, with their journals, as ones erase did not reach; the campaign
// it reached is not.
func TestEraseNamesUnrecordedCampaigns(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			db := e2eDatabase(t, kind)
			srv, _ := erasureCampaign(t, db)
			on := campaignsOnOneStore(t, srv.URL, db)
			spring, autumn, winter := on("spring", ""), on("autumn", "pressure: {off: true}\n"), on("winter", "pressure: {off: true}\n")
			const a = "+14155550172"
			for _, p := range []string{spring, autumn, winter} {
				writePeople(t, filepath.Dir(p), a)
				if p == winter {
					srv.SetFaults(sandbox.Faults{Share200Error: 1})
				}
				code, out := runAppOut(t, "run", p)
				if p != winter && code != 0 {
					t.Fatalf("run of %s: exit %d\n%s", p, code, out)
				}
			}
			srv.SetFaults(sandbox.Faults{})
			unrecord(t, db, "autumn")
			unrecord(t, db, "winter")
			code, out := runAppOut(t, "erase", spring, a)
			if code != 0 || !strings.Contains(out, `campaign "autumn" (its journal`) || !strings.Contains(out, `campaign "winter" (its journal`) ||
				strings.Contains(out, `campaign "spring" (its journal`) {
				t.Errorf("erase: exit %d; want autumn and winter named as not reached, spring not:\n%s", code, out)
			}
		})
	}
}

// unrecord removes campaign's records from the store (db, "": files in
// CALLRUN_HOME), as if it had last run before callrun recorded
// campaigns.
func unrecord(t *testing.T, db, campaign string) {
	t.Helper()
	if db != "" {
		pgText(t, db, `WITH d AS (DELETE FROM callrun_report_dirs WHERE campaign = '`+campaign+`' RETURNING 1) SELECT count(*)::text FROM d`)
		return
	}
	places := filepath.Join(os.Getenv("CALLRUN_HOME"), store.PlacesFileName)
	body, err := os.ReadFile(places)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(body), "\n") {
		if !strings.Contains(line, `"`+campaign+`"`) {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(places, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}
