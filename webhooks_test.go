package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// The webhook corpus, testdata/webhooks: deliveries as the service and
// its peers really send them, each with what listen must make of it
// (testdata/webhooks/README.md says the format). TestWebhookCorpus posts
// each case to listen's handler in process, over a campaign whose
// journal says its two contacts were called, and checks the stored
// delivery, the contact's outcome, the do-not-call list and the answer.

// The corpus campaign: its agent, and an agent of another campaign (a
// redial agent); its contacts, both called; its signing secret; its own
// number.
const (
	corpusAgentID      = "agent_corpus_0001"
	corpusOtherAgentID = "agent_redial_0002"
	corpusNumber       = "+14155550123" // Ada, called first: the contact a case's outcome is of
	corpusNumber2      = "+14155550124" // Grace, called too
	corpusCallID       = "call_corpus_0123"
	corpusCallID2      = "call_corpus_0124"
	corpusSecret       = "corpus-signing-secret"
	corpusOwnNumber    = "+14155550100"
)

// corpusWant is a case's NAME.want.json.
type corpusWant struct {
	Number        string `json:"number"`
	Event         string `json:"event"`
	Agent         string `json:"agent"` // campaign, other or none
	OptOut        bool   `json:"opt_out"`
	Outcome       string `json:"outcome"`
	Stored        bool   `json:"stored"`
	Status        int    `json:"status"`
	Source        string `json:"source"`
	Note          string `json:"note"`
	ServiceStarts *int   `json:"service_starts"`
	Statuses      []int  `json:"statuses"`
	Deliveries    *int   `json:"deliveries"`
	// RequireSignature sets the campaign's outcomes.require_signature.
	RequireSignature bool `json:"require_signature"`
	// Held: an opt-out is held on the store after the case (its number
	// could not be read); Listed: exactly these numbers are on the
	// do-not-call list.
	Held   bool     `json:"held"`
	Listed []string `json:"listed"`
}

// corpusCase is one case: its requests, in order, and what they must
// give.
type corpusCase struct {
	name     string
	requests [][]byte // each NAME.http, or NAME.1.http, NAME.2.http, ...
	want     corpusWant
}

func loadCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	wants, err := filepath.Glob(filepath.Join(dir, "*.want.json"))
	if err != nil || len(wants) == 0 {
		t.Fatalf("no cases in %s: %v", dir, err)
	}
	var out []corpusCase
	for _, w := range wants {
		name := strings.TrimSuffix(filepath.Base(w), ".want.json")
		c := corpusCase{name: name}
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&c.want); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if c.want.Source == "" {
			t.Errorf("%s: no source: say where the shape comes from", w)
		}
		if b, err := os.ReadFile(filepath.Join(dir, name+".http")); err == nil {
			c.requests = [][]byte{b}
		}
		for i := 1; ; i++ {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.%d.http", name, i)))
			if err != nil {
				break
			}
			c.requests = append(c.requests, b)
		}
		if len(c.requests) == 0 {
			t.Fatalf("%s: no %s.http", w, name)
		}
		out = append(out, c)
	}
	return out
}

func TestWebhookCorpus(t *testing.T) {
	for _, c := range loadCorpus(t, filepath.Join("testdata", "webhooks")) {
		t.Run(c.name, func(t *testing.T) { runCorpusCase(t, c) })
	}
}

