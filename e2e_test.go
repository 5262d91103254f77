package main

// End-to-end tests: the real callrun binary, built once, against a sandbox
// served by this test process, so that the sandbox's ledger (every
// call-start request that reached it, and whether a call was placed) is the
// evidence of who was phoned. The journal, report.csv and summary.json that
// callrun writes are cross-checked against that ledger.
//
// Timing only decides when a signal is sent; every assertion is one that
// must hold however the processes are scheduled.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// e2eBin is the callrun binary the end-to-end tests run. It is built on
// first use (so `go test -run Unit` and -short runs of other tests do not
// pay for it) and removed by TestMain.
var e2eBin struct {
	once   sync.Once
	pkgDir string // the package directory, where `go build` runs
	tmp    string // holds the binary; removed by TestMain
	path   string
	err    error
}

func TestMain(m *testing.M) {
	// Tests may t.Chdir; the build must not depend on where they left us.
	e2eBin.pkgDir, _ = os.Getwd()
	// The tests that run callrun in process read the do-not-call list of
	// CALLRUN_HOME: one of their own, never the developer's.
	home, err := os.MkdirTemp("", "callrun-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("CALLRUN_HOME", home)
	code := pgtest.Run(m)
	os.RemoveAll(home)
	if e2eBin.tmp != "" {
		os.RemoveAll(e2eBin.tmp)
	}
	os.Exit(code)
}

// callrunBinary builds the callrun binary once (without -race: the race
// detector is for this test process, where the sandbox runs) and returns
// its path. The benchmarks use it too. It builds with -trimpath, as `make
// build` does, so that the docs' `make quickstart` (TestDocsBlocksRun)
// finds every package in the build cache.
func callrunBinary(t testing.TB) string {
	t.Helper()
	e2eBin.once.Do(func() {
		e2eBin.tmp, e2eBin.err = os.MkdirTemp("", "callrun-e2e-")
		if e2eBin.err != nil {
			return
		}
		path := filepath.Join(e2eBin.tmp, "callrun")
		cmd := exec.Command("go", "build", "-trimpath", "-o", path, ".")
		cmd.Dir = e2eBin.pkgDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			e2eBin.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		e2eBin.path = path
	})
	if e2eBin.err != nil {
		t.Fatalf("building callrun: %v", e2eBin.err)
	}
	return e2eBin.path
}

// ---------------------------------------------------------------------------
// A campaign in a temporary directory, run by the binary.

const e2eAgent = "E2E Caller"

type e2eContact struct {
	Raw   string // as written in the sheet
	E164  string // what callrun must send
	First string
	ID    string // CRM contact id
}

type e2eSetup struct {
	contacts    []e2eContact
	perSecond   float64
	concurrency int
	postgres    string // a database URL: the journal, lock and token in PostgreSQL (state: postgres:)
	noLogin     bool   // leave auth login to the test
}

// e2eTokenKey is the CALLRUN_TOKEN_KEY of the tests' campaigns whose
// state is in PostgreSQL: 32 bytes in base64.
const e2eTokenKey = "ZTJlLXRlc3RzLWtleS0zMi1ieXRlcy1sb25nLi4uLi4="

type e2eCampaign struct {
	t        testing.TB
	srv      *sandbox.Server
	dir      string // the campaign's directory
	cwd      string // where callrun runs: elsewhere, as from cron
	path     string // campaign.yaml
	stateDir string
	env      []string
	contacts []e2eContact
	byPhone  map[string]e2eContact
	postgres bool // the journal is in PostgreSQL
}

// e2ePhones returns n distinct valid US numbers written the many ways a
// CRM export writes them, with the E.164 form callrun must send. The
// numbers are NXX-555-01XX, the range set aside for fiction, spread over
// real area codes (at most 800).
func e2ePhones(n int) []e2eContact {
	areas := []string{"212", "312", "415", "617", "202", "646", "718", "213"}
	if n > 100*len(areas) {
		panic("e2ePhones: at most 800 numbers")
	}
	firsts := []string{"Ada", "Grace", "Alan", "Katherine", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"}
	out := make([]e2eContact, n)
	for i := range n {
		area := areas[i%len(areas)]
		line := fmt.Sprintf("01%02d", i/len(areas))
		var raw string
		switch i % 5 {
		case 0:
			raw = fmt.Sprintf("(%s) 555-%s", area, line)
		case 1:
			raw = fmt.Sprintf("%s-555-%s", area, line)
		case 2:
			raw = fmt.Sprintf("+1 %s 555 %s", area, line)
		case 3:
			raw = fmt.Sprintf("%s555%s", area, line)
		case 4:
			raw = fmt.Sprintf("1.%s.555.%s", area, line)
		}
		out[i] = e2eContact{Raw: raw, E164: "+1" + area + "555" + line, First: fmt.Sprintf("%s %d", firsts[i%len(firsts)], i), ID: fmt.Sprintf("c-%04d", i)}
	}
	return out
}

// newE2ECampaign writes a campaign for srv into a temporary directory and
// logs the binary in to the sandbox with the real `auth login` command.
func newE2ECampaign(t testing.TB, srv *sandbox.Server, s e2eSetup) *e2eCampaign {
	t.Helper()
	callrunBinary(t)
	dir := t.TempDir()
	campaignYAML := fmt.Sprintf(`# written by e2e_test.go
name: e2e
service:
  base_url: %s
  client_id: %s
  client_secret: ${E2E_CLIENT_SECRET}
  redirect_uri: http://127.0.0.1:8765/callback
agents:
  - name: %s
    prompt: You remind people of their appointment. This is a test; nobody is phoned.
sheets:
  - file: contacts.csv
    agent: %s
    fields:
      phone_number: Phone
      first_name: First Name
      email: Email
      ghl_contact_id: Contact Id
    set: {local_presence_number: "no"}
region: US
dedupe: campaign
pace: {per_second: %g, burst: 1, concurrency: %d}
state_dir: state
# These tests run at whatever hour the machine's clock says.
unsafe_ignore_called_person_hours: true
`, srv.URL, sandbox.DefaultClientID, e2eAgent, e2eAgent, s.perSecond, s.concurrency)
	if s.postgres != "" {
		campaignYAML += "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte(campaignYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	// callrun runs from another directory: paths in the campaign file are
	// relative to the file, not to where callrun is started.
	cwd := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &e2eCampaign{
		t: t, srv: srv, dir: dir, cwd: cwd, path: filepath.Join(dir, "campaign.yaml"), stateDir: filepath.Join(dir, "state"),
		env: e2eEnv(dir),
	}
	if s.postgres != "" {
		e.usePostgres(s.postgres)
	}
	e.writeSheet(s.contacts)
	if !s.noLogin {
		e.login()
	}
	return e
}

// usePostgres gives the campaign's runs the database at url and the key
// its token is sealed with there, and no token file: with state.postgres
// the token is kept in the database.
func (e *e2eCampaign) usePostgres(url string) {
	e.env = slices.DeleteFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, "CALLRUN_TOKEN_FILE=") })
	e.env = append(e.env, "CALLRUN_DATABASE_URL="+url, "CALLRUN_TOKEN_KEY="+e2eTokenKey)
	e.postgres = true
}

