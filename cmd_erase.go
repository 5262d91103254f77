package main

import (
	"errors"
	"fmt"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func eraseCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "erase",
		Usage:     "erase people from everything callrun keeps on the campaign's store, keeping them from being called again",
		ArgsUsage: "CAMPAIGN.yaml [NUMBER...] | CAMPAIGN.yaml --older-than AGE",
		Description: `Removes each person's number, name and every other field from the campaign's
journal, reports and webhook deliveries, and from the store's call starts,
conversations and do-not-call list (for a campaign moved to PostgreSQL, from
the files callrun state push left too), for a person who asked to be forgotten. A
keyed hash of the number stays in their place (the key is the store's own: keep
it in your backups), so that no campaign on the store calls them again and
contact pressure still counts their calls; --allow-contact leaves a person who is
not on the do-not-call list off it. Refuses while a run of the campaign holds its
lock. Stopped anywhere, it is finished by running it again. Your sheets are yours:
erase says which rows still hold the people and does not touch them. Each erase
writes a line (when, how many, by whom; never whom) to CALLRUN_HOME/erasures.log.

--older-than AGE erases, the same way, the data of everyone on the store last
called longer ago than AGE (90d, 12w), as a campaign's retention: does at the
start of each run: it leaves the do-not-call list as it is, and later campaigns
may call them again.

Example: callrun erase spring.yaml +14155550132
         callrun erase spring.yaml --file requests.csv --column Phone
         callrun erase spring.yaml --older-than 90d`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Usage: "a CSV of the numbers to erase, read as a suppress: file is"},
			&cli.StringFlag{Name: "column", Usage: "with --file, its column of numbers (default: every column whose first rows read as numbers)"},
			&cli.BoolFlag{Name: "allow-contact", Usage: "do not put a person who is not on the do-not-call list on it (one who asked only for their data to go)"},
			&cli.StringFlag{Name: "older-than", Usage: "erase the data of everyone on the store last called longer ago than this (such as 90d; at least 31d), rather than given people"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return run.UsageError(fmt.Errorf("erase: give the campaign file and the numbers, e.g. callrun erase examples/quickstart/campaign.yaml +14155550132"))
			}
			if age := c.String("older-than"); age != "" {
				return eraseOlderThan(c, s, age)
			}
			return run.Erase(c.Context, s.log, run.EraseOptions{
				Path:         c.Args().First(),
				Numbers:      c.Args().Slice()[1:],
				File:         c.String("file"),
				Column:       c.String("column"),
				AllowContact: c.Bool("allow-contact"),
			}, s.stdout)
		},
	}
}

// eraseOlderThan is `callrun erase --older-than`: a retention of the
// whole store, now.
func eraseOlderThan(c *cli.Context, s *session, age string) error {
	if c.NArg() > 1 || c.String("file") != "" || c.Bool("allow-contact") {
		return run.UsageError(errors.New("erase: --older-than erases everyone last called before it; give no numbers, --file or --allow-contact with it"))
	}
	d, err := campaign.ParseAge(age)
	if err == nil && d < campaign.MinRetention {
		err = fmt.Errorf("%s is less than 31d (contact pressure looks back 30 days)", age)
	}
	if err != nil {
		return run.UsageError(fmt.Errorf("erase --older-than: %w", err))
	}
	_, err = run.Retain(c.Context, s.log, run.RetainOptions{Path: c.Args().First(), OlderThan: d}, s.stdout)
	return err
}
