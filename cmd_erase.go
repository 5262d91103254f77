package main

import (
	"fmt"

	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func eraseCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "erase",
		Usage:     "erase people from everything callrun keeps on the campaign's store, keeping them from being called again",
		ArgsUsage: "CAMPAIGN.yaml [NUMBER...]",
		Description: `Removes each person's number, name and every other field from the campaign's
journal, reports and webhook deliveries, and from the store's call starts,
conversations and do-not-call list, for a person who asked to be forgotten. A
keyed hash of the number stays in their place (the key is the store's own: keep
it in your backups), so that no campaign on the store calls them again and
contact pressure still counts their calls; --allow-contact leaves a person who is
not on the do-not-call list off it. Refuses while a run of the campaign holds its
lock. Stopped anywhere, it is finished by running it again. Your sheets are yours:
erase says which rows still hold the people and does not touch them. Each erase
writes a line (when, how many, by whom; never whom) to CALLRUN_HOME/erasures.log.

Example: callrun erase spring.yaml +14155550132
         callrun erase spring.yaml --file requests.csv --column Phone`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Usage: "a CSV of the numbers to erase, read as a suppress: file is"},
			&cli.StringFlag{Name: "column", Usage: "with --file, its column of numbers (default: every column whose first rows read as numbers)"},
			&cli.BoolFlag{Name: "allow-contact", Usage: "do not put a person who is not on the do-not-call list on it (one who asked only for their data to go)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return run.UsageError(fmt.Errorf("erase: give the campaign file and the numbers, e.g. callrun erase examples/quickstart/campaign.yaml +14155550132"))
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
