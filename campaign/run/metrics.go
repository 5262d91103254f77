package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/prometheus/client_golang/prometheus"
)

// metricsFile is the metrics file of a run (run --metrics-file): a
// Prometheus text file, for node_exporter's textfile collector or any
// scraper of such files, that the machines watching a long run read.
// It is written on a timer during the run and once at its end, each time
// by the Prometheus client library's WriteToTextfile, which writes a
// temporary file beside it and renames it over the old one: a reader sees
// the previous file or the new one, never a mix. Every series carries the
// campaign's name (and the shard, when the run is one), so that the
// files of several campaigns on one machine do not collide.
//
// The contacts by status are the report's: a pass over the sheets before
// the run counts them as the report would, and during the run the
// journal's changes since then move them (a call in flight counts as
// uncertain until its answer is written, as in the journal). The last
// write takes them from the run's summary, so that they equal
// summary.json's counts. Call outcomes are not in it: callrun does not
// collect them yet. Its methods are safe for concurrent use.
type metricsFile struct {
	path   string
	now    func() time.Time
	counts func() map[store.Status]int // the journal's counts now (State.Counts)
	reg    *prometheus.Registry

	contacts   *prometheus.GaugeVec // by status
	starts     prometheus.Counter
	rate       prometheus.Gauge
	configured prometheus.Gauge
	paused     *prometheus.GaugeVec   // by cause: 1 while it holds
	pauses     *prometheus.CounterVec // by cause
	toCall     prometheus.Gauge
	settled    prometheus.Gauge
	running    prometheus.Gauge
	ending     *prometheus.GaugeVec

	mu          sync.Mutex
	base        map[store.Status]int // the report's counts before the run
	journal0    map[store.Status]int // the journal's counts then
	rows        int                  // contacts in the sheets
	nStarts     int
	lastStarts  int       // nStarts at the last write
	lastAt      time.Time // of the last write
	nSettled    int
	pauseUntil  map[string]time.Time
	done        bool
	stop        func()      // ends run's writes
	writeFailed func(error) // told of the first failed write of the timer
	failedOnce  sync.Once
}

// metricsConfig are the inputs of newMetricsFile.
type metricsConfig struct {
	path      string
	campaign  string
	shard     string // "" unless the run is one shard of several
	perSecond float64
	now       func() time.Time
	// counts are the journal's counts now; pass is the report's counts
	// by status before the run, and toCall the contacts this run calls.
	counts func() map[store.Status]int
	pass   sheetPass
}

// newMetricsFile returns the metrics file of a run about to start; nothing
// is written until write or run.
func newMetricsFile(c metricsConfig) *metricsFile {
	if c.now == nil {
		c.now = time.Now
	}
	labels := prometheus.Labels{"campaign": c.campaign}
	if c.shard != "" {
		labels["shard"] = c.shard
	}
	m := &metricsFile{path: c.path, now: c.now, counts: c.counts, reg: prometheus.NewRegistry(), pauseUntil: map[string]time.Time{}}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		m.reg.MustRegister(g)
		return g
	}
	m.contacts = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "callrun_contacts", ConstLabels: labels,
		Help: "Contacts of the campaign by status, as the report counts them (a call in flight counts as uncertain)."}, []string{"status"})
	m.starts = prometheus.NewCounter(prometheus.CounterOpts{Name: "callrun_call_starts_total", ConstLabels: labels,
		Help: "Call start requests sent to the service this run, retries included."})
	m.paused = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "callrun_paused", ConstLabels: labels,
		Help: "1 while the run holds every call start: cause hours (the calling hours are closed) or service (it answered naming a limit)."}, []string{"cause"})
	m.pauses = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "callrun_pauses_total", ConstLabels: labels,
		Help: "Times this run held every call start, by cause."}, []string{"cause"})
	m.ending = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "callrun_run_ending", ConstLabels: labels,
		Help: "1 for how the run ended (complete, waiting, interrupted, limit, outside-hours, stopped); absent while it runs."}, []string{"ending"})
	m.reg.MustRegister(m.contacts, m.starts, m.paused, m.pauses, m.ending)
	m.rate = gauge("callrun_call_rate_per_second", "Call starts a second since the file's previous write; 0 once the run has ended.")
	m.configured = gauge("callrun_configured_rate_per_second", "pace.per_second (this shard's part of it).")
	m.toCall = gauge("callrun_run_contacts_to_call", "Contacts this run set out to call.")
	m.settled = gauge("callrun_run_contacts_settled", "Contacts this run has settled (sent, failed, uncertain or left pending).")
	m.running = gauge("callrun_running", "1 while the run calls, 0 once it has ended.")
	gauge("callrun_run_start_time_seconds", "When the run started, in seconds since 1970.").Set(float64(c.now().UnixNano()) / 1e9)
	m.configured.Set(c.perSecond)
	m.toCall.Set(float64(c.pass.toCall))
	m.running.Set(1)
	for _, cause := range []string{campaign.PauseHours, campaign.PauseService} {
		m.paused.WithLabelValues(cause)
		m.pauses.WithLabelValues(cause)
	}
	m.base = c.pass.counts
	for _, n := range c.pass.counts {
		m.rows += n
	}
	if m.counts != nil {
		m.journal0 = m.counts()
	}
	m.lastAt = c.now()
	return m
}

