package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func sandboxCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:  "sandbox",
		Usage: "serve a local emulator of the service, for trying callrun without an account",
		Description: `Serves the whole service on loopback: OAuth (authorize auto-approves), agents,
a call endpoint per agent, webhook callbacks, and a ledger of every call at
/_sandbox/ledger. Nobody is phoned. Stop it with Ctrl-C. It prints its
settings once it listens, and GET /healthz answers 200 from then on: a
script that starts it in the background waits for that before it logs in.

Every answer says, in the header Callrun-Sandbox: rehearsal, that it is this
sandbox: a campaign run against it (on loopback) is a rehearsal, as with
run --sandbox. Its journal and report are kept in <state_dir>-sandbox, its
opt-outs on the rehearsals' own do-not-call list, and its calls count against
nobody's contact pressure, so that the real campaign still calls everyone.

Faults: the --share-* flags answer that share of call starts (or, with
--fault-scope api, of agent requests) with a fault; --share-refresh-500 makes
the token refresh endpoint answer 500. To make the service refuse every refresh
token issued so far (as a revoked login), POST to /_sandbox/revoke-refresh-tokens;
/_sandbox/faults changes the faults while it runs. With --account-webhook, the
deliveries' faults are --share-duplicate-deliveries, --out-of-order-deliveries,
--share-late-deliveries, --share-forged-deliveries (to a wrong secret: a
receiver must refuse them) and --share-opt-outs; their ledger is at
/_sandbox/deliveries. --webhook-shape writes them as the service's two
documented shapes (form with the event, contact-only, the signed JSON
envelope with --signing-secret) or as other senders do (variant-array,
variant-multipart, variant-case, variant-nested); mixed draws one for each
delivery.

Example:
  callrun sandbox --addr 127.0.0.1:8089 --share-503 0.1
  callrun auth login --code sandbox-code examples/quickstart/campaign.yaml
  callrun sandbox & until curl -sf http://127.0.0.1:8089/healthz >/dev/null; do sleep 1; done
  callrun sandbox --token-lifetime 2s --share-refresh-500 1   # no token can be refreshed
  curl -X POST http://127.0.0.1:8089/_sandbox/revoke-refresh-tokens`,
		Flags: sandboxFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return run.UsageError(fmt.Errorf("sandbox takes no arguments, got %q", c.Args().Slice()))
			}
			opts, err := sandboxOptions(c)
			if err != nil {
				return err
			}
			if c.Bool("verbose") {
				opts.Logf = func(format string, args ...any) { s.log.Info().Msgf(format, args...) }
			}
			return serveSandbox(c.Context, c.String("addr"), opts, s.stdout)
		},
	}
}

// serveSandbox serves a sandbox until ctx ends.
func serveSandbox(ctx context.Context, addr string, opts sandbox.Options, out io.Writer) error {
	srv, err := sandbox.Listen(addr, opts)
	if err != nil {
		return fmt.Errorf("starting the sandbox on %s: %w", addr, err)
	}
	clientID, secret, code := cmp.Or(opts.ClientID, sandbox.DefaultClientID), cmp.Or(opts.ClientSecret, sandbox.DefaultClientSecret), cmp.Or(opts.Code, sandbox.DefaultCode)
	fmt.Fprintf(out, `callrun sandbox: serving the Voice AI Agent service emulator (nobody is phoned)
  base_url:      %s
  authorize_url: %s/oauth/authorize
  client_id:     %s
  client_secret: %s
  code:          %s   (reusable: callrun auth login --code %s CAMPAIGN.yaml)
  ledger:        %s/_sandbox/ledger
`, srv.URL, srv.URL, clientID, secret, code, code, srv.URL)
	if len(opts.AccountFields) > 0 {
		fmt.Fprintf(out, "  account fields: %s\n", strings.Join(opts.AccountFields, ", "))
	}
	fmt.Fprintln(out, "Ctrl-C to stop.")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	select {
	case err := <-errc:
		srv.Close()
		return err
	case <-ctx.Done():
		srv.Close()
		fmt.Fprintln(out, "callrun sandbox: stopped.")
		return nil
	}
}

