package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// TestWebhookCorpusThroughListen posts every case of the webhook corpus
// (testdata/webhooks, its README says the format) to listen's handler in
// process, each case or sequence to a store of its own over the campaign
// the README describes, whose journal says each contact was called a
// minute before; and checks each request's want: the answer, whether it
// stored a delivery and how many, the event, number and agent callrun
// reads, whether it opts out, the contact's outcome and service_starts
// in the report, the do-not-call list, and whether runs are held.
func TestWebhookCorpusThroughListen(t *testing.T) {
	seqs := map[string][]webhookCase{}
	var names []string
	for _, c := range readWebhookCases(t) {
		name := cmp.Or(c.Seq, c.Name)
		if _, ok := seqs[name]; !ok {
			names = append(names, name)
		}
		seqs[name] = append(seqs[name], c)
	}
	for _, name := range names {
		steps := seqs[name]
		slices.SortFunc(steps, func(a, b webhookCase) int { return a.Step - b.Step })
		t.Run(name, func(t *testing.T) { runListenSequence(t, steps) })
	}
}

// The corpus campaign's agents, signing secret and own line.
const (
	listenAgentID      = "agent_07a9005357b35d0943f7359ad9"
	listenOtherAgentID = "agent_1b2c3d4e5f60718293a4b5c6d7"
	listenSecret       = "whsec_corpus"
	listenOwnNumber    = "+14155550100"
)

// listenCallID is the call id the service's answer gave the call to
// contact i (from 0) of contacts.csv.
func listenCallID(i int) string { return fmt.Sprintf("call_%d", 41+i) }

