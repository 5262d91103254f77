package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestListenStopsWhenItsDeliveriesFileGoes removes the state directory
// (and, separately, renames the deliveries file) under a running `callrun
// listen` while the sandbox delivers its account webhooks: every delivery
// sent after that is answered 503, said in the log and in /metrics, until
// listen is restarted; then the sandbox's retries are stored, and every
// delivery the sandbox saw acknowledged after the removal is in the file
// at the path (with a rename, every one acknowledged before is in the
// file renamed).
func TestListenStopsWhenItsDeliveriesFileGoes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs listen twice against the sandbox's webhooks")
	}
	for _, tc := range []struct {
		name  string
		moved string // where the deliveries acknowledged before went; "" for nowhere
		move  func(state string) error
	}{
		{"state dir removed", "", os.RemoveAll},
		{"file renamed", "old.jsonl", func(state string) error {
			return os.Rename(filepath.Join(state, store.DeliveriesFile), filepath.Join(state, "old.jsonl"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeListenCampaign(t, dir, "spring")
			state := filepath.Join(dir, ".callrun", "spring")
			addr := freePort(t)
			srv, endpoint := hookSandbox(t, addr, 100*time.Millisecond, 100000)
			var logs e2eBuffer
			defer func() {
				if t.Failed() {
					t.Logf("listen's logs:\n%s", logs.String())
				}
			}()
			listen := startListenChild(t, e2eEnv(dir), addr, path, &logs)
			defer func() {
				listen.Process.Kill()
				listen.Wait()
			}()

			const calls = 40
			var placing sync.WaitGroup
			placing.Add(1)
			go func() {
				defer placing.Done()
				c := &http.Client{Timeout: 10 * time.Second}
				for i := range calls {
					resp, err := c.PostForm(endpoint, url.Values{"phone_number": {fmt.Sprintf("+1415555%04d", i)}})
					if err != nil {
						t.Errorf("call %d: %v", i, err)
						return
					}
					resp.Body.Close()
					time.Sleep(20 * time.Millisecond)
				}
			}()
			count := func(ok func(d sandbox.Delivery) bool) int {
				n := 0
				for _, d := range srv.Deliveries() {
					if ok(d) {
						n++
					}
				}
				return n
			}
			waitFor(t, 30*time.Second, "deliveries acknowledged", func() bool {
				return count(func(d sandbox.Delivery) bool { return d.Acked }) >= 15
			})
			if err := tc.move(state); err != nil {
				t.Fatal(err)
			}
			moved := time.Now()
			after := func(d sandbox.Delivery) bool { return d.Sent.After(moved) }
			waitFor(t, 30*time.Second, "deliveries answered after the removal", func() bool {
				return count(func(d sandbox.Delivery) bool { return after(d) && (d.Acked || d.Status != 0) }) >= 10
			})
			if n := count(func(d sandbox.Delivery) bool { return after(d) && d.Acked }); n > 0 {
				t.Errorf("%d deliveries sent after the deliveries file went were acknowledged", n)
			}
			if n := count(func(d sandbox.Delivery) bool { return after(d) && d.Status != http.StatusServiceUnavailable }); n > 0 {
				t.Errorf("%d deliveries sent after the deliveries file went were not answered 503", n)
			}
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(metrics), `callrun_listen_deliveries_file_gone{campaign="spring"} 1`) {
				t.Errorf("/metrics does not say the deliveries file is gone")
			}
			listen.Process.Signal(syscall.SIGTERM)
			if err := listen.Wait(); err != nil {
				t.Errorf("listen after SIGTERM: %v", err)
			}
			if !strings.Contains(logs.String(), "the deliveries file was removed or replaced under listen") {
				t.Errorf("listen's log does not say the deliveries file went")
			}

			listen = startListenChild(t, e2eEnv(dir), addr, path, &logs)
			placing.Wait()
			waitFor(t, 60*time.Second, "every delivery acknowledged after the restart", func() bool {
				return count(func(d sandbox.Delivery) bool { return d.Acked }) == 3*calls
			})
			listen.Process.Signal(syscall.SIGTERM)
			if err := listen.Wait(); err != nil {
				t.Errorf("listen after SIGTERM: %v", err)
			}
			checkJSONLogs(t, e2eResult{args: []string{"listen"}, stderr: logs.String()})

			atPath := storedFields(t, filepath.Join(state, store.DeliveriesFile))
			var before map[string]bool
			if tc.moved != "" {
				before = storedFields(t, filepath.Join(state, tc.moved))
			}
			lost := 0
			for _, d := range srv.Deliveries() {
				f := formKey(d.Form)
				switch {
				case after(d) && !atPath[f]:
					t.Errorf("delivery %d (%s of %s), acknowledged after the file went, is not in the file at the path", d.Seq, d.Event, d.CallID)
				case !after(d) && !atPath[f] && !before[f]:
					lost++
				}
			}
			if tc.moved != "" && lost > 0 {
				t.Errorf("%d deliveries acknowledged before the rename are neither in the file renamed nor at the path", lost)
			}
			t.Logf("%d deliveries; %d acknowledged before the move, %d in the file at the path", len(srv.Deliveries()), count(func(d sandbox.Delivery) bool { return !after(d) }), len(atPath))
		})
	}
}

// hookSandbox returns a sandbox whose calls last 20ms and whose account
// webhooks go to campaign "spring" of a listen on addr, each tried up to
// attempts times, 5ms apart at first and up to maxRetry, and the endpoint
// that places its calls. It closes with the test.
func hookSandbox(t *testing.T, addr string, maxRetry time.Duration, attempts int) (*sandbox.Server, string) {
	t.Helper()
	srv := sandbox.NewServer(sandbox.Options{
		CallDuration: 20 * time.Millisecond,
		AccountWebhook: sandbox.AccountWebhook{
			URL:   "http://" + addr + "/callrun/spring/" + hookSecret,
			Retry: 5 * time.Millisecond, MaxRetry: maxRetry, Attempts: attempts,
		},
	})
	t.Cleanup(srv.Close)
	agent := srv.AddAgent(sandbox.Agent{AgentName: "Agent"})
	endpoint, _ := srv.CallEndpoint(agent.AgentID)
	return srv, endpoint
}

// storedFields returns the fields of each delivery of the deliveries file
// at path, as formKey writes them.
func storedFields(t *testing.T, path string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var d store.Delivery
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("a line of %s: %v: %q", path, err, line)
		}
		b, _ := json.Marshal(d.Fields)
		out[string(b)] = true
	}
	return out
}

// formKey is a sandbox delivery's fields as JSON, to find it among the
// stored ones.
func formKey(form url.Values) string {
	fields := map[string]string{}
	for k, v := range form {
		fields[k] = v[0]
	}
	b, _ := json.Marshal(fields)
	return string(b)
}
