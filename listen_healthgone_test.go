package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// TestListenHealthzFailsWhenItsDeliveriesFileGoes: the deliveries file
// is removed under a running listen, which from then on answers every
// delivery 503 until it is restarted. Before, /healthz still answered
// 200, so a supervisor probing it (the Kubernetes example's liveness
// probe) never restarted it, and the service's retries ran out on it; now
// /healthz answers 503 and names the campaign.
func TestListenHealthzFailsWhenItsDeliveriesFileGoes(t *testing.T) {
	dir := t.TempDir()
	path := writeListenCampaign(t, dir, "spring")
	var logs e2eBuffer
	base, _ := startListen(t, &logs, path)
	c := &http.Client{Timeout: 10 * time.Second}
	get := func(target string) int {
		t.Helper()
		resp, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post := func(phone string) int {
		t.Helper()
		resp, err := c.PostForm(base+"/callrun/spring/"+hookSecret, url.Values{"event": {"call.ended"}, "phone_number": {phone}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("+14155550101"); code != 200 {
		t.Fatalf("first delivery answered %d", code)
	}
	if code := get(base + "/healthz"); code != 200 {
		t.Fatalf("/healthz answered %d with the file in place", code)
	}
	if err := os.Remove(filepath.Join(dir, ".callrun", "spring", store.DeliveriesFile)); err != nil {
		t.Fatal(err)
	}
	if code := post("+14155550102"); code != 503 {
		t.Fatalf("a delivery after the file was removed answered %d, want 503", code)
	}
	if code := get(base + "/healthz"); code != 503 {
		t.Errorf("/healthz answered %d while every delivery is refused until a restart, want 503", code)
	}
}