// started counts one call start request (watchedCalls).
func (m *metricsFile) started() {
	m.mu.Lock()
	m.nStarts++
	m.mu.Unlock()
	m.starts.Inc()
}

// settledOne counts one contact settled (RunOptions.Settled).
func (m *metricsFile) settledOne(store.Status) {
	m.mu.Lock()
	m.nSettled++
	m.mu.Unlock()
}

// pausedFor records a hold of every call start (RunOptions.Paused).
func (m *metricsFile) pausedFor(cause string, until time.Time) {
	m.pauses.WithLabelValues(cause).Inc()
	m.mu.Lock()
	if until.After(m.pauseUntil[cause]) {
		m.pauseUntil[cause] = until
	}
	m.mu.Unlock()
}

// write brings the metrics up to now and writes the file.
func (m *metricsFile) write() error {
	m.mu.Lock()
	now := m.now()
	if !m.done {
		if dt := now.Sub(m.lastAt); dt > 0 {
			m.rate.Set(float64(m.nStarts-m.lastStarts) / dt.Seconds())
			m.lastStarts, m.lastAt = m.nStarts, now
		}
		m.setCounts()
	}
	m.settled.Set(float64(m.nSettled))
	for cause, until := range m.pauseUntil {
		v := 0.0
		if !m.done && now.Before(until) {
			v = 1
		}
		m.paused.WithLabelValues(cause).Set(v)
	}
	m.mu.Unlock()
	return textfileError(m.path, prometheus.WriteToTextfile(m.path, m.reg))
}

// textfileError is err, of writing the metrics file at path, naming path
// rather than the temporary file beside it that the write went through
// (whose random name means nothing to a person).
func textfileError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return fmt.Errorf("writing %s (through a temporary file beside it): %s: %w", path, pe.Op, pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("writing %s (renaming a temporary file beside it over it): %w", path, le.Err)
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

// setCounts sets the contacts by status: the counts before the run moved
// by the journal's changes since. Invalid, duplicate and suppressed
// contacts do not change during a run, and pending ones are the rest.
func (m *metricsFile) setCounts() {
	now := map[store.Status]int{}
	if m.counts != nil {
		now = m.counts()
	}
	c := map[store.Status]int{}
	rest := m.rows
	for _, st := range report.Statuses {
		c[st] = m.base[st]
		if st == store.Sent || st == store.Failed || st == store.Uncertain {
			c[st] += now[st] - m.journal0[st]
		}
		if st != store.Pending {
			rest -= c[st]
		}
	}
	c[store.Pending] = rest
	for st, n := range c {
		m.contacts.WithLabelValues(string(st)).Set(float64(n))
	}
}

// run writes the file every interval until finish; a failed write is
// told to writeFailed once, and the run goes on.
func (m *metricsFile) run(ctx context.Context, interval time.Duration) {
	m.stop = every(ctx, interval, func() {
		if err := m.write(); err != nil && m.writeFailed != nil {
			m.failedOnce.Do(func() { m.writeFailed(err) })
		}
	})
}

// finish stops the timer and writes the file a last time: the contacts by
// status from sum (nil: from the journal, as during the run), how the run
// ended, and nothing running or paused. Once it has written, a later
// call does nothing.
func (m *metricsFile) finish(sum *report.Summary, ending string) error {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
	m.mu.Lock()
	if m.done {
		m.mu.Unlock()
		return nil
	}
	m.setCounts()
	if sum != nil {
		for _, st := range report.Statuses {
			m.contacts.WithLabelValues(string(st)).Set(float64(sum.Counts[string(st)]))
		}
	}
	m.ending.WithLabelValues(ending).Set(1)
	m.done = true
	m.rate.Set(0)
	m.running.Set(0)
	m.mu.Unlock()
	return m.write()
}

// sheetPass is what a pass over the sheets finds before a run: the
// contacts it would call, and every contact's status as the report would
// give it now.
type sheetPass struct {
	toCall int
	counts map[store.Status]int
}

// passSheets reads the sheets once, as Run chooses the contacts to call
// and as the report counts them: made only when the progress line is
// drawn or a metrics file is kept.
func passSheets(ctx context.Context, f *campaign.File, state *store.State, suppress *campaign.Suppression, o Options) (sheetPass, error) {
	p := sheetPass{counts: map[store.Status]int{}}
	err := f.NewContactReader(suppress).Each(ctx, func(c *campaign.Contact) error {
		if c.Status != campaign.ToCall {
			p.counts[store.Status(c.Status)]++
			return nil
		}
		key, _ := campaign.SettledKey(f, state, c)
		st, ok := state.Status(key)
		if !ok {
			st = store.Pending
		}
		if c.DoNotCall && st == store.Pending {
			p.counts[store.Suppressed]++ // as the report counts it
			return nil
		}
		p.counts[st]++
		switch st {
		case store.Sent:
			return nil
		case store.Failed:
			if !o.RetryFailed {
				return nil
			}
		case store.Uncertain:
			if !o.RetryUncertain {
				return nil
			}
		}
		if !c.DoNotCall {
			p.toCall++
		}
		return nil
	})
	if o.Limit > 0 {
		p.toCall = min(p.toCall, o.Limit)
	}
	return p, err
}