// login logs the binary in to the sandbox with the real `auth login`
// command: into the token file, or, with PostgreSQL, into the database.
func (e *e2eCampaign) login() {
	e.t.Helper()
	res := e.run(30*time.Second, "auth", "login", "--code", sandbox.DefaultCode, e.path)
	if res.code != 0 || !strings.Contains(res.stdout, "Logged in to "+e.srv.URL) {
		e.t.Fatalf("auth login: %s", res)
	}
	if strings.Contains(res.stdout+res.stderr, sandbox.DefaultClientSecret) || strings.Contains(res.stdout+res.stderr, e2eTokenKey) {
		e.t.Errorf("auth login printed the client secret or the token key: %s", res)
	}
	st, err := os.Stat(filepath.Join(e.dir, "token.json"))
	switch {
	case e.postgres && !strings.Contains(res.stdout, "callrun_tokens"):
		e.t.Fatalf("auth login with state.postgres did not save the token in the database: %s", res)
	case e.postgres && err == nil:
		e.t.Fatalf("auth login with state.postgres wrote a token file")
	case !e.postgres && (err != nil || st.Mode().Perm() != 0o600):
		e.t.Fatalf("token file: %v, %v (CALLRUN_TOKEN_FILE not honoured?)", st, err)
	}
}

// writeSheet (re)writes contacts.csv, as a CRM export would. The
// contact's E.164 number, not its row, is its identity: a re-exported,
// re-sorted or appended sheet must resume where the last run left off.
func (e *e2eCampaign) writeSheet(contacts []e2eContact) {
	e.t.Helper()
	var sheet strings.Builder
	w := csv.NewWriter(&sheet)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email"})
	byPhone := make(map[string]e2eContact, len(contacts))
	for _, c := range contacts {
		if _, dup := byPhone[c.E164]; dup {
			e.t.Fatalf("test bug: %s twice in the sheet", c.E164)
		}
		byPhone[c.E164] = c
		w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"})
	}
	w.Flush()
	tmp := filepath.Join(e.dir, "contacts.csv.tmp")
	if err := os.WriteFile(tmp, []byte(sheet.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, "contacts.csv")); err != nil {
		e.t.Fatal(err)
	}
	e.contacts, e.byPhone = slices.Clone(contacts), byPhone
}

// e2eEnv is the child's environment: the test's, minus anything of the
// developer's that could leak in (config dirs, callrun settings, proxies),
// plus a home, config directory and token file inside dir.
func e2eEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "CALLRUN_"),
			strings.EqualFold(name, "HTTP_PROXY"), strings.EqualFold(name, "HTTPS_PROXY"),
			strings.EqualFold(name, "NO_PROXY"), strings.EqualFold(name, "ALL_PROXY"),
			name == "HOME", name == "TZ":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"CALLRUN_TOKEN_FILE="+filepath.Join(dir, "token.json"),
		"E2E_CLIENT_SECRET="+sandbox.DefaultClientSecret,
		"TZ=UTC",
	)
}

// e2eBuffer is an io.Writer safe to read while a child writes to it.
type e2eBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *e2eBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *e2eBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// e2eProc is a running callrun.
type e2eProc struct {
	args           []string
	cmd            *exec.Cmd
	stdout, stderr e2eBuffer
	started        time.Time
	done           chan struct{}
	ended          time.Time
}

// e2eResult is how a callrun process ended.
type e2eResult struct {
	args           []string
	code           int  // exit code; -1 when killed by a signal
	signaled       bool // killed by a signal
	elapsed        time.Duration
	stdout, stderr string
}

func (r e2eResult) String() string {
	how := fmt.Sprintf("exit %d", r.code)
	if r.signaled {
		how = "killed by a signal"
	}
	return fmt.Sprintf("callrun %s: %s after %v\n--- stdout:\n%s--- stderr:\n%s", strings.Join(r.args, " "), how, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// start starts callrun with JSON logs and no progress bar. The process is
// killed at the end of the test if it is still running.
func (e *e2eCampaign) start(args ...string) *e2eProc {
	e.t.Helper()
	full := append([]string{"--log-format", "json", "--no-progress"}, args...)
	p := &e2eProc{args: args, done: make(chan struct{})}
	p.cmd = exec.Command(callrunBinary(e.t), full...)
	p.cmd.Env = e.env
	p.cmd.Dir = e.cwd
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.ended = time.Now()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *e2eProc) pid() int { return p.cmd.Process.Pid }

func (p *e2eProc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		select {
		case <-p.done: // it ended on its own just before
		default:
			t.Fatalf("signal %v: %v", sig, err)
		}
	}
}

// wait waits at most d for the process to end, and fails the test (after
// killing it) if it does not.
func (p *e2eProc) wait(t testing.TB, d time.Duration) e2eResult {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("callrun %s did not end within %v (killed)\n--- stdout:\n%s--- stderr:\n%s", strings.Join(p.args, " "), d, p.stdout.String(), p.stderr.String())
	}
	return p.result()
}

func (p *e2eProc) result() e2eResult {
	r := e2eResult{args: p.args, code: p.cmd.ProcessState.ExitCode(), elapsed: p.ended.Sub(p.started),
		stdout: p.stdout.String(), stderr: p.stderr.String()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signaled = true
	}
	return r
}

// run runs callrun to its end, within d.
func (e *e2eCampaign) run(d time.Duration, args ...string) e2eResult {
	e.t.Helper()
	res := e.start(args...).wait(e.t, d)
	checkJSONLogs(e.t, res)
	return res
}

// checkJSONLogs checks that with --log-format json every line callrun
// writes to stderr is a JSON object (what cron's log shipper reads), but
// for the one-line error main prints last, "callrun: ...", on failure.
func checkJSONLogs(t testing.TB, res e2eResult) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 0 && len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "callrun: ") {
		lines = lines[:len(lines)-1]
	}
	for _, line := range lines {
		var obj map[string]any
		if line != "" && json.Unmarshal([]byte(line), &obj) != nil {
			t.Errorf("callrun %s: a stderr line is not JSON with --log-format json: %q", strings.Join(res.args, " "), line)
			return
		}
	}
}

// ---------------------------------------------------------------------------
// Evidence: plan, status, report.csv, summary.json and the ledger.

type e2ePlan struct {
	Totals struct {
		Rows, Invalid, Duplicate, Suppressed, Done int
		ToCall                                     int `json:"to_call"`
		DoNotCallFlag                              int `json:"do_not_call_flag"`
	} `json:"totals"`
	Problems []struct {
		Row     int    `json:"row"`
		Message string `json:"message"`
	} `json:"problems"`
}

// plan runs `plan --offline --format json` and decodes it.
func (e *e2eCampaign) plan() e2ePlan {
	e.t.Helper()
	args := []string{"plan", "--offline", "--format", "json", e.path}
	if e.postgres {
		// --offline makes no network request, so it would not read the
		// journal in PostgreSQL: plan online, asking the sandbox too.
		args = slices.Delete(args, 1, 2)
	}
	res := e.run(30*time.Second, args...)
	if res.code != 0 {
		e.t.Fatalf("plan: %s", res)
	}
	var p e2ePlan
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		e.t.Fatalf("plan --format json: %v\n%s", err, res.stdout)
	}
	return p
}

