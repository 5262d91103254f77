package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/rs/zerolog"
)

// hookSecret is the secret path segment of the listen tests' campaigns.
const hookSecret = "hook-secret-0123456789abcdef"

// writeListenCampaign writes a campaign with outcomes: into dir and
// returns its path.
func writeListenCampaign(t testing.TB, dir, name string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Phone\n+14155550132\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `name: ` + name + `
agents:
  - {name: Agent, prompt: Be kind.}
sheets:
  - {file: leads.csv, agent: Agent, fields: {phone_number: Phone}}
outcomes:
  url: https://hooks.example.com/callrun/` + name + `/` + hookSecret + `
`
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var listeningLine = regexp.MustCompile(`listening on (http://\S+)`)

// startListen runs listen in process and returns its base URL and a
// function that stops it (as SIGTERM does) and returns its error.
func startListen(t *testing.T, logs *e2eBuffer, paths ...string) (string, func() error) {
	t.Helper()
	return startListenOn(t, logs, "127.0.0.1:0", paths...)
}

// startListenOn is startListen on addr.
func startListenOn(t *testing.T, logs *e2eBuffer, addr string, paths ...string) (string, func() error) {
	t.Helper()
	return startListenWith(t, logs, listenOptions{Paths: paths, Addr: addr})
}

// startListenWith is startListenOn with listen's options o.
func startListenWith(t *testing.T, logs *e2eBuffer, o listenOptions) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out e2eBuffer
	done := make(chan error, 1)
	go func() {
		done <- listen(ctx, zerolog.New(logs), o, &out)
	}()
	var base string
	waitFor(t, 10*time.Second, "listen to start", func() bool {
		select {
		case err := <-done:
			t.Fatalf("listen ended: %v", err)
		default:
		}
		m := listeningLine.FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

func TestListenStoresEachDeliveryOnce(t *testing.T) {
	dir := t.TempDir()
	spring := writeListenCampaign(t, dir, "spring")
	autumn := writeListenCampaign(t, dir, "autumn")
	var logs e2eBuffer
	base, stop := startListen(t, &logs, spring, autumn)
	hook := base + "/callrun/spring/" + hookSecret
	c := &http.Client{Timeout: 10 * time.Second}
	send := func(method, target, ctype, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	form := func(event string) string {
		return url.Values{"event": {event}, "phone_number": {"+14155550132"}, "first_name": {"Ada"}}.Encode()
	}
	const formType = "application/x-www-form-urlencoded"
	for _, tc := range []struct {
		what                  string
		method, target, ctype string
		body                  string
		want                  int
	}{
		{"ended first (out of order)", "POST", hook, formType, form("call.ended"), 200},
		{"started", "POST", hook, formType, form("call.started"), 200},
		{"started again (a retry)", "POST", hook, formType, form("call.started"), 200},
		{"started again, as JSON", "POST", hook, "application/json", `{"event":"call.started","phone_number":"+14155550132","first_name":"Ada"}`, 200},
		{"answered, as a GET", "GET", hook + "?" + form("call.answered"), "", "", 200},
		{"forged: a wrong secret", "POST", base + "/callrun/spring/hook-secret-0123456789abcdeX", formType, form("call.ended"), 404},
		{"forged: no secret", "POST", base + "/callrun/spring/", formType, form("call.ended"), 404},
		{"oversized", "POST", hook, formType, form("call.ended") + "&x=" + strings.Repeat("a", apiclient.MaxDeliveryBody), 413},
		{"not a form", "POST", hook, "application/json", `[1,2]`, 400},
		{"a PUT", "PUT", hook, formType, form("call.ended"), 405},
		{"empty", "GET", hook, "", "", 400},
		{"health", "GET", base + "/healthz", "", "", 200},
		{"the other campaign", "POST", base + "/callrun/autumn/" + hookSecret, formType, form("call.ended"), 200},
	} {
		if got := send(tc.method, tc.target, tc.ctype, tc.body); got != tc.want {
			t.Errorf("%s: answered %d, want %d", tc.what, got, tc.want)
		}
	}
	// What /metrics says of it all.
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(t.TempDir(), "listen.prom")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	os.WriteFile(prom, body, 0o600)
	m := readMetrics(t, prom)
	for series, want := range map[string]float64{
		`callrun_listen_deliveries_total{campaign="spring",result="stored"}`:    3,
		`callrun_listen_deliveries_total{campaign="spring",result="duplicate"}`: 2,
		`callrun_listen_deliveries_total{campaign="autumn",result="stored"}`:    1,
		`callrun_listen_refused_total{campaign="",code="404"}`:                  2,
		`callrun_listen_refused_total{campaign="spring",code="413"}`:            1,
		`callrun_listen_refused_total{campaign="spring",code="400"}`:            2,
		`callrun_listen_refused_total{campaign="spring",code="405"}`:            1,
	} {
		if m[series] != want {
			t.Errorf("/metrics: %s is %v, want %v", series, m[series], want)
		}
	}
	if !strings.Contains(string(body), `callrun_listen_ack_seconds_count{campaign="spring"} 5`) {
		t.Errorf("/metrics lacks the 5 acknowledgements of spring:\n%s", body)
	}
	if err := stop(); err != nil {
		t.Errorf("listen ended with %v", err)
	}
	ds, err := store.ReadDeliveries(filepath.Join(dir, ".callrun", "spring"))
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, d := range ds {
		events = append(events, d.Event)
		if d.Fields["phone_number"] != "+14155550132" || d.Fields["first_name"] != "Ada" || d.At.IsZero() {
			t.Errorf("stored %+v", d)
		}
	}
	if got := strings.Join(events, " "); got != "call.ended call.started call.answered" {
		t.Errorf("stored events %q, want each once in order of arrival", got)
	}
	if ds, _ := store.ReadDeliveries(filepath.Join(dir, ".callrun", "autumn")); len(ds) != 1 {
		t.Errorf("autumn has %d deliveries, want 1", len(ds))
	}
	l := logs.String()
	for _, want := range []string{`"forged":2`, `"stored":4`, `"duplicates":2`, `"refused":4`} {
		if !strings.Contains(l, want) {
			t.Errorf("logs lack %s:\n%s", want, l)
		}
	}
	if strings.Contains(l, hookSecret[12:]) || strings.Contains(l, "0123456789abcdeX") {
		t.Errorf("logs hold the secret path:\n%s", l)
	}
}

func TestListenRefusesClearly(t *testing.T) {
	dir := t.TempDir()
	path := writeListenCampaign(t, dir, "spring")
	var logs e2eBuffer
	startListen(t, &logs, path)
	// A second listen on the same campaign.
	err := listen(context.Background(), zerolog.Nop(), listenOptions{Paths: []string{path}, Addr: "127.0.0.1:0"}, &e2eBuffer{})
	if err == nil || !strings.Contains(err.Error(), "another callrun listen") {
		t.Errorf("second listen: %v", err)
	}
	// A campaign without outcomes:.
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("name: plain\nagents:\n  - {name: Agent, prompt: Be kind.}\nsheets:\n  - {file: leads.csv, agent: Agent, fields: {phone_number: Phone}}\n"), 0o644)
	err = listen(context.Background(), zerolog.Nop(), listenOptions{Paths: []string{plain}, Addr: "127.0.0.1:0"}, &e2eBuffer{})
	if err == nil || !strings.Contains(err.Error(), "no outcomes: block") {
		t.Errorf("campaign without outcomes: %v", err)
	}
	// The secret's variable unset: the bare path is not served.
	unset := filepath.Join(dir, "unset.yaml")
	b, _ := os.ReadFile(path)
	os.WriteFile(unset, []byte(strings.Replace(strings.Replace(string(b), hookSecret, "${LISTEN_TEST_UNSET_SECRET}", 1), "name: spring", "name: unset", 1)), 0o644)
	err = listen(context.Background(), zerolog.Nop(), listenOptions{Paths: []string{unset}, Addr: "127.0.0.1:0"}, &e2eBuffer{})
	if err == nil || !strings.Contains(err.Error(), "outcomes.url has no secret") {
		t.Errorf("campaign whose secret is unset: %v", err)
	}
	// The signing secret's variable unset: not served unchecked.
	unsigned := filepath.Join(dir, "unsigned.yaml")
	os.WriteFile(unsigned, []byte(strings.Replace(string(b), "name: spring", "name: unsigned", 1)+"  signing_secret: ${LISTEN_TEST_UNSET_SIGNING}\n"), 0o644)
	err = listen(context.Background(), zerolog.Nop(), listenOptions{Paths: []string{unsigned}, Addr: "127.0.0.1:0"}, &e2eBuffer{})
	if err == nil || !strings.Contains(err.Error(), "signing_secret names a variable that is not set") {
		t.Errorf("campaign whose signing secret is unset: %v", err)
	}
}

// TestListenReplicasShareAPostgresStore runs two listens on one campaign
// whose state is in PostgreSQL, as two replicas behind one Service, and
// sends each delivery (and its retries) to either: each is stored once,
// in the database, and the report's State reads them from there.
func TestListenReplicasShareAPostgresStore(t *testing.T) {
	dir := t.TempDir()
	db := pgtest.URL(t)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	yaml := strings.Replace(string(b), "outcomes:\n", "outcomes:\n  opt_out: {field: disposition, values: [dnc]}\n", 1)
	os.WriteFile(path, append([]byte(yaml), "state: {postgres: \"${E2E_DATABASE_URL}\"}\n"...), 0o644)
	t.Setenv("E2E_DATABASE_URL", db)
	var logs e2eBuffer
	a, stopA := startListen(t, &logs, path)
	b2, stopB := startListen(t, &logs, path)
	c := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			form := url.Values{"event": {"call.ended"}, "phone_number": {fmt.Sprintf("+1415555%04d", i%20)}}
			if i%20 == 7 {
				form.Set("disposition", "dnc") // an opt-out, from either replica
			}
			base := []string{a, b2}[i%2]
			resp, err := c.PostForm(base+"/callrun/spring/"+hookSecret, form)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("delivery %d answered %d", i, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(stopA(), stopB()); err != nil {
		t.Fatal(err)
	}
	p, err := store.OpenPostgres(context.Background(), db, "spring", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	st, err := p.ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ds, err := st.Deliveries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, d := range ds {
		seen[d.Fields["phone_number"]]++
	}
	if len(ds) != 20 || len(seen) != 20 {
		t.Errorf("%d deliveries stored, %d distinct; want 20 once each: %v", len(ds), len(seen), seen)
	}
	if _, err := os.Stat(filepath.Join(dir, ".callrun", "spring", store.DeliveriesFile)); err == nil {
		t.Error("a deliveries file was written for a campaign whose state is in PostgreSQL")
	}
	// The opt-out is on the database's do-not-call list, once.
	list, _ := p.DoNotCall()
	es, err := list.Entries(context.Background())
	if err != nil || len(es) != 1 || es[0].Number != "+14155550007" {
		t.Errorf("the database's do-not-call list: %+v, %v", es, err)
	}
	if l := logs.String(); !strings.Contains(l, `"stored":`) || strings.Contains(l, db) {
		t.Errorf("logs:\n%s", l)
	}
}

// TestListenRetryStraddlesUpgrade: deliveries stored by the callrun
// before deliveries were told by their call and event
// (testdata/deliveries-before-call-ids.jsonl, written by that callrun's
// listen) keep their keys, and a retry of each, sent again to this
// listen byte for byte, is found under its old key and stored no more,
// with files and with PostgreSQL. A retry of the envelope that differs in
// its timestamp is one delivery from then on.
func TestListenRetryStraddlesUpgrade(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := writeListenCampaign(t, dir, "old")
			old, err := os.ReadFile(filepath.Join("testdata", "deliveries-before-call-ids.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var p *store.Postgres
			if kind == "postgres" {
				db := pgtest.URL(t)
				b, _ := os.ReadFile(path)
				os.WriteFile(path, append(b, "state: {postgres: \"${E2E_DATABASE_URL}\"}\n"...), 0o644)
				t.Setenv("E2E_DATABASE_URL", db)
				if p, err = store.OpenPostgres(context.Background(), db, "old", 0, 1); err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				// The old rows, as that listen inserted them: each under its key.
				d, err := p.OpenDeliveries(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(old)), "\n") {
					var sd store.Delivery
					if err := json.Unmarshal([]byte(line), &sd); err != nil {
						t.Fatal(err)
					}
					if _, _, err := d.Append(sd); err != nil {
						t.Fatal(err)
					}
				}
				d.Close()
			} else {
				stateDir := filepath.Join(dir, ".callrun", "old")
				os.MkdirAll(stateDir, 0o700)
				if err := os.WriteFile(filepath.Join(stateDir, store.DeliveriesFile), old, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			stored := func() []store.Delivery {
				t.Helper()
				var ds []store.Delivery
				if p != nil {
					ds, err = p.ReadDeliveries(context.Background())
				} else {
					ds, err = store.ReadDeliveries(filepath.Join(dir, ".callrun", "old"))
				}
				if err != nil {
					t.Fatal(err)
				}
				return ds
			}
			var logs e2eBuffer
			base, stop := startListen(t, &logs, path)
			hook := base + "/callrun/old/" + hookSecret
			post := func(ctype, body string) {
				t.Helper()
				resp, err := http.Post(hook, ctype, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("answered %d", resp.StatusCode)
				}
			}
			const form, js = "application/x-www-form-urlencoded", "application/json"
			envelope := `{"event":"call.ended","timestamp":"2026-11-25T11:59:30Z","data":{"call_id":"call_old_1","agent_id":"agent_1","caller_number":"+14155550132","status":"completed"},"signature":"sha256=00"}`
			post(form, "event=call.started&phone_number=%2B14155550132&timestamp=2026-11-25T11%3A59%3A00Z")
			post(js, envelope)
			post(form, "event=call.answered&phone_number=%2B14155550132")
			if ds := stored(); len(ds) != 3 {
				t.Errorf("the retries of the 3 deliveries stored before the upgrade: %d stored, want 3", len(ds))
			}
			// The envelope again, its timestamp another: stored once (by its
			// fields less the volatile ones), and its retries no more.
			post(js, strings.Replace(envelope, "11:59:30", "12:01:00", 1))
			post(js, strings.Replace(envelope, "11:59:30", "12:02:00", 1))
			if ds := stored(); len(ds) != 4 {
				t.Errorf("a retry of the envelope with other timestamps, twice: %d stored, want 4", len(ds))
			}
			if err := stop(); err != nil {
				t.Error(err)
			}
			if !strings.Contains(logs.String(), `"duplicate":true`) {
				t.Errorf("no duplicate logged:\n%s", logs.String())
			}
		})
	}
}

// TestListenRequiresASignature: with outcomes.require_signature, an
// unsigned delivery is refused 401 and never stored; one signed with the
// campaign's key (in a header, over the body as sent) is stored.
func TestListenRequiresASignature(t *testing.T) {
	dir := t.TempDir()
	path := writeListenCampaign(t, dir, "signed")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, append(b, "  signing_secret: whsec-listen-test\n  require_signature: true\n"...), 0o644)
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	hook := base + "/callrun/signed/" + hookSecret
	post := func(sig string) int {
		t.Helper()
		body := `{"event":"call.ended","phone_number":"+14155550132"}`
		req, _ := http.NewRequest(http.MethodPost, hook, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("X-Signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("an unsigned delivery: answered %d, want 401", got)
	}
	if got := post(apiclient.Sign("whsec-listen-test", []byte(`{"event":"call.ended","phone_number":"+14155550132"}`))); got != 200 {
		t.Errorf("a signed delivery: answered %d, want 200", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if ds, _ := store.ReadDeliveries(filepath.Join(dir, ".callrun", "signed")); len(ds) != 1 {
		t.Errorf("%d deliveries stored, want the signed one", len(ds))
	}
	if strings.Contains(logs.String(), "whsec-listen-test") {
		t.Errorf("the signing secret is in the log:\n%s", logs.String())
	}
}