// writeListenCorpusCampaign writes the campaign the corpus's README
// describes into dir (its contacts.csv copied), and its journal: every
// contact called a minute before now, in order, each with its call id.
// It returns the campaign's path and the contacts' numbers, in order.
func writeListenCorpusCampaign(t *testing.T, dir string, now time.Time) (string, []string) {
	t.Helper()
	sheet, err := os.ReadFile(filepath.Join(webhookCorpus, "contacts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "contacts.csv"), sheet, 0o644); err != nil {
		t.Fatal(err)
	}
	var numbers []string
	for _, line := range strings.Split(strings.TrimSpace(string(sheet)), "\n")[1:] {
		numbers = append(numbers, strings.Split(strings.TrimSpace(line), ",")[0])
	}
	yaml := `name: corpus
agents:
  - {name: Agent, prompt: Be kind.}
sheets:
  - {file: contacts.csv, agent: Agent, fields: {phone_number: Phone, first_name: First Name, ghl_contact_id: Contact Id}}
region: US
state_dir: state
pace: {max_active_calls: 4, call_length: 10m}
outcomes:
  url: https://hooks.example.com/hook/` + hookSecret + `
  opt_out: {field: disposition, values: [dnc, do_not_call, opted_out]}
  own_numbers: ["` + listenOwnNumber + `"]
  signing_secret: ` + listenSecret + `
`
	path := filepath.Join(dir, "corpus.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	j, _, err := store.OpenJournal(filepath.Join(stateDir, store.JournalFile), store.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	called := now.Add(-time.Minute)
	if err := j.Append(store.Record{Type: store.TypeRun, Note: "corpus", At: called}); err != nil {
		t.Fatal(err)
	}
	for i, n := range numbers {
		at := called.Add(time.Duration(i) * time.Second)
		base := store.Record{Agent: "Agent", Phone: n, AgentID: listenAgentID, Sheet: "contacts.csv", Row: 2 + i, Attempt: 1}
		intent, outcome := base, base
		intent.Type, intent.At = store.TypeIntent, at
		outcome.Type, outcome.Status, outcome.HTTP, outcome.At, outcome.CallID = store.TypeOutcome, store.OutcomeSent, 200, at.Add(200*time.Millisecond), listenCallID(i)
		for _, r := range []store.Record{intent, outcome} {
			if err := j.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return path, numbers
}

// listenRequest makes case c's request (webhookCase.request: its
// placeholders filled, the call id the one the want's number's call got,
// the signature under the corpus campaign's secret) with the campaign's
// hook path for /hook (or its agents' path, via agent).
func listenRequest(t *testing.T, c webhookCase, hookPath, callID string) *http.Request {
	t.Helper()
	r := c.request(t, webhookVars{AgentID: listenAgentID, OtherAgentID: listenOtherAgentID, CallID: callID, SigningSecret: listenSecret})
	rest, ok := strings.CutPrefix(r.URL.Path, "/hook")
	if !ok {
		t.Fatalf("%s: the path is %s, not /hook", c.Name, r.URL.Path)
	}
	r.URL.Path = hookPath + rest
	if c.Want.Via == "agent" {
		r.URL.Path += "/" + campaign.AgentPathSuffix
	}
	r.RequestURI, r.RemoteAddr = "", "127.0.0.1:4711"
	return r
}

// runListenSequence posts the steps of one case or sequence, in order, to
// one store, checking each step's want after its request.
func runListenSequence(t *testing.T, steps []webhookCase) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	path, numbers := writeListenCorpusCampaign(t, dir, time.Now())
	ctx := context.Background()
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.OpenStore(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var logs e2eBuffer
	l := run.NewListener(zerolog.New(&logs), 0, time.Now)
	if err := l.Add(ctx, f.Outcomes.Path(), f, st, false); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	defer func() {
		if t.Failed() {
			t.Logf("listen's log:\n%s", logs.String())
		}
	}()
	stateDir := filepath.Join(dir, "state")
	for _, c := range steps {
		before, err := store.ReadDeliveries(stateDir)
		if err != nil {
			t.Fatal(err)
		}
		callID := "call_none"
		if i := slices.Index(numbers, c.Want.Number); i >= 0 {
			callID = listenCallID(i)
		}
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, listenRequest(t, c, f.Outcomes.Path(), callID))
		after, err := store.ReadDeliveries(stateDir)
		if err != nil {
			t.Fatal(err)
		}
		checkListenStep(t, c, f, numbers, rec.Code, after[len(before):], home, path, listenRequest(t, c, f.Outcomes.Path(), callID))
	}
}

// checkListenStep checks step c's want: the answer status, the
// deliveries it stored (added), what callrun reads of the request
// (again, from r), the report, the do-not-call list and the holds.
func checkListenStep(t *testing.T, c webhookCase, f *campaign.File, numbers []string, status int, added []store.Delivery, home, path string, r *http.Request) {
	t.Helper()
	w := c.Want
	fail := func(format string, args ...any) { t.Errorf("%s: "+format, append([]any{c.Name}, args...)...) }
	if status != w.Status {
		fail("answered %d, want %d", status, w.Status)
	}
	if (len(added) > 0) != w.Stored {
		fail("stored %d deliveries, want stored=%v", len(added), w.Stored)
	}
	if want := 1; w.Stored {
		if w.Deliveries != nil {
			want = *w.Deliveries
		}
		if len(added) != want {
			fail("stored %d deliveries, want %d", len(added), want)
		}
	}
	checkListenLists(t, c, home)
	if w.Status != 200 {
		return // refused: nothing more to read
	}
	ds, err := apiclient.ReadDeliveries(r, f.Outcomes.ReadOptions())
	if err != nil {
		t.Fatalf("%s: reading it again: %v", c.Name, err)
	}
	d := ds[len(ds)-1]
	if d.Event != w.Event {
		fail("event %q, want %q", d.Event, w.Event)
	}
	agent := "other"
	switch d.AgentID {
	case listenAgentID:
		agent = "campaign"
	case "":
		agent = "none"
	}
	if agent != w.Agent {
		fail("agent %q is %s, want %s", d.AgentID, agent, w.Agent)
	}
	if got := f.Outcomes.OptsOut(d); got != w.OptOut {
		fail("opts out %v, want %v", got, w.OptOut)
	}

	// The report: who took the delivery, and each contact's outcome.
	outcomes, taken := listenReport(t, path, apiclient.Delivery.Key(d))
	number := f.DeliveryNumber(d.Fields).E164
	if taken.how == campaign.MatchedByCallID || taken.how == campaign.MatchedByGHL {
		number = numbers[taken.row-2]
	}
	if number != w.Number {
		fail("number %q (%s), want %q", number, cmp.Or(taken.how, "read from its fields"), w.Number)
	}
	if i := slices.Index(numbers, w.Number); i >= 0 {
		o := outcomes[i]
		if o.Event != w.Outcome {
			fail("the contact's outcome %q, want %q", o.Event, w.Outcome)
		}
		if w.ServiceStarts != nil && int(o.Starts) != *w.ServiceStarts {
			fail("service_starts %d, want %d", o.Starts, *w.ServiceStarts)
		}
	} else if w.Outcome == "" && taken.row != 0 {
		fail("taken by row %d (%s), want no contact's", taken.row, taken.how)
	}

}

// checkListenLists checks step c's do-not-call list and holds in the
// store of home.
func checkListenLists(t *testing.T, c webhookCase, home string) {
	t.Helper()
	w := c.Want
	wantList := w.DoNotCall
	if wantList == nil {
		wantList = []string{}
		if w.OptOut && w.Number != "" {
			wantList = []string{w.Number}
		}
	}
	es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for n := range store.OnDoNotCall(es) {
		got = append(got, n)
	}
	slices.Sort(got)
	slices.Sort(wantList)
	if !slices.Equal(got, wantList) {
		t.Errorf("%s: the do-not-call list holds %v, want %v", c.Name, got, wantList)
	}
	held, err := store.OpenDoNotCallFile(home).Held(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if blocks := w.BlocksRuns != nil && *w.BlocksRuns; (len(held) > 0) != blocks {
		t.Errorf("%s: opt-outs held %+v, want blocks_runs %v", c.Name, held, blocks)
	}
}

// listenTaken is which contact the report gave a delivery to: its row
// (0: none) and by which rule.
type listenTaken struct {
	row int
	how string
}

// listenReport reads the campaign at path as `callrun report` does and
// returns its contacts' outcomes, in sheet order, and who took the
// delivery of key.
func listenReport(t *testing.T, path, key string) ([]report.Outcome, listenTaken) {
	t.Helper()
	ctx := context.Background()
	s, err := loadSaved(ctx, savedOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, err := campaign.OpenOutcomes(ctx, s.F, s.State)
	if err != nil {
		t.Fatal(err)
	}
	var out []report.Outcome
	err = s.F.NewContactReader(s.Sup).Each(ctx, func(c *campaign.Contact) error {
		row := campaign.ReportRow(s.F, s.State, c)
		x.Add(c, &row)
		out = append(out, row.Outcome)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var taken listenTaken
	for i, d := range x.Deliveries() {
		if d.Key == key {
			if tk, how, ok := x.Taken(i); ok {
				taken = listenTaken{tk.Row, how}
			}
		}
	}
	return out, taken
}