// checkPlanAllValid asserts that every contact of the sheet is valid:
// the generated numbers are real-looking, distinct numbers, each one done
// or to call.
func (e *e2eCampaign) checkPlanAllValid() e2ePlan {
	e.t.Helper()
	p := e.plan()
	n := len(e.contacts)
	if p.Totals.Rows != n || p.Totals.Invalid != 0 || p.Totals.Duplicate != 0 || p.Totals.Suppressed != 0 || p.Totals.Done+p.Totals.ToCall != n {
		e.t.Fatalf("plan --offline: totals %+v, want %d rows all valid, done or to call; problems: %+v", p.Totals, n, p.Problems)
	}
	return p
}

// status runs `status --format json` and returns its counts, checking that
// they add up to the sheet's rows.
func (e *e2eCampaign) status() map[string]int {
	e.t.Helper()
	counts, err := e.statusCounts()
	if err != nil {
		e.t.Fatal(err)
	}
	return counts
}

// statusCounts is status for any goroutine: it reports problems as an
// error.
func (e *e2eCampaign) statusCounts() (map[string]int, error) {
	cmd := exec.Command(e2eBin.path, "--log-format", "json", "status", "--format", "json", e.path)
	cmd.Env, cmd.Dir = e.env, e.cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		return nil, fmt.Errorf("status: %v\n--- stdout:\n%s--- stderr:\n%s", err, stdout.String(), stderr.String())
	}
	var st struct {
		Campaign string         `json:"campaign"`
		Counts   map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		return nil, fmt.Errorf("status --format json: %v\n%s", err, stdout.String())
	}
	sum := 0
	for _, n := range st.Counts {
		sum += n
	}
	if st.Campaign != "e2e" || sum != len(e.contacts) {
		return nil, fmt.Errorf("status: campaign %q, counts %v add up to %d, want %d rows", st.Campaign, st.Counts, sum, len(e.contacts))
	}
	return st.Counts, nil
}

// e2eRow is a row of report.csv.
type e2eRow map[string]string

// report reads report.csv: one row per contact, in sheet order, each phone
// the E.164 form of the sheet's.
func (e *e2eCampaign) report() []e2eRow {
	e.t.Helper()
	f, err := os.Open(filepath.Join(e.stateDir, "report.csv"))
	if err != nil {
		e.t.Fatalf("report.csv: %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		e.t.Fatalf("report.csv: %v", err)
	}
	if len(recs) != len(e.contacts)+1 {
		e.t.Fatalf("report.csv has %d records, want a header and %d rows", len(recs), len(e.contacts))
	}
	head := recs[0]
	for _, col := range []string{"sheet", "row", "phone_number", "first_name", "status", "reason", "http_status", "attempts", "agent", "agent_id", "response"} {
		if !slices.Contains(head, col) {
			e.t.Fatalf("report.csv has no %q column: %v", col, head)
		}
	}
	rows := make([]e2eRow, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		r := e2eRow{}
		for j, col := range head {
			r[col] = rec[j]
		}
		c := e.contacts[i]
		if r["row"] != strconv.Itoa(i+2) || r["phone_number"] != c.E164 || r["first_name"] != c.First || r["agent"] != e2eAgent {
			e.t.Fatalf("report.csv row %d = %v, want sheet row %d, %s, %s", i+1, r, i+2, c.E164, c.First)
		}
		rows = append(rows, r)
	}
	return rows
}

// e2eSummary is summary.json.
type e2eSummary struct {
	Counts       map[string]int `json:"counts"`
	Rows         int            `json:"rows"`
	CallsThisRun int            `json:"calls_this_run"`
	Ending       string         `json:"ending"`
}

func (e *e2eCampaign) summary() e2eSummary {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.stateDir, "summary.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var s e2eSummary
	if err := json.Unmarshal(b, &s); err != nil {
		e.t.Fatalf("summary.json: %v\n%s", err, b)
	}
	return s
}

func countStatuses(rows []e2eRow) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[r["status"]]++
	}
	return m
}

// e2eLedger is the sandbox's ledger grouped by phone number.
type e2eLedger struct {
	calls   []sandbox.Call
	byPhone map[string][]sandbox.Call
	placed  map[string]int // placed calls per phone
}

