package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"
)

// ListenOptions are what `callrun listen` was asked to do.
type ListenOptions struct {
	Paths []string
	Addr  string
	Quiet time.Duration    // warn when calls started this long ago and no delivery came; 0: never
	Now   func() time.Time // listen's clock; nil: time.Now
}

// DefaultQuietWarning is how long after a call start listen waits for a
// delivery before it warns that none came.
const DefaultQuietWarning = 15 * time.Minute

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
	ListenDrainTimeout      = 20 * time.Second
	// listenStopGrace is how long listen, asked to stop, waits for
	// senders still sending their requests before it cuts them off
	// (never acknowledged, their retries store them): it stops within
	// about that, whatever a slow sender does.
	listenStopGrace = time.Second
	// listenStoreTimeout bounds the taking of one request's deliveries
	// (stored, listed, their conversations recorded), which neither its
	// sender hanging up nor listen stopping cuts short.
	listenStoreTimeout = 30 * time.Second
)

// hookTarget is one campaign listen receives deliveries for.
type hookTarget struct {
	name       string
	f          *campaign.File
	store      store.Store
	deliveries *store.Deliveries
	intake     *campaign.Intake // stores its deliveries, and puts opt-outs and conversations where they go

	// Read and written by the quiet check; last also by each delivery.
	last   atomic.Int64 // unix nanoseconds of the last delivery stored or found stored; 0: none yet
	warned time.Time    // the call start last warned about

	// retained is when the campaign's retention last finished; read and
	// written by the retention alone.
	retained time.Time

	// eraseFailed is the error the last look for people erased from the
	// store ended in ("" if none), logged at eraseLogged; read and written
	// by that look alone.
	eraseFailed string
	eraseLogged time.Time
}

// Listener is listen's HTTP handler: the campaigns by their outcomes
// path, and its counters.
type Listener struct {
	log     zerolog.Logger
	targets map[string]*hookTarget // by outcomes.url's path
	now     func() time.Time
	quiet   time.Duration
	metrics *listenMetrics
	gate    logGate // the refusals' log lines, one a second
	behind  logGate // the warnings that this machine's clock is behind senders', one a second

	// storing is held for reading by each request storing its
	// deliveries, and for writing by listen stopping, which waits for
	// them to be stored and answered; stopped, then set, refuses the
	// requests that come to store after.
	storing sync.RWMutex
	stopped bool

	stored, duplicates, forged, refused atomic.Int64

	// gone names a campaign whose deliveries file was removed or
	// replaced under listen ("" while none was): listen refuses its
	// deliveries until restarted, and /healthz says so, for a supervisor
	// to restart it.
	gone atomic.Pointer[string]

	// bodies bounds the bytes of the delivery bodies read at once
	// ([listenBodyBudget]).
	bodies *semaphore.Weighted

	// retaining runs the campaigns' retention in the background, one at
	// a time; Close waits for it.
	retaining sync.Mutex
	retainers sync.WaitGroup
}

// newListener returns a Listener with no campaigns yet, on clock now,
// that warns of calls bringing no delivery after quiet (0: never).
func NewListener(log zerolog.Logger, quiet time.Duration, now func() time.Time) *Listener {
	return &Listener{log: log, targets: map[string]*hookTarget{}, now: now, quiet: quiet, metrics: newListenMetrics(), bodies: semaphore.NewWeighted(listenBodyBudget)}
}

