package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// readMetrics parses a metrics file as a scraper would, and returns each
// series' value by its name and labels, as
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

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestMetricsFile follows a run's metrics on a fake clock and injected
// journal counts: the contacts by status move with the journal, the rate
// is the call starts since the previous write, a pause shows while it
// holds and is counted, erased contacts are not counted pending, and
// the last write takes the summary's counts and
// says the run has ended.
func TestMetricsFile(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	journal := map[store.Status]int{store.Sent: 5, store.Failed: 1} // an earlier run's
	var mu sync.Mutex
	counts := func() map[store.Status]int {
		mu.Lock()
		defer mu.Unlock()
		c := map[store.Status]int{}
		for k, v := range journal {
			c[k] = v
		}
		return c
	}
	path := filepath.Join(t.TempDir(), "callrun.prom")
	m := newMetricsFile(metricsConfig{path: path, campaign: "Spring", shard: "1/2", perSecond: 10, now: clock.Now, counts: counts,
		pass: sheetPass{toCall: 20, counts: map[store.Status]int{store.Sent: 5, store.Failed: 1, store.Pending: 20, store.Invalid: 3, store.Duplicate: 2, store.Erased: 2}}})
	if err := m.write(); err != nil {
		t.Fatal(err)
	}
	// k is a series' key in readMetrics: its labels sorted by name.
	k := func(name, label string) string {
		ls := []string{`campaign="Spring"`, `shard="1/2"`}
		if label != "" {
			ls = append(ls, label)
		}
		slices.Sort(ls)
		return name + "{" + strings.Join(ls, ",") + "}"
	}
	want := map[string]float64{
		k("callrun_contacts", `status="sent"`):       5,
		k("callrun_contacts", `status="failed"`):     1,
		k("callrun_contacts", `status="uncertain"`):  0,
		k("callrun_contacts", `status="pending"`):    20,
		k("callrun_contacts", `status="invalid"`):    3,
		k("callrun_contacts", `status="duplicate"`):  2,
		k("callrun_contacts", `status="suppressed"`): 0,
		k("callrun_contacts", `status="erased"`):     2, // not pending: never called again
		k("callrun_call_starts_total", ""):           0,
		k("callrun_call_rate_per_second", ""):        0,
		k("callrun_configured_rate_per_second", ""):  10,
		k("callrun_paused", `cause="hours"`):         0,
		k("callrun_paused", `cause="service"`):       0,
		k("callrun_pauses_total", `cause="hours"`):   0,
		k("callrun_pauses_total", `cause="service"`): 0,
		k("callrun_run_contacts_to_call", ""):        20,
		k("callrun_run_contacts_settled", ""):        0,
		k("callrun_running", ""):                     1,
		k("callrun_run_start_time_seconds", ""):      float64(clock.Now().Unix()),
	}
	check := func(when string) {
		t.Helper()
		got := readMetrics(t, path)
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v (present %v), want %v", when, k, g, ok, v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: unexpected series %s = %v", when, k, got[k])
			}
		}
	}
	check("before the run")

	// 2 s on: 8 call starts, 6 sent, 1 in flight (uncertain in the
	// journal), 1 failed; the service names a limit for 3 s.
	clock.add(2 * time.Second)
	for range 8 {
		m.started()
	}
	for range 7 {
		m.settledOne(store.Sent)
	}
	mu.Lock()
	journal[store.Sent] += 6
	journal[store.Uncertain]++
	journal[store.Failed]++
	mu.Unlock()
	m.pausedFor(campaign.PauseService, clock.Now().Add(3*time.Second))
	m.pausedFor(campaign.PauseService, clock.Now().Add(time.Second)) // inside the first: counted, not longer
	if err := m.write(); err != nil {
		t.Fatal(err)
	}
	want[k("callrun_contacts", `status="sent"`)] = 11
	want[k("callrun_contacts", `status="failed"`)] = 2
	want[k("callrun_contacts", `status="uncertain"`)] = 1
	want[k("callrun_contacts", `status="pending"`)] = 12
	want[k("callrun_call_starts_total", "")] = 8
	want[k("callrun_call_rate_per_second", "")] = 4
	want[k("callrun_paused", `cause="service"`)] = 1
	want[k("callrun_pauses_total", `cause="service"`)] = 2
	want[k("callrun_run_contacts_settled", "")] = 7
	check("during a pause")

	// 4 s later: the pause is over, and 2 more call starts: 0.5 a second.
	clock.add(4 * time.Second)
	m.started()
	m.started()
	if err := m.write(); err != nil {
		t.Fatal(err)
	}
	want[k("callrun_paused", `cause="service"`)] = 0
	want[k("callrun_call_starts_total", "")] = 10
	want[k("callrun_call_rate_per_second", "")] = 0.5
	check("after the pause")

	// The end: the summary's counts, whatever the journal says.
	sum := &report.Summary{Counts: map[string]int{"sent": 13, "failed": 2, "uncertain": 0, "pending": 10, "invalid": 3, "duplicate": 2, "suppressed": 0, "erased": 2}}
	if err := m.finish(sum, report.EndComplete); err != nil {
		t.Fatal(err)
	}
	if err := m.finish(nil, report.EndStopped); err != nil { // the deferred one: does nothing
		t.Fatal(err)
	}
	for st, n := range sum.Counts {
		want[k("callrun_contacts", `status="`+st+`"`)] = float64(n)
	}
	want[k("callrun_call_rate_per_second", "")] = 0
	want[k("callrun_running", "")] = 0
	want[k("callrun_run_ending", `ending="complete"`)] = 1
	check("at the end")
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the metrics file alone (no temporary file left)", len(ents))
	}
}

// TestMetricsFileUnwritable: a metrics file that cannot be written is an
// error at once (the run stops before its first call on it), which names
// the file asked for, not the temporary file beside it that the write
// goes through.
func TestMetricsFileUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "callrun.prom")
	m := newMetricsFile(metricsConfig{path: path, campaign: "x"})
	err := m.write()
	if err == nil {
		t.Fatal("writing into a missing directory: no error")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "writing "+path+" ") || regexp.MustCompile(`callrun\.prom\d`).MatchString(msg) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the error %q does not name %s alone, or hides why", msg, path)
	}
}

// TestEndingsNamed: every way a run can end is named where people and
// alerts read it: the callrun_run_ending metric's help, its row of
// docs/unattended.md, and summary.json's ending in docs/report.md.
func TestEndingsNamed(t *testing.T) {
	m := newMetricsFile(metricsConfig{path: filepath.Join(t.TempDir(), "x.prom"), campaign: "x"})
	m.ending.WithLabelValues(report.EndComplete) // a series, for the family to be gathered
	help := ""
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "callrun_run_ending" {
			help = mf.GetHelp()
		}
	}
	unattended, err := os.ReadFile(filepath.Join("..", "..", "docs", "unattended.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for line := range strings.SplitSeq(string(unattended), "\n") {
		if strings.HasPrefix(line, "| `callrun_run_ending{ending}`") {
			row = line
		}
	}
	reportDoc, err := os.ReadFile(filepath.Join("..", "..", "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range report.Endings {
		if !strings.Contains(string(reportDoc), "`"+e+"`") {
			t.Errorf("docs/report.md does not name the ending %q", e)
		}
		if e == report.EndRebuilt { // callrun report's, never a run's
			continue
		}
		if !strings.Contains(help, e) {
			t.Errorf("callrun_run_ending's help does not name %q: %s", e, help)
		}
		if !strings.Contains(row, "`"+e+"`") {
			t.Errorf("docs/unattended.md's row of callrun_run_ending does not name %q: %s", e, row)
		}
	}
}
