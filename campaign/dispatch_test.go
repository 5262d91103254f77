package campaign

// Tests of Run against the sandbox: real HTTP on loopback, the real
// apiclient.Client with a StoredTokenSource, a real journal in a temporary
// directory. They assert from the sandbox's ledger (what the "service"
// really received and placed) and from the journal, never from Run's own
// counters alone.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
	"golang.org/x/time/rate"
)

// dtRunTimeout bounds every Run of these tests: a hang fails the test
// instead of the whole package.
const dtRunTimeout = 30 * time.Second

// dtEnv is a campaign on disk, a sandbox, and a client logged in to it,
// with the campaign's agents ensured and their call endpoints read: what
// `callrun run` has in hand when it calls campaign.Run.
type dtEnv struct {
	t       *testing.T
	dir     string
	srv     *sandbox.Server
	client  *apiclient.Client
	f       *File
	agents  []AgentPlan
	eps     []*apiclient.CallEndpoint
	sup     *Suppression
	journal string
	// pg, when set, keeps the journal in PostgreSQL (pgURL is its
	// database) rather than in the file at journal: usePostgres.
	pg    *store.Postgres
	pgURL string

	// journalClosed is set by a test that closes the journal itself, so
	// that run does not report the second Close.
	journalClosed atomic.Bool
	// beforeSync, if set, runs before each fsync of the journal
	// (store.JournalOptions.BeforeSync): a slow or stalling disk.
	beforeSync func() error
	// dnc, if set, is the do-not-call list the journal checks each intent
	// against (store.JournalOptions.DoNotCall).
	dnc store.DoNotCallList
	// report, if set, is told of each run's Report, started before the
	// calls as `callrun run` starts it; finish, if set too, finishes it
	// once the run is over, before the journal closes, and gets its
	// error.
	report func(*Report)
	finish func(*Report, *RunResult) error
	// pressure, if set, is the contact pressure the journal keeps
	// (store.JournalOptions.Pressure).
	pressure *store.Pressure
}

// dtCampaign is a one-agent campaign over leads.csv (columns Phone and
// First Name) at the given pace; extra is appended (hours:, ...).
//
// The tests of dispatch mechanics run at whatever hour the machine's clock
// says, so their campaigns turn the called person's hours off; a campaign
// whose extra sets hours: keeps them, and its test runs on a fake clock.
func dtCampaign(perSecond float64, concurrency int, extra string) string {
	if !strings.Contains(extra, "hours:") {
		extra += "unsafe_ignore_called_person_hours: true\n"
	}
	return fmt.Sprintf(`name: dispatch-test
agents:
  - name: Alpha
    prompt: Say hello.
sheets:
  - file: leads.csv
    agent: Alpha
    fields: {phone_number: Phone, first_name: First Name}
region: US
pace: {per_second: %v, burst: 1, concurrency: %d}
%s`, perSecond, concurrency, extra)
}

// dtPhone is the i-th test number: valid NANP numbers in New York.
func dtPhone(i int) string { return fmt.Sprintf("+1212201%04d", i) }

// dtSheet is a sheet of n contacts, dtPhone(0) to dtPhone(n-1).
func dtSheet(n int) string {
	var b strings.Builder
	b.WriteString("Phone,First Name\n")
	for i := range n {
		fmt.Fprintf(&b, "%s,Name %d\n", dtPhone(i), i)
	}
	return b.String()
}

func dtWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dtSandbox is sandboxClient (agents_test.go) with a transport of the
// test's own, whose connections are all closed before the sandbox: a
// connection the transport dialled but never used would otherwise hold
// the sandbox's Close (http.Server.Shutdown) for five seconds. Closing
// the idle ones is not enough: a dial the transport started for a request
// that then got another connection may finish after that.
func dtSandbox(t *testing.T, opts sandbox.Options) (*sandbox.Server, *apiclient.Client) {
	t.Helper()
	return dtStartSandbox(t, sandbox.NewUnstartedServer(opts))
}

// dtStartSandbox is dtSandbox for a sandbox made with
// NewUnstartedServer, which it starts.
func dtStartSandbox(t *testing.T, srv *sandbox.Server) (*sandbox.Server, *apiclient.Client) {
	t.Helper()
	return dtStartSandboxAt(t, srv, nil)
}

// dtStartSandboxAt is dtStartSandbox with the token source's clock now
// (nil: the real one).
func dtStartSandboxAt(t *testing.T, srv *sandbox.Server, now func() time.Time) (*sandbox.Server, *apiclient.Client) {
	t.Helper()
	srv.Start()
	t.Cleanup(srv.Close)
	tr := apiclient.DefaultTransport()
	conns := &dtConns{}
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			conns.add(c)
		}
		return c, err
	}
	t.Cleanup(conns.closeAll) // runs before srv.Close
	o := &apiclient.OAuth{BaseURL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
		RedirectURI: "http://127.0.0.1/cb", HTTPClient: &http.Client{Transport: tr}, Now: now}
	tokens := apiclient.NewStoredTokenSource(o, TokenStore(&store.TokenFile{Path: filepath.Join(t.TempDir(), "tok.json")}))
	if _, err := tokens.Login(context.Background(), sandbox.DefaultCode); err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(srv.URL, tokens, tr)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// dtConns are the connections a test's transport dialled; once closeAll
// has closed them, it closes the ones dialled later at once.
type dtConns struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func (d *dtConns) add(c net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		c.Close()
		return
	}
	d.conns = append(d.conns, c)
}

func (d *dtConns) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for _, c := range d.conns {
		c.Close()
	}
}

// newDtEnv writes the campaign file and its sheets to a temporary
// directory, starts a sandbox with sb and prepares the run.
func newDtEnv(t *testing.T, sb sandbox.Options, campaignYAML string, files map[string]string) *dtEnv {
	t.Helper()
	srv, client := dtSandbox(t, sb)
	return dtPrepare(t, srv, client, t.TempDir(), campaignYAML, files)
}

