package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// freePort returns a loopback address no one listens on now, for a
// listen that must come back on the same address after each kill.
func freePort(t testing.TB) string {
	t.Helper()
	return freePorts(t, 1)[0]
}

// freePorts returns n loopback addresses, each free, none the same: the
// ports are held open together before they are given back, since a port
// closed at once may be handed out again by the next ask.
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// startListenChild starts `callrun listen` of the campaign at path as a
// child process with environment env, on addr, its JSON logs to logs,
// and returns it once it listens.
func startListenChild(t *testing.T, env []string, addr, path string, logs *e2eBuffer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(callrunBinary(t), "--log-format", "json", "listen", "--addr", addr, path)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("listen did not start: %q %v", line, err)
	}
	return cmd
}

// TestListenKilledLosesNoAcknowledgedDelivery kills `callrun listen`
// (-9) at random moments while the sandbox delivers its account webhooks
// and retries the ones not acknowledged, with duplicates, and checks that
// every delivery the sandbox saw acknowledged is stored exactly once.
func TestListenKilledLosesNoAcknowledgedDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process repeatedly")
	}
	dir := t.TempDir()
	path := writeListenCampaign(t, dir, "spring")
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration: 40 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{
			URL:   "http://" + addr + "/callrun/spring/" + hookSecret,
			Retry: 5 * time.Millisecond, MaxRetry: 200 * time.Millisecond, Attempts: 1000,
			ShareDuplicate: 0.3, Seed: 7,
		},
	})
	defer srv.Close()
	agent := srv.AddAgent(sandbox.Agent{AgentName: "Agent"})
	endpoint, _ := srv.CallEndpoint(agent.AgentID)

	const calls = 100
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var placing sync.WaitGroup
	placing.Add(1)
	go func() { // calls placed over about a second, while listen dies and comes back
		defer placing.Done()
		c := &http.Client{Timeout: 10 * time.Second}
		for i := range calls {
			form := url.Values{"phone_number": {fmt.Sprintf("+1415555%04d", i)}, "first_name": {"Ada"}}
			resp, err := c.PostForm(endpoint, form)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			resp.Body.Close()
			time.Sleep(25 * time.Millisecond)
		}
	}()

	var logs e2eBuffer // every listen's JSON logs, shown when the test fails
	defer func() {
		if t.Failed() {
			t.Logf("listen's logs:\n%s", logs.String())
		}
	}()
	start := func() *exec.Cmd { return startListenChild(t, e2eEnv(dir), addr, path, &logs) }
	kills := 0
	for kills < 20 {
		cmd := start()
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
		kills++
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond) // down a while: deliveries fail and are retried
	}
	last := start()
	placing.Wait()
	settled := func() bool {
		firsts := 0 // deliveries other than the duplicates: three a call
		for _, d := range srv.Deliveries() {
			if d.Duplicate {
				continue
			}
			if !d.Acked {
				return false
			}
			firsts++
		}
		return firsts == 3*calls
	}
	deadline := time.Now().Add(60 * time.Second)
	for !settled() {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's deliveries did not all get acknowledged")
		}
		time.Sleep(20 * time.Millisecond)
	}
	last.Process.Signal(syscall.SIGTERM)
	if err := last.Wait(); err != nil {
		t.Errorf("listen after SIGTERM: %v", err)
	}
	checkJSONLogs(t, e2eResult{args: []string{"listen"}, stderr: logs.String()})

	// What the sandbox saw acknowledged, by its fields, against the
	// deliveries file's lines.
	acked := map[string]bool{}
	ledger := map[string][]sandbox.Delivery{}
	dups := 0
	for _, d := range srv.Deliveries() {
		fields := map[string]string{}
		for k, v := range d.Form {
			fields[k] = v[0]
		}
		b, _ := json.Marshal(fields)
		if d.Acked {
			acked[string(b)] = true
		}
		ledger[string(b)] = append(ledger[string(b)], d)
		if d.Duplicate {
			dups++
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, ".callrun", "spring", store.DeliveriesFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var d store.Delivery
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("a line of the deliveries file: %v: %q", err, line)
		}
		b, _ := json.Marshal(d.Fields)
		lines[string(b)]++
	}
	if len(acked) != 3*calls {
		t.Errorf("%d distinct deliveries acknowledged, want %d", len(acked), 3*calls)
	}
	for f := range acked {
		if lines[f] != 1 {
			t.Errorf("delivery %s stored %d times; the sandbox's ledger: %+v", f, lines[f], ledger[f])
		}
	}
	if len(lines) != len(acked) {
		t.Errorf("%d deliveries stored, %d acknowledged", len(lines), len(acked))
	}
	retried := 0
	for _, d := range srv.Deliveries() {
		if d.Attempts > 1 {
			retried++
		}
	}
	t.Logf("%d kills; %d deliveries, %d of them duplicates, %d retried", kills, len(srv.Deliveries()), dups, retried)
	if retried == 0 {
		t.Error("no delivery was retried: the kills did not fault the deliveries")
	}
}

