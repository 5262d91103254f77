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
	"github.com/jackc/pgx/v5"
)

// TestListenStoppedFinishesAnOptOutInFlight: listen is asked to stop
// (SIGTERM) while an opt-out is in flight: its delivery is committed, and
// the database's do-not-call list is slow to take the number (another
// writer holds the list's lock past listen's grace for senders). Listen
// cuts the sender off, as it does a slow one. Before, that cut also
// cancelled the opt-out half-way: the delivery stayed stored and the
// number off the list, and every run on the store could call the person
// until the service's retry came (if it came). Now listen finishes the
// deliveries it began to store, as it says it does: once the lock is
// free, the number is on the list before listen returns.
func TestListenStoppedFinishesAnOptOutInFlight(t *testing.T) {
	dir := t.TempDir()
	db := pgtest.URL(t)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	yaml := strings.Replace(string(b), "outcomes:\n", "outcomes:\n  opt_out: {field: disposition, values: [dnc]}\n", 1)
	os.WriteFile(path, append([]byte(yaml), "state: {postgres: \"${E2E_DATABASE_URL}\"}\n"...), 0o644)
	t.Setenv("E2E_DATABASE_URL", db)
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	ctx := context.Background()
	c := &http.Client{Timeout: 30 * time.Second}
	// A first opt-out makes the list's tables; then another writer takes
	// the list's lock and holds it.
	resp, err := c.PostForm(base+"/callrun/spring/"+hookSecret, url.Values{"event": {"call.ended"}, "call_id": {"c0"}, "phone_number": {"+14155550100"}, "disposition": {"dnc"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("first opt-out answered %d", resp.StatusCode)
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(0x63616c6c646e63)); err != nil { // the list's lock, dncLock
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		resp, err := c.PostForm(base+"/callrun/spring/"+hookSecret, url.Values{"event": {"call.ended"}, "call_id": {"c1"}, "phone_number": {"+14155550101"}, "disposition": {"dnc"}})
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				t.Error("the opt-out was acknowledged while the list's lock was held")
			}
		}
		sent <- err
	}()
	p, err := store.OpenPostgres(ctx, db, "spring", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitFor(t, 20*time.Second, "the opt-out's delivery to be committed", func() bool {
		ds, err := p.ReadDeliveries(ctx)
		return err == nil && len(ds) == 2
	})
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Listen cuts the sender off after its grace.
	select {
	case <-sent:
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not cut the sender off")
	}
	tx.Rollback(ctx) // the lock is free
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not stop")
	}
	list, _ := p.DoNotCall()
	if on, err := list.Has(ctx, "+14155550101"); err != nil || !on {
		t.Errorf("the opt-out's number on the list after listen stopped: %v, %v; its delivery is stored\n%s", on, err, logs.String())
	}
}