// dtPrepare does what `callrun run` does before Run: load and check the
// campaign file, ensure the agents (creating them on the sandbox), wait
// until they are ready, read their call endpoints and the suppression
// files.
func dtPrepare(t *testing.T, srv *sandbox.Server, client *apiclient.Client, dir, campaignYAML string, files map[string]string) *dtEnv {
	t.Helper()
	for name, content := range files {
		dtWrite(t, filepath.Join(dir, name), content)
	}
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, campaignYAML)
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	agents, err := EnsureAgents(ctx, client, f.Agents, EnsureOptions{Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := WaitReady(ctx, client, agents, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	eps := make([]*apiclient.CallEndpoint, len(agents))
	for i, a := range agents {
		if eps[i], err = client.GetCallEndpoint(ctx, a.AgentID); err != nil {
			t.Fatal(err)
		}
	}
	sup, err := f.LoadSuppression(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stateDir := f.Path(f.StateDir)
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &dtEnv{t: t, dir: dir, srv: srv, client: client, f: f, agents: agents, eps: eps, sup: sup,
		journal: filepath.Join(stateDir, store.JournalFile)}
}

// reload reads the campaign file and its sheets again (after a test
// rewrote a sheet), keeping the agents and endpoints.
func (e *dtEnv) reload() {
	e.t.Helper()
	f, err := Load(e.f.Source, LoadOptions{Offline: true})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		e.t.Fatal(err)
	}
	e.f = f
}

// run opens the journal, as one process of `callrun run` would, and runs
// the campaign with fast retry tuning; tune may change the options.
func (e *dtEnv) run(ctx context.Context, tune func(*RunOptions)) (*RunResult, error) {
	e.t.Helper()
	var j *store.Journal
	var st *store.State
	var err error
	if e.pg != nil {
		unlock, lerr := e.pg.Lock(ctx)
		if lerr != nil {
			e.t.Fatal(lerr)
		}
		defer unlock()
		j, st, err = e.pg.OpenJournal(ctx, store.JournalOptions{BeforeSync: e.beforeSync, DoNotCall: e.dnc, Pressure: e.pressure})
	} else {
		j, st, err = store.OpenJournal(e.journal, store.JournalOptions{BeforeSync: e.beforeSync, DoNotCall: e.dnc, Pressure: e.pressure})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	opts := RunOptions{
		Calls: e.client, Agents: e.agents, Endpoints: e.eps, Journal: j, State: st, Suppress: e.sup,
		RetryPause: 5 * time.Millisecond, RequestTimeout: 10 * time.Second,
		Logf: func(format string, args ...any) { e.t.Logf(format, args...) },
	}
	if tune != nil {
		tune(&opts)
	}
	limiter := rate.NewLimiter(rate.Limit(e.f.Pace.PerSecond), e.f.Pace.Burst)
	rctx, cancel := context.WithTimeout(ctx, dtRunTimeout)
	defer cancel()
	var rep *Report
	if e.report != nil {
		rep = StartReport(context.WithoutCancel(ctx), e.f, &opts, nil, e.f.Path(e.f.StateDir))
		e.report(rep)
	}
	res, err := Run(rctx, e.f, limiter, opts)
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		e.t.Fatalf("Run did not end within %s", dtRunTimeout)
	}
	if rep != nil {
		if ferr := e.finish(rep, res); ferr != nil {
			e.t.Errorf("finishing the run's report: %v", ferr)
		}
	}
	if cerr := j.Close(); cerr != nil && !e.journalClosed.Load() {
		e.t.Errorf("closing the journal: %v", cerr)
	}
	return res, err
}

// mustRun is run for a run that must end cleanly.
func (e *dtEnv) mustRun(tune func(*RunOptions)) *RunResult {
	e.t.Helper()
	res, err := e.run(context.Background(), tune)
	if err != nil {
		e.t.Fatalf("Run: %v", err)
	}
	return res
}

// state replays the journal from disk (or the database), as `callrun
// status` does.
func (e *dtEnv) state() *store.State {
	e.t.Helper()
	var st *store.State
	var err error
	if e.pg != nil {
		st, err = e.pg.ReadState(context.Background())
	} else {
		st, err = store.ReadState(e.journal)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

// entry is what the journal on disk says about a phone of agent Alpha.
func (e *dtEnv) entry(phone string) (store.Entry, bool) {
	return e.state().Lookup(store.Key{Agent: e.f.Agents[0].Name, Phone: phone})
}

// records returns every record of the journal, in order.
func (e *dtEnv) records() []store.Record {
	e.t.Helper()
	if e.pg != nil {
		return dtPostgresRecords(e.t, e.pgURL)
	}
	fh, err := os.Open(e.journal)
	if err != nil {
		e.t.Fatal(err)
	}
	defer fh.Close()
	var out []store.Record
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r store.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			e.t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// usePostgres keeps the journal of e's runs in a new PostgreSQL database.
func (e *dtEnv) usePostgres() {
	e.t.Helper()
	e.pgURL = pgtest.URL(e.t)
	p, err := store.OpenPostgres(context.Background(), e.pgURL, e.f.Name, 0, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { p.Close() })
	e.pg = p
}

// dtPostgresRecords returns every record of the journal in the database
// at url, in order.
func dtPostgresRecords(t *testing.T, url string) []store.Record {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT line FROM callrun_journal ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	out := make([]store.Record, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &out[i]); err != nil {
			t.Fatalf("journal row %q: %v", line, err)
		}
	}
	return out
}

// dtStores are the stores the tests of the at-most-once promise run
// against.
var dtStores = []string{"files", "postgres"}

// use makes e keep its journal in the store named kind.
func (e *dtEnv) use(kind string) {
	if kind == "postgres" {
		e.usePostgres()
	}
}

// intents counts the intent records of each phone in the journal file.
func (e *dtEnv) intents() map[string]int {
	n := map[string]int{}
	for _, r := range e.records() {
		if r.Type == store.TypeIntent {
			n[r.Phone]++
		}
	}
	return n
}

// dtPlaced counts the placed calls of each phone in the sandbox's ledger.
func dtPlaced(srv *sandbox.Server) map[string]int {
	n := map[string]int{}
	for _, c := range srv.Placed() {
		n[c.Form.Get("phone_number")]++
	}
	return n
}

// dtReceived counts the call-start requests the sandbox received for each
// phone, leaving out those it refused with 401: the client's transport
// sends a request again after a 401 and a refresh, within one attempt.
func dtReceived(srv *sandbox.Server) map[string]int {
	n := map[string]int{}
	for _, c := range srv.Calls() {
		if c.Status != 401 {
			n[c.Form.Get("phone_number")]++
		}
	}
	return n
}

// checkIntentBeforeSend checks the at-most-once bookkeeping against the
// ledger: every request the sandbox received for a phone (other than a
// 401 the transport answered by sending again) has an intent of its own
// in the journal, and no phone was placed twice unless maxPlaced allows.
func (e *dtEnv) checkIntentBeforeSend(maxPlaced int) {
	e.t.Helper()
	intents := e.intents()
	for phone, n := range dtReceived(e.srv) {
		if n > intents[phone] {
			e.t.Errorf("%s: the sandbox received %d call starts but the journal holds %d intents", phone, n, intents[phone])
		}
	}
	for phone, n := range dtPlaced(e.srv) {
		if n > maxPlaced {
			e.t.Errorf("%s was placed %d times", phone, n)
		}
	}
}

// checkPlacedOnce checks that each of the first n test numbers was placed
// exactly once and that nothing else was.
func (e *dtEnv) checkPlacedOnce(n int) {
	e.t.Helper()
	placed := dtPlaced(e.srv)
	for i := range n {
		if placed[dtPhone(i)] != 1 {
			e.t.Errorf("%s placed %d times, want 1", dtPhone(i), placed[dtPhone(i)])
		}
	}
	if len(placed) != n {
		e.t.Errorf("%d numbers placed, want %d", len(placed), n)
	}
	e.checkIntentBeforeSend(1)
}

// checkCounts compares the journal's counts with want (statuses not in
// want must be 0).
func (e *dtEnv) checkCounts(want map[store.Status]int) {
	e.t.Helper()
	got := e.state().Counts()
	for st, n := range got {
		if n != want[st] {
			e.t.Errorf("journal: %d %s, want %d (all counts %v)", n, st, want[st], got)
		}
	}
}

func TestRunCleanSendsEachContactOnce(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunCleanSendsEachContactOnce(t, kind) })
	}
}

func testRunCleanSendsEachContactOnce(t *testing.T, kind string) {
	const n = 25
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(500, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.use(kind)
	var settled atomic.Int32
	res := e.mustRun(func(o *RunOptions) { o.Settled = func(store.Status) { settled.Add(1) } })
	if res.Started != n || res.Sent != n || res.Failed+res.Uncertain+res.Pending+res.Skipped != 0 {
		t.Errorf("result %+v", res)
	}
	if settled.Load() != n {
		t.Errorf("Settled called %d times, want %d", settled.Load(), n)
	}
	e.checkPlacedOnce(n)
	if got := len(e.srv.Calls()); got != n {
		t.Errorf("the sandbox received %d call starts for %d contacts", got, n)
	}
	for _, c := range e.srv.Placed() { // the form as the sheet says
		var i int
		fmt.Sscanf(c.Form.Get("phone_number"), "+1212201%04d", &i)
		if c.Form.Get("first_name") != fmt.Sprintf("Name %d", i) || len(c.Form) != 2 {
			t.Errorf("form sent: %v", c.Form)
		}
	}
	e.checkCounts(map[store.Status]int{store.Sent: n})
	en, _ := e.entry(dtPhone(0))
	if en.Attempts != 1 || en.HTTP != 200 || en.AgentID != e.agents[0].AgentID || !strings.Contains(en.Body, `"call_id"`) {
		t.Errorf("journal entry %+v", en)
	}

	// A second run over the same journal finds everything settled.
	res = e.mustRun(nil)
	if res.Started != 0 || res.Skipped != n {
		t.Errorf("second run: %+v", res)
	}
	if got := len(e.srv.Calls()); got != n {
		t.Errorf("the second run sent %d call starts", got-n)
	}
}

func TestRun429StormRetriesUntilAllSent(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRun429StormRetriesUntilAllSent(t, kind) })
	}
}

func testRun429StormRetriesUntilAllSent(t *testing.T, kind string) {
	const n = 20
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share429: 0.5, RetryAfter: time.Second, Seed: 7}},
		dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.use(kind)
	clock := &dtClock{now: time.Now()} // the Retry-After: 1 of each 429 is waited out on it
	var mu sync.Mutex
	pauses := map[string]int{}
	res := e.mustRun(func(o *RunOptions) {
		o.MaxAttempts = 60 // 0.5^60: never exhausted by chance
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Paused = func(cause string, until time.Time) {
			mu.Lock()
			pauses[cause]++
			mu.Unlock()
		}
	})
	if res.Sent != n || res.Pending != 0 {
		t.Errorf("result %+v", res)
	}
	e.checkPlacedOnce(n)
	got429 := 0
	for _, c := range e.srv.Calls() {
		if c.Outcome == "429" {
			got429++
		}
	}
	if got429 == 0 || got429 != e.srv.Stats().Faults.Injected429 {
		t.Errorf("%d 429s in the ledger, %d injected; the storm did not happen", got429, e.srv.Stats().Faults.Injected429)
	}
	// Each 429 holds the pool back, and Paused hears of each hold that
	// ends later than the one in force: at least one, at most one a 429.
	if p := pauses[PauseService]; p == 0 || p > got429 || len(pauses) != 1 {
		t.Errorf("Paused told %v, after %d 429s", pauses, got429)
	}
	// Every 429 was an attempt of its own, with its own intent: the
	// journal's attempts add up to the ledger's requests.
	received := dtReceived(e.srv)
	for i := range n {
		en, _ := e.entry(dtPhone(i))
		if en.Status != store.Sent || en.Attempts != received[dtPhone(i)] {
			t.Errorf("%s: %s after %d attempts; the sandbox received %d", dtPhone(i), en.Status, en.Attempts, received[dtPhone(i)])
		}
	}
}

// dtWait waits until ch is closed, or fails the test with msg after ten
// seconds and returns: a Run that does not do what the test waits for
// ends with an error instead of hanging.
func dtWait(t *testing.T, ch <-chan struct{}, msg string) {
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Error(msg)
	}
}