// TestOutcomesInTheReport runs a campaign with outcomes: against a sandbox
// that delivers its account webhooks out of order and twice, and the
// agents' own completion webhooks, to `callrun listen`; the report then
// shows each contact's outcome: with the deliveries in files, and in
// PostgreSQL, where the report reads them from the campaign's table.
func TestOutcomesInTheReport(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testOutcomesInTheReport(t, kind) })
	}
}

func testOutcomesInTheReport(t *testing.T, kind string) {
	addr := freePort(t)
	hookURL := "http://" + addr + "/callrun/e2e/" + hookSecret
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration: 10 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: hookURL, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond, OutOfOrder: true, ShareDuplicate: 0.5,
			ShareLate: 0.3, LateBy: 50 * time.Millisecond, ShareForged: 0.5, Seed: 3},
	})
	defer srv.Close()
	contacts := e2ePhones(12)
	db := e2eDatabase(t, kind)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 4, postgres: db})
	yaml, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	yaml = append(yaml, "outcomes:\n  url: http://"+addr+"/callrun/e2e/${E2E_HOOK_SECRET}\n  fields: [status, disposition]\n"...)
	if err := os.WriteFile(e.path, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "E2E_HOOK_SECRET="+hookSecret)

	l := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(l.stdout.String(), "listening on") })
	res := e.run(60*time.Second, "run", e.path)
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	agents := srv.Agents()
	if len(agents) != 1 || agents[0].WebhookEndpoint != hookURL+"/agent" {
		t.Fatalf("the agent callrun created has webhook %q, want the outcomes url with /agent", agents[0].WebhookEndpoint)
	}
	waitFor(t, 30*time.Second, "every delivery acknowledged", func() bool {
		n := 0
		for _, d := range srv.Deliveries() {
			if d.Acked && !d.Duplicate {
				n++
			}
		}
		hooks := 0
		for _, w := range srv.Webhooks() {
			if w.Delivered {
				hooks++
			}
		}
		return n == 3*len(contacts) && hooks == len(contacts)
	})
	// The forged deliveries too, which follow a call's last event.
	wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := srv.WaitWebhooks(wctx); err != nil {
		t.Fatalf("the sandbox's webhooks: %v", err)
	}
	list := e.run(30*time.Second, "agents", "list", e.path)
	if list.code != 0 || !strings.Contains(list.stdout, "/callrun/e2e/[redacted]") {
		t.Errorf("agents list does not show the webhook redacted: %s", list)
	}
	rep := e.run(60*time.Second, "report", e.path)
	if rep.code != 0 {
		t.Fatalf("report: %s", rep)
	}
	if _, err := os.Stat(filepath.Join(e.stateDir, store.DeliveriesFile)); (err == nil) != (kind == "files") {
		t.Errorf("%s: a deliveries file in the state directory: %v", kind, err == nil)
	}
	l.signal(t, syscall.SIGTERM)
	lres := l.wait(t, 30*time.Second)
	if lres.code != 0 {
		t.Errorf("listen after SIGTERM: %s", lres)
	}
	checkJSONLogs(t, lres)
	// Forged deliveries (to a wrong secret): each refused, counted, none stored.
	forged := 0
	for _, d := range srv.Deliveries() {
		if d.Forged {
			forged++
			if d.Acked || d.Status != http.StatusNotFound {
				t.Errorf("forged delivery %+v not refused 404", d)
			}
		}
	}
	if forged == 0 || !strings.Contains(lres.stderr, fmt.Sprintf(`"forged":%d`, forged)) {
		t.Errorf("listen's count of forged deliveries, want %d:\n%s", forged, lres.stderr)
	}
	var stored store.Store = store.Files{Dir: e.stateDir}
	if db != "" {
		p, err := store.OpenPostgres(t.Context(), db, "e2e", 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		stored = p
	}
	ds, err := stored.ReadDeliveries(t.Context())
	if b, _ := json.Marshal(ds); err != nil || len(ds) != 3*len(contacts)+len(contacts) || strings.Contains(string(b), "forged") {
		t.Errorf("%d deliveries stored, want %d, forged ones among them? (%v)\n%s", len(ds), 4*len(contacts), err, b)
	}
	for _, out := range []string{res.stdout, res.stderr, list.stdout, list.stderr, rep.stdout, rep.stderr, lres.stdout, lres.stderr} {
		if strings.Contains(out, hookSecret) {
			t.Errorf("callrun printed the outcomes url's secret:\n%s", out)
		}
	}
	for _, r := range e.report() {
		if r["status"] != "sent" || r["outcome"] != "ended" || r["service_starts"] != "1" || r["outcome_at"] == "" || r["outcome_detail"] != "status=completed" {
			t.Errorf("report row %v", r)
		}
	}
	var sum struct {
		Outcomes  map[string]int `json:"outcomes"`
		Answered  int            `json:"answered"`
		Unmatched *int           `json:"unmatched_deliveries"`
	}
	b, err := os.ReadFile(filepath.Join(e.stateDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcomes["ended"] != len(contacts) || len(sum.Outcomes) != 1 || sum.Answered != len(contacts) || sum.Unmatched == nil || *sum.Unmatched != 0 {
		t.Errorf("summary.json: %s", b)
	}
	html, err := os.ReadFile(filepath.Join(e.stateDir, "report.html"))
	if err != nil || !strings.Contains(string(html), fmt.Sprintf(`data-figure="outcome-ended">%d<`, len(contacts))) {
		t.Errorf("report.html lacks the outcomes: %v", err)
	}
}

// TestMaxActiveCallsEndedByDeliveries: a campaign with outcomes: and
// pace.max_active_calls: 2 with call_length: 1h, whose calls the sandbox
// ends after 30ms and reports through listen: the run learns of each end
// from the deliveries listen stores and finishes in seconds, where
// call_length alone would hold it for hours. The sandbox's ledger shows
// each contact placed once, never more than 2 calls in progress (the
// sandbox refuses a call start over its limit of 2 calls of 30ms); then
// `callrun outcomes` and `status` show what was delivered.
func TestMaxActiveCallsEndedByDeliveries(t *testing.T) {
	addr := freePort(t)
	hookURL := "http://" + addr + "/callrun/e2e/" + hookSecret
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration:   30 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: hookURL, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond},
		Faults:         sandbox.Faults{MaxActive: 2},
	})
	defer srv.Close()
	contacts := e2ePhones(8)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 4})
	yaml, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(yaml), "concurrency: 4}", "concurrency: 4, max_active_calls: 2, call_length: 1h}", 1)
	y += "outcomes:\n  url: http://" + addr + "/callrun/e2e/${E2E_HOOK_SECRET}\n"
	if err := os.WriteFile(e.path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "E2E_HOOK_SECRET="+hookSecret)

	l := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(l.stdout.String(), "listening on") })
	res := e.run(60*time.Second, "run", e.path)
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	placed := map[string]int{}
	for _, c := range srv.Placed() {
		placed[c.Form.Get("phone_number")]++
	}
	if len(placed) != len(contacts) || len(srv.Placed()) != len(contacts) || srv.Stats().Faults.OverActive != 0 {
		t.Errorf("%d numbers placed in %d calls, %d refused over the limit; want %d placed once each, none refused",
			len(placed), len(srv.Placed()), srv.Stats().Faults.OverActive, len(contacts))
	}
	if !strings.Contains(res.stderr, "or its end to be delivered") {
		t.Errorf("the run never waited for a call to end:\n%s", res.stderr)
	}
	t.Logf("%d calls, at most 2 in progress, in %s", len(contacts), res.elapsed)

	waitFor(t, 30*time.Second, "every delivery acknowledged", func() bool {
		n := 0
		for _, d := range srv.Deliveries() {
			if d.Acked {
				n++
			}
		}
		return n == 3*len(contacts)
	})
	out := e.run(30*time.Second, "outcomes", "--format", "json", e.path)
	if out.code != 0 {
		t.Fatalf("outcomes: %s", out)
	}
	events := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
		var d deliveryLine
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("outcomes printed %q: %v", line, err)
		}
		if !d.Matched || d.Sheet == "" || d.Row == 0 {
			t.Errorf("delivery not matched: %+v", d)
		}
		events[d.Event]++
	}
	if events["call.ended"] < len(contacts) || events["call.started"] != len(contacts) {
		t.Errorf("outcomes listed %v, want every call's events", events)
	}
	st := e.run(30*time.Second, "status", "--format", "json", e.path)
	var status struct {
		Outcomes  map[string]int `json:"outcomes"`
		Unmatched *int           `json:"unmatched_deliveries"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || status.Outcomes["ended"] != len(contacts) || status.Unmatched == nil || *status.Unmatched != 0 {
		t.Errorf("status: %v %s", err, st)
	}
	l.signal(t, syscall.SIGTERM)
	if lres := l.wait(t, 30*time.Second); lres.code != 0 {
		t.Errorf("listen after SIGTERM: %s", lres)
	}
	for _, r := range []e2eResult{res, out, st} {
		if strings.Contains(r.stdout+r.stderr, hookSecret) {
			t.Errorf("callrun %s printed the outcomes url's secret", r.args)
		}
	}
}

// TestMaxActiveCallsKilledRun kills (-9) a run with max_active_calls
// that learns of its calls' ends from listen, twice while it calls, and
// runs it again until it ends by itself, against a sandbox that places
// some calls and then answers 500 or drops the connection. The ledger
// shows nobody placed twice, and the report tells the truth about every
// contact.
func TestMaxActiveCallsKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and resumes callrun")
	}
	addr := freePort(t)
	hookURL := "http://" + addr + "/callrun/e2e/" + hookSecret
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration:   40 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: hookURL, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond},
		Faults:         sandbox.Faults{Latency: 5 * time.Millisecond, Share500: 0.05, ShareDrop: 0.05, Seed: 11},
	})
	defer srv.Close()
	contacts := e2ePhones(18)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 4})
	yaml, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(yaml), "concurrency: 4}", "concurrency: 4, max_active_calls: 3, call_length: 1h}", 1)
	y += "outcomes:\n  url: http://" + addr + "/callrun/e2e/${E2E_HOOK_SECRET}\n"
	if err := os.WriteFile(e.path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "E2E_HOOK_SECRET="+hookSecret)
	l := e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(l.stdout.String(), "listening on") })

	kills := 0
	var final *e2eResult
	for round := 1; round <= 10 && final == nil; round++ {
		placedBefore := len(srv.Placed())
		p := e.start("run", e.path)
		if kills < 2 {
			// Killed once it has placed 4 more calls: some of them in
			// progress, their ends not all delivered.
			killRound(p, 0, false, func() bool { return len(srv.Placed()) >= placedBefore+4 })
		}
		res := p.wait(t, 60*time.Second)
		switch {
		case res.signaled:
			kills++
		case res.code == 0 || res.code == 3:
			final = &res
		default:
			t.Fatalf("round %d: %s", round, res)
		}
	}
	if final == nil || kills != 2 {
		t.Fatalf("%d kills, and no run ended by itself", kills)
	}
	l.signal(t, syscall.SIGTERM)
	l.wait(t, 30*time.Second)
	ledger := e.ledger()
	ledger.checkNobodyTwice(t)
	rows := e.report()
	e.checkReportAgainstLedger(rows, ledger)
	st := map[string]int{}
	for _, r := range rows {
		st[r["status"]]++
	}
	if st["sent"]+st["uncertain"] != len(contacts) {
		t.Errorf("report statuses %v: want every contact sent or uncertain", st)
	}
	t.Logf("%d kills; %d call starts, %d placed; %v", kills, len(ledger.calls), ledger.totalPlaced(), st)
}

// TestListenReplicasOnPostgresKilledLoseNoAcknowledgedDelivery runs two
// `callrun listen` processes on one campaign whose deliveries are in
// PostgreSQL, behind a proxy that sends each request to them in turn (as a
// Kubernetes Service does, without waiting for a dead pod to be noticed),
// and kills one of them (-9) at random moments, restarting it each time,
// while the sandbox delivers and retries what was not acknowledged:
// every delivery the sandbox saw acknowledged is in the table exactly once.
func TestListenReplicasOnPostgresKilledLoseNoAcknowledgedDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process repeatedly")
	}
	dir := t.TempDir()
	db := pgtest.URL(t)
	path := writeListenCampaign(t, dir, "spring")
	yaml, _ := os.ReadFile(path)
	os.WriteFile(path, append(yaml, "state: {postgres: \"${E2E_DATABASE_URL}\"}\n"...), 0o644)
	replicas := freePorts(t, 2)
	var turn atomic.Uint64
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", replicas[turn.Add(1)%2]
		},
		ErrorLog: log.New(io.Discard, "", 0), // a dead replica is the point
	})
	defer proxy.Close()
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration: 40 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{
			URL:   proxy.URL + "/callrun/spring/" + hookSecret,
			Retry: 5 * time.Millisecond, MaxRetry: 200 * time.Millisecond, Attempts: 1000,
			ShareDuplicate: 0.3, Seed: 11,
		},
	})
	defer srv.Close()
	agent := srv.AddAgent(sandbox.Agent{AgentName: "Agent"})
	endpoint, _ := srv.CallEndpoint(agent.AgentID)

	const calls = 100
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var placing sync.WaitGroup
	placing.Go(func() { // calls placed over about a second and a half
		c := &http.Client{Timeout: 10 * time.Second}
		for i := range calls {
			resp, err := c.PostForm(endpoint, url.Values{"phone_number": {fmt.Sprintf("+1415555%04d", i)}, "first_name": {"Ada"}})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			resp.Body.Close()
			time.Sleep(15 * time.Millisecond)
		}
	})
	var logs e2eBuffer
	defer func() {
		if t.Failed() {
			t.Logf("the listens' logs:\n%s", logs.String())
		}
	}()
	start := func(addr string) *exec.Cmd {
		return startListenChild(t, append(e2eEnv(dir), "E2E_DATABASE_URL="+db), addr, path, &logs)
	}
	steady := start(replicas[1])
	kills := 0
	for ; kills < 8; kills++ {
		cmd := start(replicas[0])
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL, mid-stream
		cmd.Wait()
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
	}
	last := start(replicas[0])
	placing.Wait()
	waitFor(t, 60*time.Second, "every delivery acknowledged", func() bool {
		firsts := 0
		for _, d := range srv.Deliveries() {
			if d.Duplicate {
				continue
			}
			if !d.Acked {
				return false
			}
			firsts++
		}
		return firsts == 3*calls
	})
	for _, cmd := range []*exec.Cmd{last, steady} {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("listen after SIGTERM: %v", err)
		}
	}
	checkJSONLogs(t, e2eResult{args: []string{"listen"}, stderr: logs.String()})

	acked := map[string]bool{}
	retried := 0
	for _, d := range srv.Deliveries() {
		fields := map[string]string{}
		for k, v := range d.Form {
			fields[k] = v[0]
		}
		b, _ := json.Marshal(fields)
		if d.Acked {
			acked[string(b)] = true
		}
		if d.Attempts > 1 {
			retried++
		}
	}
	p, err := store.OpenPostgres(context.Background(), db, "spring", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ds, err := p.ReadDeliveries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, d := range ds {
		b, _ := json.Marshal(d.Fields)
		rows[string(b)]++
	}
	if len(acked) != 3*calls {
		t.Errorf("%d distinct deliveries acknowledged, want %d", len(acked), 3*calls)
	}
	for f := range acked {
		if rows[f] != 1 {
			t.Errorf("delivery %s stored %d times", f, rows[f])
		}
	}
	if len(ds) != len(acked) {
		t.Errorf("%d rows stored, %d deliveries acknowledged", len(ds), len(acked))
	}
	t.Logf("%d kills; %d deliveries, %d retried", kills, len(srv.Deliveries()), retried)
	if retried == 0 {
		t.Error("no delivery was retried: the kills did not fault the deliveries")
	}
}
