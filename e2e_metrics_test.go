package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRunMetricsFile runs the binary with --metrics-file against a
// sandbox that answers some call starts 429 (a pause of every worker), 500
// after placing the call (uncertain) and 202 with an error (failed). The
// file is there before the first call, saying the run runs; at the end its
// contacts by status equal summary.json's, its call starts the requests
// in the sandbox's ledger, and it says the run has ended and how.
func TestRunMetricsFile(t *testing.T) {
	const n = 30
	srv := sandbox.NewServer(sandbox.Options{Faults: sandbox.Faults{Share429: 0.1, Share500: 0.1, Share202Error: 0.1, RetryAfter: time.Second, Seed: 3}})
	t.Cleanup(srv.Close)
	contacts := append(e2ePhones(n), e2eContact{Raw: "12", E164: "not a number", First: "Bad", ID: "c-bad"})
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 20, concurrency: 2})
	path := filepath.Join(t.TempDir(), "callrun.prom")

	p := e.start("run", "--metrics-file", path, e.path)
	// The first write comes before the first call; a call placed before
	// the file exists would be a run that calls unwatched.
	waitFor(t, 60*time.Second, "the metrics file", func() bool {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if placed := len(srv.Calls()); placed > 0 {
			t.Fatalf("%d call starts before the metrics file was written", placed)
		}
		return false
	})
	first := readMetrics(t, path)
	const l = `campaign="e2e"` // readMetrics sorts the labels: campaign comes first
	if first["callrun_running{"+l+"}"] != 1 || first["callrun_run_contacts_to_call{"+l+"}"] != n || first["callrun_configured_rate_per_second{"+l+"}"] != 20 {
		t.Errorf("the first metrics file: %v", first)
	}
	// While it runs, every version of the file a reader catches (the
	// timer writes every 5 s) parses, and its contacts add up to the
	// sheet's rows, sent never going down.
	reads, sent := 0, 0.0
	for running := true; running; {
		select {
		case <-p.done:
			running = false
		case <-time.After(100 * time.Millisecond):
			m := readMetrics(t, path)
			total := 0.0
			for _, st := range []string{"sent", "failed", "uncertain", "pending", "invalid", "duplicate", "suppressed"} {
				total += m["callrun_contacts{"+l+`,status="`+st+`"}`]
			}
			if s := m["callrun_contacts{"+l+`,status="sent"}`]; total != n+1 || s < sent {
				t.Errorf("mid-run: contacts add up to %v, want %d; sent %v after %v", total, n+1, s, sent)
			} else {
				sent = s
			}
			reads++
		}
	}
	t.Logf("read the file %d times during the run; the last read said %v sent", reads, sent)
	res := p.wait(t, 2*time.Minute)
	checkJSONLogs(t, res)
	if res.code != run.ExitIncomplete {
		t.Fatalf("want exit 3 (some failed or uncertain): %s", res)
	}

	got := readMetrics(t, path)
	sum := e.summary()
	for st, want := range sum.Counts {
		if v, ok := got["callrun_contacts{"+l+`,status="`+st+`"}`]; !ok || v != float64(want) {
			t.Errorf("callrun_contacts status %s = %v (present %v); summary.json says %d", st, v, ok, want)
		}
	}
	if sum.Counts["invalid"] != 1 || sum.Counts["failed"] == 0 || sum.Counts["uncertain"] == 0 {
		t.Errorf("summary.json counts %v: the faults did not happen", sum.Counts)
	}
	ledger := srv.Calls()
	if v := got["callrun_call_starts_total{"+l+"}"]; v != float64(len(ledger)) {
		t.Errorf("callrun_call_starts_total = %v; the sandbox received %d call starts", v, len(ledger))
	}
	if v := got["callrun_run_contacts_settled{"+l+"}"]; v != n {
		t.Errorf("callrun_run_contacts_settled = %v, want %d", v, n)
	}
	if inj := srv.Stats().Faults.Injected429; inj > 0 && got["callrun_pauses_total{"+l+`,cause="service"}`] == 0 {
		t.Errorf("%d 429s and no pause counted: %v", inj, got)
	}
	for k, want := range map[string]float64{
		"callrun_running{" + l + "}":                                0,
		"callrun_call_rate_per_second{" + l + "}":                   0,
		"callrun_paused{" + l + `,cause="service"}`:                 0,
		"callrun_run_ending{" + l + `,ending="` + sum.Ending + `"}`: 1,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	t.Logf("metrics at the end: %v", got)
}

// `name{label="value",...}` with the labels sorted by name.
func readMetrics(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s does not parse as Prometheus text: %v", path, err)
	}
	got := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+`"`+l.GetValue()+`"`)
			}
			slices.Sort(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			switch fam.GetType() {
			case dto.MetricType_COUNTER:
				got[key] = m.GetCounter().GetValue()
			default:
				got[key] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}