// ledger returns the sandbox's ledger once no request is still being
// handled (a killed client's request may still be in its latency), and
// checks that every request carried a contact of the sheet, as the sheet
// says.
func (e *e2eCampaign) ledger() e2eLedger {
	e.t.Helper()
	var calls []sandbox.Call
	deadline := time.Now().Add(20 * time.Second)
	for {
		calls = e.srv.Calls()
		if !slices.ContainsFunc(calls, func(c sandbox.Call) bool { return c.Outcome == "received" }) {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the sandbox is still handling requests after 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	l := e2eLedger{calls: calls, byPhone: map[string][]sandbox.Call{}, placed: map[string]int{}}
	for _, c := range calls {
		phone := c.Form.Get("phone_number")
		want, ok := e.byPhone[phone]
		switch {
		case phone == "" && !c.Placed:
			// A request cut short by a kill while being written would look
			// like this (never seen: the form goes out in one write).
			e.t.Logf("ledger #%d: a request with no phone number, not placed: %s", c.Seq, c.Outcome)
		case !ok:
			e.t.Errorf("ledger #%d: phone_number %q is not in the sheet (form %v)", c.Seq, phone, c.Form)
		case c.Form.Get("first_name") != want.First || c.Form.Get("ghl_contact_id") != want.ID ||
			c.Form.Get("email") != strings.ToLower(want.ID)+"@example.com" || c.Form.Get("local_presence_number") != "No" || c.Method != http.MethodPost:
			e.t.Errorf("ledger #%d: %s %v, want the sheet's fields of %s (%s) and local_presence_number No", c.Seq, c.Method, c.Form, want.ID, want.First)
		}
		l.byPhone[phone] = append(l.byPhone[phone], c)
		if c.Placed {
			l.placed[phone]++
		}
	}
	return l
}

// checkNobodyTwice is the promise: no phone number was placed twice.
func (l e2eLedger) checkNobodyTwice(t testing.TB) {
	t.Helper()
	for phone, n := range l.placed {
		if n > 1 {
			var seqs []string
			for _, c := range l.byPhone[phone] {
				seqs = append(seqs, fmt.Sprintf("#%d %s", c.Seq, c.Outcome))
			}
			t.Errorf("%s was PHONED %d TIMES: ledger %s", phone, n, strings.Join(seqs, ", "))
		}
	}
}

// checkCallIDs checks the call ids the journal kept against the ledger:
// each sent contact's outcome holds the call id the sandbox's answer
// gave its call start (sent of them), and each of those ids is the
// sandbox's call of that contact's number.
func (e *e2eCampaign) checkCallIDs(l e2eLedger, sent int) {
	e.t.Helper()
	ids := map[string]bool{}
	phoneOf := map[string]string{}
	for _, c := range l.calls {
		if c.CallID != "" {
			ids[c.CallID], phoneOf[c.CallID] = true, c.Form.Get("phone_number")
		}
	}
	var st store.Store = store.Files{Dir: e.stateDir}
	for _, kv := range e.env {
		if url, ok := strings.CutPrefix(kv, "CALLRUN_DATABASE_URL="); ok {
			p, err := store.OpenPostgres(context.Background(), url, "e2e", 0, 1)
			if err != nil {
				e.t.Fatal(err)
			}
			defer p.Close()
			st = p
		}
	}
	state, err := st.ReadState(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	defer state.Close()
	keys, err := state.CallKeys(ids)
	if err != nil {
		e.t.Fatal(err)
	}
	for id, k := range keys {
		if phoneOf[id] != k.Phone {
			e.t.Errorf("the journal gives call %s to %s, the ledger to %s", id, k.Phone, phoneOf[id])
		}
	}
	if len(keys) != sent {
		e.t.Errorf("the journal holds the call ids of %d contacts, want the %d sent", len(keys), sent)
	}
}

func (l e2eLedger) totalPlaced() int {
	n := 0
	for _, p := range l.placed {
		n += p
	}
	return n
}

// checkReportAgainstLedger cross-checks report.csv with the ledger, with
// statements that hold whatever the timing of kills and faults:
//   - a sent contact was placed exactly once, by a request the sandbox
//     answered 200;
//   - a placed contact is sent or uncertain (it had an intent on record
//     before its request, and no answer can have made it pending or
//     failed);
//   - a contact whose placed call was answered 500 or whose connection was
//     dropped after placing is uncertain;
//   - a contact the ledger never saw placed is not sent.
func (e *e2eCampaign) checkReportAgainstLedger(rows []e2eRow, l e2eLedger) {
	t := e.t
	t.Helper()
	for _, r := range rows {
		phone, status := r["phone_number"], r["status"]
		calls := l.byPhone[phone]
		placed := l.placed[phone]
		switch status {
		case "sent":
			if placed != 1 {
				t.Errorf("row %s %s is sent but was placed %d times: %v", r["row"], phone, placed, calls)
			} else if i := slices.IndexFunc(calls, func(c sandbox.Call) bool { return c.Placed }); calls[i].Outcome != "placed" || calls[i].Status != 200 {
				t.Errorf("row %s %s is sent but its placed call was answered %d (%s)", r["row"], phone, calls[i].Status, calls[i].Outcome)
			}
			if r["http_status"] != "200" || r["attempts"] == "" || r["attempts"] == "0" || r["agent_id"] == "" {
				t.Errorf("row %s sent: http_status %q, attempts %q, agent_id %q", r["row"], r["http_status"], r["attempts"], r["agent_id"])
			}
		case "uncertain":
			if r["attempts"] == "" || r["attempts"] == "0" {
				t.Errorf("row %s is uncertain with no attempt on record: %v", r["row"], r)
			}
			if r["reason"] == "" {
				t.Errorf("row %s is uncertain with no reason: %v", r["row"], r)
			}
			if r["http_status"] == "500" && !slices.ContainsFunc(calls, func(c sandbox.Call) bool { return c.Outcome == "500-after-placing" }) {
				t.Errorf("row %s says the service answered 500, the ledger does not: %v", r["row"], calls)
			}
		default:
			if placed > 0 {
				t.Errorf("row %s %s was placed but the report says %q: %v", r["row"], phone, status, calls)
			}
		}
		for _, c := range calls {
			if (c.Outcome == "500-after-placing" || c.Outcome == "dropped-after-placing") && status != "uncertain" {
				t.Errorf("row %s %s: the sandbox placed the call and answered %q, but the report says %q, not uncertain", r["row"], phone, c.Outcome, status)
			}
		}
	}
}

// checkStatusMonotonic checks that settled counts never go down between
// observations: without --retry-* flags, sent, failed and uncertain are
// final.
func checkStatusMonotonic(t *testing.T, prev, cur map[string]int) {
	t.Helper()
	for _, s := range []string{"sent", "failed", "uncertain"} {
		if cur[s] < prev[s] {
			t.Errorf("status: %s went down from %d to %d (%v -> %v)", s, prev[s], cur[s], prev, cur)
		}
	}
}

// ---------------------------------------------------------------------------
// The tests.

// TestKillAndResumeNeverCallsTwice kills `callrun run` with SIGKILL at
// random moments and resumes it, until a run ends by itself; then checks
// from the sandbox's ledger that nobody was phoned twice, and that
// report.csv tells the truth about every contact.
func TestKillAndResumeNeverCallsTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and resumes callrun for several seconds")
	}
	for _, tc := range []struct {
		name   string
		faults sandbox.Faults
		seed   uint64
		// resortAt: after this many rounds, the sheet is exported again,
		// in reverse order and with 20 new contacts appended.
		resortAt int
	}{
		{"no-faults", sandbox.Faults{Latency: 10 * time.Millisecond}, 1, 6},
		{"faults", sandbox.Faults{Latency: 10 * time.Millisecond, Share503: 0.05, Share500: 0.02, ShareDrop: 0.02,
			Share429: 0.05, RetryAfter: time.Second, Seed: 7}, 2, 0},
	} {
		for _, kind := range e2eStores {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				const concurrency = 8
				srv := sandbox.NewServer(sandbox.Options{Faults: tc.faults})
				t.Cleanup(srv.Close)
				all := e2ePhones(320)
				e := newE2ECampaign(t, srv, e2eSetup{contacts: all[:300], perSecond: 200, concurrency: concurrency, postgres: e2eDatabase(t, kind)})
				if p := e.checkPlanAllValid(); p.Totals.ToCall != len(e.contacts) {
					t.Fatalf("plan before any run: %+v", p.Totals)
				}
				faulty := tc.faults.Share500+tc.faults.ShareDrop+tc.faults.Share429+tc.faults.Share503 > 0

				rng := rand.New(rand.NewPCG(tc.seed, 0xca11))
				start := time.Now()
				kills, killsCalling, statusChecks, reportChecks := 0, 0, 0, 0
				var final *e2eResult
				prev := map[string]int{}
				killedPid := 0 // of the last run killed
				// Rounds stop after 40 kills, or after a time budget so that a
				// slow machine (where start-up eats the delays) stays bounded.
				budget := time.Now().Add(12 * time.Second)
				for round := 1; round <= 40 && final == nil && time.Now().Before(budget); round++ {
					callsBefore := srv.Stats().CallsReceived
					// Half the rounds are killed 30-400ms after start (anywhere:
					// start-up, agent creation, calling, writing the report),
					// half 0-150ms after the round's first call reached the
					// sandbox (in the thick of calling).
					fromStart := rng.IntN(2) == 0
					delay := time.Duration(30+rng.IntN(371)) * time.Millisecond
					if !fromStart {
						delay = time.Duration(rng.IntN(151)) * time.Millisecond
					}
					// Some rounds, a person runs `callrun status` while the run
					// is going on: it must work, and add up.
					var during chan error
					var duringCounts map[string]int
					if rng.IntN(3) == 0 {
						during = make(chan error, 1)
						after := time.Duration(rng.IntN(200)) * time.Millisecond
						go func() {
							time.Sleep(after)
							var err error
							duringCounts, err = e.statusCounts()
							during <- err
						}()
					}
					p := e.start("run", e.path)
					killRound(p, delay, fromStart, func() bool { return srv.Stats().CallsReceived > callsBefore })
					res := p.result()
					if !res.signaled {
						checkJSONLogs(t, res)
					}
					switch {
					case res.signaled:
						killedPid = p.pid()
						kills++
						if srv.Stats().CallsReceived > callsBefore {
							killsCalling++ // killed while calling, not while starting up
						}
					case res.code == 0 || res.code == 3:
						final = &res
					case res.code == 75 && !strings.Contains(res.stderr, "another callrun run"):
						// Contacts left pending after exhausting their retries:
						// running again is what cron would do.
						t.Logf("round %d: exit 75: %s", round, lastLine(res.stderr))
					case res.code == 75 && e.postgres && killedPid != 0 && strings.Contains(res.stderr, fmt.Sprintf("(pid %d)", killedPid)):
						// The server had not yet ended the session of the run
						// killed the round before, and with it its lock: a
						// later run is refused (exit 75, try again), as cron's
						// next one would be.
						t.Logf("round %d: exit 75, the killed run's lock not yet released: %s", round, lastLine(res.stderr))
					default:
						t.Fatalf("round %d: %s", round, res)
					}
					if during != nil {
						if err := <-during; err != nil {
							t.Fatalf("round %d: status while running: %v", round, err)
						}
						// An intent whose outcome is not written yet counts as
						// uncertain while the run goes on; sent and failed are
						// final whenever they are seen.
						checkStatusMonotonic(t, map[string]int{"sent": prev["sent"], "failed": prev["failed"]}, duringCounts)
						prev["sent"], prev["failed"] = duringCounts["sent"], duringCounts["failed"]
						statusChecks++
					}
					if final != nil {
						break
					}
					if round == tc.resortAt {
						resorted := slices.Clone(e.contacts)
						slices.Reverse(resorted)
						e.writeSheet(append(resorted, all[300:]...))
						e.checkPlanAllValid()
						t.Logf("after round %d: the sheet is re-exported in reverse order with 20 more contacts", round)
					}
					switch rng.IntN(4) {
					case 0: // between runs, the counts only grow
						cur := e.status()
						checkStatusMonotonic(t, prev, cur)
						prev = cur
						statusChecks++
					case 1: // `callrun report` after a kill tells the truth too
						if res := e.run(30*time.Second, "report", e.path); res.code != 0 {
							t.Fatalf("round %d: report: %s", round, res)
						}
						e.checkReportAgainstLedger(e.report(), e.ledger())
						reportChecks++
					}
				}
				if final == nil {
					// The kills did not let a run end: let the last one finish
					// (a 75 leaves contacts pending after their retries: again).
					for try := 0; final == nil; try++ {
						if try == 5 {
							t.Fatalf("five runs in a row left contacts pending")
						}
						res := e.run(60*time.Second, "run", e.path)
						switch res.code {
						case 0, 3:
							final = &res
						case 75:
							t.Logf("exit 75: %s", lastLine(res.stderr))
						default:
							t.Fatalf("final run: %s", res)
						}
					}
				}
				elapsed := time.Since(start)

				// The ledger: nobody phoned twice.
				l := e.ledger()
				l.checkNobodyTwice(t)
				if !faulty {
					// With no 429/503 no request is ever sent again, so no number
					// reaches the service twice at all.
					for phone, calls := range l.byPhone {
						if len(calls) > 1 {
							t.Errorf("%s reached the service %d times with no fault to retry: %v", phone, len(calls), calls)
						}
					}
				}
				if n := len(srv.Agents()); n != 1 {
					t.Errorf("the sandbox has %d agents, want 1 (kills during agent creation must not create it twice): %v", n, srv.Agents())
				}

				// The report: every contact is settled, and tells the truth.
				rows := e.report()
				counts := countStatuses(rows)
				for _, r := range rows {
					switch s := r["status"]; {
					case s == "sent" || s == "uncertain":
					default:
						t.Errorf("row %s %s: status %q after a run that finished (want sent or uncertain): %v", r["row"], r["phone_number"], s, r)
					}
				}
				e.checkReportAgainstLedger(rows, l)

				// Uncertain contacts come from kills and from answers that leave
				// the outcome unknown (500, dropped after placing). A kill leaves
				// at most concurrency intents without an outcome: the calls in
				// flight.
				unknownAnswers := 0
				for _, c := range l.calls {
					if c.Outcome == "500-after-placing" || c.Outcome == "dropped-after-placing" {
						unknownAnswers++
					}
				}
				if bound := kills*concurrency + unknownAnswers; counts["uncertain"] > bound {
					t.Errorf("%d uncertain contacts, more than %d kills x %d (in flight) + %d unknown answers = %d", counts["uncertain"], kills, concurrency, unknownAnswers, bound)
				}
				if counts["uncertain"] < unknownAnswers {
					t.Errorf("%d uncertain contacts, fewer than the %d calls the sandbox placed and answered 500 or dropped", counts["uncertain"], unknownAnswers)
				}
				if wantCode := map[bool]int{true: 3, false: 0}[counts["uncertain"] > 0]; final.code != wantCode {
					t.Errorf("final run exit %d with %v, want %d", final.code, counts, wantCode)
				}

				// status and summary.json agree with the report.
				st := e.status()
				checkStatusMonotonic(t, prev, st)
				sum := e.summary()
				for _, s := range []string{"sent", "failed", "uncertain", "pending", "invalid", "duplicate", "suppressed"} {
					if st[s] != counts[s] || sum.Counts[s] != counts[s] {
						t.Errorf("%s: report.csv %d, status %d, summary.json %d", s, counts[s], st[s], sum.Counts[s])
					}
				}
				if sum.Ending != "complete" || sum.Rows != len(rows) {
					t.Errorf("summary.json: ending %q, rows %d", sum.Ending, sum.Rows)
				}
				if got := counts["sent"]; got > l.totalPlaced() {
					t.Errorf("%d sent, but the sandbox placed only %d calls", got, l.totalPlaced())
				}
				e.checkCallIDs(l, counts["sent"])

				// plan says nothing is left to call.
				if p := e.checkPlanAllValid(); p.Totals.ToCall != 0 {
					t.Errorf("plan after the end: %+v, want nothing to call", p.Totals)
				}

				// A run after the end calls nobody.
				before := len(srv.Calls())
				again := e.run(30*time.Second, "run", e.path)
				if again.code != final.code || len(srv.Calls()) != before {
					t.Errorf("a run after the end: exit %d (want %d), %d new requests (want 0)\n%s", again.code, final.code, len(srv.Calls())-before, again)
				}

				// `callrun report` rebuilds the same report from the journal.
				if res := e.run(30*time.Second, "report", e.path); res.code != 0 {
					t.Errorf("report: %s", res)
				} else {
					for i, r := range e.report() {
						if r["status"] != rows[i]["status"] || r["attempts"] != rows[i]["attempts"] {
							t.Errorf("rebuilt report row %s: %s/%s attempts, the run's %s/%s", r["row"], r["status"], r["attempts"], rows[i]["status"], rows[i]["attempts"])
						}
					}
				}

				// Files a kill left behind in the state directory (a report
				// being written when the kill came) are worth knowing about.
				if ents, err := os.ReadDir(e.stateDir); err == nil {
					for _, ent := range ents {
						if !slices.Contains([]string{"journal.jsonl", "lock", "report.csv", "report.xlsx", "summary.json"}, ent.Name()) {
							t.Logf("a kill left %s in the state directory", ent.Name())
						}
					}
				}

				stats := srv.Stats()
				t.Logf("%d kills (%d while calling), %d status and %d report checks, final run exit %d after %v; %s in %v; ledger: %d requests, %d placed, %d answered 500/dropped after placing; faults %+v",
					kills, killsCalling, statusChecks, reportChecks, final.code, final.elapsed.Round(time.Millisecond), e2eCounts(counts), elapsed.Round(time.Millisecond),
					len(l.calls), l.totalPlaced(), unknownAnswers, stats.Faults)
			})
		}
	}
}

