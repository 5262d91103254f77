package main

import (
	"context"
	"fmt"
	"io"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/urfave/cli/v2"
)

func statusCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "count the campaign's contacts by status, from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Reads the sheets and the journal; changes nothing and asks the service nothing.
It may run while a run is going on: it then says which run holds the lock, and
counts the calls that run has started and not yet heard back about as in flight,
not uncertain.

Example: callrun status --format json campaign.yaml`,
		Flags: []cli.Flag{formatFlag(), sandboxStateFlag(), shardFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return campaignStatus(c.Context, run.SavedOptions{Path: path, Sandbox: c.Bool("sandbox"), Shard: shard}, format, s.stdout)
		},
	}
}

func sandboxStateFlag() cli.Flag {
	return &cli.BoolFlag{Name: "sandbox", Usage: "use the state of run --sandbox runs (the default while the campaign's service is callrun's sandbox, answering)"}
}

// campaignStatus prints what status finds of the campaign, as text or
// JSON.
func campaignStatus(ctx context.Context, o run.SavedOptions, format string, out io.Writer) error {
	r, err := run.Status(ctx, o)
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(out, r)
	}
	fmt.Fprintf(out, "Campaign %s: %d rows\n", r.Campaign, r.Rows)
	if r.Rehearsal {
		fmt.Fprintf(out, "  a rehearsal's state (against callrun's sandbox: nobody was phoned)\n")
	}
	if r.Shard.Sharded() {
		fmt.Fprintf(out, "  shard %s: the contacts whose number hashes to %d of %d\n", r.Shard, r.Shard.Index, r.Shard.Count)
	}
	fmt.Fprintf(out, "  journal: %s\n", r.Journal)
	for _, h := range r.Holders {
		fmt.Fprintf(out, "  running: %s holds the lock\n", h)
	}
	for _, s := range []store.Status{store.Sent, store.Failed, store.Uncertain, store.Pending, store.Invalid, store.Duplicate, store.Suppressed} {
		fmt.Fprintf(out, "  %-10s %d\n", s, r.Counts[string(s)])
	}
	if len(r.Holders) > 0 {
		fmt.Fprintf(out, "  %-10s %d (started by the run going on; their answers are not in yet)\n", "in flight", r.Counts[run.InFlight])
	}
	if len(r.Waiting) > 0 {
		fmt.Fprintf(out, "Pending, by what holds them:\n")
		for _, l := range r.Waiting {
			fmt.Fprintf(out, "  %d %s", l.Contacts, run.WaitingRuleText[l.Rule])
			if l.From != nil {
				fmt.Fprintf(out, ", the first may be called from %s", l.From.Local().Format("Mon 2 Jan 15:04 MST"))
			}
			fmt.Fprintln(out)
		}
	}
	if r.Outcomes != nil {
		fmt.Fprintf(out, "Outcomes of the contacts called, by the latest webhook delivery:\n")
		for _, name := range report.OutcomeNames {
			label := name
			if name == "none" {
				label = "none yet"
			}
			fmt.Fprintf(out, "  %-10s %d\n", label, r.Outcomes[name])
		}
		if r.Unmatched != nil {
			fmt.Fprintf(out, "  %d delivery(ies) matched no contact (callrun outcomes lists them)\n", *r.Unmatched)
		}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(out, "Warning: %s\n", w)
	}
	return nil
}
