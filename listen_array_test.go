package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/report/store"
)

// TestListenArrayWithABadElement: a batching sender's JSON array whose
// second element is a bare string and fourth an empty object. Through
// listen's handler, the two deliveries are stored and the opt-out's
// number is on the do-not-call list before the answer; the others are
// refused as each would be alone (400, logged as a refused delivery),
// and the answer names them. The sender's retry of the whole array
// stores nothing more, and gets the same answer.
func TestListenArrayWithABadElement(t *testing.T) {
	dir, home, _, base, logs, stop := listenCampaign(t, "  opt_out: {field: disposition, values: [opted_out]}\nregion: US\n")
	const batch = `[{"event":"call.started","phone_number":"+14155550133"},"call.ended",{"event":"call.ended","phone_number":"+14155550134","disposition":"opted_out"},{}]`
	type answer struct {
		Stored  int `json:"stored"`
		Refused []struct {
			Element int    `json:"element"`
			Why     string `json:"why"`
		} `json:"refused"`
	}
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := http.Post(base+"/callrun/spring/"+hookSecret, "application/json", strings.NewReader(batch))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var a answer
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &a) != nil || a.Stored != 2 || len(a.Refused) != 2 ||
			a.Refused[0].Element != 2 || a.Refused[1].Element != 4 || !strings.Contains(a.Refused[1].Why, "an empty delivery") {
			t.Errorf("attempt %d: answered %d %s; want 400 naming elements 2 and 4, two stored", attempt, resp.StatusCode, body)
		}
		ds, err := store.ReadDeliveries(filepath.Join(dir, ".callrun", "spring"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 2 || ds[0].Event != "call.started" || ds[1].Fields["disposition"] != "opted_out" {
			t.Errorf("attempt %d: stored %d deliveries: %+v; want the array's two", attempt, len(ds), ds)
		}
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if on := store.OnDoNotCall(es); len(on) != 1 || on["+14155550134"].Number == "" {
			t.Errorf("attempt %d: the do-not-call list holds %v, want +14155550134", attempt, on)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"message":"delivery refused"`) || !strings.Contains(logs.String(), "element 2 of the array of 4") {
		t.Errorf("listen's log does not say it refused the elements:\n%s", logs.String())
	}
}
