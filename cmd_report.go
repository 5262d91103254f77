package main

import (
	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

func reportCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "rebuild report.csv, report.xlsx, report.html and summary.json from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Writes the report files into the state directory again, from the sheets and the
journal. Useful after a kill -9, or after fixing a sheet. Asks the service nothing.
Removes the temporary files a killed report write left, unless a run holds the
state directory, and holds its lock while it writes.

Example: callrun report campaign.yaml`,
		Flags: []cli.Flag{sandboxStateFlag(), shardFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return run.RebuildReport(c.Context, s.log, run.SavedOptions{Path: path, Sandbox: c.Bool("sandbox"), Shard: shard}, s.stdout)
		},
	}
}