// dtOnce returns a function that closes ch the first time it is called.
func dtOnce(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// TestRun429PausesThePool checks that a 429 holds back every worker, not
// just the one that got it, for its Retry-After, on the run's clock (the
// sandbox's ledger runs on the same fake clock).
//
// Four workers at 50 a second. The first three call starts are answered
// and their workers held in the call until the fourth, answered 429 with
// Retry-After: 7, has been taken in: its worker sleeps 7s. That sleep is
// held in turn, at the time it began, until every worker sleeps or a call
// start comes: without the pool-wide pause the three would call again
// 20ms after the 429. Every call start after the 429 must come 7s to 8s
// after it (the turns at the limiter of the five call starts left take
// 100ms).
func TestRun429PausesThePool(t *testing.T) {
	const n, workers = 8, 4
	const retryAfter = 7 * time.Second
	clock := &dtClock{now: time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)}
	e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(50, workers, ""), map[string]string{"leads.csv": dtSheet(n)})

	answered, paused, wake := make(chan struct{}), make(chan struct{}), make(chan struct{})
	allAnswered, pauseBegan, wakeAll := dtOnce(answered), dtOnce(paused), dtOnce(wake)
	var entered, nAnswered, long atomic.Int32
	clock.hold = func(d time.Duration) {
		if d < time.Second {
			return // a turn at the limiter
		}
		pauseBegan()
		if long.Add(1) == workers {
			wakeAll()
		}
		dtWait(t, wake, "a sleep after the 429 was held for ever")
	}
	calls := callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
		switch k := entered.Add(1); {
		case k < workers:
			resp, err := e.client.StartCallForm(ctx, ep, form)
			if nAnswered.Add(1) == workers-1 {
				allAnswered()
			}
			dtWait(t, paused, "no worker slept the Retry-After on the run's clock after the 429")
			return resp, err
		case k == workers:
			dtWait(t, answered, "the first call starts were not answered")
			e.srv.SetFaults(sandbox.Faults{Share429: 1, RetryAfter: retryAfter})
			defer e.srv.SetFaults(sandbox.Faults{})
			return e.client.StartCallForm(ctx, ep, form)
		default:
			// A call start while the 429's sleep is held: the ledger
			// tells, at the time the sleep began; then let the run go on.
			defer wakeAll()
			return e.client.StartCallForm(ctx, ep, form)
		}
	})
	e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls
		o.MaxRetryAfter = time.Minute
	})
	e.checkPlacedOnce(n)

	var first *sandbox.Call
	after := 0
	for _, c := range e.srv.Calls() {
		if first == nil {
			if c.Outcome == "429" {
				first = &c
			}
			continue
		}
		after++
		if d := c.ReceivedAt.Sub(first.ReceivedAt); d < retryAfter || d >= retryAfter+time.Second {
			t.Errorf("call #%d (%s, %s) was received %s after the 429 of call #%d; want 7s to 8s: the pool did not pause for Retry-After",
				c.Seq, c.Form.Get("phone_number"), c.Outcome, d, first.Seq)
		}
	}
	if first == nil || first.Seq != workers {
		t.Fatalf("the 429 is not the ledger's call #%d: %+v", workers, first)
	}
	if after != n-workers+1 {
		t.Errorf("%d call starts after the 429, want %d", after, n-workers+1)
	}
}

// TestRunRetryAfterHonouredInFull: one worker's call start is answered
// 429 (the pool's pause) or 503 (the worker's own wait) with a
// Retry-After of 4 minutes, longer than the 2 minutes callrun used to cap
// it at and within pace.max_retry_after (5 minutes by default); the same
// contact is tried again exactly that long after on the run's clock, and
// the next call starts follow at the pace, 20ms apart. The pause is
// logged at once with its cause.
func TestRunRetryAfterHonouredInFull(t *testing.T) {
	for _, tc := range []struct{ status, log string }{
		{"429", "the service answered 429 Too Many Requests (rate_limited: too many requests; retry later): holding every call start for 4m0s"},
		{"503", "the service answered 503 Service Unavailable (service_unavailable: the service is temporarily unavailable); trying it again in 4m0s"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			const n, retryAfter = 3, 4 * time.Minute
			clock := &dtClock{now: time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(50, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
			fault := sandbox.Faults{Share429: 1, RetryAfter: retryAfter}
			if tc.status == "503" {
				fault = sandbox.Faults{Share503: 1, RetryAfter: retryAfter}
			}
			e.srv.SetFaults(fault)
			calls := callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
				defer e.srv.SetFaults(sandbox.Faults{}) // one fault
				return e.client.StartCallForm(ctx, ep, form)
			})
			var logs dtLogs
			e.mustRun(func(o *RunOptions) {
				o.Now, o.Sleep, o.Calls, o.Logf = clock.Now, clock.Sleep, calls, logs.logf
			})
			e.checkPlacedOnce(n)
			ledger := e.srv.Calls()
			if len(ledger) != n+1 || ledger[0].Outcome != tc.status || ledger[1].Form.Get("phone_number") != ledger[0].Form.Get("phone_number") {
				t.Fatalf("ledger %+v: want a %s, then its contact again, then the others", ledger, tc.status)
			}
			for i, want := range []time.Duration{retryAfter, 20 * time.Millisecond, 20 * time.Millisecond} {
				if d := ledger[i+1].ReceivedAt.Sub(ledger[i].ReceivedAt); d < want || d > want+time.Microsecond {
					t.Errorf("call #%d was received %v after call #%d, want %v", ledger[i+1].Seq, d, ledger[i].Seq, want)
				}
			}
			if !logs.has(tc.log) {
				t.Errorf("no log line %q in %q", tc.log, logs.all())
			}
		})
	}
}

// TestRunRetryAfterPastTheBoundEndsTheRun: a 429 with Retry-After: 86400,
// or a 503 with a day in it, is past pace.max_retry_after: the run ends at
// once (ErrCallLater, which the CLI turns into exit 75) saying when the
// service asked to be called again, logs it at once, and leaves every
// contact pending; the next run, once the service answers, places each
// once.
func TestRunRetryAfterPastTheBoundEndsTheRun(t *testing.T) {
	for _, status := range []string{"429", "503"} {
		t.Run(status, func(t *testing.T) {
			const n = 10
			clock := &dtClock{now: time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)}
			fault := sandbox.Faults{Share429: 1, RetryAfter: 24 * time.Hour}
			if status == "503" {
				fault = sandbox.Faults{Share503: 1, RetryAfter: 24 * time.Hour}
			}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now, Faults: fault}, dtCampaign(50, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
			var logs dtLogs
			res, err := e.run(context.Background(), func(o *RunOptions) { o.Now, o.Sleep, o.Logf = clock.Now, clock.Sleep, logs.logf })
			want := "asked to be called again in 24h0m0s, at 2025-03-04T15:00:"
			if !errors.Is(err, ErrCallLater) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "pace.max_retry_after (5m0s)") {
				t.Fatalf("Run = %v, want ErrCallLater saying %q", err, want)
			}
			if !logs.has(want) {
				t.Errorf("not logged at once: %q", logs.all())
			}
			if got := len(e.srv.Calls()); got == 0 || got > 4 || len(e.srv.Placed()) != 0 {
				t.Errorf("%d call starts, %d placed; want one per worker at most, none placed", got, len(e.srv.Placed()))
			}
			if s := e.clockSleptOver(clock, time.Minute); s != nil {
				t.Errorf("the run waited %v", s)
			}
			// The contacts tried are pending: those whose call start got
			// the answer, and those of other workers whose intent was on
			// disk when the run stopped, which are closed as not sent.
			if c := e.state().Counts(); c[store.Pending] < len(e.srv.Calls()) || c[store.Pending] > 4 ||
				c[store.Sent]+c[store.Failed]+c[store.Uncertain] != 0 || res.Sent+res.Failed+res.Uncertain != 0 {
				t.Errorf("journal %v, result %+v, %d call starts: want the contacts tried (one per worker at most) pending, nothing else", c, res, len(e.srv.Calls()))
			}
			e.checkIntentBeforeSend(1)

			e.srv.SetFaults(sandbox.Faults{})
			e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			e.checkPlacedOnce(n)
			e.checkCounts(map[store.Status]int{store.Sent: n})
		})
	}
}

// clockSleptOver returns the sleeps on clock longer than d, nil if none.
func (e *dtEnv) clockSleptOver(clock *dtClock, d time.Duration) []time.Duration {
	var long []time.Duration
	for _, s := range clock.Sleeps() {
		if s > d {
			long = append(long, s)
		}
	}
	return long
}

// dtLogs collects a run's log lines (RunOptions.Logf).
type dtLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *dtLogs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *dtLogs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// has reports whether a line holds s.
func (l *dtLogs) has(s string) bool {
	for _, line := range l.all() {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// TestRunPacesCallStarts: at 50 a second with a burst of 1, call starts
// come 20ms apart on the run's clock (the sandbox's ledger runs on it
// too): with one worker exactly, and with four, never more than one in
// each 20ms from the run's start on.
func TestRunPacesCallStarts(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			const n, interval = 12, 20 * time.Millisecond
			start := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
			clock := &dtClock{now: start}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, dtCampaign(50, workers, ""), map[string]string{"leads.csv": dtSheet(n)})
			e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			e.checkPlacedOnce(n)
			ledger := e.srv.Calls()
			for k, c := range ledger {
				earliest := start.Add(time.Duration(k) * interval)
				if c.ReceivedAt.Before(earliest) {
					t.Errorf("call #%d received at +%v, before +%v: faster than 50 a second", c.Seq, c.ReceivedAt.Sub(start), earliest.Sub(start))
				}
				if workers == 1 && c.ReceivedAt.After(earliest.Add(time.Microsecond)) {
					t.Errorf("call #%d received at +%v, want +%v", c.Seq, c.ReceivedAt.Sub(start), earliest.Sub(start))
				}
			}
		})
	}
}