// sandboxFlags are the sandbox command's flags: its address and client,
// and the faults it injects.
func sandboxFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8089", Usage: "address to listen on"},
		&cli.StringFlag{Name: "client-id", Value: sandbox.DefaultClientID, Usage: "the OAuth client id it accepts"},
		&cli.StringFlag{Name: "client-secret", Value: sandbox.DefaultClientSecret, Usage: "the OAuth client secret it accepts"},
		&cli.StringFlag{Name: "code", Value: sandbox.DefaultCode, Usage: "a reusable authorization code"},
		&cli.DurationFlag{Name: "token-lifetime", Value: time.Hour, Usage: "access token lifetime"},
		&cli.BoolFlag{Name: "no-rotate", Usage: "keep refresh tokens instead of rotating them on each refresh"},
		&cli.DurationFlag{Name: "pending-for", Usage: "new agents stay pending this long"},
		&cli.DurationFlag{Name: "call-duration", Value: 50 * time.Millisecond, Usage: "simulated call length before the webhook fires"},
		&cli.BoolFlag{Name: "external-webhooks", Usage: "deliver webhooks to non-loopback hosts too"},
		&cli.StringFlag{Name: "account-webhook", Usage: "POST each call's call.started, call.answered and call.ended (the contact's fields and the event) to this URL, retried with backoff, as the live service's account webhooks"},
		&cli.Float64Flag{Name: "share-duplicate-deliveries", Usage: "share (0..1) of acknowledged account webhook deliveries sent once more"},
		&cli.BoolFlag{Name: "out-of-order-deliveries", Usage: "send each call's account webhook events after it ended, last first"},
		&cli.Float64Flag{Name: "share-late-deliveries", Usage: "share (0..1) of account webhook deliveries held back --late-by, so they come after the call's later events"},
		&cli.DurationFlag{Name: "late-by", Value: 2 * time.Second, Usage: "how long a late delivery is held back"},
		&cli.Float64Flag{Name: "share-forged-deliveries", Usage: "share (0..1) of calls for which a forger also POSTs a call.ended (status=forged) to the account webhook URL with a wrong secret, once"},
		&cli.Float64Flag{Name: "share-opt-outs", Usage: "share (0..1) of calls whose person asks not to be called again: their call.ended carries --opt-out"},
		&cli.StringFlag{Name: "opt-out", Value: "disposition=dnc", Usage: "FIELD=VALUE an opted-out call's call.ended carries (what outcomes.opt_out matches)"},
		&cli.StringFlag{Name: "webhook-shape", Value: sandbox.ShapeForm, Usage: "how account webhook deliveries are written: " + strings.Join(sandbox.Shapes, ", ") + " (mixed draws one for each delivery)"},
		&cli.StringFlag{Name: "signing-secret", Usage: "sign each envelope (--webhook-shape envelope or mixed) with HMAC-SHA256 under this secret, in its signature member"},
		&cli.StringFlag{Name: "caller-number", Usage: "the envelope's data.caller_number: this number (the line the service calls from) instead of the contact's"},
		&cli.IntFlag{Name: "transcript-bytes", Usage: "length of the transcript an envelope's call.ended carries (e.g. 204800 for a 200 KiB body)"},
		&cli.BoolFlag{Name: "no-call-id", Usage: "answer a placed call without its call_id"},
		&cli.StringSliceFlag{Name: "account-fields", Usage: "form fields the account defines beyond the seven (e.g. city,zip_code): listed in each agent's form_data and accepted in calls"},
		&cli.StringFlag{Name: "fault-scope", Value: sandbox.ScopeCalls, Usage: "where faults apply: calls, api or all"},
		&cli.DurationFlag{Name: "latency", Usage: "delay added to each request in the fault scope"},
		&cli.Float64Flag{Name: "rate-limit", Usage: "requests per second before answering 429"},
		&cli.Float64Flag{Name: "share-429", Usage: "share (0..1) answered 429 before acting"},
		&cli.DurationFlag{Name: "retry-after", Value: time.Second, Usage: "Retry-After sent with 429 and 503"},
		&cli.Float64Flag{Name: "share-503", Usage: "share (0..1) answered 503 before acting"},
		&cli.Float64Flag{Name: "share-500", Usage: "share (0..1) of calls placed and then answered 500"},
		&cli.Float64Flag{Name: "share-drop", Usage: "share (0..1) of calls placed and then dropped without an answer"},
		&cli.Float64Flag{Name: "share-drop-before", Usage: "share (0..1) of calls dropped without placing them"},
		&cli.Float64Flag{Name: "share-refresh-500", Usage: "share (0..1) of token refreshes answered 500 (whatever --fault-scope)"},
		&cli.Float64Flag{Name: "share-200-html", Usage: "share (0..1) of calls not placed and answered 200 with an HTML maintenance page"},
		&cli.Float64Flag{Name: "share-200-error", Usage: "share (0..1) of calls not placed and answered 200 {\"status\":\"error\"}"},
		&cli.Float64Flag{Name: "share-202-error", Usage: "share (0..1) of calls not placed and answered 202 {\"error\":...}"},
		&cli.Float64Flag{Name: "share-403-limit", Usage: "share (0..1) of calls not placed and answered 403 {\"error\":\"concurrency limit reached\"}"},
		&cli.Float64Flag{Name: "share-stall", Usage: "share (0..1) of calls placed and answered 200 with a body that stalls until the client gives up"},
		&cli.IntFlag{Name: "max-active", Usage: "at most this many calls in progress; more are answered 403 concurrency limit reached"},
		&cli.DurationFlag{Name: "call-length", Usage: "how long a call is in progress, for --max-active (default: --call-duration)"},
		&cli.Int64Flag{Name: "seed", Usage: "seed for the fault choice"},
		&cli.BoolFlag{Name: "verbose", Usage: "log every request (secrets redacted)"},
	}
}