// TestSIGTERMSavesStateAndExits130 stops a run with SIGTERM while calls are
// in flight: the calls under way get their answers recorded (nothing is
// left uncertain), the run exits 130 with the report written, and the
// next run finishes the campaign without phoning anyone again.
func TestSIGTERMSavesStateAndExits130(t *testing.T) {
	const n = 40
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 200 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 10, concurrency: 4})

	p := e.start("run", e.path)
	// Wait until the run is calling: some calls done, some in flight
	// (calls start every 100ms and each takes 200ms).
	waitFor(t, 30*time.Second, "5 call starts", func() bool { return len(srv.Calls()) >= 5 })
	time.Sleep(50 * time.Millisecond)
	p.signal(t, syscall.SIGTERM)
	sigAt := time.Now()
	res := p.wait(t, 30*time.Second)
	stopIn := p.ended.Sub(sigAt)
	if res.code != exitInterrupted {
		t.Fatalf("after SIGTERM: %s", res)
	}
	checkJSONLogs(t, res)
	// In-flight requests take 200ms; stopping must not wait for the rest of
	// the campaign (another 3s at least).
	if stopIn > 10*time.Second {
		t.Errorf("exited %v after SIGTERM", stopIn)
	}
	if !strings.Contains(res.stderr, "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", res.stderr)
	}

	rows := e.report()
	counts := countStatuses(rows)
	l := e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if counts["sent"] == 0 || counts["pending"] == 0 || counts["sent"]+counts["pending"] != n {
		t.Errorf("after SIGTERM the report has %v, want only sent and pending, some of each", counts)
	}
	if counts["uncertain"] != 0 {
		t.Errorf("%d contacts are uncertain after SIGTERM: in-flight calls were not allowed to finish", counts["uncertain"])
	}
	// Every request that reached the sandbox was answered and recorded.
	if l.totalPlaced() != counts["sent"] || len(l.calls) != counts["sent"] {
		t.Errorf("the sandbox got %d requests and placed %d calls, the report says %d sent", len(l.calls), l.totalPlaced(), counts["sent"])
	}
	if sum := e.summary(); sum.Ending != "interrupted" || sum.Counts["sent"] != counts["sent"] {
		t.Errorf("summary.json: ending %q, counts %v", sum.Ending, sum.Counts)
	}
	sentAtSignal := counts["sent"]

	// Resume: everyone is phoned, once.
	srv.SetFaults(sandbox.Faults{})
	res2 := e.run(60*time.Second, "run", e.path)
	if res2.code != 0 {
		t.Fatalf("resuming: %s", res2)
	}
	rows = e.report()
	l = e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if c := countStatuses(rows); c["sent"] != n {
		t.Errorf("after resuming: %v, want %d sent", c, n)
	}
	if len(l.calls) != n || l.totalPlaced() != n || len(l.placed) != n {
		t.Errorf("ledger: %d requests, %d placed, %d numbers; want %d of each", len(l.calls), l.totalPlaced(), len(l.placed), n)
	}
	if sum := e.summary(); sum.CallsThisRun != n-sentAtSignal {
		t.Errorf("the resumed run started %d calls, want %d", sum.CallsThisRun, n-sentAtSignal)
	}
	t.Logf("SIGTERM: exit 130 %v after the signal with %d sent, %d pending; resumed run exit 0 in %v",
		stopIn.Round(time.Millisecond), sentAtSignal, n-sentAtSignal, res2.elapsed.Round(time.Millisecond))
}