func TestRun503sAreRetried(t *testing.T) {
	const n = 20
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share503: 0.5, Seed: 3}},
		dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Now()}
	res := e.mustRun(func(o *RunOptions) { o.MaxAttempts, o.Now, o.Sleep = 60, clock.Now, clock.Sleep })
	if res.Sent != n || res.Pending != 0 {
		t.Errorf("result %+v", res)
	}
	e.checkPlacedOnce(n)
	if e.srv.Stats().Faults.Injected503 == 0 {
		t.Error("no 503 was injected")
	}
	if got, want := len(e.srv.Calls()), n+e.srv.Stats().Faults.Injected503; got != want {
		t.Errorf("%d call starts received, want %d (one per contact and one per 503)", got, want)
	}
	e.checkCounts(map[store.Status]int{store.Sent: n})
}

// TestRun503sExhaustedLeavePending: a contact that got only 503s is
// provably unsent: it stays pending, and the next run sends it.
func TestRun503sExhaustedLeavePending(t *testing.T) {
	const n = 3
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share503: 1}},
		dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Now()}
	res := e.mustRun(func(o *RunOptions) { o.MaxAttempts, o.Now, o.Sleep = 3, clock.Now, clock.Sleep })
	if res.Pending != n || res.Started != n || res.Sent != 0 {
		t.Errorf("result %+v", res)
	}
	if got := len(e.srv.Calls()); got != 3*n || len(e.srv.Placed()) != 0 {
		t.Errorf("%d call starts received, %d placed; want %d and 0", got, len(e.srv.Placed()), 3*n)
	}
	e.checkCounts(map[store.Status]int{store.Pending: n})
	if en, _ := e.entry(dtPhone(0)); en.HTTP != 503 || en.Attempts != 3 || !strings.Contains(en.Reason, "503") {
		t.Errorf("journal entry %+v", en)
	}

	e.srv.SetFaults(sandbox.Faults{})
	res = e.mustRun(nil)
	if res.Sent != n {
		t.Errorf("second run: %+v", res)
	}
	e.checkPlacedOnce(n)
	if en, _ := e.entry(dtPhone(0)); en.Attempts != 4 {
		t.Errorf("attempts %d, want 4 (three 503s, then sent)", en.Attempts)
	}
}

// TestRun500AfterPlacingIsUncertain: a 500 may come after the call was
// placed (the sandbox does place it), so the contact is uncertain and
// only a person, with RetryUncertain, sends it again.
func TestRun500AfterPlacingIsUncertain(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRun500AfterPlacingIsUncertain(t, kind) })
	}
}

func testRun500AfterPlacingIsUncertain(t *testing.T, kind string) {
	const n = 5
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share500: 1}},
		dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.use(kind)
	res := e.mustRun(nil)
	if res.Uncertain != n || res.Started != n || res.Sent+res.Pending != 0 {
		t.Errorf("result %+v", res)
	}
	e.checkPlacedOnce(n)
	if got := len(e.srv.Calls()); got != n {
		t.Errorf("%d call starts for %d contacts: an uncertain one was retried", got, n)
	}
	e.checkCounts(map[store.Status]int{store.Uncertain: n})
	if en, _ := e.entry(dtPhone(0)); en.HTTP != 500 || !strings.Contains(en.Reason, "may have started") || !strings.Contains(en.Body, "internal_error") {
		t.Errorf("journal entry %+v", en)
	}

	res = e.mustRun(nil) // uncertain is never sent again automatically
	if res.Started != 0 || res.Skipped != n || len(e.srv.Calls()) != n {
		t.Errorf("second run: %+v, %d call starts", res, len(e.srv.Calls()))
	}

	// A person decided: the one deliberate double call.
	e.srv.SetFaults(sandbox.Faults{})
	res = e.mustRun(func(o *RunOptions) { o.RetryUncertain = true })
	if res.Sent != n || res.Started != n {
		t.Errorf("retry-uncertain run: %+v", res)
	}
	placed := dtPlaced(e.srv)
	for i := range n {
		if placed[dtPhone(i)] != 2 {
			t.Errorf("%s placed %d times, want 2", dtPhone(i), placed[dtPhone(i)])
		}
		if en, _ := e.entry(dtPhone(i)); en.Status != store.Sent || en.Attempts != 2 {
			t.Errorf("%s: %s after %d attempts", dtPhone(i), en.Status, en.Attempts)
		}
	}
	e.checkIntentBeforeSend(2)
}

// TestRunDroppedConnectionIsUncertain: a connection closed after the
// request was written leaves the client not knowing, whether the sandbox
// closed it after placing the call or before: both are uncertain and
// neither is sent again.
func TestRunDroppedConnectionIsUncertain(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunDroppedConnectionIsUncertain(t, kind) })
	}
}

func testRunDroppedConnectionIsUncertain(t *testing.T, kind string) {
	for _, tc := range []struct {
		name   string
		faults sandbox.Faults
		placed int
	}{
		{"after placing", sandbox.Faults{ShareDrop: 1}, 1},
		{"before placing", sandbox.Faults{ShareDropBefore: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 4
			e := newDtEnv(t, sandbox.Options{Faults: tc.faults}, dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
			e.use(kind)
			res := e.mustRun(nil)
			if res.Uncertain != n || res.Sent+res.Pending != 0 {
				t.Errorf("result %+v", res)
			}
			if got := len(e.srv.Calls()); got != n {
				t.Errorf("%d call starts for %d contacts: a dropped one was sent again", got, n)
			}
			received, placed := dtReceived(e.srv), dtPlaced(e.srv)
			for i := range n {
				if received[dtPhone(i)] != 1 || placed[dtPhone(i)] != tc.placed {
					t.Errorf("%s: received %d, placed %d", dtPhone(i), received[dtPhone(i)], placed[dtPhone(i)])
				}
			}
			e.checkIntentBeforeSend(1)
			e.checkCounts(map[store.Status]int{store.Uncertain: n})
			if en, _ := e.entry(dtPhone(0)); en.HTTP != 0 || !strings.Contains(en.Reason, "no answer after the request was sent") {
				t.Errorf("journal entry %+v", en)
			}

			e.srv.SetFaults(sandbox.Faults{})
			if res := e.mustRun(nil); res.Started != 0 || len(e.srv.Calls()) != n {
				t.Errorf("second run: %+v", res)
			}
		})
	}
}

// TestRunServerClosingIdleConnectionsLosesNothing: a service that closes
// kept-alive connections soon after answering (an idle timeout shorter
// than the time between a worker's calls) must not make a call start
// uncertain: the client finds the closed connection before writing to it
// and dials a new one. Every contact is placed once and sent.
func TestRunServerClosingIdleConnectionsLosesNothing(t *testing.T) {
	const n = 12
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	srv.Config.IdleTimeout = 5 * time.Millisecond
	srv, client := dtStartSandbox(t, srv)
	// 10 a second over 2 workers: each connection idles about 200ms
	// between calls, forty times the server's idle timeout, so that the
	// server's close has reached the client even on a loaded machine (at
	// 40 a second, 50ms, it once had not: one of 10 runs on a machine
	// loaded fifteen-fold left a call start uncertain).
	e := dtPrepare(t, srv, client, t.TempDir(), dtCampaign(10, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	res := e.mustRun(nil)
	if res.Sent != n || res.Uncertain+res.Failed+res.Pending != 0 {
		t.Errorf("result %+v, want all %d sent", res, n)
	}
	e.checkPlacedOnce(n)
	if got := len(e.srv.Calls()); got != n {
		t.Errorf("the sandbox received %d call starts for %d contacts", got, n)
	}
	e.checkCounts(map[store.Status]int{store.Sent: n})
}

// TestRunTimeoutIsUncertain: a call start that got no answer before the
// request timeout had been written: the service may be placing it. It is
// uncertain and not sent again.
func TestRunTimeoutIsUncertain(t *testing.T) {
	const n = 3
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: 5 * time.Second}},
		dtCampaign(1000, 3, ""), map[string]string{"leads.csv": dtSheet(n)})
	res := e.mustRun(func(o *RunOptions) { o.RequestTimeout = 100 * time.Millisecond })
	if res.Uncertain != n || res.Sent+res.Pending != 0 {
		t.Errorf("result %+v", res)
	}
	received := dtReceived(e.srv)
	for i := range n {
		if received[dtPhone(i)] != 1 {
			t.Errorf("%s received %d times, want 1", dtPhone(i), received[dtPhone(i)])
		}
	}
	e.checkCounts(map[store.Status]int{store.Uncertain: n})
	if en, _ := e.entry(dtPhone(0)); !strings.Contains(en.Reason, "no answer after the request was sent") {
		t.Errorf("journal entry %+v", en)
	}
	e.srv.SetFaults(sandbox.Faults{})
	if res := e.mustRun(nil); res.Started != 0 || len(e.srv.Calls()) != n {
		t.Errorf("second run: %+v, %d call starts", res, len(e.srv.Calls()))
	}
	e.checkIntentBeforeSend(1)
}

