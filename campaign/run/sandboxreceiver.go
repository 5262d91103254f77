package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// sandboxOutcomesWait is how long run --sandbox waits at its end for the
// in-process sandbox's webhooks: its calls last 50ms and nothing refuses
// their deliveries, so they are in within a second; this bounds a
// receiver that cannot store them.
const sandboxOutcomesWait = 30 * time.Second

// sandboxOutcomes is run --sandbox's own receiver of its in-process
// sandbox's webhooks, for a campaign with outcomes:: listen's handler on
// a loopback port of its own, storing each delivery into the rehearsal's
// deliveries file as listen does, so that the report at the run's end
// shows the outcomes, from one command.
type sandboxOutcomes struct {
	log zerolog.Logger
	l   *Listener
	srv *http.Server
	url string // the rehearsal's outcomes URL: this receiver, the campaign's path, a secret of this run
}

// receiveSandboxOutcomes starts the receiver for a rehearsal of f, which
// stores into the rehearsal's store, and points f's outcomes URL (and the
// agents' webhooks that were that URL) at it; the secret is this run's
// own, so no CALLRUN_HOOK_SECRET is needed, and never does the sandbox
// deliver to the campaign's real outcomes URL. It returns nil for a
// campaign without outcomes:, and when another process already stores
// the rehearsal's deliveries (another shard's run --sandbox), which it
// logs.
func receiveSandboxOutcomes(log zerolog.Logger, f *campaign.File) (*sandboxOutcomes, error) {
	if f.Outcomes == nil {
		return nil, nil
	}
	st, err := f.OpenStore(context.Background(), true)
	if err != nil {
		return nil, err
	}
	t, err := openHookTarget(context.Background(), f, st, true)
	if errors.Is(err, store.ErrDeliveriesLocked) {
		// Nor may the sandbox deliver to outcomes.url, where a listen may
		// store them as the real campaign's.
		for i := range f.Agents {
			if w := f.Agents[i].Webhook; w != nil && (w.URL == f.Outcomes.URL || w.URL == f.Outcomes.AgentURL()) {
				f.Agents[i].Webhook = nil
			}
		}
		log.Warn().Msg("another callrun stores this rehearsal's deliveries (another shard's run --sandbox?): this run's outcomes are not received")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The rehearsal's receiver is its own, on loopback, behind a secret of
	// its own; the sandbox signs nothing with the campaign's key.
	f.Outcomes.SigningSecret, f.Outcomes.RequireSignature = "", false
	b := make([]byte, 16)
	rand.Read(b) //nolint:errcheck // never fails
	secret := hex.EncodeToString(b)
	apiclient.AddSecret(secret)
	dir, _ := path.Split(f.Outcomes.Path()) // the secret, or nothing when its variable is unset
	hookPath := dir + secret
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.deliveries.Close()
		return nil, fmt.Errorf("receiving the sandbox's webhooks: %w", err)
	}
	// Each delivery stored is logged at debug level only: a rehearsal's
	// terminal is for the run.
	rlog := log
	if log.GetLevel() > zerolog.DebugLevel {
		rlog = log.Level(zerolog.WarnLevel)
	}
	r := &sandboxOutcomes{log: log, url: "http://" + ln.Addr().String() + hookPath,
		l: NewListener(rlog, 0, time.Now)}
	r.l.targets[hookPath] = t
	r.srv = listenServer(r.l)
	go r.srv.Serve(ln) //nolint:errcheck // ErrServerClosed after close
	// The agents' webhooks that were the outcomes URL, or its agents'
	// path, are this receiver's.
	oldURL, oldAgentURL := f.Outcomes.URL, f.Outcomes.AgentURL()
	f.Outcomes.URL = r.url
	for _, a := range f.Agents {
		switch {
		case a.Webhook == nil:
		case a.Webhook.URL == oldURL:
			a.Webhook.URL = r.url
		case a.Webhook.URL == oldAgentURL:
			a.Webhook.URL = f.Outcomes.AgentURL()
		}
	}
	return r, nil
}

// accountWebhook is the sandbox's account webhook configuration: to this
// receiver, or none.
func (r *sandboxOutcomes) accountWebhook() sandbox.AccountWebhook {
	if r == nil {
		return sandbox.AccountWebhook{}
	}
	return sandbox.AccountWebhook{URL: r.url}
}

// wait waits, at most bound, until the sandbox sb has sent every webhook
// of the calls it placed (each acknowledged, refused or given up), then
// says what came. An interrupted run (ctx ended) does not wait.
func (r *sandboxOutcomes) wait(ctx context.Context, sb *sandbox.Server, bound time.Duration) {
	if r == nil || sb == nil {
		return
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err := sb.WaitWebhooks(wctx)
	stored := r.l.stored.Load()
	switch {
	case err == nil:
		r.log.Info().Int64("stored", stored).Int64("duplicates", r.l.duplicates.Load()).Int64("forged", r.l.forged.Load()).
			Msgf("outcomes: the sandbox's webhooks are all in after %s: %d deliveries stored for the report", time.Since(start).Round(time.Millisecond), stored)
	case ctx.Err() != nil:
		r.log.Info().Int64("stored", stored).Msg("outcomes: not waiting for the sandbox's webhooks (interrupted); the report shows those stored")
	default:
		r.log.Warn().Int64("stored", stored).Int("pending", sb.PendingWebhooks()).
			Msgf("outcomes: stopped waiting for the sandbox's webhooks after %s, %d call(s)' still pending; the report shows the %d deliveries stored", bound, sb.PendingWebhooks(), stored)
	}
}

// close stops the receiver and closes the deliveries file. The sandbox is
// closed first: nothing more comes.
func (r *sandboxOutcomes) close() {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ListenDrainTimeout)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		r.log.Warn().Err(err).Msg("stopping the receiver of the sandbox's webhooks")
	}
	r.l.Close()
}