// TestSecondSignalExitsAtOnce: SIGTERM asks for a clean stop, which waits
// for the calls in flight; a SIGINT after it exits at once with 130. The
// calls that were in flight are uncertain (their intents are on record),
// and are not sent again.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	const n, latency = 12, 10 * time.Second
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: latency}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 100, concurrency: 4})

	p := e.start("run", e.path)
	waitFor(t, 30*time.Second, "4 calls in flight", func() bool { return len(srv.Calls()) >= 4 })
	p.signal(t, syscall.SIGTERM)
	sigAt := time.Now()
	time.Sleep(100 * time.Millisecond)
	p.signal(t, syscall.SIGINT)
	res := p.wait(t, 30*time.Second)
	stopIn := p.ended.Sub(sigAt)
	if res.code != exitInterrupted {
		t.Fatalf("after SIGTERM and SIGINT: %s", res)
	}
	// The in-flight calls take 10s: a prompt exit did not wait for them.
	if stopIn >= latency {
		t.Errorf("exited %v after the first signal: the second signal did not cut the wait", stopIn)
	}

	// The journal holds: the in-flight calls are uncertain, the rest
	// pending, nobody sent.
	srv.SetFaults(sandbox.Faults{})
	l := e.ledger() // the killed requests end their latency and are placed
	inFlight := len(l.calls)
	st := e.status()
	if st["uncertain"] != inFlight || st["sent"] != 0 || st["pending"] != n-inFlight {
		t.Errorf("status after the second signal: %v, want %d uncertain (the requests in flight) and the rest pending", st, inFlight)
	}

	// The next run takes the lock, calls the rest and not the uncertain.
	res2 := e.run(60*time.Second, "run", e.path)
	if res2.code != run.ExitIncomplete {
		t.Fatalf("resuming: %s", res2)
	}
	rows := e.report()
	l = e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if c := countStatuses(rows); c["uncertain"] != inFlight || c["sent"] != n-inFlight {
		t.Errorf("after resuming: %v, want %d uncertain and %d sent", c, inFlight, n-inFlight)
	}
	if len(l.calls) != n {
		t.Errorf("the sandbox got %d requests, want %d", len(l.calls), n)
	}
	t.Logf("second signal: exit 130 %v after the first; %d calls in flight left uncertain", stopIn.Round(time.Millisecond), inFlight)
}