// TestRunDialErrorsAreRetried: a call start that could not connect never
// left this machine: it is tried again, after a backoff on the run's clock
// that doubles from RetryPause, with jitter (here until the attempts run
// out, leaving it pending), and the next run sends it.
func TestRunDialErrorsAreRetried(t *testing.T) {
	const n = 3
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 3, ""), map[string]string{"leads.csv": dtSheet(n)})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	live := e.eps
	dead := *live[0]
	dead.URL = strings.Replace(dead.URL, strings.TrimPrefix(e.srv.URL, "http://"), closed, 1)
	e.eps = []*apiclient.CallEndpoint{&dead}
	clock := &dtClock{now: time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)}
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.MaxAttempts, o.RetryPause, o.MaxRetryAfter = 3, time.Second, time.Minute
	})
	if res.Pending != n || res.Uncertain+res.Sent != 0 {
		t.Errorf("result %+v", res)
	}
	// Each contact waited twice: 1s, then 2s, each ±20%.
	var first, second int
	for _, d := range clock.SleepsOver(t, 1000, 3) {
		switch {
		case d >= 800*time.Millisecond && d <= 1200*time.Millisecond:
			first++
		case d >= 1600*time.Millisecond && d <= 2400*time.Millisecond:
			second++
		default:
			t.Errorf("backoff %v, want 1s or 2s ±20%%", d)
		}
	}
	if first != n || second != n {
		t.Errorf("backoffs %v: want %d of 1s and %d of 2s (±20%%)", clock.SleepsOver(t, 1000, 3), n, n)
	}
	if len(e.srv.Calls()) != 0 {
		t.Errorf("the sandbox received %d call starts", len(e.srv.Calls()))
	}
	if en, _ := e.entry(dtPhone(0)); en.Status != store.Pending || en.Attempts != 3 || !strings.Contains(en.Reason, "never left this machine") {
		t.Errorf("journal entry %+v", en)
	}

	e.eps = live
	if res := e.mustRun(nil); res.Sent != n {
		t.Errorf("second run: %+v", res)
	}
	e.checkPlacedOnce(n)
}

// TestRunRefusedIsFailed: the sandbox refuses calls to a pending agent
// with 409. Failed contacts are not sent again, except with RetryFailed.
func TestRunRefusedIsFailed(t *testing.T) {
	const n = 4
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	id := e.agents[0].AgentID
	e.srv.SetAgentStatus(id, "pending") // after WaitReady: the service changed its mind
	res := e.mustRun(nil)
	if res.Failed != n || res.Started != n || res.Sent+res.Uncertain+res.Pending != 0 {
		t.Errorf("result %+v", res)
	}
	if got := len(e.srv.Calls()); got != n || len(e.srv.Placed()) != 0 {
		t.Errorf("%d call starts, %d placed; want %d and 0", got, len(e.srv.Placed()), n)
	}
	e.checkCounts(map[store.Status]int{store.Failed: n})
	if en, _ := e.entry(dtPhone(0)); en.HTTP != 409 || en.Reason != "the service refused the call" || !strings.Contains(en.Body, "agent_not_active") {
		t.Errorf("journal entry %+v", en)
	}

	res = e.mustRun(nil)
	if res.Started != 0 || res.Skipped != n || len(e.srv.Calls()) != n {
		t.Errorf("second run: %+v", res)
	}

	e.srv.SetAgentStatus(id, "active")
	res = e.mustRun(func(o *RunOptions) { o.RetryFailed = true })
	if res.Sent != n {
		t.Errorf("retry-failed run: %+v", res)
	}
	e.checkPlacedOnce(n)
	e.checkCounts(map[store.Status]int{store.Sent: n})
}

// TestRunTokensExpireMidRun: access tokens live one second and refresh
// tokens rotate; the run outlives several tokens, and every 60 contacts
// the sandbox also forgets every access token at once, so that the
// workers get 401s together and must share one refresh. Every contact is
// still placed exactly once.
func TestRunTokensExpireMidRun(t *testing.T) {
	const n = 300
	e := newDtEnv(t, sandbox.Options{AccessTokenLifetime: time.Second},
		dtCampaign(120, 8, ""), map[string]string{"leads.csv": dtSheet(n)})
	var settled atomic.Int32
	res := e.mustRun(func(o *RunOptions) {
		o.Settled = func(store.Status) {
			if settled.Add(1)%60 == 0 {
				e.srv.ExpireAccessTokens()
			}
		}
	})
	if res.Sent != n {
		t.Errorf("result %+v", res)
	}
	e.checkPlacedOnce(n)
	st := e.srv.Stats()
	if st.Refreshes < 2 {
		t.Errorf("%d refreshes; the run should have outlived several tokens", st.Refreshes)
	}
	if st.Unauthorized == 0 {
		t.Error("no call start was answered 401 after the tokens were expired")
	}
	if st.TokenErrors != 0 {
		t.Errorf("%d failed token requests: a rotated refresh token was used twice?", st.TokenErrors)
	}
	e.checkCounts(map[store.Status]int{store.Sent: n})
}

// dtClock is a fake clock for RunOptions.Now and Sleep (and the
// sandbox's Now). Sleep returns at once, with ctx.Err(), having moved the
// clock to the sleeper's wake-up time, the clock's time when Sleep was
// called plus d, unless it is already later: sleeps of several workers
// overlap, as on a real clock.
type dtClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	// hold, if set, is called by Sleep before the clock moves, and may
	// block: a test holds a sleeper there while other workers go on at the
	// time the sleep began.
	hold func(d time.Duration)
}

func (c *dtClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *dtClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	wake := c.now.Add(d)
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		hold(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if wake.After(c.now) {
		c.now = wake
	}
	return ctx.Err()
}

func (c *dtClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// SleepsOver returns the sleeps longer than pacing: those over max, the
// longest a worker waits for the rate limiter. It fails the test if a
// shorter sleep is not a possible wait for the limiter: longer than one
// interval per worker, which would mean the limiter, asked at the clock's
// time, gave out turns faster than the pace.
func (c *dtClock) SleepsOver(t *testing.T, perSecond float64, concurrency int) []time.Duration {
	t.Helper()
	max := time.Duration(float64(concurrency) * float64(time.Second) / perSecond)
	var long []time.Duration
	for _, d := range c.Sleeps() {
		if d > max {
			long = append(long, d)
		} else if d <= 0 {
			t.Errorf("slept %v", d)
		}
	}
	return long
}

func dtNewYork(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	return loc
}

const dtWeekdayHours = `hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: "09:00", end: "17:00"}
`

// TestRunWaitsForCallingHours: started on a Saturday, the run sleeps until
// Monday 09:00 in the campaign's zone, then calls.
func TestRunWaitsForCallingHours(t *testing.T) {
	const n = 3
	ny := dtNewYork(t)
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, dtWeekdayHours), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Date(2025, 1, 4, 12, 0, 0, 0, ny)} // Saturday noon
	monday := time.Date(2025, 1, 6, 9, 0, 0, 0, ny)
	var paused []string
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Until = monday.Add(time.Hour) // the window opens before Until: wait
		o.Paused = func(cause string, until time.Time) { paused = append(paused, cause+" until "+until.String()) }
	})
	if want := PauseHours + " until " + monday.String(); len(paused) != 1 || paused[0] != want {
		t.Errorf("Paused told %q, want once %q", paused, want)
	}
	if s := clock.SleepsOver(t, 1000, 2); len(s) != 1 || s[0] != monday.Sub(time.Date(2025, 1, 4, 12, 0, 0, 0, ny)) {
		t.Errorf("slept %v besides pacing, want once for 45h (all sleeps: %v)", s, clock.Sleeps())
	}
	if res.Sent != n {
		t.Errorf("result %+v", res)
	}
	e.checkPlacedOnce(n)
	// The first attempt is at the opening, give or take the other
	// worker's turns at the limiter, which runs on the same clock: the n
	// call starts' turns end 1ms apart from the opening on.
	last := monday.Add((n - 1) * time.Millisecond)
	if en, _ := e.entry(dtPhone(0)); en.FirstAt.Before(monday) || en.FirstAt.After(last) {
		t.Errorf("first attempt at %v, want %v to %v", en.FirstAt, monday, last)
	}
}

// TestRunRetryAfterHoursIsNotSent: a contact whose call start got a 503
// just before the window closed is not retried after it closed: the
// retry would phone someone outside calling hours. It is left pending.
func TestRunRetryAfterHoursIsNotSent(t *testing.T) {
	ny := dtNewYork(t)
	clock := &dtClock{now: time.Date(2025, 1, 6, 16, 59, 0, 0, ny)} // Monday, a minute before closing
	var srvp atomic.Pointer[sandbox.Server]
	sb := sandbox.Options{
		Faults: sandbox.Faults{Share503: 1},
		Logf: func(format string, args ...any) {
			if s := srvp.Load(); s != nil && strings.HasSuffix(fmt.Sprintf(format, args...), "-> 503") {
				clock.mu.Lock()
				clock.now = clock.now.Add(2 * time.Minute) // time passes during the Retry-After
				clock.mu.Unlock()
				s.SetFaults(sandbox.Faults{})
			}
		},
	}
	srv, client := dtSandbox(t, sb)
	srvp.Store(srv)
	e := dtPrepare(t, srv, client, t.TempDir(), dtCampaign(1000, 1, dtWeekdayHours), map[string]string{"leads.csv": dtSheet(1)})
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Until = clock.Now().Add(time.Hour) // do not wait for Tuesday
	})
	if len(srv.Placed()) != 0 || len(srv.Calls()) != 1 {
		t.Errorf("%d call starts, %d placed after the window closed at 17:00", len(srv.Calls()), len(srv.Placed()))
	}
	if res.Pending != 1 || res.Sent != 0 {
		t.Errorf("result %+v", res)
	}
	e.checkCounts(map[store.Status]int{store.Pending: 1})
}

// TestRunOutsideHoursUntil: with Until before the window opens, the run
// stops at once with ErrOutsideHours and sends nothing.
func TestRunOutsideHoursUntil(t *testing.T) {
	const n = 3
	ny := dtNewYork(t)
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, dtWeekdayHours), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Date(2025, 1, 4, 12, 0, 0, 0, ny)}
	res, err := e.run(context.Background(), func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Until = time.Date(2025, 1, 5, 12, 0, 0, 0, ny) // Sunday: the window is still shut
	})
	if !errors.Is(err, ErrOutsideHours) {
		t.Fatalf("err = %v, want ErrOutsideHours", err)
	}
	if res.Started != 0 || len(clock.Sleeps()) != 0 {
		t.Errorf("result %+v, slept %v", res, clock.Sleeps())
	}
	if len(e.srv.Calls()) != 0 || e.state().Len() != 0 {
		t.Errorf("%d call starts, %d contacts in the journal; want none", len(e.srv.Calls()), e.state().Len())
	}
}

