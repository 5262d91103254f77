package main

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
)

// rename gives the campaign another name: two campaigns of one database
// must not share a journal.
func (e *e2eCampaign) rename(name string) {
	e.t.Helper()
	b, err := os.ReadFile(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "name: e2e\n", "name: "+name+"\n", 1))
	if err := os.WriteFile(e.path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// appendYAML adds lines to the campaign file.
func (e *e2eCampaign) appendYAML(lines string) {
	e.t.Helper()
	b, err := os.ReadFile(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.path, append(b, lines...), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// dncList runs `suppress list --format json` (with --history) and decodes it.
func (e *e2eCampaign) dncList(history bool) []store.DoNotCallEntry {
	e.t.Helper()
	args := []string{"suppress", "list", "--format", "json", e.path}
	if history {
		args = append(args, "--history")
	}
	res := e.run(30*time.Second, args...)
	if res.code != 0 {
		e.t.Fatalf("suppress list: %s", res)
	}
	var es []store.DoNotCallEntry
	if err := json.Unmarshal([]byte(res.stdout), &es); err != nil {
		e.t.Fatalf("suppress list --format json: %v\n%s", err, res.stdout)
	}
	return es
}

// TestSuppressCommand keeps the do-not-call list by hand, with files and
// with PostgreSQL: add (numbers read with the campaign's region), remove
// with its reason kept, list, import a CSV, export; a bad number is a
// usage error naming it that changes nothing; and plan counts the
// contacts on the list as suppressed, for every campaign on the store.
func TestSuppressCommand(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			contacts := e2ePhones(8)
			db := e2eDatabase(t, kind)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2, postgres: db})
			// A second campaign on the same store: another directory, the
			// same CALLRUN_HOME (or database).
			other := newE2ECampaign(t, srv, e2eSetup{contacts: contacts[:4], perSecond: 50, concurrency: 2, postgres: db, noLogin: true})
			other.rename("other")
			home := filepath.Join(t.TempDir(), "callrun-home")
			e.env = append(e.env, "CALLRUN_HOME="+home)
			other.env = append(other.env, "CALLRUN_HOME="+home)

			add := e.run(30*time.Second, "suppress", "add", e.path, contacts[0].Raw, contacts[1].E164)
			if add.code != 0 || !strings.Contains(add.stdout, "2 number(s) put on the do-not-call list") {
				t.Fatalf("suppress add: %s", add)
			}
			bad := e.run(30*time.Second, "suppress", "add", e.path, contacts[2].Raw, "555-01")
			if bad.code != run.ExitUsage || !strings.Contains(bad.stderr, `555-01\" is not a valid phone number`) || !strings.Contains(bad.stderr, "nothing was changed") {
				t.Errorf("suppress add with a bad number: %s", bad)
			}
			again := e.run(30*time.Second, "suppress", "add", e.path, contacts[0].E164)
			if again.code != 0 || !strings.Contains(again.stdout, "0 number(s) put on") || !strings.Contains(again.stdout, "1 on it already") {
				t.Errorf("suppress add of a number on the list: %s", again)
			}
			if es := e.dncList(false); len(es) != 2 || es[0].Number != contacts[0].E164 || es[1].Number != contacts[1].E164 || es[0].Source != "suppress add" {
				t.Fatalf("suppress list after adding two: %+v", es)
			}
			if kind == "files" {
				if _, err := os.Stat(filepath.Join(home, store.DoNotCallFileName)); err != nil {
					t.Errorf("the list is not in CALLRUN_HOME: %v", err)
				}
			}

			noReason := e.run(30*time.Second, "suppress", "remove", e.path, contacts[1].E164)
			if noReason.code != run.ExitUsage || !strings.Contains(noReason.stderr, "--reason") {
				t.Errorf("suppress remove without --reason: %s", noReason)
			}
			rm := e.run(30*time.Second, "suppress", "remove", "--reason", "asked to be called again, ticket 4411", e.path, contacts[1].E164)
			if rm.code != 0 || !strings.Contains(rm.stdout, "1 number(s) taken off") {
				t.Fatalf("suppress remove: %s", rm)
			}
			hist := e.dncList(true)
			if len(hist) != 3 || !hist[2].Removed || hist[2].Reason != "asked to be called again, ticket 4411" || hist[1].Removed {
				t.Errorf("suppress list --history: %+v, want both additions and the removal with its reason", hist)
			}

			csvPath := filepath.Join(t.TempDir(), "crm-dnc.csv")
			if err := os.WriteFile(csvPath, []byte("Name,Phone Number\nAda,"+contacts[3].Raw+"\nBob,"+contacts[0].Raw+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			imp := e.run(30*time.Second, "suppress", "import", e.path, csvPath)
			if imp.code != 0 || !strings.Contains(imp.stdout, "1 number(s) of "+csvPath+" put on") {
				t.Fatalf("suppress import: %s", imp)
			}

			// Every campaign on the store honours the list: 0 and 3 are on
			// it, 1 was taken off.
			for _, c := range []*e2eCampaign{e, other} {
				p := c.plan()
				if p.Totals.Suppressed != 2 || p.Totals.ToCall != p.Totals.Rows-2 {
					t.Errorf("plan of %s: %+v, want 2 suppressed by the do-not-call list", filepath.Base(c.dir), p.Totals)
				}
			}
			if kind == "postgres" {
				off := e.run(30*time.Second, "plan", "--offline", e.path)
				if off.code != 0 || !strings.Contains(off.stdout, "do-not-call list are in PostgreSQL, which --offline does not ask") {
					t.Errorf("plan --offline with PostgreSQL does not say it leaves the list out: %s", off)
				}
			}

			// An export over a file open to others: every number on the
			// list, so it is made 0600 (the reports' mode), whatever was there.
			out := filepath.Join(t.TempDir(), "export.csv")
			if err := os.WriteFile(out, []byte("an older export\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exp := e.run(30*time.Second, "suppress", "export", e.path, "--output", out)
			if exp.code != 0 {
				t.Fatalf("suppress export: %s", exp)
			}
			if fi, err := os.Stat(out); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != 0o600) {
				t.Errorf("suppress export --output wrote %v, %v; want mode 0600", fi.Mode(), err)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(recs) != 3 || !slices.Equal(recs[0], []string{"phone_number", "added_at", "source"}) ||
				recs[1][0] != contacts[0].E164 || recs[2][0] != contacts[3].E164 || recs[2][2] != "import "+csvPath {
				t.Errorf("suppress export: %v %v", recs, err)
			}
		})
	}
}

// TestOptOutMidRunHoldsEverywhere is the promise of the do-not-call
// list, checked against the sandbox's ledger: campaign A calls number X
// first; the service then says X opted out; campaign B, on the same store,
// has X in a later row and runs as two shards at the same time. Once the
// opt-out was acknowledged, X gets no call start from anyone, and B's
// report shows X suppressed for the list, not uncertain.
//
// The opt-out is delivered as the service would, to `callrun listen`
// serving A (outcomes.opt_out): with files, on one machine, it puts X on
// the list in CALLRUN_HOME; with PostgreSQL, on the database's. It comes
// in either of the shapes the service's documentation shows: the form of
// the contact's fields, or the signed JSON envelope, its number in
// data.caller_number.
func TestOptOutMidRunHoldsEverywhere(t *testing.T) {
	for _, kind := range e2eStores {
		for _, shape := range []string{"form", "envelope"} {
			t.Run(kind+"/"+shape, func(t *testing.T) { testOptOutMidRun(t, kind, shape) })
		}
	}
}

// optOutDelivery is the service's delivery that x opted out on call c, in
// shape form or envelope (signed with secret), as its body and type.
func optOutDelivery(t *testing.T, shape string, x e2eContact, c sandbox.Call, secret string) (string, string) {
	if shape == "form" {
		return url.Values{"event": {"call.ended"}, "phone_number": {x.E164}, "disposition": {"opted_out"}, "first_name": {x.First}}.Encode(), "application/x-www-form-urlencoded"
	}
	payload, err := json.Marshal(map[string]any{"event": "call.ended", "timestamp": time.Now().UTC().Format(time.RFC3339),
		"data": map[string]any{"call_id": c.CallID, "agent_id": c.AgentID, "caller_number": x.E164, "duration": 42, "status": "completed",
			"disposition": "opted_out", "transcript": "Agent: Hello. " + x.First + ": Please do not call me again."}})
	if err != nil {
		t.Fatal(err)
	}
	// Signed as the documentation's example signs the payload, then the
	// signature added as the envelope's last member.
	body := strings.TrimSuffix(string(payload), "}") + `,"signature":"` + apiclient.Sign(secret, payload) + `"}`
	return body, "application/json"
}

func testOptOutMidRun(t *testing.T, kind, shape string) {
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	phones := e2ePhones(120)
	x := phones[0]
	db := e2eDatabase(t, kind)
	home := filepath.Join(t.TempDir(), "callrun-home")

	// A: X first, then 40 more, at 20 calls a second.
	a := newE2ECampaign(t, srv, e2eSetup{contacts: phones[:41], perSecond: 20, concurrency: 2, postgres: db})
	a.rename("campaign-a")
	a.env = append(a.env, "CALLRUN_HOME="+home, "E2E_HOOK_SECRET="+hookSecret)
	a.appendYAML("outcomes:\n  url: http://" + addr + "/callrun/a/${E2E_HOOK_SECRET}\n  opt_out: {field: disposition, values: [do_not_call, opted_out]}\n  signing_secret: e2e-signing-secret\n")
	// B: 70 others, then X, then 9 more: two shards at 10 calls a second
	// each reach X's row seconds after A called X.
	bContacts := append(slices.Clone(phones[41:111]), x)
	bContacts = append(bContacts, phones[111:120]...)
	b := newE2ECampaign(t, srv, e2eSetup{contacts: bContacts, perSecond: 20, concurrency: 2, postgres: db, noLogin: db != ""})
	b.rename("campaign-b")
	b.renameAgent("E2E Caller B") // not A's: both runs would create it at once
	b.env = append(b.env, "CALLRUN_HOME="+home)

	listen := a.start("listen", "--addr", addr, a.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
	runs := []*e2eProc{a.start("run", a.path), b.start("run", "--shard", "0/2", b.path), b.start("run", "--shard", "1/2", b.path)}

	// The service says X opted out once A's call of X started.
	var xCall sandbox.Call
	waitFor(t, 30*time.Second, "A to call X", func() bool {
		i := slices.IndexFunc(srv.Calls(), func(c sandbox.Call) bool { return c.Form.Get("phone_number") == x.E164 && c.Placed })
		if i >= 0 {
			xCall = srv.Calls()[i]
		}
		return i >= 0
	})
	body, ctype := optOutDelivery(t, shape, x, xCall, "e2e-signing-secret")
	resp, err := http.Post("http://"+addr+"/callrun/a/"+hookSecret, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the opt-out delivery was answered %d", resp.StatusCode)
	}
	acked := time.Now()
	for i, p := range runs {
		res := p.wait(t, 90*time.Second)
		checkJSONLogs(t, res)
		if res.code != 0 {
			t.Errorf("run %d: %s", i, res)
		}
	}
	listen.signal(t, syscall.SIGTERM)
	if res := listen.wait(t, 30*time.Second); res.code != 0 {
		t.Errorf("listen: %s", res)
	}

	// The ledger: X was called once, by A, before the opt-out; nobody
	// called X after it was acknowledged.
	var xCalls []sandbox.Call
	placed := map[string]int{}
	for _, c := range srv.Calls() {
		if c.Placed {
			placed[c.Form.Get("phone_number")]++
		}
		if c.Form.Get("phone_number") == x.E164 {
			xCalls = append(xCalls, c)
			if c.ReceivedAt.After(acked) {
				t.Errorf("%s OPTED OUT at %s and got a call start at %s (ledger #%d)", x.E164, acked.Format(time.StampMicro), c.ReceivedAt.Format(time.StampMicro), c.Seq)
			}
		}
	}
	if len(xCalls) != 1 {
		t.Errorf("%s was sent %d call starts, want the one of campaign A", x.E164, len(xCalls))
	}
	for phone, n := range placed {
		if n > 1 {
			t.Errorf("%s placed %d times", phone, n)
		}
	}
	if len(placed) != 120 {
		t.Errorf("%d numbers placed, want 120 (every contact of A, and B's but X)", len(placed))
	}

	// B's report, each shard's as its run wrote it at its end: X
	// suppressed for the list, the others sent.
	for _, r := range b.reportRows() {
		want, reason := "sent", ""
		if r["phone_number"] == x.E164 {
			want, reason = "suppressed", "the number is on the do-not-call list"
		}
		if r["status"] != want || reason != "" && r["reason"] != reason {
			t.Errorf("B's report: %s %q (%s), want %s", r["phone_number"], r["status"], r["reason"], want)
		}
	}
	// A's report: X sent (called before it opted out).
	for _, r := range a.reportRows() {
		if r["status"] != "sent" {
			t.Errorf("A's report: %s %q (%s), want sent", r["phone_number"], r["status"], r["reason"])
		}
	}
	es := a.dncList(true)
	if len(es) != 1 || es[0].Number != x.E164 {
		t.Fatalf("the do-not-call list: %+v, want X alone", es)
	}
	if kind == "files" && (!strings.HasPrefix(es[0].Source, "delivery ") || !strings.HasSuffix(es[0].Source, " of campaign campaign-a")) {
		t.Errorf("the opt-out's entry: %+v, want its delivery and campaign", es[0])
	}
}

// reportRows reads the campaign's report.csv (the whole campaign's, or
// each shard's for a campaign run in shards), without checking it
// against the sheet's order.
func (e *e2eCampaign) reportRows() []e2eRow {
	e.t.Helper()
	paths := []string{filepath.Join(e.stateDir, "report.csv")}
	if _, err := os.Stat(paths[0]); err != nil {
		paths, _ = filepath.Glob(filepath.Join(e.stateDir, "shard-*", "report.csv"))
	}
	var rows []e2eRow
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			e.t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			e.t.Fatal(err)
		}
		for _, rec := range recs[1:] {
			r := e2eRow{}
			for j, col := range recs[0] {
				r[col] = rec[j]
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		e.t.Fatalf("no report.csv in %s", e.stateDir)
	}
	return rows
}

// renameAgent gives the campaign's agent another name.
func (e *e2eCampaign) renameAgent(name string) {
	e.t.Helper()
	b, err := os.ReadFile(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), e2eAgent, name))
	if err := os.WriteFile(e.path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}
