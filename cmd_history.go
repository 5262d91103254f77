package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/urfave/cli/v2"
)

func historyCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "show every call start to a number across the campaigns on the store",
		ArgsUsage: "CAMPAIGN.yaml NUMBER",
		Description: `Every call start contact pressure counted for the number, by every campaign on the
campaign's store (with files, those sharing CALLRUN_HOME; with state: {postgres: ...},
the database), oldest first: when, which campaign and agent, and whether it still
counts (sent, uncertain or in flight) or was given back (the service refused it, or it
was provably never sent); then the conversations with it (calls the outcomes say were
answered, which hold the number 7 days for a campaign with pressure: {preset: reg_f}).
The number is read in the campaign's region.

Example: callrun history spring.yaml "(415) 555-0132"`,
		Flags: []cli.Flag{formatFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return run.UsageError(fmt.Errorf("%s: give the campaign file and one number, e.g. %s examples/quickstart/campaign.yaml +14155550132", c.Command.HelpName, c.Command.HelpName))
			}
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			l, err := openDNC(c.Context, c.Args().First(), false)
			if err != nil {
				return err
			}
			defer l.close()
			number, err := l.f.ReadNumber(c.Args().Get(1))
			if err != nil {
				return run.UsageError(err)
			}
			starts, err := l.store.CallStarts()
			if err != nil {
				return err
			}
			hist, err := starts.History(c.Context, number)
			if err != nil {
				return err
			}
			conversations, err := starts.Conversations(c.Context, number)
			if err != nil {
				return err
			}
			out := c.App.Writer
			if format == "json" {
				return printJSON(out, historyEntries(hist, conversations))
			}
			if len(hist) == 0 && len(conversations) == 0 {
				fmt.Fprintf(out, "No call start to %s in the %s.\n", number, starts)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			if len(hist) == 0 {
				fmt.Fprintf(tw, "No call start to %s in the %s.\n", number, starts)
			} else {
				fmt.Fprintln(tw, "WHEN (UTC)\tCAMPAIGN\tAGENT\tCOUNTS")
			}
			for _, h := range hist {
				counts := "yes (sent, uncertain or in flight)"
				switch {
				case store.IsServiceStart(h) && h.Released:
					counts = "no (callrun's own call, counted by its start)"
				case store.IsServiceStart(h):
					counts = "yes (the service's own call, " + strings.TrimPrefix(h.ID, store.ServiceStartID("")) + ", seen by listen)"
				case h.Released:
					counts = "no (refused, or never sent)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.At.UTC().Format(time.RFC3339), h.Campaign, h.Agent, counts)
			}
			if len(conversations) > 0 {
				fmt.Fprintln(tw, "\nCONVERSATION (UTC)\tCAMPAIGN\tDELIVERY")
				for _, c := range conversations {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.At.UTC().Format(time.RFC3339), c.Campaign, c.Key)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			limits := l.f.PressureLimits()
			var at []time.Time
			for _, h := range hist {
				if !h.Released {
					at = append(at, h.At)
				}
			}
			var conversedAt time.Time
			if len(conversations) > 0 {
				conversedAt = conversations[len(conversations)-1].At
			}
			now := time.Now()
			held := store.Later(store.HoldUntil(limits, number, at, now), store.HoldAfterConversation(number, conversedAt, l.f.PressureAfterConversation(), now))
			if held != nil {
				fmt.Fprintf(out, "\nUnder this campaign's contact pressure (%s) it may be called again from %s.\n", l.f.PressureSaid(), held.Until.Local().Format("Mon 2 Jan 15:04 MST"))
			}
			return nil
		},
	}
}

// historyEntry is one line of `callrun history --format json`: a call
// start, or a conversation (with its delivery's key).
type historyEntry struct {
	Kind string `json:"kind"` // "call_start" or "conversation"
	store.CallStart
	Key string `json:"key,omitempty"`
}

// historyEntries is the call starts and the conversations of a number in
// one list, oldest first.
func historyEntries(hist []store.CallStart, conversations []store.Conversation) []historyEntry {
	out := make([]historyEntry, 0, len(hist)+len(conversations))
	for _, h := range hist {
		kind := "call_start"
		if store.IsServiceStart(h) {
			kind = "service_call_start" // a call the service placed on its own, seen by listen
		}
		out = append(out, historyEntry{Kind: kind, CallStart: h})
	}
	for _, c := range conversations {
		out = append(out, historyEntry{Kind: "conversation", CallStart: store.CallStart{Number: c.Number, Hash: c.Hash, At: c.At, Campaign: c.Campaign}, Key: c.Key})
	}
	slices.SortStableFunc(out, func(a, b historyEntry) int { return a.At.Compare(b.At) })
	return out
}