// TestRunContactTimezones: with `timezone: contact` nobody waits; a
// contact is called when the window is open in every zone of its number
// and in its zone column, else left pending for a later run.
func TestRunContactTimezones(t *testing.T) {
	sheet := `Phone,First Name,TZ
+12122010001,New York,
+13102010002,Los Angeles,
+442079460003,London,
+18002010004,Toll free,
+13102010005,LA number in New York,America/New_York
`
	yaml := strings.Replace(dtCampaign(1000, 2, `hours: {timezone: contact, days: [mon, tue, wed, thu, fri], start: "09:00", end: "17:00"}
countries: [US, GB]
`), "fields: {phone_number: Phone, first_name: First Name}", "fields: {phone_number: Phone, first_name: First Name}\n    timezone_column: TZ", 1)
	e := newDtEnv(t, sandbox.Options{}, yaml, map[string]string{"leads.csv": sheet})
	// Wednesday 15:00 UTC: 10:00 in New York, 07:00 in Los Angeles, 15:00
	// in London; a US toll-free number may ring anywhere in the US, from
	// New York (10:00) to Hawaii (05:00). The LA number whose column says
	// New York waits for both.
	clock := &dtClock{now: time.Date(2025, 1, 8, 15, 0, 0, 0, time.UTC)}
	var pending atomic.Int32
	res := e.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
		o.Settled = func(s store.Status) {
			if s == store.Pending {
				pending.Add(1)
			}
		}
	})
	if res.Sent != 2 || res.Deferred != 3 || res.Pending != 3 || pending.Load() != 3 {
		t.Errorf("result %+v (%d settled pending)", res, pending.Load())
	}
	if s := clock.SleepsOver(t, 1000, 2); len(s) != 0 {
		t.Errorf("slept %v besides pacing; per-contact zones never wait", s)
	}
	placed := dtPlaced(e.srv)
	for phone, want := range map[string]int{"+12122010001": 1, "+13102010002": 0, "+442079460003": 1, "+18002010004": 0, "+13102010005": 0} {
		if placed[phone] != want {
			t.Errorf("%s placed %d times, want %d", phone, placed[phone], want)
		}
	}
	if _, ok := e.entry("+13102010002"); ok {
		t.Error("a deferred contact has a journal entry")
	}

	// Three hours later Los Angeles is open (10:00), London is closed; in
	// Hawaii it is 08:00, before hours: start.
	clock.now = clock.now.Add(3 * time.Hour)
	res = e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	if res.Sent != 2 || res.Deferred != 1 || res.Skipped != 2 {
		t.Errorf("second run: %+v", res)
	}
	if placed := dtPlaced(e.srv); placed["+13102010002"] != 1 || placed["+13102010005"] != 1 || placed["+18002010004"] != 0 || len(e.srv.Calls()) != 4 {
		t.Errorf("after the second run: placed %v", placed)
	}
	e.checkIntentBeforeSend(1)
}

func TestRunLimit(t *testing.T) {
	const n = 8
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	res := e.mustRun(func(o *RunOptions) { o.Limit = 3 })
	if res.Started != 3 || res.Sent != 3 {
		t.Errorf("result %+v", res)
	}
	if got := len(e.srv.Calls()); got != 3 || len(e.srv.Placed()) != 3 {
		t.Errorf("%d call starts with limit 3", got)
	}
	placed := dtPlaced(e.srv)
	for i := range 3 { // the first three in sheet order
		if placed[dtPhone(i)] != 1 {
			t.Errorf("%s not placed", dtPhone(i))
		}
	}
	e.checkCounts(map[store.Status]int{store.Sent: 3})

	res = e.mustRun(nil)
	if res.Started != n-3 || res.Skipped != 3 {
		t.Errorf("second run: %+v", res)
	}
	e.checkPlacedOnce(n)
}

// TestRunResumesOverAResortedSheet: a contact's identity is its number,
// not its row: a sheet exported again in another order, with the numbers
// written differently and new rows added, resumes without calling anyone
// twice, and the report follows the new sheet.
func TestRunResumesOverAResortedSheet(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunResumesOverAResortedSheet(t, kind) })
	}
}

func testRunResumesOverAResortedSheet(t *testing.T, kind string) {
	first := `Phone,First Name
+12125550100,Ada
+12125550101,Bob
+12125550102,Cy
+12125550103,Di
+12125550104,Ed
`
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 2, ""), map[string]string{"leads.csv": first})
	e.use(kind)
	t1 := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	res := e.mustRun(func(o *RunOptions) { o.Limit, o.Now = 3, func() time.Time { return t1 } })
	if res.Sent != 3 {
		t.Fatalf("first run: %+v", res)
	}

	resorted := `Phone,First Name
+12125550104,Ed
212.555.0103,Di
(212) 555-0100,Ada
+12125550102,Cy
1-212-555-0101,Bob
+12125550105,Fay
+1 212 555 0106,Gus
`
	dtWrite(t, filepath.Join(e.dir, "leads.csv"), resorted)
	e.reload()
	t2 := t1.Add(time.Hour)
	res = e.mustRun(func(o *RunOptions) { o.Now = func() time.Time { return t2 } })
	if res.Started != 4 || res.Sent != 4 || res.Skipped != 3 {
		t.Errorf("second run: %+v", res)
	}
	placed := dtPlaced(e.srv)
	for i := range 7 {
		if p := fmt.Sprintf("+1212555%04d", 100+i); placed[p] != 1 {
			t.Errorf("%s placed %d times, want 1", p, placed[p])
		}
	}
	if len(e.srv.Calls()) != 7 {
		t.Errorf("%d call starts for 7 numbers", len(e.srv.Calls()))
	}
	e.checkIntentBeforeSend(1)

	// The report: one row per row of the new sheet, in its order, each
	// with its own first attempt.
	st := e.state()
	sum := &report.Summary{Campaign: e.f.Name}
	if err := WriteReport(context.Background(), e.f, st, e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	rows := dtReadCSV(t, filepath.Join(e.dir, ReportCSV))
	wantFirst := map[string]time.Time{"Ed": t2, "Di": t2, "Ada": t1, "Cy": t1, "Bob": t1, "Fay": t2, "Gus": t2}
	if len(rows) != 8 {
		t.Fatalf("report has %d lines, want a header and 7 rows", len(rows))
	}
	for i, r := range rows[1:] {
		name, row, status, at := r["first_name"], r["row"], r["status"], r["first_attempt_at"]
		if row != fmt.Sprint(i+2) || status != "sent" || at != report.Timestamp(wantFirst[name]) {
			t.Errorf("report row %s (%s): status %s, first attempt %s; want row %d, sent, %s", row, name, status, at, i+2, report.Timestamp(wantFirst[name]))
		}
	}
	if sum.Counts["sent"] != 7 || sum.Rows != 7 {
		t.Errorf("summary counts %v", sum.Counts)
	}
}

// TestRunStopsWhenTheJournalFails: a call start whose intent cannot be
// written is not sent.
func TestRunStopsWhenTheJournalFails(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunStopsWhenTheJournalFails(t, kind) })
	}
}

func testRunStopsWhenTheJournalFails(t *testing.T, kind string) {
	t.Run("closed before the run", func(t *testing.T) {
		e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(5)})
		e.use(kind)
		e.journalClosed.Store(true)
		_, err := e.run(context.Background(), func(o *RunOptions) {
			if err := o.Journal.Close(); err != nil {
				t.Fatal(err)
			}
		})
		if err == nil || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("err = %v", err)
		}
		if len(e.srv.Calls()) != 0 {
			t.Errorf("%d call starts without a journal", len(e.srv.Calls()))
		}
	})
	t.Run("fails mid-run", func(t *testing.T) {
		const n = 40
		e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: 5 * time.Millisecond}},
			dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
		e.use(kind)
		e.journalClosed.Store(true)
		var settled atomic.Int32
		_, err := e.run(context.Background(), func(o *RunOptions) {
			j := o.Journal
			o.Settled = func(store.Status) {
				if settled.Add(1) == 5 {
					j.Close() // every Append from now on fails
				}
			}
		})
		if err == nil || !strings.Contains(err.Error(), "journal") {
			t.Fatalf("err = %v", err)
		}
		calls := len(e.srv.Calls())
		if calls < 5 || calls == n {
			t.Errorf("%d call starts: the run did not stop when the journal failed", calls)
		}
		// The heart of the promise: nothing reached the service whose
		// intent is not on disk.
		e.checkIntentBeforeSend(1)
		if got := len(e.srv.Calls()); got > len(e.records()) {
			t.Errorf("%d call starts, %d journal records", got, len(e.records()))
		}
	})
}

// TestRunInterruptedFinishesInFlight: a cancelled context (SIGINT) stops
// new call starts, lets those under way finish with their outcome
// recorded, and leaves the rest pending for the next run.
func TestRunInterruptedFinishesInFlight(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunInterruptedFinishesInFlight(t, kind) })
	}
}