// TestSecondRunExits75: while a run holds the state directory, another
// exits 75 at once and says which directory and which process, even after
// the lock file was deleted; once the holder is killed with SIGKILL, the
// kernel has released the locks and a new run goes ahead.
func TestSecondRunExits75(t *testing.T) {
	const n = 6
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 500 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 2, concurrency: 1})

	first := e.start("run", e.path)
	waitFor(t, 30*time.Second, "the first run to call", func() bool { return len(srv.Calls()) >= 1 })
	if b, err := os.ReadFile(filepath.Join(e.stateDir, "lock")); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(first.pid()) {
		t.Errorf("lock file: %q, %v; want the first run's pid %d", b, err, first.pid())
	}

	second := e.run(30*time.Second, "run", e.path)
	if second.code != run.ExitTryLater {
		t.Fatalf("second run: %s", second)
	}
	if second.elapsed > 10*time.Second {
		t.Errorf("the second run took %v to give up", second.elapsed)
	}
	if !strings.Contains(second.stderr, e.stateDir) || !strings.Contains(second.stderr, "pid "+strconv.Itoa(first.pid())) {
		t.Errorf("the second run's message does not name the state directory %s and pid %d:\n%s", e.stateDir, first.pid(), second.stderr)
	}
	select {
	case <-first.done:
		t.Fatalf("the first run ended while the second tried: %s", first.result())
	default:
	}
	// status may read the state while a run holds it.
	e.status()
	// A lock file deleted under the running process (a clean-up script,
	// a person) does not let a second run in: the journal is locked too.
	if err := os.Remove(filepath.Join(e.stateDir, "lock")); err != nil {
		t.Fatal(err)
	}
	unlocked := e.run(30*time.Second, "run", e.path)
	if unlocked.code != run.ExitTryLater || !strings.Contains(unlocked.stderr, "journal") {
		t.Fatalf("a run after the lock file was deleted: %s", unlocked)
	}

	first.cmd.Process.Kill()
	<-first.done
	srv.SetFaults(sandbox.Faults{})
	third := e.run(60*time.Second, "run", e.path)
	if third.code != 0 && third.code != run.ExitIncomplete {
		t.Fatalf("the run after the holder was killed: %s", third)
	}
	rows := e.report()
	l := e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if c := countStatuses(rows); c["sent"]+c["uncertain"] != n {
		t.Errorf("after the third run: %v", c)
	}
	t.Logf("second run exit 75 in %v; third run exit %d", second.elapsed.Round(time.Millisecond), third.code)
}

// TestSecondRunExits75WhenStartedTogether starts several runs of one
// campaign at the same instant, as overlapping cron entries would: one
// takes the lock and calls everyone; the others exit 75 (or, started after
// it finished, find nobody to call). Nobody is phoned twice and the agent
// is created once.
func TestSecondRunExits75WhenStartedTogether(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testRunsStartedTogether(t, kind) })
	}
}

func testRunsStartedTogether(t *testing.T, kind string) {
	const n, runs = 8, 4
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 100 * time.Millisecond}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 20, concurrency: 2, postgres: e2eDatabase(t, kind)})
	holder := e.stateDir // what exit 75 must name
	if kind == "postgres" {
		holder, _ = os.Hostname()
	}

	var procs []*e2eProc
	for range runs {
		procs = append(procs, e.start("run", e.path))
	}
	codes := map[int]int{}
	for _, p := range procs {
		res := p.wait(t, 60*time.Second)
		codes[res.code]++
		switch res.code {
		case 0:
		case run.ExitTryLater:
			if !strings.Contains(res.stderr, holder) {
				t.Errorf("exit 75 without naming the holder (%s): %s", holder, res)
			}
		default:
			t.Errorf("%s", res)
		}
	}
	if codes[0] == 0 {
		t.Errorf("no run finished: exit codes %v", codes)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	rows := e.report()
	e.checkReportAgainstLedger(rows, l)
	if len(l.calls) != n || l.totalPlaced() != n || countStatuses(rows)["sent"] != n {
		t.Errorf("ledger: %d requests, %d placed; report %v; want %d of each", len(l.calls), l.totalPlaced(), countStatuses(rows), n)
	}
	if len(srv.Agents()) != 1 {
		t.Errorf("the sandbox has %d agents, want 1: %v", len(srv.Agents()), srv.Agents())
	}
	t.Logf("%d runs started together: exit codes %v", runs, codes)
}

// TestExit3WhenServiceRefusesSome: the agent stops being active mid-way
// (the service answers 409 agent_not_active). Refused contacts are failed
// with the service's answer in the report, the run exits 3, a plain rerun
// sends nothing, and --retry-failed sends only the failed ones. (Fewer
// refusals than the breaker for refusals in a row lets through:
// TestOddAnswersThroughTheCLI has more.)
func TestExit3WhenServiceRefusesSome(t *testing.T) {
	const n, okFirst = 12, 12 - (campaign.BreakAfter - 1)
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	var callStarts atomic.Int32
	var agentID atomic.Value
	inner := srv.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if parts := strings.Split(r.URL.Path, "/"); len(parts) == 4 && parts[1] == "call" {
			if callStarts.Add(1) == okFirst+1 {
				srv.SetAgentStatus(parts[2], "pending")
				agentID.Store(parts[2])
			}
		}
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 1})

	res := e.run(60*time.Second, "run", e.path)
	if res.code != run.ExitIncomplete {
		t.Fatalf("run: %s", res)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("%d failed and 0 uncertain", n-okFirst)) {
		t.Errorf("stderr does not count the failed contacts:\n%s", res.stderr)
	}
	if !strings.Contains(res.stdout, "Report: "+filepath.Join(e.stateDir, "report.csv")) {
		t.Errorf("stdout does not say where the report is:\n%s", res.stdout)
	}
	rows := e.report()
	l := e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	sum := e.summary()
	if sum.Counts["sent"] != okFirst || sum.Counts["failed"] != n-okFirst || sum.Counts["uncertain"] != 0 || sum.Counts["pending"] != 0 || sum.Ending != "complete" {
		t.Errorf("summary.json: counts %v, ending %q; want %d sent, %d failed", sum.Counts, sum.Ending, okFirst, n-okFirst)
	}
	for _, r := range rows[okFirst:] {
		if r["status"] != "failed" || r["http_status"] != "409" || !strings.Contains(r["response"], "agent_not_active") {
			t.Errorf("row %s: status %q, http %q, response %q; want failed, 409, agent_not_active", r["row"], r["status"], r["http_status"], r["response"])
		}
	}

	// The agent is active again (else a run would wait for it). A plain
	// rerun sends nothing: failed contacts wait for --retry-failed.
	id, _ := agentID.Load().(string)
	if !srv.SetAgentStatus(id, "active") {
		t.Fatalf("no agent %q", id)
	}
	before := len(srv.Calls())
	if res := e.run(60*time.Second, "run", e.path); res.code != run.ExitIncomplete || len(srv.Calls()) != before {
		t.Errorf("rerun: exit %d, %d new requests; want 3 and none\n%s", res.code, len(srv.Calls())-before, res)
	}

	// --retry-failed sends the failed ones, and only them.
	if res := e.run(60*time.Second, "run", "--retry-failed", e.path); res.code != 0 {
		t.Fatalf("run --retry-failed: %s", res)
	}
	rows = e.report()
	l = e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if c := countStatuses(rows); c["sent"] != n {
		t.Errorf("after --retry-failed: %v", c)
	}
	if len(l.calls) != n+(n-okFirst) || l.totalPlaced() != n {
		t.Errorf("ledger: %d requests, %d placed; want %d and %d", len(l.calls), l.totalPlaced(), n+(n-okFirst), n)
	}
	for _, r := range rows[okFirst:] {
		if r["attempts"] != "2" {
			t.Errorf("row %s: attempts %q, want 2", r["row"], r["attempts"])
		}
	}
}

