package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/urfave/cli/v2"
)

func outcomesCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "outcomes",
		Usage:     "list the webhook deliveries stored for the campaign, with the contact each one matched",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Lists every delivery callrun listen stored for the campaign, in the order they
came, unmatched ones included: when it came, its event, the agent it names, its
number, the contact (sheet and row) it was matched to, and the fields
outcomes.fields names. Reads the sheets, the journal and the deliveries; changes
nothing and asks the service nothing. With --shard, only the deliveries that
shard's contacts took are listed.

Example: callrun outcomes --format json campaign.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "csv or json"},
			sandboxStateFlag(), shardFlag(),
		},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			format := c.String("format")
			if format != "csv" && format != "json" {
				return usageError(fmt.Errorf("--format %q: use csv or json", format))
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return listOutcomes(c.Context, savedOptions{path: path, sandbox: c.Bool("sandbox"), shard: shard}, format, s.stdout)
		},
	}
}

// deliveryLine is one delivery as `callrun outcomes` lists it.
type deliveryLine struct {
	ReceivedAt  string `json:"received_at"`
	Event       string `json:"event"`
	AgentID     string `json:"agent_id"`
	PhoneNumber string `json:"phone_number"`
	Matched     bool   `json:"matched"`
	Match       string `json:"match"`
	Sheet       string `json:"sheet,omitempty"`
	Row         int    `json:"row,omitempty"`
	Detail      string `json:"detail"`
	Key         string `json:"key"`
}

// deliveryColumns are the columns of `callrun outcomes --format csv`.
var deliveryColumns = []string{"received_at", "event", "agent_id", "phone_number", "matched", "sheet", "row", "detail", "key", "match"}

func (l deliveryLine) cells() []string {
	row := ""
	if l.Matched {
		row = strconv.Itoa(l.Row)
	}
	return []string{
		report.Escape(l.ReceivedAt), report.Escape(l.Event), report.Escape(l.AgentID), report.EscapeNumber(l.PhoneNumber),
		strconv.FormatBool(l.Matched), report.Escape(l.Sheet), row, report.Escape(l.Detail), report.Escape(l.Key), l.Match,
	}
}

// listOutcomes matches the campaign's deliveries to its contacts as the
// report does, and writes them all to out in the order they were stored.
func listOutcomes(ctx context.Context, o savedOptions, format string, out io.Writer) error {
	s, err := loadSaved(ctx, o)
	if err != nil {
		return err
	}
	defer s.Close()
	f := s.f
	if f.Outcomes == nil {
		return usageError(fmt.Errorf("%s: the campaign has no outcomes: block, so no deliveries are collected; see docs/outcomes.md", o.path))
	}
	x, err := campaign.OpenOutcomes(ctx, f, s.state, s.norm)
	if err != nil {
		return err
	}
	err = f.NewContactReader(s.norm, s.sup).Each(ctx, func(c *campaign.Contact) error {
		row := campaign.ReportRow(f, s.state, c)
		x.Add(c, &row)
		return nil
	})
	if err != nil {
		return err
	}
	var cw *csv.Writer
	var enc *json.Encoder
	if format == "csv" {
		cw = csv.NewWriter(out)
		if err := cw.Write(deliveryColumns); err != nil {
			return err
		}
	} else {
		enc = json.NewEncoder(out)
	}
	for i, d := range x.Deliveries() {
		t, how, matched := x.Taken(i)
		if !matched && f.Shard.Sharded() {
			continue // another shard's, or nobody's: the whole campaign's listing says
		}
		l := deliveryLine{
			ReceivedAt: report.Timestamp(d.At), Event: d.Event, AgentID: d.AgentID, PhoneNumber: f.DeliveryNumber(s.norm, d.Fields).Raw,
			Matched: matched, Match: how, Sheet: t.Sheet, Row: t.Row, Detail: x.Detail(d), Key: d.Key,
		}
		if cw != nil {
			if err := cw.Write(l.cells()); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return nil
}