func testRunInterruptedFinishesInFlight(t *testing.T, kind string) {
	const n = 30
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: 30 * time.Millisecond}},
		dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	e.use(kind)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var settled atomic.Int32
	res, err := e.run(ctx, func(o *RunOptions) {
		o.Settled = func(store.Status) {
			if settled.Add(1) == 3 {
				cancel()
			}
		}
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	counts := e.state().Counts()
	if counts[store.Uncertain] != 0 || counts[store.Failed] != 0 {
		t.Errorf("journal after the interrupt: %v; an in-flight call was cut off", counts)
	}
	sent := counts[store.Sent]
	if sent < 3 || sent == n || len(e.srv.Placed()) != sent || res.Sent != sent {
		t.Errorf("%d sent (run says %d), %d placed, of %d", sent, res.Sent, len(e.srv.Placed()), n)
	}
	e.checkIntentBeforeSend(1)

	res = e.mustRun(nil)
	if res.Started != n-sent {
		t.Errorf("resumed run started %d, want %d", res.Started, n-sent)
	}
	e.checkPlacedOnce(n)
}

// TestRunInterruptedDuringRetries: a signal while the workers wait out a
// 503's Retry-After ends the run; the contacts are provably unsent and
// stay pending, and each is reported to Settled as pending, so that a
// progress display adds up with the result.
func TestRunInterruptedDuringRetries(t *testing.T) {
	const n = 4
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Share503: 1}},
		dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(n)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // once every contact has had its 503, interrupt
		for len(e.srv.Calls()) < n && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var pending atomic.Int32
	res, err := e.run(ctx, func(o *RunOptions) {
		o.MaxAttempts = 100
		o.MaxRetryAfter = 5 * time.Second // honour the sandbox's Retry-After: 1
		o.Settled = func(s store.Status) {
			if s == store.Pending {
				pending.Add(1)
			}
		}
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if res.Pending != n || pending.Load() != n {
		t.Errorf("result %+v; Settled saw %d pending, want %d", res, pending.Load(), n)
	}
	if got := len(e.srv.Calls()); got != n || len(e.srv.Placed()) != 0 {
		t.Errorf("%d call starts, %d placed; want %d and 0", got, len(e.srv.Placed()), n)
	}
	e.checkCounts(map[store.Status]int{store.Pending: n})
	e.checkIntentBeforeSend(0)
}

// TestRunCampaignDedupeAcrossAgentsResumes: with dedupe: campaign a number
// is called once whichever agent's sheet holds it. A number called through
// Alpha is not called again when, in a later run, a sheet for Beta holding
// it comes first.
func TestRunCampaignDedupeAcrossAgentsResumes(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunCampaignDedupeAcrossAgentsResumes(t, kind) })
	}
}

func testRunCampaignDedupeAcrossAgentsResumes(t *testing.T, kind string) {
	twoAgents := func(sheets string) string {
		return `name: dispatch-test
agents:
  - {name: Alpha, prompt: Say hello.}
  - {name: Beta, prompt: Say hi.}
sheets:
` + sheets + `region: US
pace: {per_second: 1000, burst: 1, concurrency: 2}
unsafe_ignore_called_person_hours: true # runs at any hour
`
	}
	alphaSheet := "  - {file: a.csv, agent: Alpha, fields: {phone_number: Phone}}\n"
	betaSheet := "  - {file: b.csv, agent: Beta, fields: {phone_number: Phone}}\n"
	e := newDtEnv(t, sandbox.Options{}, twoAgents(alphaSheet), map[string]string{
		"a.csv": "Phone\n+12125550100\n",
		"b.csv": "Phone\n(212) 555-0100\n+12125550101\n",
	})
	e.use(kind)
	if res := e.mustRun(nil); res.Sent != 1 {
		t.Fatalf("first run: %+v", res)
	}
	dtWrite(t, e.f.Source, twoAgents(betaSheet+alphaSheet))
	e.reload()
	res := e.mustRun(nil)
	if res.Sent != 1 || res.Skipped != 1 {
		t.Errorf("second run: %+v, want the new number sent and the called one skipped", res)
	}
	for phone, n := range dtPlaced(e.srv) {
		if n != 1 {
			t.Errorf("%s placed %d times", phone, n)
		}
	}
	st := e.state()
	sum := &report.Summary{Campaign: e.f.Name}
	if err := WriteReport(context.Background(), e.f, st, e.sup, nil, e.dir, sum); err != nil {
		t.Fatal(err)
	}
	if sum.Counts["sent"] != 2 || sum.Counts["duplicate"] != 1 || sum.Counts["pending"] != 0 {
		t.Errorf("report counts %v", sum.Counts)
	}
}

// TestRunStopsWhenTheLoginIsRefused: the service drops the access token and
// the refresh token is revoked. The first call start is answered 401 and
// cannot be renewed: the run stops with the AuthError that says to log in
// again, nobody is called, and nothing is uncertain.
func TestRunStopsWhenTheLoginIsRefused(t *testing.T) {
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 4, ""), map[string]string{"leads.csv": dtSheet(20)})
	e.srv.ExpireAccessTokens()
	e.srv.RevokeRefreshTokens()
	res, err := e.run(context.Background(), nil)
	var ae *apiclient.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Run: %v, want an AuthError", err)
	}
	if res.Sent != 0 || res.Uncertain != 0 || len(dtPlaced(e.srv)) != 0 {
		t.Errorf("result %+v, %d placed", res, len(dtPlaced(e.srv)))
	}
	st := e.state()
	if n := st.Counts()[store.Uncertain]; n != 0 {
		t.Errorf("%d contacts uncertain after a refused login", n)
	}
}

