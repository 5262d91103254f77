package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// TestStandaloneSandboxIsARehearsal runs a campaign (Reg F's pressure,
// outcomes with opt-outs) against callrun's sandbox served on its own,
// as docs/service.md does by hand: the sandbox says it is one in a
// header of its answers, so auth login says so, listen keeps its
// deliveries as a rehearsal's, and the run is a rehearsal: its journal
// and report in <state_dir>-sandbox, labelled, its opt-out on the
// rehearsals' own do-not-call list, no call start or conversation in the
// store contact pressure counts. Then the real campaign (the same name,
// state and CALLRUN_HOME, against a service that is not the sandbox)
// still has its contact to call, held by nobody, and its run calls them:
// the live stand-in's ledger counts one call.
func TestStandaloneSandboxIsARehearsal(t *testing.T) {
	ctx := context.Background()
	addr := freePort(t)
	hooks := "http://" + addr + "/callrun/a/" + hookSecret
	sb := sandbox.NewServer(sandbox.Options{Rehearsal: true, CallDuration: 20 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{URL: hooks, ShareOptOut: 1, OptOutField: "disposition", OptOutValue: "dnc"}})
	t.Cleanup(sb.Close)
	const x = "+14155550132" // testCampaign's one contact
	path := testCampaign(t, sb.URL, "http://127.0.0.1:8765/callback")
	home := os.Getenv("CALLRUN_HOME")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yml := strings.Replace(string(b), "name: test\n", "name: crm\n", 1) +
		"state_dir: state\npressure: {preset: reg_f}\noutcomes:\n  url: " + hooks + "\n  opt_out: {field: disposition, values: [dnc]}\n"
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)

	var out bytes.Buffer
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "That is callrun's sandbox") {
		t.Errorf("auth login does not say the service is the sandbox:\n%s", out.String())
	}
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, path)
	out.Reset()
	if err := runCampaign(ctx, nolog, runOptions{Path: path}, &out); err != nil {
		t.Fatalf("run against the sandbox: %v\n%s", err, out.String())
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := sb.WaitWebhooks(wctx); err != nil {
		t.Fatalf("the sandbox's webhooks: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if n := len(sb.Placed()); n != 1 {
		t.Fatalf("the sandbox placed %d calls, want 1", n)
	}
	if !strings.Contains(out.String(), "(a rehearsal: nobody was phoned)") || !strings.Contains(out.String(), filepath.Join(dir, "state-sandbox", "report.html")) {
		t.Errorf("the run's summary does not say it was a rehearsal, kept apart:\n%s", out.String())
	}
	if !strings.Contains(logs.String(), "is callrun's sandbox: its deliveries are a rehearsal's") {
		t.Errorf("listen does not say the deliveries are a rehearsal's:\n%s", logs.String())
	}

	// Kept apart: the rehearsal's state directory, labelled; nothing in
	// the real one, nor in the store's call starts, conversations or
	// do-not-call list; the opt-out on the rehearsals' own list.
	var sum report.Summary
	if b, err := os.ReadFile(filepath.Join(dir, "state-sandbox", "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || !sum.Rehearsal || sum.Counts["sent"] != 1 {
		t.Errorf("the rehearsal's summary.json: %+v (%v); want a rehearsal that sent 1", sum, err)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "state-sandbox", "report.html")); err != nil || !bytes.Contains(page, []byte("Rehearsal: nobody was phoned.")) {
		t.Errorf("the rehearsal's page is not labelled (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", store.JournalFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the rehearsal wrote the real journal: %v", err)
	}
	for _, name := range []string{store.CallStartsFileName, store.ConversationsFileName} {
		if b, err := os.ReadFile(filepath.Join(home, name)); err == nil && len(b) > 0 {
			t.Errorf("the rehearsal wrote %s in CALLRUN_HOME:\n%s", name, b)
		}
	}
	if real, err := store.OpenDoNotCallFile(home).Entries(ctx); err != nil || len(real) != 0 {
		t.Errorf("the real do-not-call list: %+v, %v; want it empty", real, err)
	}
	if on, err := store.OpenDoNotCallFile(filepath.Join(home, "sandbox")).Entries(ctx); err != nil || len(store.OnDoNotCall(on)) != 1 {
		t.Errorf("the rehearsals' do-not-call list: %+v, %v; want the opt-out", on, err)
	}
	// While the sandbox answers, status reads the rehearsal's state.
	if code, out := runAppOut(t, "status", "--format", "json", path); code != 0 || !strings.Contains(out, `"sent": 1`) || !strings.Contains(out, `"rehearsal": true`) {
		t.Errorf("status of the campaign against the sandbox: exit %d\n%s", code, out)
	}
	// And the list's commands work on the rehearsals' list, where the
	// opt-out is: the commands a held opt-out's message names find it.
	if code, out := runAppOut(t, "suppress", "list", path); code != 0 || !strings.Contains(out, x) {
		t.Errorf("suppress list of the campaign against the sandbox: exit %d; want the rehearsal's opt-out %s\n%s", code, x, out)
	}

	// The real campaign: the same name, state_dir and CALLRUN_HOME, its
	// service a stand-in for the live one.
	live := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(live.Close)
	realPath := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(realPath, []byte(strings.ReplaceAll(yml, sb.URL, live.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CALLRUN_TOKEN_FILE", filepath.Join(dir, "live-token.json"))
	if err := authLogin(ctx, nolog, realPath, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	code, planOut := runAppOut(t, "plan", "--format", "json", realPath)
	var plan struct {
		Totals map[string]int `json:"totals"`
		Store  string         `json:"store"`
	}
	if err := json.Unmarshal([]byte(planOut[strings.Index(planOut, "{"):]), &plan); err != nil || code != 0 {
		t.Fatalf("the real campaign's plan: exit %d, %v\n%s", code, err, planOut)
	}
	if plan.Totals["to_call"] != 1 || plan.Totals["held"] != 0 || plan.Totals["done"] != 0 || plan.Totals["suppressed"] != 0 || strings.Contains(plan.Store, "rehearsal") {
		t.Errorf("the real campaign's plan after a rehearsal: %v (journal %s); want its one contact to call, held by nobody", plan.Totals, plan.Store)
	}
	if err := runCampaign(ctx, nolog, runOptions{Path: realPath}, io.Discard); err != nil {
		t.Fatalf("the real run: %v", err)
	}
	if n := len(live.Placed()); n != 1 || live.Placed()[0].Form.Get("phone_number") != x {
		t.Errorf("the real run placed %d calls, want %s once", n, x)
	}
}

// TestRunLeftWaitingSaysFromWhen runs a campaign whose one contact, in
// San Francisco, is outside their hours by the run's clock (22:00 there):
// the stand-in service's ledger receives no call; the run does not call
// itself complete: its summary (printed, summary.json, the page) ends
// waiting with when the contact may be called, 09:00 their time
// (California's law starts an hour after callrun's floor), it exits
// 75 saying so, and the contact's row and `status` name the rule that
// holds it and the time.
func TestRunLeftWaitingSaysFromWhen(t *testing.T) {
	ctx := context.Background()
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "unsafe_ignore_called_person_hours: true", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2027, 1, 5, 6, 0, 0, 0, time.UTC) // 22:00 in San Francisco
	const from = "2027-01-05T17:00:00Z"               // 09:00 there, California's start
	t0 := time.Now()
	clock := func() time.Time { return at.Add(time.Since(t0)) }
	var out bytes.Buffer
	err = runCampaign(ctx, nolog, runOptions{Path: path, Now: clock}, &out)
	if code := exitCode(ctx, err); code != run.ExitTryLater || !strings.Contains(fmt.Sprint(err), "when the first may be called") {
		t.Errorf("run: exit %d (%v), want %d saying from when", code, err, run.ExitTryLater)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the service received %d calls outside the called person's hours", n)
	}
	if !strings.Contains(out.String(), "Campaign test: 1 row, not complete: 1 contact waiting, who may be called from ") {
		t.Errorf("the printed summary does not say the run left a contact waiting, and from when:\n%s", out.String())
	}
	state := filepath.Join(filepath.Dir(path), ".callrun", "test")
	var sum report.Summary
	if b, err := os.ReadFile(filepath.Join(state, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil ||
		sum.Ending != report.EndWaiting || sum.NextCallAt.UTC().Format(time.RFC3339) != from || sum.Rehearsal {
		t.Errorf("summary.json: ending %q, next_call_at %s, rehearsal %v (%v); want waiting from %s", sum.Ending, sum.NextCallAt, sum.Rehearsal, err, from)
	}
	if page, err := os.ReadFile(filepath.Join(state, "report.html")); err != nil || !bytes.Contains(page, []byte("Campaign report: not complete: 1 contact waiting")) {
		t.Errorf("the page does not say the run left a contact waiting (%v)", err)
	}
	rows := readReportRows(t, filepath.Join(state, "report.csv"))
	why := "outside the called person's calling hours (their time: America/Los_Angeles); may be called from " + from
	if r := rows["+14155550132"]; r["status"] != "pending" || !strings.HasPrefix(r["reason"], why) {
		t.Errorf("the contact's row: %v; want pending, the reason starting %q", r, why)
	}
	var status bytes.Buffer
	if err := campaignStatus(ctx, savedOptions{Path: path, Now: func() time.Time { return at }}, "json", &status); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Waiting []waitingLine `json:"waiting"`
	}
	if err := json.Unmarshal(status.Bytes(), &st); err != nil || len(st.Waiting) != 1 || st.Waiting[0].Rule != "hours" || st.Waiting[0].Contacts != 1 ||
		st.Waiting[0].From == nil || st.Waiting[0].From.Format(time.RFC3339) != from {
		t.Errorf("status's waiting: %+v (%v); want 1 held by the called person's hours until %s\n%s", st.Waiting, err, from, status.String())
	}
}
