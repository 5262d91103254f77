package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func agentsCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:  "agents",
		Usage: "list the service's agents",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list every agent of the account, marking those the campaign declares",
				ArgsUsage: "CAMPAIGN.yaml",
				Description: `Reads all pages of the agent list. Changes nothing.

Example: callrun agents list --format json examples/quickstart/campaign.yaml`,
				Flags: []cli.Flag{formatFlag()},
				Action: func(c *cli.Context) error {
					path, err := campaignArg(c)
					if err != nil {
						return err
					}
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					return agentsList(c.Context, s.log, path, format, s.stdout)
				},
			},
		},
	}
}

// listedAgent is one row of `agents list`.
type listedAgent struct {
	apiclient.Agent
	Declared bool `json:"declared"`
}

func agentsList(ctx context.Context, log zerolog.Logger, path, format string, out io.Writer) error {
	svc, err := openService(ctx, log, path, campaign.LoadOptions{ServiceOnly: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	agents, err := svc.Client.ListAllAgents(ctx)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, a := range svc.File.Agents {
		declared[a.Name] = true
	}
	rows := make([]listedAgent, len(agents))
	for i, a := range agents {
		a.Webhook = apiclient.Redact(a.Webhook) // an outcomes url's path holds its secret
		rows[i] = listedAgent{Agent: a, Declared: declared[a.Name]}
	}
	if format == "json" {
		return printJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "The account has no agents yet.")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tAGENT ID\tSTATUS\tWEBHOOK\tIN CAMPAIGN")
	for _, r := range rows {
		hook := r.Webhook
		if hook == "" {
			hook = "-"
		} else {
			hook = r.WebhookMethod + " " + hook
		}
		in := ""
		if r.Declared {
			in = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.AgentID, r.Status, hook, in)
	}
	return tw.Flush()
}
