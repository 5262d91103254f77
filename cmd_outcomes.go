package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
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
		Subcommands: []*cli.Command{showCommand(s), resolveCommand(s)},
		Action: func(c *cli.Context) error {
			path, err := campaignArg(c)
			if err != nil {
				return err
			}
			format := c.String("format")
			if format != "csv" && format != "json" {
				return run.UsageError(fmt.Errorf("--format %q: use csv or json", format))
			}
			shard, err := shardArg(c)
			if err != nil {
				return err
			}
			return listOutcomes(c.Context, run.SavedOptions{Path: path, Sandbox: c.Bool("sandbox"), Shard: shard}, format, s.stdout)
		},
	}
}

func showCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print one stored delivery whole, by its key: every field, as listen read it",
		ArgsUsage: "CAMPAIGN.yaml KEY",
		Description: `Prints the delivery callrun listen stored under KEY (callrun outcomes lists
the keys; an opt-out held because its number could not be read names its key) as
one JSON object: its event, agent, call, where it came (via), every field, and
a form's raw text (cut at 1 KiB). Reads the store; changes nothing.

Example: callrun outcomes show spring.yaml 3f2a...`,
		Flags: []cli.Flag{sandboxStateFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return run.UsageError(fmt.Errorf("outcomes show: give the campaign file and the delivery's key, e.g. callrun outcomes show spring.yaml KEY"))
			}
			return showDelivery(c.Context, c.Args().Get(0), c.Args().Get(1), c.Bool("sandbox"), s.stdout)
		},
	}
}

// showDelivery prints the stored delivery key of the campaign at path.
func showDelivery(ctx context.Context, path, key string, sandbox bool, out io.Writer) error {
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return err
	}
	f.Shard = campaign.Shard{} // the deliveries are the whole campaign's
	st, err := f.OpenStore(ctx, run.Rehearsing(ctx, f, sandbox))
	if err != nil {
		return err
	}
	defer st.Close()
	state, err := st.ReadState(ctx)
	if err != nil {
		return err
	}
	defer state.Close()
	ds, err := state.Deliveries(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.Key == key {
			return printJSON(out, d)
		}
	}
	return run.UsageError(fmt.Errorf("%s: campaign %s has no delivery with key %q (callrun outcomes lists them)", path, f.Name, key))
}

func resolveCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "resolve an opt-out held because its number could not be read, once its number is on the do-not-call list",
		ArgsUsage: "CAMPAIGN.yaml KEY",
		Description: `An opt-out delivery whose number callrun could not read keeps every run on the
store from starting calls. Find the person's number in the delivery (callrun
outcomes show CAMPAIGN.yaml KEY prints it whole), put it on the do-not-call list with
callrun suppress add CAMPAIGN.yaml NUMBER, then resolve the hold: runs start
calls again once no opt-out is held. The resolution is kept beside the list,
with --note, never deleted.

Example: callrun outcomes resolve --note "+14155550123, by Ada" spring.yaml 3f2a...`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "note", Usage: "what you did, kept with the resolution (the number you put on the list, your name)"},
			sandboxStateFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return run.UsageError(fmt.Errorf("outcomes resolve: give the campaign file and the delivery's key, e.g. callrun outcomes resolve spring.yaml KEY"))
			}
			return resolveHold(c.Context, c.Args().Get(0), c.Args().Get(1), c.String("note"), c.Bool("sandbox"), s.stdout)
		},
	}
}

// resolveHold resolves the hold of the opt-out delivery key of the
// campaign at path, on its store's do-not-call list.
func resolveHold(ctx context.Context, path, key, note string, sandbox bool, out io.Writer) error {
	l, err := openDNC(ctx, path, sandbox)
	if err != nil {
		return err
	}
	defer l.close()
	f, dnc := l.f, l.list
	ok, err := dnc.Resolve(ctx, f.Name, key, note)
	if err != nil {
		return err
	}
	if !ok {
		return run.UsageError(fmt.Errorf("%s: no opt-out of campaign %s with key %q is held on the %s (callrun status lists those held)", path, f.Name, key, dnc))
	}
	held, err := dnc.Held(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Resolved the opt-out held for delivery %s of campaign %s on the %s.\n", key, f.Name, dnc)
	if len(held) > 0 {
		fmt.Fprintf(out, "%d more held: runs on the store still start no call (callrun status lists them).\n", len(held))
	} else {
		fmt.Fprintf(out, "No opt-out is held: runs on the store start calls again.\n")
	}
	return nil
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
func listOutcomes(ctx context.Context, o run.SavedOptions, format string, out io.Writer) error {
	s, err := run.LoadSaved(ctx, o)
	if err != nil {
		return err
	}
	defer s.Close()
	f := s.F
	if f.Outcomes == nil {
		return run.UsageError(fmt.Errorf("%s: the campaign has no outcomes: block, so no deliveries are collected; see docs/outcomes.md", o.Path))
	}
	x, err := campaign.OpenOutcomes(ctx, f, s.State)
	if err != nil {
		return err
	}
	err = f.NewContactReader(s.Sup).Each(ctx, func(c *campaign.Contact) error {
		row := campaign.ReportRow(f, s.State, c)
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
			ReceivedAt: report.Timestamp(d.At), Event: d.Event, AgentID: d.AgentID, PhoneNumber: f.DeliveryNumber(d.Fields).Raw,
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