// sandboxOptions reads the sandbox command's flags into the emulator's
// options, refusing those that do not fit.
func sandboxOptions(c *cli.Context) (sandbox.Options, error) {
	opts := sandbox.Options{
		ClientID: c.String("client-id"), ClientSecret: c.String("client-secret"), Code: c.String("code"),
		AccessTokenLifetime:   c.Duration("token-lifetime"),
		PendingFor:            c.Duration("pending-for"),
		CallDuration:          c.Duration("call-duration"),
		AllowExternalWebhooks: c.Bool("external-webhooks"),
		AnswerWithoutCallID:   c.Bool("no-call-id"),
		// --account-fields, given once with commas or several times: the
		// flag splits and trims them, and an empty name is no field.
		AccountFields: slices.DeleteFunc(c.StringSlice("account-fields"), func(n string) bool { return n == "" }),
		AccountWebhook: sandbox.AccountWebhook{URL: c.String("account-webhook"),
			ShareDuplicate: c.Float64("share-duplicate-deliveries"), OutOfOrder: c.Bool("out-of-order-deliveries"),
			ShareLate: c.Float64("share-late-deliveries"), LateBy: c.Duration("late-by"),
			ShareForged: c.Float64("share-forged-deliveries"), ShareOptOut: c.Float64("share-opt-outs"), Seed: c.Int64("seed"),
			Shape: c.String("webhook-shape"), SigningSecret: c.String("signing-secret"),
			CallerNumber: c.String("caller-number"), TranscriptBytes: c.Int("transcript-bytes")},
		Faults: sandbox.Faults{
			Scope: c.String("fault-scope"), Latency: c.Duration("latency"), RateLimit: c.Float64("rate-limit"),
			Share429: c.Float64("share-429"), RetryAfter: c.Duration("retry-after"),
			Share503: c.Float64("share-503"), Share500: c.Float64("share-500"),
			ShareDrop: c.Float64("share-drop"), ShareDropBefore: c.Float64("share-drop-before"),
			ShareRefresh500: c.Float64("share-refresh-500"), Seed: c.Int64("seed"),
			Share200HTML: c.Float64("share-200-html"), Share200Error: c.Float64("share-200-error"),
			Share202Error: c.Float64("share-202-error"), Share403Limit: c.Float64("share-403-limit"),
			ShareStall: c.Float64("share-stall"), MaxActive: c.Int("max-active"), CallLength: c.Duration("call-length"),
		},
	}
	opts.Rehearsal = true // runs against it are rehearsals, kept apart
	field, value, ok := strings.Cut(c.String("opt-out"), "=")
	if !ok || strings.TrimSpace(field) == "" || value == "" {
		return opts, run.UsageError(fmt.Errorf("--opt-out %q: give FIELD=VALUE, such as disposition=dnc", c.String("opt-out")))
	}
	opts.AccountWebhook.OptOutField, opts.AccountWebhook.OptOutValue = strings.TrimSpace(field), value
	if c.Bool("no-rotate") {
		rotate := false
		opts.RotateRefreshTokens = &rotate
	}
	if err := opts.Faults.Validate(); err != nil {
		return opts, run.UsageError(err)
	}
	if err := opts.AccountWebhook.Validate(); err != nil {
		return opts, run.UsageError(err)
	}
	if err := sandbox.CheckAccountFields(opts.AccountFields); err != nil {
		return opts, run.UsageError(fmt.Errorf("--account-fields: %w", err))
	}
	return opts, nil
}
