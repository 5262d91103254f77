package main

import (
	"fmt"
	"time"

	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func runCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run the campaign: ensure agents, call every contact once, write the report",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Creates the agents the service lacks, then starts one call per contact at the
campaign's pace, inside its calling hours, and writes report.csv, report.xlsx,
report.html and summary.json to the state directory. Stopped, killed or cut off, it resumes where it left off
and never phones the same person twice: a call whose outcome is unknown is marked
uncertain and sent again only with --retry-uncertain.

Examples:
  callrun run --sandbox examples/quickstart/campaign.yaml   # try it: nobody is phoned
  callrun run --limit 10 campaign.yaml                      # a canary of 10 calls
  callrun run --until 19:30 campaign.yaml                   # from cron: exit 75 if hours are over
  callrun run --until "19:30 Europe/Berlin" campaign.yaml   # the time in another zone

--until 19:30 is read in the zone of the campaign's hours.timezone; with no
hours: or timezone: contact, in this machine's local time (TZ). Name a zone
after the time to choose another. The run logs which it used.

Exit codes: 0 done; 1 stopped on an error (contacts not called stay pending); 2 the
campaign file or a sheet's do-not-call column needs a decision; 3 some contacts
failed or are uncertain; 4 every row invalid, nobody called; 75 try later (locked,
outside calling hours, or contacts left pending); 130 interrupted (state saved).
callrun --help lists them all.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "call at most N contacts this run, then stop (resumable)"},
			&cli.BoolFlag{Name: "retry-failed", Usage: "send contacts the service refused (4xx) again"},
			&cli.BoolFlag{Name: "retry-uncertain", Usage: "send contacts whose outcome is unknown again (they may be phoned twice)"},
			&cli.StringFlag{Name: "until", Usage: "outside calling hours, stop (exit 75) rather than wait past TIME: 19:30 (in hours.timezone, else local time), \"19:30 Europe/Berlin\", 2006-01-02T15:04:05Z07:00, or a duration like 2h"},
			&cli.BoolFlag{Name: "sandbox", Usage: "run against an in-process sandbox (state kept apart), logged in automatically"},
			&cli.StringFlag{Name: "metrics-file", Usage: "keep a Prometheus text file at PATH up to date during the run (for node_exporter's textfile collector: name it *.prom in its directory)"},
			shardFlag(),
		},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			// --limit 0 would be no limit at all: everyone called, where
			// "at most 0" means no one.
			if c.Int("limit") < 0 || (c.IsSet("limit") && c.Int("limit") == 0) {
				return run.UsageError(fmt.Errorf("--limit %d: give a positive number (leave --limit out to call every contact)", c.Int("limit")))
			}
			if _, _, err := run.ParseUntil(c.String("until"), time.Now(), nil); err != nil {
				return run.UsageError(err) // before reading the campaign: its zone comes later
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			o := run.Options{
				Path: path, Shard: shard, Limit: c.Int("limit"), RetryFailed: c.Bool("retry-failed"), RetryUncertain: c.Bool("retry-uncertain"),
				Until: c.String("until"), Sandbox: c.Bool("sandbox"), MetricsFile: c.String("metrics-file"),
			}
			if !c.Bool("no-progress") {
				o.Progress, o.Logs = terminal(s.stderr), s.logs
			}
			return run.Campaign(c.Context, s.log, o, s.stdout)
		},
	}
}
