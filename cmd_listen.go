package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func listenCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "listen",
		Usage:     "receive the service's webhook deliveries for campaigns with outcomes:, and store each before answering",
		ArgsUsage: "CAMPAIGN.yaml...",
		Description: `Serves each campaign's outcomes.url path: the service's account webhooks and
agent webhooks (GET query, POST form or POST JSON). A delivery is written durably
to the campaign's store (the state directory's deliveries file, or the deliveries
table of its PostgreSQL database) before it is answered 200, so the service's own
retries are all the recovery needed; a retry of one delivery is stored once. Any
other path is answered 404 and counted, never stored; a body over 64 KiB is 413.
GET /healthz answers 200; GET /metrics serves Prometheus metrics. When calls were
started and no delivery has come for --quiet-warning, it logs a warning. SIGTERM
stops taking new deliveries and finishes those in flight. It runs beside callrun
run: it never takes the run's lock. Several listens may serve one campaign whose
state is in PostgreSQL; with files, one at a time.

Example: callrun listen --addr 0.0.0.0:8080 spring.yaml autumn.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "HOST:PORT to listen on", EnvVars: []string{"CALLRUN_LISTEN_ADDR"}},
			&cli.DurationFlag{Name: "quiet-warning", Value: defaultQuietWarning, Usage: "warn when calls were started this long ago and no delivery has come since (0: never)", EnvVars: []string{"CALLRUN_LISTEN_QUIET_WARNING"}},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageError(errors.New("listen needs one or more campaign files: callrun listen CAMPAIGN.yaml [CAMPAIGN.yaml ...]"))
			}
			return listen(c.Context, s.log, listenOptions{paths: c.Args().Slice(), addr: c.String("addr"), quiet: c.Duration("quiet-warning")}, s.stdout)
		},
	}
}

// listenOptions are what `callrun listen` was asked to do.
type listenOptions struct {
	paths []string
	addr  string
	quiet time.Duration // warn when calls started this long ago and no delivery came; 0: never
}

// defaultQuietWarning is how long after a call start listen waits for a
// delivery before it warns that none came.
const defaultQuietWarning = 15 * time.Minute

// quietCheckEvery is how often listen looks for campaigns whose calls
// bring no deliveries, given the quiet time: a third of it, within a
// minute and five (a look may read the whole journal).
func quietCheckEvery(quiet time.Duration) time.Duration {
	return min(max(quiet/3, time.Minute), 5*time.Minute)
}

// Timeouts of listen's server: a sender that is slow to send its headers
// or body, or to read the answer, is cut off; a delivery is small.
const (
	listenReadHeaderTimeout = 5 * time.Second
	listenReadTimeout       = 15 * time.Second
	listenWriteTimeout      = 15 * time.Second
	listenIdleTimeout       = 60 * time.Second
	listenDrainTimeout      = 20 * time.Second
)

// hookTarget is one campaign listen receives deliveries for.
type hookTarget struct {
	name       string
	f          *campaign.File
	store      store.Store
	deliveries *store.Deliveries
	dnc        store.DoNotCallList // where its opt-outs go; nil without outcomes.opt_out
	starts     store.CallStarts    // where its conversations go; nil for a rehearsal's receiver

	// Read and written by the quiet check; last also by each delivery.
	last   atomic.Int64 // unix nanoseconds of the last delivery stored or found stored; 0: none yet
	warned time.Time    // the call start last warned about
}

// listener is listen's HTTP handler: the campaigns by their outcomes
// path, and its counters.
type listener struct {
	log     zerolog.Logger
	targets map[string]*hookTarget // by outcomes.url's path
	now     func() time.Time
	quiet   time.Duration
	norm    *phone.Normalizer
	metrics *listenMetrics

	stored, duplicates, forged, refused atomic.Int64
}

// newListener returns a listener with no campaigns yet, on clock now,
// that warns of calls bringing no delivery after quiet (0: never).
func newListener(log zerolog.Logger, quiet time.Duration, now func() time.Time) *listener {
	return &listener{log: log, targets: map[string]*hookTarget{}, now: now, quiet: quiet, norm: phone.NewNormalizer(), metrics: newListenMetrics()}
}

// listen opens every campaign's deliveries, serves their paths on
// o.addr until ctx ends, then drains the deliveries in flight and returns
// nil: a service stopped by SIGTERM has done its job.
func listen(ctx context.Context, log zerolog.Logger, o listenOptions, stdout io.Writer) error {
	l := newListener(log, o.quiet, time.Now)
	defer l.close()
	for _, path := range o.paths {
		f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
		if err != nil {
			return err
		}
		if f.Outcomes == nil {
			return usageError(fmt.Errorf("%s: the campaign has no outcomes: block, so no deliveries to receive; add outcomes: {url: https://hooks.example.com/callrun/${CALLRUN_HOOK_SECRET}}", path))
		}
		if len(f.Outcomes.Secret()) < campaign.MinHookSecret {
			// Loaded offline, an unset variable leaves the secret empty:
			// serving the bare path would store anyone's deliveries.
			return usageError(fmt.Errorf("%s: outcomes.url has no secret at the end of its path (is the variable it names, such as CALLRUN_HOOK_SECRET, set?): listen serves only a path that ends in a secret of %d characters or more", path, campaign.MinHookSecret))
		}
		hookPath := f.Outcomes.Path()
		if other, ok := l.targets[hookPath]; ok {
			return usageError(fmt.Errorf("%s: campaign %q has the same outcomes url path as campaign %q; give each campaign its own", path, f.Name, other.name))
		}
		f.Shard = campaign.Shard{} // the deliveries are the whole campaign's
		rehearsal := listenRehearsal(ctx, log, f)
		st, err := openState(ctx, f, rehearsal)
		if err != nil {
			return err
		}
		t, err := openHookTarget(ctx, f, st.store, rehearsal)
		if err != nil {
			return err
		}
		l.targets[hookPath] = t
		log.Info().Str("campaign", f.Name).Str("store", t.deliveries.String()).Msg("storing deliveries")
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError(fmt.Errorf("listening on %s: %w", o.addr, err))
	}
	srv := listenServer(l)
	fmt.Fprintf(stdout, "callrun listen: listening on http://%s for %d campaign(s)\n", ln.Addr(), len(l.targets))
	log.Info().Str("addr", ln.Addr().String()).Int("campaigns", len(l.targets)).Msg("listening")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var tick <-chan time.Time
	if l.quiet > 0 {
		t := time.NewTicker(quietCheckEvery(l.quiet))
		defer t.Stop()
		tick = t.C
	}
	for waiting := true; waiting; {
		select {
		case err := <-served:
			return fmt.Errorf("serving on %s: %w", o.addr, err)
		case <-tick:
			l.checkQuiet(ctx)
		case <-ctx.Done():
			waiting = false
		}
	}
	// Drain: no new connections; the deliveries in flight are stored and
	// answered before the files close.
	dctx, cancel := context.WithTimeout(context.Background(), listenDrainTimeout)
	defer cancel()
	err = srv.Shutdown(dctx)
	log.Info().Int64("stored", l.stored.Load()).Int64("duplicates", l.duplicates.Load()).
		Int64("forged", l.forged.Load()).Int64("refused", l.refused.Load()).Msg("stopped")
	if err != nil {
		return fmt.Errorf("draining the deliveries in flight: %w", err)
	}
	return nil // stopped as asked, every delivery in flight answered
}

// openHookTarget opens the deliveries of campaign f in store s for a
// receiver, listen's or run --sandbox's own (sandbox), and the
// do-not-call list its opt-outs go to. The target closes s.
func openHookTarget(ctx context.Context, f *campaign.File, s store.Store, sandbox bool) (*hookTarget, error) {
	d, err := s.OpenDeliveries(ctx)
	if err != nil {
		s.Close()
		if errors.Is(err, store.ErrDeliveriesLocked) {
			return nil, withExitCode(exitTryLater, fmt.Errorf("%s: %w (with the state in PostgreSQL, several listens may serve one campaign)", f.Source, err))
		}
		return nil, fmt.Errorf("%s: %w", f.Source, err)
	}
	t := &hookTarget{name: f.Name, f: f, store: s, deliveries: d}
	if !sandbox {
		// The store's call starts, where a call.answered delivery records
		// a conversation for Reg F's contact pressure. A rehearsal's
		// answered calls phoned nobody: they record none, anywhere.
		if t.starts, err = callStarts(s); err != nil {
			d.Close()
			s.Close()
			return nil, err
		}
	}
	if f.Outcomes.OptOut != nil {
		// The store's list, as run reads it (a rehearsal's own with
		// sandbox): the files' list beside files, the database's
		// (store.Postgres.DoNotCall) for a campaign whose state is there.
		if t.dnc, err = doNotCallList(s, sandbox); err != nil {
			d.Close()
			s.Close()
			return nil, err
		}
	}
	return t, nil
}

// listenServer is the HTTP server of a receiver of deliveries, with
// listen's timeouts.
func listenServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: listenReadHeaderTimeout,
		ReadTimeout:       listenReadTimeout,
		WriteTimeout:      listenWriteTimeout,
		IdleTimeout:       listenIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

func (l *listener) close() {
	for _, t := range l.targets {
		if err := errors.Join(t.deliveries.Close(), t.store.Close()); err != nil {
			l.log.Error().Err(err).Str("campaign", t.name).Msg("closing the deliveries")
		}
	}
}

// ServeHTTP answers one request: /healthz, a delivery to a campaign's
// path, or 404.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := l.now()
	switch r.URL.Path {
	case "/healthz":
		w.Write([]byte("ok\n")) //nolint:errcheck
		return
	case "/metrics":
		l.metrics.handler.ServeHTTP(w, r)
		return
	}
	t, ok := l.targets[r.URL.Path]
	if !ok {
		// A forged or mistaken delivery: counted, never stored, and its
		// path (perhaps a near miss of the secret) never logged.
		l.metrics.refused.WithLabelValues("", "404").Inc()
		n := l.forged.Add(1)
		l.log.Warn().Str("method", r.Method).Str("remote", r.RemoteAddr).Int64("forged_total", n).Msg("delivery to an unknown path refused")
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		l.refuse(w, t, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed")
		return
	}
	d, err := apiclient.ReadDelivery(r)
	switch {
	case errors.Is(err, apiclient.ErrDeliveryTooLarge):
		l.refuse(w, t, http.StatusRequestEntityTooLarge, err.Error())
		return
	case err != nil:
		l.refuse(w, t, http.StatusBadRequest, err.Error())
		return
	case len(d.Fields) == 0:
		// A probe of the URL, say: nothing to store.
		l.refuse(w, t, http.StatusBadRequest, "an empty delivery")
		return
	}
	isNew, err := t.deliveries.Append(store.Delivery{Key: d.Key(), At: start.UTC(), Event: d.Event, AgentID: d.AgentID, Fields: d.Fields, Raw: d.Raw})
	if err != nil {
		// Not stored: not acknowledged, so the service sends it again.
		l.metrics.deliveries.WithLabelValues(t.name, "failed").Inc()
		l.log.Error().Str("campaign", t.name).Err(err).Msg("storing a delivery")
		http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
		return
	}
	if err := l.optOut(r.Context(), t, &d); err != nil {
		// Stored, but the opt-out is not on the list: not acknowledged,
		// so the service sends it again, and its retry puts it there.
		l.metrics.deliveries.WithLabelValues(t.name, "failed").Inc()
		l.log.Error().Str("campaign", t.name).Str("key", d.Key()).Err(err).Msg("putting an opt-out on the do-not-call list")
		http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
		return
	}
	if err := l.converse(r.Context(), t, &d, start); err != nil {
		// Stored, but the conversation is not recorded: not acknowledged,
		// so the service sends it again, and its retry records it.
		l.metrics.deliveries.WithLabelValues(t.name, "failed").Inc()
		l.log.Error().Str("campaign", t.name).Str("key", d.Key()).Err(err).Msg("recording a conversation in the call starts")
		http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
		return
	}
	l.noteStored(t, d, isNew, start)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{\"stored\":true}\n")) //nolint:errcheck
}

// optOut puts the number of delivery d on the campaign's do-not-call
// list, durably, when d says the person opted out (outcomes.opt_out):
// before d is acknowledged. A retry of d finds the number on it already.
func (l *listener) optOut(ctx context.Context, t *hookTarget, d *apiclient.Delivery) error {
	if t.dnc == nil || !t.f.Outcomes.OptsOut(d.Fields) {
		return nil
	}
	number, err := t.f.ReadNumber(phone.NewNormalizer(), d.Fields["phone_number"])
	if err != nil {
		// Sending it again would not make it readable: acknowledged, and
		// said loudly.
		l.log.Error().Str("campaign", t.name).Str("key", d.Key()).Err(err).Msg("an opt-out whose phone_number does not read: put the number on the do-not-call list by hand (callrun suppress add)")
		return nil
	}
	wrote, err := t.dnc.Add(ctx, []store.DoNotCallEntry{{Number: number, At: l.now(), Source: fmt.Sprintf("delivery %s of campaign %s", d.Key(), t.name)}})
	if err != nil {
		return err
	}
	if len(wrote) > 0 {
		l.log.Info().Str("campaign", t.name).Str("key", d.Key()).Str("list", t.dnc.String()).Msg("opt-out: the number is on the do-not-call list")
	}
	return nil
}

// converse records a conversation with the number of delivery d,
// received at, in the store's call starts, durably, when d says the call
// was answered: before d is acknowledged, so that a campaign with Reg F's
// rule started after that never calls the number within 7 days of it. A
// retry of d records nothing more.
func (l *listener) converse(ctx context.Context, t *hookTarget, d *apiclient.Delivery, at time.Time) error {
	if t.starts == nil || !campaign.Answered(d.Event) {
		return nil
	}
	number, err := t.f.ReadNumber(phone.NewNormalizer(), d.Fields["phone_number"])
	if err != nil {
		// No contact can have it: acknowledged, and said.
		l.log.Warn().Str("campaign", t.name).Str("key", d.Key()).Err(err).Msg("an answered call whose phone_number does not read: no conversation recorded")
		return nil
	}
	_, err = t.starts.Converse(ctx, store.Conversation{Number: number, At: at.UTC(), Campaign: t.name, Key: d.Key()})
	return err
}

// noteStored counts and logs a delivery stored durably (isNew), or found
// stored already, that was received at start.
func (l *listener) noteStored(t *hookTarget, d apiclient.Delivery, isNew bool, start time.Time) {
	ack := l.now().Sub(start)
	t.last.Store(start.UnixNano())
	result := "stored"
	if isNew {
		l.stored.Add(1)
		if _, _, err := l.norm.Normalize(d.Fields["phone_number"], t.f.Region); err != nil {
			l.metrics.unmatched.WithLabelValues(t.name).Inc() // it can belong to no contact
		}
	} else {
		result = "duplicate"
		l.duplicates.Add(1)
	}
	l.metrics.deliveries.WithLabelValues(t.name, result).Inc()
	l.metrics.ack.WithLabelValues(t.name).Observe(ack.Seconds())
	l.log.Info().Str("campaign", t.name).Str("event", d.Event).Str("key", d.Key()).Bool("duplicate", !isNew).
		Dur("ack", ack).Msg("delivery stored")
}

// refuse answers a delivery listen does not store.
func (l *listener) refuse(w http.ResponseWriter, t *hookTarget, status int, why string) {
	l.refused.Add(1)
	l.metrics.refused.WithLabelValues(t.name, strconv.Itoa(status)).Inc()
	l.log.Warn().Str("campaign", t.name).Int("status", status).Str("why", apiclient.Redact(why)).Msg("delivery refused")
	http.Error(w, http.StatusText(status), status)
}
