package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/jackc/pgx/v5"
)

// TestErasedPersonsDeliveriesHoldThemInNoForm, files and PostgreSQL:
// listen receives deliveries for A and B, with transcripts naming them; A
// is erased from the store (the erased set, with the store's real key)
// while listen runs; then late deliveries for A come, one told by its
// call, one by its fields (an opt-out), each twice; then the deliveries
// stored before the erase are erased while listen runs (EraseDeliveries;
// with files, the listen that holds the file erases it itself, and the
// erase waits for it to say so). Every form of A (E.164, its
// digits, national, name, e-mail) is then in no delivery stored, B's are
// all there, A's opt-out still reached the do-not-call list, each late
// delivery is stored once, and `outcomes` and `report` read the store.
// With files, a listen started again on a store that lost its erasure key
// stores nothing and answers 503, its log naming the key.
func TestErasedPersonsDeliveriesHoldThemInNoForm(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) { testLateDeliveryErased(t, kind) })
	}
}

func testLateDeliveryErased(t *testing.T, kind string) {
	ctx := context.Background()
	e, listen, addr, home, db := erasureListen(t, kind)
	a, b := e.contacts[0], e.contacts[1]
	var postWant func(string, int)
	post := func(body string) { t.Helper(); postWant(body, http.StatusOK) }
	postWant = func(body string, want int) {
		t.Helper()
		resp, err := http.Post("http://"+addr+"/callrun/e2e/"+hookSecret, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("listen answered %d to %s, want %d", resp.StatusCode, body, want)
		}
	}
	national := func(c e2eContact) string { // (212) 555-0100
		return fmt.Sprintf("(%s) %s-%s", c.E164[2:5], c.E164[5:8], c.E164[8:])
	}
	email := func(c e2eContact) string {
		return strings.ReplaceAll(strings.ToLower(c.First), " ", ".") + "@example.com"
	}
	delivery := func(c e2eContact, callID, disposition string) string {
		id := ""
		if callID != "" {
			id = `"call_id":"` + callID + `",`
		}
		return fmt.Sprintf(`{"event":"call.ended","timestamp":"%s","data":{%s"status":"completed","disposition":"%s","customer":{"number":"%s","name":"%s","email":"%s"},"transcript":"Agent: Am I speaking with %s? Caller: yes, call me back on %s or write to %s."}}`,
			time.Now().UTC().Format(time.RFC3339Nano), id, disposition, c.E164, c.First, email(c), c.First, national(c), email(c))
	}
	post(delivery(b, "call_b1", "interested"))
	post(delivery(a, "call_a0", "interested")) // before the erase: stored in clear
	// One that names A's call and no number of theirs: the journal says
	// whose call it was (erase's CallIDsOf; given here).
	post(`{"event":"call.ended","data":{"call_id":"call_a9","status":"completed","transcript":"Agent: Am I speaking with ` + a.First + `?"}}`)

	// A is erased while listen runs: the store's key, A in the erased set.
	var erasure store.ErasureStore = store.OpenErasureFile(home)
	var pg *store.Postgres
	if db != "" {
		var err error
		if pg, err = store.OpenPostgres(ctx, db, "e2e", 0, 1); err != nil {
			t.Fatal(err)
		}
		defer pg.Close()
		if erasure, err = pg.Erasure(); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := erasure.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.AddErased(ctx, []store.ErasedEntry{{Hash: keys.Hashes(a.E164)[0], At: time.Now(), Why: "erase"}}); err != nil {
		t.Fatal(err)
	}

	// Late deliveries for A, each sent twice (a retry), and one more for B.
	for range 2 {
		post(delivery(a, "call_a1", "interested"))
		post(delivery(a, "", "opted_out"))
	}
	post(delivery(b, "call_b2", "opted_out"))

	// Then A's deliveries stored before the erase are erased too, while
	// listen runs: with files, by that listen.
	t.Setenv("E2E_CLIENT_SECRET", sandbox.DefaultClientSecret)
	t.Setenv("E2E_HOOK_SECRET", hookSecret)
	t.Setenv("CALLRUN_DATABASE_URL", db)
	t.Setenv("CALLRUN_HOME", home) // listen's
	f, err := campaign.Load(e.path, campaign.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var eraser store.Store = store.Files{Dir: e.stateDir}
	if pg != nil {
		eraser = pg
	}
	byListen := false
	n, err := eraser.EraseDeliveries(ctx, []string{a.E164}, store.DeliveryEraseOptions{Keys: keys, Numbers: f.DeliveryNumbers, Wait: 30 * time.Second,
		ByListen: func() { byListen = true }, CallIDs: map[string]bool{"call_a9": true}})
	if pg == nil && (err != nil || !byListen) || pg != nil && (err != nil || n != 2) {
		t.Errorf("erasing A's deliveries: %d (by listen %v), %v; want the two stored before the erase, by listen with files", n, byListen, err)
	}
	if left, err := filepath.Glob(filepath.Join(e.stateDir, store.EraseRequestFile+"*")); err != nil || len(left) > 0 {
		t.Errorf("requests left for listen after the erase: %v, %v; listen removes each it has done", left, err)
	}
	post(delivery(a, "call_a1", "interested")) // a retry after the erase: stored once still

	stored := func() (string, int) {
		t.Helper()
		if db == "" {
			var all bytes.Buffer
			err := filepath.WalkDir(e.stateDir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				all.Write(data)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(e.stateDir, store.DeliveriesFile))
			if err != nil {
				t.Fatal(err)
			}
			return all.String(), bytes.Count(data, []byte("\n"))
		}
		conn, err := pgx.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var text string
		var n int
		if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(key || ' ' || delivery::text, E'\n'), ''), count(*) FROM callrun_deliveries`).Scan(&text, &n); err != nil {
			t.Fatal(err)
		}
		return text, n
	}
	text, n := stored()
	for _, form := range []string{a.E164, a.E164[1:], a.E164[2:], national(a), a.First, email(a)} {
		if strings.Contains(text, form) {
			t.Errorf("the store holds the erased person's %q:\n%s", form, text)
		}
	}
	for _, form := range []string{b.E164, national(b), b.First, email(b)} {
		if !strings.Contains(text, form) {
			t.Errorf("the store lost B's %q:\n%s", form, text)
		}
	}
	if !strings.Contains(text, "h1:") {
		t.Errorf("the erased opt-out, which names no call, is not stored under a keyed hash of its key:\n%s", text)
	}
	if want := 6; n != want || strings.Count(text, `"erased": true`)+strings.Count(text, `"erased":true`) != 4 {
		t.Errorf("%d deliveries stored, want %d, 4 of them erased (the one naming A's call only too):\n%s", n, want, text)
	}
	// A's opt-out still reached the do-not-call list, whatever form the
	// list keeps it in.
	var list store.DoNotCallList = store.OpenDoNotCallFile(home)
	if pg != nil {
		if list, err = pg.DoNotCall(); err != nil {
			t.Fatal(err)
		}
	}
	on, err := list.OnList(ctx, []string{a.E164, b.E164})
	if err != nil || !on[a.E164] || !on[b.E164] {
		t.Errorf("the do-not-call list has A %v and B %v (%v); want both", on[a.E164], on[b.E164], err)
	}
	for _, args := range [][]string{{"outcomes", e.path}, {"report", e.path}} {
		if res := e.run(60*time.Second, args...); res.code != 0 || strings.Contains(res.stdout, a.E164) {
			t.Errorf("%s: %s", args[0], res)
		}
	}
	listen.signal(t, syscall.SIGTERM)
	if res := listen.wait(t, 30*time.Second); res.code != 0 || strings.Contains(res.stdout+res.stderr, a.E164) {
		t.Errorf("listen: %s", res)
	}
	if db == "" {
		// A store restored without its erasure key cannot tell anyone
		// from the erased: listen stores nothing and answers 503.
		if err := os.Remove(filepath.Join(home, store.ErasureKeyFileName)); err != nil {
			t.Fatal(err)
		}
		listen = e.start("listen", "--addr", addr, e.path)
		waitFor(t, 10*time.Second, "listen to start again", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
		postWant(delivery(b, "call_b3", "interested"), http.StatusServiceUnavailable)
		if _, after := stored(); after != n {
			t.Errorf("%d deliveries stored once the key was lost, want %d", after, n)
		}
		listen.signal(t, syscall.SIGTERM)
		if res := listen.wait(t, 30*time.Second); res.code != 0 || !strings.Contains(res.stderr, "erasure key") {
			t.Errorf("listen without the key: %s", res)
		}
	}
}

// erasureListen starts, with a store of the given kind, a campaign of two
// contacts (A and B, in e.contacts) whose outcomes listen receives and
// whose opt-outs it puts on the list, and that listen; it returns them,
// listen's address, the campaign's CALLRUN_HOME and its database ("":
// files). The erasure tests that run listen start so.
func erasureListen(t *testing.T, kind string) (e *e2eCampaign, listen *e2eProc, addr, home, db string) {
	t.Helper()
	addr = freePort(t)
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	db = e2eDatabase(t, kind)
	e = newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(2), perSecond: 10, concurrency: 1, postgres: db})
	home = t.TempDir()
	e.env = append(e.env, "CALLRUN_HOME="+home, "E2E_HOOK_SECRET="+hookSecret)
	e.appendYAML("outcomes:\n  url: http://" + addr + "/callrun/e2e/${E2E_HOOK_SECRET}\n  fields: [disposition, transcript]\n  opt_out: {field: disposition, values: [opted_out]}\n")
	listen = e.start("listen", "--addr", addr, e.path)
	waitFor(t, 10*time.Second, "listen to start", func() bool { return strings.Contains(listen.stdout.String(), "listening on") })
	return e, listen, addr, home, db
}