// writeCorpusCampaign writes the corpus campaign into dir, and its
// journal: both contacts called a minute before now, Ada first.
func writeCorpusCampaign(t *testing.T, dir string, now time.Time, requireSignature bool) string {
	t.Helper()
	sheet := "Phone,First Name,Contact Id\n(415) 555-0123,Ada,ghl-ada\n(415) 555-0124,Grace,ghl-grace\n"
	if err := os.WriteFile(filepath.Join(dir, "leads.csv"), []byte(sheet), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `name: corpus
agents:
  - {name: Agent, prompt: Be kind.}
sheets:
  - {file: leads.csv, agent: Agent, fields: {phone_number: Phone, first_name: First Name, ghl_contact_id: Contact Id}}
region: US
state_dir: state
outcomes:
  url: https://hooks.example.com/callrun/corpus/` + hookSecret + `
  opt_out: {field: disposition, values: [do_not_call, opted_out, dnc, opt_out]}
  own_numbers: ["` + corpusOwnNumber + `"]
  signing_secret: ` + corpusSecret + `
`
	if requireSignature {
		yaml += "  require_signature: true\n"
	}
	path := filepath.Join(dir, "corpus.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	j, _, err := store.OpenJournal(filepath.Join(stateDir, store.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	called := now.Add(-time.Minute)
	recs := []store.Record{{Type: store.TypeRun, Note: "corpus", At: called}}
	for i, n := range []string{corpusNumber, corpusNumber2} {
		at := called.Add(time.Duration(i) * time.Second)
		base := store.Record{Agent: "Agent", Phone: n, AgentID: corpusAgentID, Sheet: "leads.csv", Row: 2 + i, Attempt: 1}
		intent, outcome := base, base
		intent.Type, intent.At = store.TypeIntent, at
		outcome.Type, outcome.Status, outcome.HTTP, outcome.At = store.TypeOutcome, store.OutcomeSent, 200, at.Add(200*time.Millisecond)
		outcome.CallID = []string{corpusCallID, corpusCallID2}[i]
		recs = append(recs, intent, outcome)
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// corpusRequest makes the request of a case's file: its placeholders
// filled, the one newline that ends the file cut from the body, its
// Content-Length set, its path /hook made the campaign's.
func corpusRequest(t *testing.T, raw []byte, hookPath string) *http.Request {
	t.Helper()
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 && (!ok || i < len(head)) {
		head, body, ok = raw[:i], raw[i+4:], true
	}
	if !ok {
		head, body = bytes.TrimRight(raw, "\r\n"), nil
	}
	head = bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n"))
	body = bytes.TrimSuffix(bytes.TrimSuffix(body, []byte("\n")), []byte("\r"))
	body = padRE.ReplaceAllFunc(body, func(m []byte) []byte {
		n, _ := strconv.Atoi(string(padRE.FindSubmatch(m)[1]))
		return bytes.Repeat([]byte("x"), n)
	})
	fill := func(b []byte) []byte {
		for k, v := range map[string]string{"{{AGENT_ID}}": corpusAgentID, "{{OTHER_AGENT_ID}}": corpusOtherAgentID, "{{CALL_ID}}": corpusCallID} {
			b = bytes.ReplaceAll(b, []byte(k), []byte(v))
		}
		return b
	}
	head, body = fill(head), fill(body)
	if bytes.Contains(body, []byte("{{SIGNATURE}}")) {
		without, _, _, ok := apiclient.BodySigned(body)
		if !ok {
			t.Fatalf("{{SIGNATURE}} in a body that is no JSON object with a signature member")
		}
		body = bytes.ReplaceAll(body, []byte("{{SIGNATURE}}"), []byte(strings.TrimPrefix(apiclient.Sign(corpusSecret, without), "sha256=")))
	}
	head = bytes.ReplaceAll(head, []byte("{{SIGNATURE}}"), []byte(strings.TrimPrefix(apiclient.Sign(corpusSecret, body), "sha256=")))
	var lines []string
	for _, l := range strings.Split(string(head), "\n") {
		if !strings.HasPrefix(strings.ToLower(l), "content-length:") {
			lines = append(lines, l)
		}
	}
	if body != nil {
		lines = append(lines, fmt.Sprintf("Content-Length: %d", len(body)))
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(strings.Join(lines, "\r\n") + "\r\n\r\n" + string(body))))
	if err != nil {
		t.Fatalf("reading the request: %v", err)
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/hook")
	if !ok {
		t.Fatalf("the request's path is %s, not /hook", req.URL.Path)
	}
	req.URL.Path = hookPath + rest
	req.RequestURI = ""
	req.RemoteAddr = "127.0.0.1:4711"
	return req
}

// padRE is the placeholder {{PAD:N}}: N bytes of "x", for bodies too
// big to keep in the repository.
var padRE = regexp.MustCompile(`\{\{PAD:([0-9]+)\}\}`)

func runCorpusCase(t *testing.T, c corpusCase) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	now := time.Now()
	path := writeCorpusCampaign(t, dir, now, c.want.RequireSignature)
	ctx := context.Background()
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := openState(ctx, f, false)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := openHookTarget(ctx, f, st.store, false)
	if err != nil {
		t.Fatal(err)
	}
	var logs e2eBuffer
	l := newListener(zerolog.New(&logs), 0, time.Now)
	l.targets[f.Outcomes.Path()] = tgt
	var statuses []int
	for _, raw := range c.requests {
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, corpusRequest(t, raw, f.Outcomes.Path()))
		statuses = append(statuses, rec.Code)
	}
	l.close()
	defer func() {
		if t.Failed() {
			t.Logf("listen's log:\n%s", logs.String())
		}
	}()
	w := c.want
	if w.Statuses != nil && !slices.Equal(statuses, w.Statuses) {
		t.Errorf("answered %v, want %v", statuses, w.Statuses)
	}
	if last := statuses[len(statuses)-1]; last != w.Status {
		t.Errorf("answered %d, want %d", last, w.Status)
	}
	// Each refusal is counted in /metrics by its status.
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, code := range []int{400, 401, 413} {
		want := 0
		for _, s := range statuses {
			if s == code {
				want++
			}
		}
		series := fmt.Sprintf(`callrun_listen_refused_total{campaign="corpus",code="%d"} %d`, code, want)
		if has := strings.Contains(rec.Body.String(), series); has != (want > 0) {
			t.Errorf("/metrics lacks %s", series)
		}
	}

	// The stored deliveries.
	ds, err := store.ReadDeliveries(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if (len(ds) > 0) != w.Stored {
		t.Errorf("%d deliveries stored, want stored=%v", len(ds), w.Stored)
	}
	if w.Deliveries != nil && len(ds) != *w.Deliveries {
		t.Errorf("%d deliveries stored, want %d", len(ds), *w.Deliveries)
	}
	if len(ds) > 0 {
		d := ds[len(ds)-1]
		if d.Event != w.Event {
			t.Errorf("stored event %q, want %q", d.Event, w.Event)
		}
		if got := f.DeliveryNumber(phone.NewNormalizer(), d.Fields); got.E164 != w.Number {
			t.Errorf("the stored delivery's number %q (%v), want %q", got.E164, got.Err, w.Number)
		}
		agent := "other"
		switch d.AgentID {
		case corpusAgentID:
			agent = "campaign"
		case "":
			agent = "none"
		}
		if agent != w.Agent {
			t.Errorf("the stored delivery's agent %q is the %s's, want the %s's", d.AgentID, agent, w.Agent)
		}
	}

	// The do-not-call list.
	es, err := store.OpenDoNotCallFile(home).Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	on := store.OnDoNotCall(es)
	switch {
	case w.Listed != nil:
		var got []string
		for n := range on {
			got = append(got, n)
		}
		slices.Sort(got)
		if !slices.Equal(got, w.Listed) {
			t.Errorf("the do-not-call list holds %v, want %v", got, w.Listed)
		}
	case w.OptOut && w.Number != "" && on[w.Number].Number == "":
		t.Errorf("the do-not-call list %v lacks %s", on, w.Number)
	case !w.OptOut && len(on) > 0:
		t.Errorf("the do-not-call list holds %v, want nothing", on)
	}
	held, err := store.OpenDoNotCallFile(home).Held(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if (len(held) > 0) != w.Held {
		t.Errorf("opt-outs held: %+v, want held=%v", held, w.Held)
	}

	// The contact's outcome, as the report reads it.
	o := corpusOutcome(t, path)
	if o.Event != w.Outcome {
		t.Errorf("the contact's outcome %q, want %q", o.Event, w.Outcome)
	}
	if w.ServiceStarts != nil && int(o.Starts) != *w.ServiceStarts {
		t.Errorf("service_starts %d, want %d", o.Starts, *w.ServiceStarts)
	}
}

// corpusOutcome is the report's outcome of the corpus campaign's first
// contact, as `callrun report` reads it.
func corpusOutcome(t *testing.T, path string) report.Outcome {
	t.Helper()
	ctx := context.Background()
	s, err := loadSaved(ctx, savedOptions{path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, err := campaign.OpenOutcomes(ctx, s.f, s.state, s.norm)
	if err != nil {
		t.Fatal(err)
	}
	var out report.Outcome
	err = s.f.NewContactReader(s.norm, s.sup).Each(ctx, func(c *campaign.Contact) error {
		row := campaign.ReportRow(s.f, s.state, c)
		x.Add(c, &row)
		if c.Phone == corpusNumber {
			out = row.Outcome
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
