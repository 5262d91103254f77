package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "count the campaign's contacts by status, from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Reads the sheets and the journal; changes nothing and asks the service nothing.
It may run while a run is going on.

Example: callrun status --format json campaign.yaml`,
		Flags: []cli.Flag{formatFlag(), sandboxStateFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			return campaignStatus(c.Context, path, format, c.Bool("sandbox"), os.Stdout)
		},
	}
}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "rebuild report.csv and summary.json from the saved state",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Writes the report files into the state directory again, from the sheets and the
journal. Useful after a kill -9, or after fixing a sheet. Asks the service nothing.

Example: callrun report campaign.yaml`,
		Flags: []cli.Flag{sandboxStateFlag()},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			return rebuildReport(c.Context, path, c.Bool("sandbox"), os.Stdout)
		},
	}
}

func sandboxStateFlag() cli.Flag {
	return &cli.BoolFlag{Name: "sandbox", Usage: "use the state of `run --sandbox` runs"}
}

// savedState loads the campaign offline and reads its journal.
func savedState(path string, sandboxState bool) (*campaign.File, *report.State, string, error) {
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return nil, nil, "", err
	}
	if err := f.CheckSheets(); err != nil {
		return nil, nil, "", err
	}
	dir := f.Path(f.StateDir)
	if sandboxState {
		dir += "-sandbox"
	}
	st, err := report.ReadState(filepath.Join(dir, campaign.JournalFile))
	if err != nil {
		return nil, nil, "", err
	}
	return f, st, dir, nil
}

func campaignStatus(ctx context.Context, path, format string, sandboxState bool, out io.Writer) error {
	f, st, _, err := savedState(path, sandboxState)
	if err != nil {
		return err
	}
	defer st.Close()
	norm := campaign.NewPhoneNormalizer()
	sup, err := f.LoadSuppression(ctx, norm)
	if err != nil {
		return err
	}
	sum := &report.Summary{Campaign: f.Name}
	err = f.NewContactReader(norm, sup).Each(ctx, func(c *campaign.Contact) error {
		sum.Add(campaign.ReportRow(f, st, c))
		return nil
	})
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Campaign string         `json:"campaign"`
			Counts   map[string]int `json:"counts"`
		}{f.Name, sum.Counts})
	}
	fmt.Fprintf(out, "Campaign %s: %d rows\n", f.Name, sum.Rows)
	for _, s := range []report.Status{report.Sent, report.Failed, report.Uncertain, report.Pending, report.Invalid, report.Duplicate, report.Suppressed} {
		fmt.Fprintf(out, "  %-10s %d\n", s, sum.Counts[string(s)])
	}
	return nil
}

func rebuildReport(ctx context.Context, path string, sandboxState bool, out io.Writer) error {
	f, st, dir, err := savedState(path, sandboxState)
	if err != nil {
		return err
	}
	defer st.Close()
	norm := campaign.NewPhoneNormalizer()
	sup, err := f.LoadSuppression(ctx, norm)
	if err != nil {
		return err
	}
	now := time.Now()
	sum := &report.Summary{Campaign: f.Name, StartedAt: now, Ending: report.EndRebuilt}
	sum.Finish(now)
	if err := campaign.WriteReport(ctx, f, st, norm, sup, dir, sum); err != nil {
		return err
	}
	fmt.Fprint(out, sum.Text())
	fmt.Fprintf(out, "Report: %s\n", filepath.Join(dir, campaign.ReportCSV))
	return nil
}
