package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// quickstartState is the quickstart rehearsal's state directory, from the
// directory copyQuickstart made.
var quickstartState = filepath.Join("quickstart", ".callrun", "quickstart-sandbox")

// readReportCSV reads the report.csv of state directory dir: its rows by
// phone number.
func readReportCSV(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("report.csv: %v, %d records", err, len(recs))
	}
	rows := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		r := map[string]string{}
		for j, col := range recs[0] {
			r[col] = rec[j]
		}
		rows[r["phone_number"]] = r
	}
	return rows
}

// TestRunSandboxReceivesOutcomes rehearses the quickstart, whose campaign
// has outcomes: and no hook secret set, against an emulator whose account
// webhooks come out of order, twice, late and forged, with a share of
// opt-outs: the one command's report shows every called contact's
// outcome, the opt-outs among them; each delivery the emulator saw
// acknowledged is stored once, and none of the forged ones.
func TestRunSandboxReceivesOutcomes(t *testing.T) {
	copyQuickstart(t)
	home := t.TempDir()
	t.Setenv("CALLRUN_HOME", home)
	var logs e2eBuffer
	var sb *sandbox.Server
	o := runOptions{Path: filepath.Join("quickstart", "campaign.yaml"), Sandbox: true,
		TuneSandbox: func(so *sandbox.Options) {
			so.CallDuration = 10 * time.Millisecond
			aw := &so.AccountWebhook
			aw.OutOfOrder, aw.ShareDuplicate, aw.ShareLate, aw.LateBy = true, 0.5, 0.5, 30*time.Millisecond
			aw.ShareForged, aw.ShareOptOut, aw.Seed = 1, 0.4, 7
		},
		SandboxStarted: func(s *sandbox.Server) { sb = s },
	}
	var out bytes.Buffer
	if err := runCampaign(context.Background(), zerolog.New(&logs), o, &out); err != nil {
		t.Fatalf("run --sandbox: %v\n%s", err, out.String())
	}
	const calls = 5 // the quickstart's valid contacts
	optedOut := map[string]bool{}
	var acked, forged, dups, late int
	for _, d := range sb.Deliveries() {
		switch {
		case d.Forged:
			forged++
			if d.Acked || d.Status != 404 {
				t.Errorf("forged delivery %+v was not refused 404", d)
			}
			continue
		case !d.Acked:
			t.Errorf("delivery %+v not acknowledged by the run's receiver", d)
		case d.Duplicate:
			dups++
		}
		if d.Late {
			late++
		}
		acked++
		if d.Form.Get("disposition") == "dnc" {
			optedOut[d.Form.Get("phone_number")] = true
		}
	}
	if forged != calls || dups == 0 || late == 0 || len(optedOut) == 0 || len(optedOut) == calls {
		t.Errorf("faults: %d forged, %d duplicates, %d late, %d opted out: the seed no longer faults every kind", forged, dups, late, len(optedOut))
	}
	if acked != 3*calls+dups {
		t.Errorf("%d account webhook deliveries acknowledged, want %d", acked, 3*calls+dups)
	}

	// The file itself: each delivery once (a retry is not a second line),
	// none forged.
	b, err := os.ReadFile(filepath.Join(quickstartState, store.DeliveriesFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); lines++ {
	}
	if want := 3*calls + calls; lines != want { // three events and the agent's completion webhook per call
		t.Errorf("deliveries.jsonl has %d lines, want %d", lines, want)
	}
	if bytes.Contains(b, []byte("forged")) {
		t.Error("a forged delivery was stored")
	}
	if !strings.Contains(logs.String(), `"forged":5`) {
		t.Errorf("the forged deliveries were not counted:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "the sandbox's webhooks are all in") {
		t.Errorf("the run does not say it waited for the webhooks:\n%s", logs.String())
	}

	// The opt-outs are on the rehearsals' own do-not-call list, each with
	// its delivery, and never on the real one.
	rehearsed, err := store.OpenDoNotCallFile(filepath.Join(home, "sandbox")).Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	on := store.OnDoNotCall(rehearsed)
	for phone := range optedOut {
		if e, ok := on[phone]; !ok || !strings.HasSuffix(e.Source, " of campaign quickstart") {
			t.Errorf("%s opted out in the rehearsal: on its do-not-call list as %+v, %v", phone, e, ok)
		}
	}
	if len(on) != len(optedOut) {
		t.Errorf("the rehearsals' do-not-call list holds %d numbers, want the %d that opted out", len(on), len(optedOut))
	}
	if real, err := store.OpenDoNotCallFile(home).Entries(context.Background()); err != nil || len(real) != 0 {
		t.Errorf("the rehearsal wrote to the real do-not-call list: %v, %v", real, err)
	}

	for phone, r := range readReportCSV(t, quickstartState) {
		if r["status"] != "sent" {
			continue
		}
		if r["outcome"] != "ended" || r["service_starts"] != "1" || r["outcome_at"] == "" {
			t.Errorf("%s: outcome %q, service_starts %q, at %q; want ended, 1 (delivered out of order, twice, late)", phone, r["outcome"], r["service_starts"], r["outcome_at"])
		}
		if dnc := strings.Contains(r["outcome_detail"], "disposition=dnc"); dnc != optedOut[phone] {
			t.Errorf("%s: outcome_detail %q, opted out: %v", phone, r["outcome_detail"], optedOut[phone])
		}
	}
}

// TestRunSandboxOutcomesWaitIsBounded: calls that do not end within the
// wait leave their end out of the report, and the run says so, rather
// than wait.
func TestRunSandboxOutcomesWaitIsBounded(t *testing.T) {
	copyQuickstart(t)
	var logs e2eBuffer
	o := runOptions{Path: filepath.Join("quickstart", "campaign.yaml"), Sandbox: true, OutcomesWait: 50 * time.Millisecond,
		TuneSandbox: func(so *sandbox.Options) { so.CallDuration = time.Hour }}
	start := time.Now()
	if err := runCampaign(context.Background(), zerolog.New(&logs), o, &bytes.Buffer{}); err != nil {
		t.Fatalf("run --sandbox: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %s", d)
	}
	if !strings.Contains(logs.String(), "stopped waiting for the sandbox's webhooks after 50ms") {
		t.Errorf("the run does not say it stopped waiting:\n%s", logs.String())
	}
	for phone, r := range readReportCSV(t, quickstartState) {
		if r["status"] == "sent" && r["outcome"] != "started" {
			t.Errorf("%s: outcome %q, want started (the call has not ended)", phone, r["outcome"])
		}
	}
}

// TestRunSandboxOutcomesTakenElsewhere: when another process stores the
// rehearsal's deliveries, the rehearsal runs without them, says so, and
// its sandbox delivers nothing, least of all to the campaign's real
// outcomes URL.
func TestRunSandboxOutcomesTakenElsewhere(t *testing.T) {
	copyQuickstart(t)
	held, err := store.OpenDeliveries(quickstartState)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var logs e2eBuffer
	var sb *sandbox.Server
	o := runOptions{Path: filepath.Join("quickstart", "campaign.yaml"), Sandbox: true,
		SandboxStarted: func(s *sandbox.Server) { sb = s }}
	if err := runCampaign(context.Background(), zerolog.New(&logs), o, &bytes.Buffer{}); err != nil {
		t.Fatalf("run --sandbox: %v", err)
	}
	if !strings.Contains(logs.String(), "this run's outcomes are not received") {
		t.Errorf("the run does not say its outcomes are not received:\n%s", logs.String())
	}
	if len(sb.Calls()) == 0 {
		t.Fatal("no call placed")
	}
	for _, a := range sb.Agents() {
		if a.WebhookEndpoint != "" {
			t.Errorf("the rehearsal's agent has webhook %q", a.WebhookEndpoint)
		}
	}
	if n, m := len(sb.Webhooks()), len(sb.Deliveries()); n+m != 0 {
		t.Errorf("the sandbox sent %d webhooks and %d account webhook deliveries", n, m)
	}
}
