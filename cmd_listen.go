package main

import (
	"errors"

	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func listenCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "listen",
		Usage:     "receive the service's webhook deliveries for campaigns with outcomes:, and store each before answering",
		ArgsUsage: "CAMPAIGN.yaml...",
		Description: `Serves each campaign's outcomes.url path (the service's account webhooks)
and that path with /agent at its end (the webhooks of the agents callrun creates):
GET query; POST form, multipart form, JSON object or array of them; up to 16 MiB. A delivery is written durably
to the campaign's store (the state directory's deliveries file, or the deliveries
table of its PostgreSQL database) before it is answered 200, so the service's own
retries are all the recovery needed; a retry of one delivery is stored once. Any
other path is answered 404 and counted, never stored; a body over 16 MiB is 413;
with outcomes.signing_secret, a signature that does not match is 401.
GET /healthz answers 200 (503 once a deliveries file was removed under listen,
which then needs a restart); GET /metrics serves Prometheus metrics. When calls were
started and no delivery has come for --quiet-warning, it logs a warning. SIGTERM
stops taking new deliveries and finishes those in flight. It runs beside callrun
run: it never takes the run's lock. Several listens may serve one campaign whose
state is in PostgreSQL; with files, one at a time.

Example: callrun listen --addr 0.0.0.0:8080 spring.yaml autumn.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "HOST:PORT to listen on", EnvVars: []string{"CALLRUN_LISTEN_ADDR"}},
			&cli.DurationFlag{Name: "quiet-warning", Value: run.DefaultQuietWarning, Usage: "warn when calls were started this long ago and no delivery has come since (0: never)", EnvVars: []string{"CALLRUN_LISTEN_QUIET_WARNING"}},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return run.UsageError(errors.New("listen needs one or more campaign files: callrun listen CAMPAIGN.yaml [CAMPAIGN.yaml ...]"))
			}
			return run.Listen(c.Context, s.log, run.ListenOptions{Paths: c.Args().Slice(), Addr: c.String("addr"), Quiet: c.Duration("quiet-warning")}, s.stdout)
		},
	}
}