// TestRunInterruptLeavesNothingUncertain: when a signal comes while calls
// are in flight, the workers let those finish and start no others; a
// contact whose intent was on disk but whose call had not started gets a
// skipped outcome, so it reads pending (no attempt), not uncertain, and
// the next run calls everyone once.
func TestRunInterruptLeavesNothingUncertain(t *testing.T) {
	const n = 20
	e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: 300 * time.Millisecond}},
		dtCampaign(1000, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := e.run(ctx, func(o *RunOptions) {
		o.Settled = func(store.Status) { cancel() }
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	received := dtReceived(e.srv)
	var skipped []string
	for _, r := range e.records() {
		if r.Type == store.TypeOutcome && r.Status == store.OutcomeSkipped {
			skipped = append(skipped, r.Phone)
		}
	}
	for _, phone := range skipped {
		if received[phone] != 0 {
			t.Errorf("%s has a skipped outcome but the sandbox received it", phone)
		}
		en, ok := e.entry(phone)
		if !ok || en.Status != store.Pending || en.Attempts != 0 {
			t.Errorf("%s after its intent was skipped: %+v, %v; want pending with 0 attempts", phone, en, ok)
		}
	}
	if counts := e.state().Counts(); counts[store.Uncertain] != 0 {
		t.Errorf("journal after the interrupt: %v, want nothing uncertain", counts)
	}
	if res.Pending < len(skipped) {
		t.Errorf("run counted %d pending, fewer than the %d skipped", res.Pending, len(skipped))
	}
	e.checkIntentBeforeSend(1)
	if len(received) == n {
		t.Errorf("every contact was called: the signal stopped nothing")
	}
	t.Logf("%d calls answered, %d intents skipped", len(received), len(skipped))

	e.mustRun(nil)
	e.checkPlacedOnce(n)
}

// frozenCalls is a CallStarter that passes the first calls through and
// then holds every later one until released: a process frozen mid-run,
// whose journal on disk is what a kill -9 at that moment would leave.
type frozenCalls struct {
	next    CallStarter
	pass    int32 // calls let through before freezing
	started atomic.Int32
	held    chan struct{} // a call is held
	release chan struct{}
}

func (f *frozenCalls) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if f.started.Add(1) > f.pass {
		select {
		case f.held <- struct{}{}:
		default:
		}
		<-f.release
	}
	return f.next.StartCallForm(ctx, ep, form)
}

// crashWhileFrozen runs e with calls that freeze after the first pass,
// waits 200ms for every worker to reach a frozen call (none can go
// further), and copies the journal as a crash at that moment would leave
// it; then it lets the calls go, waits for the run, and returns the state
// of that copy, which the caller closes. tune sets further options.
func crashWhileFrozen(t *testing.T, e *dtEnv, pass int32, tune func(*RunOptions)) *store.State {
	t.Helper()
	calls := &frozenCalls{next: e.client, pass: pass, held: make(chan struct{}, 1), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := e.run(context.Background(), func(o *RunOptions) { o.Calls = calls; tune(o) })
		done <- err
	}()
	select {
	case <-calls.held:
	case err := <-done:
		t.Fatalf("the run ended without reaching the frozen calls: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	data, err := os.ReadFile(e.journal)
	if err != nil {
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "journal.jsonl")
	dtWrite(t, crash, string(data))
	close(calls.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := store.ReadState(crash)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRunCrashLeavesBoundedUncertain: whatever moment a crash comes, the
// journal holds at most Concurrency intents without an outcome (they
// would read uncertain): the calls in flight, against a fast service and
// a slow one alike.
//
// It copies the journal file as a crash would leave it; the PostgreSQL
// store's crash bound is TestKillLeavesOnlyTheCallsInFlightUncertain's,
// which kills the real binary.
func TestRunCrashLeavesBoundedUncertain(t *testing.T) {
	const n, concurrency = 60, 3
	for _, latency := range []time.Duration{0, 100 * time.Millisecond} {
		e := newDtEnv(t, sandbox.Options{Faults: sandbox.Faults{Latency: latency}}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
		st := crashWhileFrozen(t, e, 10, func(*RunOptions) {})
		got := st.Counts()[store.Uncertain]
		st.Close()
		if got != concurrency {
			t.Errorf("latency %s: a crash would leave %d contacts uncertain, want the %d calls in flight", latency, got, concurrency)
		}
		e.checkPlacedOnce(n)
	}
}

// TestRunSignalWhileCallsAreInFlight: with every worker held in a call, the
// journal holds exactly those intents without an outcome; a signal then
// starts nothing more, the held calls finish and their outcomes are
// recorded, and the next run calls every contact once.
func TestRunSignalWhileCallsAreInFlight(t *testing.T) {
	const n, concurrency, pass = 40, 3, 10
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
	calls := &frozenCalls{next: e.client, pass: pass, held: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.run(ctx, func(o *RunOptions) { o.Calls = calls })
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for calls.started.Load() < pass+concurrency {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %d calls started, want every worker held", calls.started.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	st, err := store.ReadState(e.journal)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Counts()[store.Uncertain]; got != concurrency {
		t.Errorf("%d uncertain on disk with %d calls held, want exactly those", got, concurrency)
	}
	st.Close()
	cancel()
	close(calls.release)
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if counts := e.state().Counts(); counts[store.Uncertain] != 0 || counts[store.Sent] != pass+concurrency {
		t.Errorf("after the signal: %v, want %d sent and nothing uncertain", counts, pass+concurrency)
	}
	e.mustRun(nil)
	e.checkPlacedOnce(n)
}

// durableFirst is a CallStarter that checks, as each call starts, that
// the journal has its intent on disk: the journal's state (updated only
// after an fsync) shows the contact uncertain, an intent without an
// outcome.
type durableFirst struct {
	next  CallStarter
	state *store.State
	agent string
	early atomic.Int32 // call starts whose intent was not yet durable
	calls atomic.Int32
}

func (d *durableFirst) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	d.calls.Add(1)
	v, err := url.ParseQuery(form)
	if err != nil {
		return nil, err
	}
	if st, _ := d.state.Status(store.Key{Agent: d.agent, Phone: v.Get("phone_number")}); st != store.Uncertain {
		d.early.Add(1)
	}
	return d.next.StartCallForm(ctx, ep, form)
}

// TestRunCallsOnlyOnceTheIntentIsDurable: with every fsync slow, other
// workers take their turns while earlier intents are still being synced;
// no call starts before its own intent is on disk, unpaced or paced
// faster than the disk syncs.
func TestRunCallsOnlyOnceTheIntentIsDurable(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunCallsOnlyOnceTheIntentIsDurable(t, kind) })
	}
}

func testRunCallsOnlyOnceTheIntentIsDurable(t *testing.T, kind string) {
	for _, perSecond := range []float64{1000, 200} {
		t.Run(fmt.Sprintf("per_second=%v", perSecond), func(t *testing.T) {
			const n = 60
			e := newDtEnv(t, sandbox.Options{}, dtCampaign(perSecond, 3, ""), map[string]string{"leads.csv": dtSheet(n)})
			e.use(kind)
			e.beforeSync = func() error { time.Sleep(10 * time.Millisecond); return nil }
			var check *durableFirst
			res := e.mustRun(func(o *RunOptions) {
				check = &durableFirst{next: o.Calls, state: o.State, agent: "Alpha"}
				o.Calls = check
			})
			if got := check.early.Load(); got != 0 {
				t.Errorf("%d of %d call starts went out before their intent was on disk", got, check.calls.Load())
			}
			if res.Sent != n {
				t.Errorf("%d sent, want %d", res.Sent, n)
			}
			e.checkPlacedOnce(n)
		})
	}
}

// TestRunSignalDuringASlowFsync: a signal that comes while intents are
// being synced closes them with skipped outcomes once they are on disk:
// nothing reads uncertain, nothing skipped reached the service, and the
// next run calls every contact once.
func TestRunSignalDuringASlowFsync(t *testing.T) {
	const n = 40
	// Paced, so that every commit is an intent's (outcomes ride along),
	// and the fsync slower than a turn.
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(50, 2, ""), map[string]string{"leads.csv": dtSheet(n)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var syncs atomic.Int32
	e.beforeSync = func() error {
		if syncs.Add(1) == 8 {
			cancel() // mid-commit: the records are written, not yet synced
		}
		time.Sleep(30 * time.Millisecond)
		return nil
	}
	_, err := e.run(ctx, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	e.beforeSync = nil
	received := dtReceived(e.srv)
	skipped := 0
	for _, r := range e.records() {
		if r.Type == store.TypeOutcome && r.Status == store.OutcomeSkipped {
			skipped++
			if received[r.Phone] != 0 {
				t.Errorf("%s has a skipped outcome but the sandbox received it", r.Phone)
			}
		}
	}
	if skipped == 0 {
		t.Errorf("no skipped outcome: the signal caught no intent on its way to disk (%d received)", len(received))
	}
	if counts := e.state().Counts(); counts[store.Uncertain] != 0 {
		t.Errorf("journal after the signal: %v, want nothing uncertain", counts)
	}
	e.checkIntentBeforeSend(1)
	t.Logf("%d calls answered before the signal, %d intents skipped", len(received), skipped)
	e.mustRun(nil)
	e.checkPlacedOnce(n)
}

// authFailing is a CallStarter that passes the first calls through, each
// after a pause, and then fails as a refused login does: nothing written,
// an AuthError.
type authFailing struct {
	next  CallStarter
	pass  int32
	calls atomic.Int32
}

func (a *authFailing) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	time.Sleep(30 * time.Millisecond)
	if a.calls.Add(1) > a.pass {
		return nil, &apiclient.StartError{Err: &apiclient.AuthError{Err: errors.New("log in again")}}
	}
	return a.next.StartCallForm(ctx, ep, form)
}

// TestRunFailureLeavesNothingUncertain: when every worker stops on an
// error (a login only a person can renew), nothing reads uncertain, and
// after a new login the next run calls everyone once.
func TestRunFailureLeavesNothingUncertain(t *testing.T) {
	for _, concurrency := range []int{1, 2} {
		t.Run(fmt.Sprintf("concurrency=%d", concurrency), func(t *testing.T) {
			const n = 30
			e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, concurrency, ""), map[string]string{"leads.csv": dtSheet(n)})
			_, err := e.run(context.Background(), func(o *RunOptions) { o.Calls = &authFailing{next: o.Calls, pass: 3} })
			var ae *apiclient.AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("Run: %v, want an AuthError", err)
			}
			skipped := 0
			for _, r := range e.records() {
				if r.Type == store.TypeOutcome && r.Status == store.OutcomeSkipped {
					skipped++
				}
			}
			if counts := e.state().Counts(); counts[store.Uncertain] != 0 {
				t.Errorf("journal after the failure: %v, want nothing uncertain (%d skipped)", counts, skipped)
			}
			t.Logf("%d placed, %d intents skipped", len(dtPlaced(e.srv)), skipped)
			e.mustRun(nil)
			e.checkPlacedOnce(n)
		})
	}
}

// TestRunFailureEndsTheWaitForCallingHours: the calling window closes
// while a call is in flight, so the producer waits for it to open again;
// that call's answer then stops the run (a refused login). The run ends
// with that error at once instead of waiting for the window to open.
func TestRunFailureEndsTheWaitForCallingHours(t *testing.T) {
	ny := dtNewYork(t)
	// Two workers: while the first is in its call, the second takes the
	// next contact and leaves it pending (the window closed meanwhile), so
	// the producer reads on and waits for the window.
	const n = 100
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(5, 2, dtWeekdayHours), map[string]string{"leads.csv": dtSheet(n)})
	clock := &dtClock{now: time.Date(2025, 1, 6, 16, 59, 0, 0, ny)} // Monday, a minute before closing
	var waiting atomic.Bool
	start := time.Now()
	_, err := e.run(context.Background(), func(o *RunOptions) {
		o.Now = clock.Now
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			if d < time.Hour { // the second worker's turn at the rate limiter
				return clock.Sleep(ctx, d)
			}
			waiting.Store(true)
			<-ctx.Done() // the window opens on Tuesday: only the run's end wakes this
			return ctx.Err()
		}
		var calls atomic.Int32
		o.Calls = callFunc(func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
			if calls.Add(1) > 1 {
				// The second worker got its turn before the first call closed
				// the window: its call is refused at once, so that it takes
				// the next contact (which the window now leaves pending),
				// not waiting here too with the producer stuck behind both.
				return nil, &apiclient.Error{Op: "start call", StatusCode: 400}
			}
			clock.mu.Lock()
			clock.now = time.Date(2025, 1, 6, 17, 1, 0, 0, ny) // the window closes during this call
			clock.mu.Unlock()
			for deadline := time.Now().Add(10 * time.Second); !waiting.Load() && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			return nil, &apiclient.StartError{Err: &apiclient.AuthError{Err: errors.New("log in again")}}
		})
	})
	var ae *apiclient.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Run: %v, want the AuthError", err)
	}
	if !waiting.Load() {
		t.Fatal("the producer never waited for the calling window: the test caught nothing")
	}
	if len(e.srv.Calls()) != 0 {
		t.Errorf("%d call starts reached the sandbox", len(e.srv.Calls()))
	}
	if counts := e.state().Counts(); counts[store.Uncertain] != 0 {
		t.Errorf("journal: %v, want nothing uncertain", counts)
	}
	t.Logf("the run ended %v after it started", time.Since(start).Round(time.Millisecond))
}

// callFunc is a CallStarter made of a function.
type callFunc func(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error)

func (f callFunc) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	return f(ctx, ep, form)
}
