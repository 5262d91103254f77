package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/callrun/callrun/report/store"
)

// TestListenSameCallSaysMore: the service's envelope for one call's
// call.ended comes twice with different bodies, first completed, then
// do_not_call (once the call's analysis is done), then the retry of the
// second, stamped anew at its top and in its data. Through listen's
// handler: the second is another delivery, stored beside the first, and
// its number is on the do-not-call list, so the next plan holds it; the
// retry stores nothing more.
func TestListenSameCallSaysMore(t *testing.T) {
	dir, home, path, base, _, stop := listenCampaign(t, "  opt_out: {field: disposition, values: [do_not_call]}\n  fields: [disposition]\nregion: US\n")
	post := func(body string) { t.Helper(); postHook(t, base, body) }
	const (
		completed = `{"event":"call.ended","timestamp":"2025-03-01T17:05:40Z","data":{"call_id":"call_7","agent_id":"agent_1","caller_number":"+14155550132","duration":31,"status":"completed","disposition":"completed"},"signature":"sha256=0a"}`
		optedOut  = `{"event":"call.ended","timestamp":"2025-03-01T17:06:10Z","data":{"call_id":"call_7","agent_id":"agent_1","caller_number":"+14155550132","duration":31,"status":"completed","disposition":"do_not_call","transcript":"Agent: Hi ...\nCaller: Please do not call me again."},"signature":"sha256=0b"}`
		retry     = `{"event":"call.ended","timestamp":"2025-03-01T17:06:40Z","data":{"call_id":"call_7","agent_id":"agent_1","caller_number":"+14155550132","duration":31,"status":"completed","disposition":"do_not_call","transcript":"Agent: Hi ...\nCaller: Please do not call me again.","attempt":2},"signature":"sha256=0c"}`
	)
	for _, body := range []string{completed, optedOut, retry} {
		post(body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if on := store.OnDoNotCall(es); len(on) != 1 || on["+14155550132"].Number == "" {
		t.Errorf("the do-not-call list holds %v, want +14155550132", on)
	}
	ds, err := store.ReadDeliveries(filepath.Join(dir, ".callrun", "spring"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Fields["data.disposition"] != "completed" || ds[1].Fields["data.disposition"] != "do_not_call" || ds[0].Key == ds[1].Key {
		t.Errorf("stored %d deliveries, want the completed one then the do_not_call one, under two keys: %+v", len(ds), ds)
	}

	// The next plan holds the number.
	var out bytes.Buffer
	app := newApp(&session{stdout: &out, stderr: io.Discard})
	if err := app.RunContext(context.Background(), []string{"callrun", "plan", "--offline", "--format", "json", path}); err != nil {
		t.Fatalf("plan: %v\n%s", err, out.String())
	}
	var p e2ePlan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("plan --format json: %v\n%s", err, out.String())
	}
	if p.Totals.Rows != 1 || p.Totals.Suppressed != 1 || p.Totals.ToCall != 0 {
		t.Errorf("plan after the opt-out: %+v, want its one row suppressed", p.Totals)
	}
}
