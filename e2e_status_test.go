package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// e2eStatus is `status --format json`.
type e2eStatus struct {
	Counts  map[string]int `json:"counts"`
	Running []struct {
		Host  string    `json:"host"`
		PID   int       `json:"pid"`
		Since time.Time `json:"since"`
		Shard string    `json:"shard"`
	} `json:"running"`
}

func (e *e2eCampaign) statusJSON() (e2eStatus, string) {
	e.t.Helper()
	cmd := exec.Command(e2eBin.path, "--log-format", "json", "status", "--format", "json", e.path)
	cmd.Env, cmd.Dir = e.env, e.cwd
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("status: %v\n%s", err, out)
	}
	var st e2eStatus
	if err := json.Unmarshal(out, &st); err != nil {
		e.t.Fatalf("status: %v\n%s", err, out)
	}
	text := exec.Command(e2eBin.path, "status", e.path)
	text.Env, text.Dir = e.env, e.cwd
	tout, err := text.Output()
	if err != nil {
		e.t.Fatalf("status: %v\n%s", err, tout)
	}
	return st, string(tout)
}

// TestStatusDuringARun: while a run holds the campaign's lock, status
// names it (its pid, since when) and counts the calls it has started and
// not yet heard back about as in flight, not uncertain; the contacts a
// run killed before it left uncertain stay uncertain. Once it has ended,
// nothing is in flight and no run is named. On both stores.
func TestStatusDuringARun(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			const n, concurrency = 40, 4
			srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Latency: 800 * time.Millisecond}})
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 100, concurrency: concurrency, postgres: e2eDatabase(t, kind)})

			// A run killed with its calls in flight leaves them uncertain.
			first := e.start("run", e.path)
			waitFor(t, 30*time.Second, "the first calls", func() bool { return srv.Stats().CallsReceived >= concurrency })
			first.signal(t, syscall.SIGKILL)
			first.wait(t, 10*time.Second)
			st, _ := e.statusJSON()
			killed := st.Counts["uncertain"]
			if killed == 0 || len(st.Running) != 0 || st.Counts["in_flight"] != 0 {
				t.Fatalf("after a kill: %+v, want some uncertain, no run and none in flight", st)
			}

			second := e.start("run", e.path)
			before := srv.Stats().CallsReceived
			waitFor(t, 30*time.Second, "the second run's calls", func() bool { return srv.Stats().CallsReceived >= before+concurrency })
			st, text := e.statusJSON()
			if len(st.Running) != 1 || st.Running[0].PID != second.pid() || st.Running[0].Since.IsZero() || time.Since(st.Running[0].Since) > time.Minute {
				t.Errorf("status during the run names %+v, want the run of pid %d", st.Running, second.pid())
			}
			if st.Counts["uncertain"] != killed || st.Counts["in_flight"] < 1 || st.Counts["in_flight"] > concurrency {
				t.Errorf("status during the run: %v; want the %d uncertain of the kill, and 1 to %d in flight", st.Counts, killed, concurrency)
			}
			if !strings.Contains(text, fmt.Sprintf("(pid %d)", second.pid())) || !strings.Contains(text, "holds the lock") || !strings.Contains(text, "in flight") {
				t.Errorf("status's text during the run:\n%s", text)
			}
			res := second.wait(t, 60*time.Second)
			if res.code != run.ExitIncomplete { // the killed run's uncertain contacts
				t.Errorf("the second run: %s", res)
			}
			st, text = e.statusJSON()
			if len(st.Running) != 0 || st.Counts["in_flight"] != 0 || st.Counts["uncertain"] != killed || st.Counts["sent"] != n-killed {
				t.Errorf("status after the run: %+v; want no run, none in flight, %d uncertain, the rest sent", st, killed)
			}
			if strings.Contains(text, "in flight") || strings.Contains(text, "holds the lock") {
				t.Errorf("status's text after the run:\n%s", text)
			}
			e.ledger().checkNobodyTwice(t)
		})
	}
}
