package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestListenStoresNoEchoedSecret: a delivery whose fields echo listen's
// own secret path (a webhook URL the service sends back in its call
// object) is stored with the secret blanked: deliveries.jsonl is not the
// secret's store.
func TestListenStoresNoEchoedSecret(t *testing.T) {
	dir := t.TempDir()
	spring := writeListenCampaign(t, dir, "spring")
	var logs e2eBuffer
	base, stop := startListen(t, &logs, spring)
	hook := base + "/callrun/spring/" + hookSecret
	body := `{"event":"call.ended","call_id":"c-echo-1","phone_number":"+14155550132","call":{"webhook_url":"https://hooks.example.com/callrun/spring/` + hookSecret + `/agent"}}`
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(hook, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delivery answered %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".callrun", "spring", "deliveries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("c-echo-1")) {
		t.Fatal("the delivery is not stored")
	}
	if bytes.Contains(b, []byte(hookSecret[12:])) {
		t.Error("deliveries.jsonl holds listen's secret path")
	}
}