// TestExit3WhenEveryOutcomeIsUnknown: the service places every call and
// then answers 500. Every contact is uncertain, the run exits 3, and no
// rerun sends anyone again. (No more contacts than the breaker lets
// through: TestBreakerStopsAnOutage has more.)
func TestExit3WhenEveryOutcomeIsUnknown(t *testing.T) {
	const n = campaign.BreakAfter
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Share500: 1}})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 4})

	res := e.run(60*time.Second, "run", e.path)
	if res.code != run.ExitIncomplete {
		t.Fatalf("run: %s", res)
	}
	sum := e.summary()
	if sum.Counts["uncertain"] != n || sum.Counts["sent"] != 0 || sum.CallsThisRun != n || sum.Ending != "complete" {
		t.Errorf("summary.json: %+v", sum)
	}
	rows := e.report()
	l := e.ledger()
	l.checkNobodyTwice(t)
	e.checkReportAgainstLedger(rows, l)
	if l.totalPlaced() != n || len(l.calls) != n {
		t.Errorf("ledger: %d requests, %d placed; want %d", len(l.calls), l.totalPlaced(), n)
	}
	for i := range 2 {
		res := e.run(60*time.Second, "run", e.path)
		if res.code != run.ExitIncomplete || len(srv.Calls()) != n {
			t.Errorf("rerun %d: exit %d, ledger %d; want 3 and still %d\n%s", i+1, res.code, len(srv.Calls()), n, res)
		}
	}
}

// TestPlanCountsContactsAlreadyDone: after a campaign has run, `plan` must
// say what `run` would do now (plan counts rows "already done" apart from those "to call"):
// the contacts the journal settled are done, not to call.
func TestPlanCountsContactsAlreadyDone(t *testing.T) {
	const n = 6
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 2})
	if res := e.run(60*time.Second, "run", "--limit", "4", e.path); res.code != 0 {
		t.Fatalf("run --limit 4: %s", res)
	}
	if st := e.status(); st["sent"] != 4 || st["pending"] != 2 {
		t.Fatalf("status: %v", st)
	}
	p := e.plan()
	if p.Totals.Done != 4 || p.Totals.ToCall != 2 {
		t.Errorf("plan after 4 of %d contacts were sent: totals %+v, want done 4 and to_call 2", n, p.Totals)
	}
}

// ---------------------------------------------------------------------------

// TestKillLeavesOnlyTheCallsInFlightUncertain kills the real binary with
// SIGKILL in the thick of calling, 16 workers against a sandbox that
// answers in 200 ms and in 1 ms: `callrun status` then shows at most 16
// contacts uncertain (the calls in flight), none of them one the service
// answered; the resumed run calls everyone else, and the ledger shows
// nobody called twice.
func TestKillLeavesOnlyTheCallsInFlightUncertain(t *testing.T) {
	if testing.Short() {
		t.Skip("kills callrun mid-run")
	}
	for _, kind := range e2eStores {
		for _, latency := range []time.Duration{200 * time.Millisecond, time.Millisecond} {
			t.Run(fmt.Sprintf("%s/latency=%s", kind, latency), func(t *testing.T) {
				const concurrency, n = 16, 400
				srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: latency}})
				t.Cleanup(srv.Close)
				e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 1000, concurrency: concurrency, postgres: e2eDatabase(t, kind)})
				p := e.start("run", e.path)
				// Killed once a good part of the calls is under way.
				killRound(p, 0, false, func() bool { return srv.Stats().CallsReceived >= 60 })
				if res := p.result(); !res.signaled {
					t.Fatalf("the run ended before the kill: %s", res)
				}
				st := e.status()
				if st["uncertain"] > concurrency || st["uncertain"] == 0 {
					t.Errorf("after SIGKILL: %d uncertain, want 1 to %d (the calls in flight); status %v", st["uncertain"], concurrency, st)
				}
				answered := map[string]bool{}
				for _, c := range srv.Calls() {
					if c.Placed {
						answered[c.Form.Get("phone_number")] = true
					}
				}
				t.Logf("killed with %d calls received, %d answered; status %v", srv.Stats().CallsReceived, len(answered), st)

				res := e.run(120*time.Second, "run", e.path)
				if res.code != 0 && res.code != 3 {
					t.Fatalf("resumed run: %s", res)
				}
				l := e.ledger()
				l.checkNobodyTwice(t)
				for phone, calls := range l.byPhone {
					if len(calls) > 1 {
						t.Errorf("%s reached the service %d times: %v", phone, len(calls), calls)
					}
				}
				final := e.status()
				if final["uncertain"] != st["uncertain"] || final["sent"]+final["uncertain"] != n {
					t.Errorf("after the resumed run: %v; want the %d uncertain of the kill and everyone else sent", final, st["uncertain"])
				}
				if got := len(l.byPhone); got < n-st["uncertain"] {
					t.Errorf("the ledger has %d numbers, want at least %d", got, n-st["uncertain"])
				}
			})
		}
	}
}

// e2eStores are the stores the tests of the at-most-once promise run
// against: the state directory's files and PostgreSQL.
var e2eStores = []string{"files", "postgres"}

// e2eDatabase is the database URL of a campaign of the given store kind:
// a new database on the tests' PostgreSQL, or "" for files.
func e2eDatabase(t testing.TB, kind string) string {
	if kind != "postgres" {
		return ""
	}
	return pgtest.URL(t)
}

// killRound sends SIGKILL to p after delay, counted from its start, or,
// unless fromStart, from the moment calling() is first true; and waits for
// it to end. If p ends by itself first, it is left alone.
func killRound(p *e2eProc, delay time.Duration, fromStart bool, calling func() bool) {
	var at time.Time
	if fromStart {
		at = p.started.Add(delay)
	}
	giveUp := p.started.Add(20 * time.Second) // calling never started: kill anyway
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case now := <-tick.C:
			if at.IsZero() && calling() {
				at = now.Add(delay)
			}
			if (!at.IsZero() && !now.Before(at)) || now.After(giveUp) {
				p.cmd.Process.Kill()
				<-p.done
				return
			}
		}
	}
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func e2eCounts(m map[string]int) string {
	var parts []string
	for _, s := range []string{"sent", "failed", "uncertain", "pending"} {
		parts = append(parts, fmt.Sprintf("%d %s", m[s], s))
	}
	return strings.Join(parts, ", ")
}

// callsByNumber counts calls (the sandbox's Calls or Placed) by the
// number they went to.
func callsByNumber(calls []sandbox.Call) map[string]int {
	n := map[string]int{}
	for _, c := range calls {
		n[c.Form.Get("phone_number")]++
	}
	return n
}