// Listen opens every campaign's deliveries, serves their paths on
// o.Addr until ctx ends, then drains the deliveries in flight and returns
// nil: a service stopped by SIGTERM has done its job.
func Listen(ctx context.Context, log zerolog.Logger, o ListenOptions, stdout io.Writer) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	l := NewListener(log, o.Quiet, o.Now)
	defer l.Close()
	for _, path := range o.Paths {
		f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
		if err != nil {
			return err
		}
		if f.Outcomes == nil {
			return UsageError(fmt.Errorf("%s: the campaign has no outcomes: block, so no deliveries to receive; add outcomes: {url: https://hooks.example.com/callrun/${CALLRUN_HOOK_SECRET}}", path))
		}
		if len(f.Outcomes.Secret()) < campaign.MinHookSecret {
			// Loaded offline, an unset variable leaves the secret empty:
			// serving the bare path would store anyone's deliveries.
			return UsageError(fmt.Errorf("%s: outcomes.url has no secret at the end of its path (is the variable it names, such as CALLRUN_HOOK_SECRET, set?): listen serves only a path that ends in a secret of %d characters or more", path, campaign.MinHookSecret))
		}
		if f.Outcomes.SigningUnset() {
			return UsageError(fmt.Errorf("%s: outcomes.signing_secret names a variable that is not set: listen checks every signed delivery with it, so set it (or take signing_secret out of the file)", path))
		}
		hookPath := f.Outcomes.Path()
		if other, ok := l.targets[hookPath]; ok {
			return UsageError(fmt.Errorf("%s: campaign %q has the same outcomes url path as campaign %q; give each campaign its own", path, f.Name, other.name))
		}
		f.Shard = campaign.Shard{} // the deliveries are the whole campaign's
		rehearsal := ListenRehearsal(ctx, log, f)
		st, err := f.OpenStore(ctx, rehearsal)
		if err != nil {
			return err
		}
		if err := l.Add(ctx, hookPath, f, st, rehearsal); err != nil {
			return err
		}
		log.Info().Str("campaign", f.Name).Str("store", l.targets[hookPath].deliveries.String()).Msg("storing deliveries")
	}

	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return UsageError(fmt.Errorf("listening on %s: %w", o.Addr, err))
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
	// People erased from the store while listen runs: it erases their
	// deliveries stored before from the files it holds, which `callrun
	// erase` cannot rewrite under it, and says so for erase to go on.
	eraseTick := time.NewTicker(eraseStoredEvery)
	defer eraseTick.Stop()
	// Campaigns with retention: are erased of the people last called
	// before it daily, the first time now.
	retainTick := time.NewTicker(retainCheckEvery)
	defer retainTick.Stop()
	rctx, stopRetain := context.WithCancel(ctx)
	defer stopRetain()
	l.retain(rctx, log)
	for waiting := true; waiting; {
		select {
		case err := <-served:
			return fmt.Errorf("serving on %s: %w", o.Addr, err)
		case <-eraseTick.C:
			l.eraseStored(log)
		case <-retainTick.C:
			l.retain(rctx, log)
		case <-tick:
			l.checkQuiet(ctx)
		case <-ctx.Done():
			waiting = false
		}
	}
	// Drain: no new connections; a sender still sending its request
	// after the grace is cut off; the deliveries being stored are stored
	// and answered before the files close.
	dctx, cancel := context.WithTimeout(context.Background(), listenStopGrace)
	defer cancel()
	err = srv.Shutdown(dctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	l.storing.Lock()
	l.stopped = true
	l.storing.Unlock()
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
			return nil, WithExitCode(ExitTryLater, fmt.Errorf("%s: %w (with the state in PostgreSQL, several listens may serve one campaign)", f.Source, err))
		}
		return nil, fmt.Errorf("%s: %w", f.Source, err)
	}
	kind := store.PlaceListen
	if sandbox {
		kind = store.PlaceRehearsal
	}
	if err := recordPlace(ctx, s, f, kind); err != nil {
		d.Close()
		s.Close()
		return nil, err
	}
	t := &hookTarget{name: f.Name, f: f, store: s, deliveries: d}
	// A delivery of a person in the store's erased set is stored erased:
	// the store reads its numbers as the intake does.
	d.ReadNumbersWith(f.DeliveryNumbers)
	o := campaign.IntakeOptions{Deliveries: d}
	if !sandbox {
		// The store's call starts, where a call.answered delivery records
		// a conversation for Reg F's contact pressure. A rehearsal's
		// answered calls phoned nobody: they record none, anywhere.
		if o.Starts, err = s.CallStarts(); err != nil {
			d.Close()
			s.Close()
			return nil, err
		}
	}
	if f.Outcomes.OptOut != nil {
		// The store's list, as run reads it (a rehearsal's own with
		// sandbox): the files' list beside files, the database's
		// (store.Postgres.DoNotCall) for a campaign whose state is there.
		if o.DoNotCall, err = s.DoNotCall(); err != nil {
			d.Close()
			s.Close()
			return nil, err
		}
	}
	// An opt-out that names a call of the campaign's is its contact's:
	// the journal gives the call's number. Every call's first delivery
	// asks too (is it callrun's own call, or the service's?): the index
	// reads the journal whole once, then only what was appended since.
	o.Calls = store.NewCallIndex(s).Keys
	t.intake = campaign.NewIntake(f, o)
	return t, nil
}

