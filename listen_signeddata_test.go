package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// TestListenReadsASignatureOverDataFromData: with require_signature, an
// envelope whose signature covers the bytes of its data member alone is
// read from data: members beside data that nobody signed (a
// phone_number, a disposition) are not the delivery's, so they cannot
// aim an opt-out at another number, nor make one of a call that data
// says ended without one. Data's own opt-out is listed.
func TestListenReadsASignatureOverDataFromData(t *testing.T) {
	const secret = "whsec-listen-test"
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	b = append(b, "  signing_secret: "+secret+"\n  require_signature: true\n  opt_out: {field: disposition, values: [do_not_call]}\nregion: US\n"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	post := func(body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/callrun/spring/"+hookSecret, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	envelope := func(outside, data string) string {
		return `{"event":"call.ended",` + outside + `"data":` + data + `,"signature":"` + apiclient.Sign(secret, []byte(data)) + `"}`
	}
	listed := func() map[string]store.DoNotCallEntry {
		t.Helper()
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return store.OnDoNotCall(es)
	}

	// The forged envelope: data says call_2 to +14155550132 completed.
	forged := envelope(`"phone_number":"+12025550143","disposition":"do_not_call",`, `{"call_id":"call_2","phone_number":"+14155550132","status":"completed"}`)
	if got := post(forged); got != http.StatusOK {
		t.Fatalf("the envelope signed over data: answered %d", got)
	}
	if on := listed(); len(on) != 0 {
		t.Errorf("after an envelope whose signed data opts nobody out: listed %v, want nobody", on)
	}
	// Data's opt-out, with another number beside it: data's is listed.
	optOut := envelope(`"phone_number":"+12025550143",`, `{"call_id":"call_3","phone_number":"+14155550132","disposition":"do_not_call"}`)
	if got := post(optOut); got != http.StatusOK {
		t.Fatalf("the signed opt-out: answered %d", got)
	}
	if on := listed(); len(on) != 1 || on["+14155550132"].Number == "" {
		t.Errorf("after a signed opt-out of +14155550132: listed %v, want it alone", on)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	ds, err := store.ReadDeliveries(filepath.Join(dir, ".callrun", "spring"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if _, ok := d.Fields["phone_number"]; ok {
			t.Errorf("a stored delivery keeps the unsigned phone_number: %v", d.Fields)
		}
	}
}
