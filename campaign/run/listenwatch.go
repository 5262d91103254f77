package run

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// listenMetrics are what `callrun listen` serves at /metrics for
// Prometheus to scrape: deliveries by campaign and result, the stored
// ones that can match no contact, the requests refused by status, and
// the time from a delivery's arrival to its acknowledgement, and whether
// a campaign's deliveries file went from under listen.
type listenMetrics struct {
	handler    http.Handler
	deliveries *prometheus.CounterVec   // by campaign, result: stored, duplicate, failed
	unmatched  *prometheus.CounterVec   // by campaign
	refused    *prometheus.CounterVec   // by campaign ("" for an unknown path) and code
	held       *prometheus.CounterVec   // by campaign
	gone       *prometheus.GaugeVec     // by campaign
	ack        *prometheus.HistogramVec // by campaign
}

func newListenMetrics() *listenMetrics {
	reg := prometheus.NewRegistry()
	m := &listenMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "callrun_listen_deliveries_total",
			Help: "Deliveries received at a campaign's outcomes path, by result: stored (new, durable before the 2xx), duplicate (stored already, answered 2xx), failed (not stored, answered 503 for the service to send again).",
		}, []string{"campaign", "result"}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "callrun_listen_unmatched_total",
			Help: "Deliveries stored whose number the campaign's phone rules cannot read, so that no contact can take them (the report matches the rest to contacts).",
		}, []string{"campaign"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "callrun_listen_refused_total",
			Help: "Requests refused and not stored, by status: 404 an unknown path (campaign empty), 405 a method other than GET and POST, 413 a body over 16 MiB, 503 a body that waited 5 s for memory while other deliveries' bodies were read, 400 an unreadable or empty delivery, 401 a signature that does not match outcomes.signing_secret (or none, with require_signature).",
		}, []string{"campaign", "code"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "callrun_listen_opt_outs_held_total",
			Help: "Opt-outs stored whose number callrun could not read: each is held on the store, and no run there starts a call until a person resolves it (callrun outcomes resolve).",
		}, []string{"campaign"}),
		gone: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "callrun_listen_deliveries_file_gone",
			Help: "1 once the campaign's deliveries file was removed or replaced under listen: every delivery is answered 503 until listen is restarted.",
		}, []string{"campaign"}),
		ack: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "callrun_listen_ack_seconds",
			Help:    "Time from a delivery's arrival to its acknowledgement, stored durably.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"campaign"}),
	}
	reg.MustRegister(m.deliveries, m.unmatched, m.refused, m.held, m.gone, m.ack,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// checkQuiet warns, once per call start, of each campaign whose calls
// started l.quiet ago or more and brought no delivery since: the service
// is probably not delivering to this URL (the account webhook unset, the
// URL or its secret wrong, the host unreachable). The call start is the
// first of the journal's latest run that started calls; a delivery is one
// this listen stored, or for a store shared with other listens, one the
// store holds.
func (l *Listener) checkQuiet(ctx context.Context) {
	now := l.now()
	for _, t := range l.targets {
		if last := t.last.Load(); last != 0 && now.Sub(time.Unix(0, last)) < l.quiet {
			// A delivery came less than the quiet time ago: any call start
			// after it is younger still. Spares reading the journal's runs.
			continue
		}
		first, err := firstCallStart(ctx, t.store)
		if err != nil {
			l.log.Warn().Err(err).Str("campaign", t.name).Msg("reading the journal's runs for the quiet check")
			continue
		}
		var quiet campaign.DeliveryQuiet
		if last := t.last.Load(); last != 0 {
			quiet.Delivered(time.Unix(0, last))
		}
		quiet.Started(first)
		if quiet.Overdue(now, l.quiet).IsZero() || t.warned.Equal(first) {
			continue
		}
		at, err := t.store.LastDeliveryAt(ctx)
		if err != nil {
			l.log.Warn().Err(err).Str("campaign", t.name).Msg("reading the last delivery for the quiet check")
			continue
		}
		if !at.IsZero() {
			if quiet.Delivered(at); quiet.Overdue(now, l.quiet).IsZero() {
				t.last.Store(at.UnixNano())
				continue
			}
		}
		t.warned = first
		l.log.Warn().Str("campaign", t.name).Time("first_call_start", first).Dur("quiet_for", now.Sub(first).Round(time.Second)).
			Msg("calls were started but no delivery has come since: the service is probably not delivering to this listen (is the account webhook set to the outcomes url? is the url, its secret, or the host behind it wrong or unreachable?)")
	}
}

// firstCallStart returns when the first call of the journal's latest run
// that started calls started (to the second, or the minute for one
// started more than store.SecondsKept into its run); zero when no run
// started any.
func firstCallStart(ctx context.Context, s store.Store) (time.Time, error) {
	runs, err := s.ReadRuns(ctx)
	if err != nil {
		return time.Time{}, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		for k, n := range r.PerSecond {
			if n > 0 {
				return r.StartedAt.Truncate(time.Second).Add(time.Duration(k) * time.Second), nil
			}
		}
		for k, n := range r.PerMinute {
			if n > 0 {
				return r.StartedAt.Truncate(time.Minute).Add(time.Duration(k) * time.Minute), nil
			}
		}
	}
	return time.Time{}, nil
}

// eraseStoredEvery is how often listen looks for people erased from its
// stores, one stat of the erased set's file a campaign in files.
const eraseStoredEvery = time.Second

// eraseFailedEvery is how often listen logs again that it cannot erase
// a campaign's deliveries, while the error stays the same: it tries each
// second.
const eraseFailedEvery = time.Minute

// eraseStored has each campaign's deliveries erase those it stored of
// people erased since it last looked ([store.Deliveries.EraseStored]).
// An error is logged when it first comes, when it changes, once a minute
// while it stays, and its end when it goes.
func (l *Listener) eraseStored(log zerolog.Logger) {
	now := l.now()
	for _, t := range l.targets {
		n, err := t.deliveries.EraseStored()
		if err != nil {
			if msg := err.Error(); msg != t.eraseFailed || now.Sub(t.eraseLogged) >= eraseFailedEvery {
				log.Error().Err(err).Str("campaign", t.name).Msg("could not erase the deliveries of people erased from the store; callrun erase waits for it")
				t.eraseFailed, t.eraseLogged = msg, now
			}
			continue
		}
		if t.eraseFailed != "" {
			log.Info().Str("campaign", t.name).Msg("erasing the deliveries of people erased from the store again")
			t.eraseFailed = ""
		}
		if n > 0 {
			log.Info().Str("campaign", t.name).Int("deliveries", n).Msg("erased the stored deliveries of people erased from the store")
		}
	}
}

// retainCheckEvery is how often listen looks whether a campaign's daily
// retention is due, and tries again one that failed.
const retainCheckEvery = time.Hour

// retain starts, in the background, the retention ([Retain]) of each
// campaign with retention: whose retention last finished a day or more
// ago, unless one is running still. The deliveries this listen holds
// it erases as any erase's: listen's own loop rewrites them
// ([Listener.eraseStored]).
func (l *Listener) retain(ctx context.Context, log zerolog.Logger) {
	if !l.retaining.TryLock() {
		return
	}
	l.retainers.Add(1)
	go func() {
		defer l.retainers.Done()
		defer l.retaining.Unlock()
		for _, t := range l.targets {
			if t.f.RetentionLimit() == 0 || !t.retained.IsZero() && l.now().Sub(t.retained) < 24*time.Hour {
				continue
			}
			got, err := Retain(ctx, log, RetainOptions{Path: t.f.Source, Now: l.now}, io.Discard)
			if err != nil {
				if ctx.Err() != nil {
					log.Warn().Err(err).Str("campaign", t.name).Msg("retention: stopped with listen; the next listen or run finishes it")
					return
				}
				log.Warn().Err(err).Str("campaign", t.name).Msg("retention: could not erase the people last called before it; listen tries again in an hour")
				continue
			}
			t.retained = l.now()
			logRetained(log, t.f, got)
		}
	}()
}