// listenServer is the HTTP server of l, a receiver of deliveries, with
// listen's timeouts; its own errors go to l's log, gated with the
// refusals.
func listenServer(l *Listener) *http.Server {
	return &http.Server{
		Handler:           l,
		ErrorLog:          serverLog(l.log, &l.gate, l.now),
		ReadHeaderTimeout: listenReadHeaderTimeout,
		ReadTimeout:       listenReadTimeout,
		WriteTimeout:      listenWriteTimeout,
		IdleTimeout:       listenIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

// Add opens the deliveries of campaign f in its store st, for a
// rehearsal's receiver or a real one, and serves them at path. The
// listener closes st.
func (l *Listener) Add(ctx context.Context, path string, f *campaign.File, st store.Store, rehearsal bool) error {
	t, err := openHookTarget(ctx, f, st, rehearsal)
	if err != nil {
		return err
	}
	l.targets[path] = t
	return nil
}

// Close closes the deliveries and the stores of every campaign.
func (l *Listener) Close() {
	l.retainers.Wait()
	for _, t := range l.targets {
		if err := errors.Join(t.deliveries.Close(), t.store.Close()); err != nil {
			l.log.Error().Err(err).Str("campaign", t.name).Msg("closing the deliveries")
		}
	}
}

// ServeHTTP answers one request: /healthz, a delivery to a campaign's
// path, or 404.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := l.now()
	switch r.URL.Path {
	case "/healthz":
		if name := l.gone.Load(); name != nil {
			http.Error(w, "the deliveries file of campaign "+*name+" was removed or replaced: every delivery is refused until listen is restarted", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n")) //nolint:errcheck
		return
	case "/metrics":
		l.metrics.handler.ServeHTTP(w, r)
		return
	}
	t, ok := l.targets[r.URL.Path]
	agent := false
	if base, cut := strings.CutSuffix(r.URL.Path, "/"+campaign.AgentPathSuffix); !ok && cut {
		// An agent's webhook: the outcomes path callrun gives its agents.
		t, ok = l.targets[base]
		agent = ok
	}
	if !ok {
		// A forged or mistaken delivery: counted, never stored, and its
		// path (perhaps a near miss of the secret) never logged.
		l.metrics.refused.WithLabelValues("", "404").Inc()
		n := l.forged.Add(1)
		if held, ok := l.gate.pass(l.now()); ok {
			l.log.Warn().Str("method", r.Method).Str("remote", r.RemoteAddr).Int64("forged_total", n).Int64("not_logged", held).Msg("delivery to an unknown path refused")
		}
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		l.refuse(w, t, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed")
		return
	}
	release, ok := l.takeBody(r)
	if !ok {
		w.Header().Set("Retry-After", "1")
		l.refuse(w, t, http.StatusServiceUnavailable, "the bodies of other deliveries being read fill listen's memory for them; send again")
		return
	}
	ds, err := apiclient.ReadDeliveries(r, t.f.Outcomes.ReadOptions())
	release()
	// A JSON array some of whose elements are no delivery: the others are
	// taken, then the request is refused for the rest, as one such
	// delivery alone would be (400).
	var refused *apiclient.RefusedElements
	if errors.As(err, &refused) && len(ds) > 0 {
		err = nil
	}
	switch {
	case errors.Is(err, apiclient.ErrBadSignature), errors.Is(err, apiclient.ErrUnsigned):
		// Forged, or sent by another sender: counted, never stored.
		l.refuse(w, t, http.StatusUnauthorized, err.Error())
		return
	case errors.Is(err, apiclient.ErrDeliveryTooLarge):
		l.refuse(w, t, http.StatusRequestEntityTooLarge, err.Error())
		return
	case err != nil:
		l.refuse(w, t, http.StatusBadRequest, err.Error())
		return
	}
	for _, d := range ds {
		if len(d.Fields) == 0 {
			// A probe of the URL, say: nothing to store.
			l.refuse(w, t, http.StatusBadRequest, "an empty delivery")
			return
		}
	}
	// Each delivery of the request is taken before it is answered; one
	// that cannot be is answered 503, and the sender's retry stores what
	// is not stored yet.
	l.storing.RLock()
	defer l.storing.RUnlock()
	if l.stopped {
		http.Error(w, "listen is stopping; send again", http.StatusServiceUnavailable)
		return
	}
	// A delivery begun is finished, opt-out and conversation too, even
	// when its sender hangs up or listen, stopping, cuts it off: its
	// delivery may be durable already, and half of it would leave the
	// number off the list until a retry that may not come. Bounded, so
	// that a store that does not answer does not hold listen's stop.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), listenStoreTimeout)
	defer cancel()
	for _, d := range ds {
		taken, err := t.intake.Take(ctx, d, agent, start)
		if errors.Is(err, store.ErrDeliveriesGone) {
			// Until restarted, every delivery: said at most once a
			// second, and in /metrics.
			l.metrics.deliveries.WithLabelValues(t.name, "failed").Inc()
			l.metrics.gone.WithLabelValues(t.name).Set(1)
			l.gone.CompareAndSwap(nil, &t.name)
			if held, ok := l.gate.pass(l.now()); ok {
				l.log.Error().Str("campaign", t.name).Str("key", taken.Key).Err(err).Int64("not_logged", held).
					Msg("deliveries refused: the deliveries file was removed or replaced under listen; restart listen (it opens the file at the path again), and the service's retries store them")
			}
			http.Error(w, "not stored: the deliveries file is gone; send again after listen restarts", http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			l.metrics.deliveries.WithLabelValues(t.name, "failed").Inc()
			l.log.Error().Str("campaign", t.name).Str("key", taken.Key).Err(err).Msg("a delivery not taken")
			http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
			return
		}
		l.noteStored(t, d, taken, start)
	}
	if refused != nil {
		// The deliveries read are durable: the sender's retry of the
		// array finds them stored. The elements refused are answered as
		// each would be alone: never stored, logged and counted.
		type element struct {
			Element int    `json:"element"`
			Why     string `json:"why"`
		}
		answer := struct {
			Stored  int       `json:"stored"`
			Refused []element `json:"refused"`
		}{Stored: len(ds)}
		for _, e := range refused.Refused {
			why := apiclient.Redact(e.Err.Error())
			l.noteRefused(t, http.StatusBadRequest, fmt.Sprintf("element %d of the array of %d: %s (the array's %d delivery(ies) are stored)", e.Index, refused.Of, why, len(ds)))
			answer.Refused = append(answer.Refused, element{e.Index, why})
		}
		b, _ := json.Marshal(answer) // a struct of ints and strings always encodes
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(append(b, '\n')) //nolint:errcheck
		return
	}
	if apiclient.WantsSOAPAck(ds) {
		// Salesforce sends its Outbound Message again until it gets
		// its acknowledgement.
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Write([]byte(apiclient.SalesforceAck)) //nolint:errcheck
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{\"stored\":true}\n")) //nolint:errcheck
}

// noteStored counts and logs a delivery stored durably, or found stored
// already, that was received at start.
func (l *Listener) noteStored(t *hookTarget, d apiclient.Delivery, taken campaign.Taken, start time.Time) {
	ack := l.now().Sub(start)
	t.last.Store(start.UnixNano())
	result := "stored"
	if taken.New {
		l.stored.Add(1)
		if taken.Number.E164 == "" {
			l.metrics.unmatched.WithLabelValues(t.name).Inc() // it can belong to no contact
		}
	} else {
		result = "duplicate"
		l.duplicates.Add(1)
	}
	switch {
	case taken.Held:
		// Sending it again would not make it readable: acknowledged, held
		// on the store, and said loudly, every time it comes.
		if taken.HeldNew {
			l.metrics.held.WithLabelValues(t.name).Inc()
		}
		why := "its number does not read"
		if taken.Number.Err != nil {
			why = taken.Number.Err.Error()
		}
		listed := len(taken.Found)
		if taken.ByCall != "" && !slices.Contains(taken.Found, taken.ByCall) {
			listed++ // the contact of the call it names
		}
		l.log.Error().Str("campaign", t.name).Str("key", taken.Key).Str("why", why).Int("numbers_listed", listed).Str("list", t.intake.DoNotCall().String()).
			Msg("an opt-out whose number callrun cannot read: no run on this store starts a call until a person puts the number on the do-not-call list (callrun suppress add CAMPAIGN.yaml NUMBER) and resolves it (callrun outcomes resolve CAMPAIGN.yaml KEY)")
	case taken.Unlisted != "":
		// The delivery's number is another than its call's: perhaps read
		// in the campaign's region when it was another country's.
		// A delivery stored erased names an erased person's number:
		// not in the log either.
		ev := l.log.Warn().Str("campaign", t.name).Str("key", taken.Key).Str("call_id", d.CallID).Str("field", taken.Number.From)
		if !taken.Erased {
			ev = ev.Str("listed", taken.ByCall).Str("not_listed", taken.Unlisted).Str("as_sent", taken.Number.Raw)
		}
		ev.Str("list", t.intake.DoNotCall().String()).
			Msg("opt-out: the number its fields give is not its call's contact's; the contact's number is on the do-not-call list, the other is not (it may be misread): if that person asked too, put it there (callrun suppress add CAMPAIGN.yaml NUMBER)")
	case len(taken.Listed) > 0 && taken.FlaggedBy != "":
		l.log.Info().Str("campaign", t.name).Str("key", taken.Key).Str("field", taken.FlaggedBy).Str("list", t.intake.DoNotCall().String()).Msg("opt-out: a field of the delivery, its summary or the person's words in its transcript say do not call, and the number is on the do-not-call list")
	case len(taken.Listed) > 0:
		l.log.Info().Str("campaign", t.name).Str("key", taken.Key).Str("list", t.intake.DoNotCall().String()).Msg("opt-out: the number is on the do-not-call list")
	}
	if taken.Behind > 0 {
		if held, ok := l.behind.pass(l.now()); ok {
			l.log.Warn().Str("campaign", t.name).Str("key", taken.Key).Dur("behind", taken.Behind).Int64("not_logged", held).
				Msg("this machine's clock is behind the delivery's timestamp: its conversation is recorded at the timestamp, so that Reg F's 7 days are not cut short, but the calling hours and contact pressure a run on this machine reads are wrong: set the clock (NTP)")
		}
	}
	l.metrics.deliveries.WithLabelValues(t.name, result).Inc()
	l.metrics.ack.WithLabelValues(t.name).Observe(ack.Seconds())
	msg := "delivery stored"
	if !taken.New {
		msg = "delivery already stored: a retry, answered and not stored again"
	}
	l.log.Info().Str("campaign", t.name).Str("event", d.Event).Str("key", taken.Key).Bool("duplicate", !taken.New).
		Dur("ack", ack).Msg(msg)
}

// listenBodyBudget is how many bytes of delivery bodies listen reads at
// once, and listenBodyWait how long a request waits for its share before
// it is answered 503 (its sender's retry comes back): a body may be up to
// [apiclient.MaxDeliveryBody], and memory follows the deliveries in
// flight, not what senders send.
var (
	listenBodyBudget int64 = 64 << 20
	listenBodyWait         = 5 * time.Second
)

// takeBody takes r's share of listenBodyBudget, waiting for it up to
// listenBodyWait, and returns what gives it back; ok is false when it
// could not be had in time. The share is the body's Content-Length, or
// the most a body may be when it gives none; twice that for a compressed
// body, which is held beside what it decompresses to.
func (l *Listener) takeBody(r *http.Request) (release func(), ok bool) {
	if r.Method != http.MethodPost {
		return func() {}, true // a query: no body
	}
	n := r.ContentLength
	if n <= 0 || n > apiclient.MaxDeliveryBody {
		n = apiclient.MaxDeliveryBody + 1 // read one byte over the most, to tell
	}
	if r.Header.Get("Content-Encoding") != "" {
		n += apiclient.MaxDeliveryBody
	}
	n = min(n, listenBodyBudget)
	ctx, cancel := context.WithTimeout(r.Context(), listenBodyWait)
	defer cancel()
	if err := l.bodies.Acquire(ctx, n); err != nil {
		return nil, false
	}
	return func() { l.bodies.Release(n) }, true
}

// refuse answers a delivery listen does not store.
func (l *Listener) refuse(w http.ResponseWriter, t *hookTarget, status int, why string) {
	l.noteRefused(t, status, why)
	http.Error(w, http.StatusText(status), status)
}

// noteRefused counts and logs a delivery listen does not store, with the
// status it is answered.
func (l *Listener) noteRefused(t *hookTarget, status int, why string) {
	n := l.refused.Add(1)
	l.metrics.refused.WithLabelValues(t.name, strconv.Itoa(status)).Inc()
	if held, ok := l.gate.pass(l.now()); ok {
		l.log.Warn().Str("campaign", t.name).Int("status", status).Str("why", apiclient.Redact(why)).Int64("refused_total", n).Int64("not_logged", held).Msg("delivery refused")
	}
}
