package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// TestListenOnPostgresThatRestarts: PostgreSQL stops under a running
// listen and starts again. While it is down, an opt-out is never
// acknowledged (503, never 200); once it is up, the same listen, never
// restarted, stores the service's retry of it and puts the number on the
// database's do-not-call list, and the deliveries before are there once.
func TestListenOnPostgresThatRestarts(t *testing.T) {
	dir := t.TempDir()
	db := pgtest.URL(t)
	cluster := pgtest.Shared(t)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	yaml := strings.Replace(string(b), "outcomes:\n", "outcomes:\n  opt_out: {field: disposition, values: [dnc]}\n", 1)
	os.WriteFile(path, append([]byte(yaml), "state: {postgres: \"${E2E_DATABASE_URL}\"}\n"...), 0o644)
	t.Setenv("E2E_DATABASE_URL", db)
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	c := &http.Client{Timeout: 30 * time.Second}
	post := func(form url.Values) int {
		t.Helper()
		resp, err := c.PostForm(base+"/callrun/spring/"+hookSecret, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	before := url.Values{"event": {"call.ended"}, "call_id": {"c1"}, "phone_number": {"+14155550101"}}
	optOut := url.Values{"event": {"call.ended"}, "call_id": {"c2"}, "phone_number": {"+14155550102"}, "disposition": {"dnc"}}
	if code := post(before); code != 200 {
		t.Fatalf("a delivery before PostgreSQL stopped answered %d", code)
	}
	// Registered after pgtest.URL's clean-up, so run before it.
	t.Cleanup(func() { cluster.Start(t) })
	cluster.Stop(t)
	for range 3 {
		if code := post(optOut); code == 200 || code < 500 {
			t.Fatalf("an opt-out while PostgreSQL is down answered %d, want 5xx\n%s", code, logs.String())
		}
	}
	cluster.Start(t)
	ok := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if post(optOut) == 200 {
			ok = true
			break
		}
	}
	if !ok {
		t.Fatalf("the service's retries of the opt-out after PostgreSQL started again were never stored\n%s", logs.String())
	}
	if code := post(before); code != 200 {
		t.Errorf("a retry of the first delivery answered %d", code)
	}
	if err := stop(); err != nil {
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
	if len(ds) != 2 || seen["+14155550101"] != 1 || seen["+14155550102"] != 1 {
		t.Errorf("deliveries stored: %v; want each once", seen)
	}
	list, _ := p.DoNotCall()
	if on, err := list.Has(context.Background(), "+14155550102"); err != nil || !on {
		t.Errorf("the opt-out's number on the database's list: %v, %v", on, err)
	}
}
