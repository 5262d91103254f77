package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/urfave/cli/v2"
)

func stateCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "move a campaign's saved state",
		Subcommands: []*cli.Command{
			{
				Name:      "push",
				Usage:     "copy the campaign's local journal into its PostgreSQL store, once",
				ArgsUsage: "CAMPAIGN.yaml",
				Description: `For a campaign that outgrew one machine: after adding
  state: {postgres: "${CALLRUN_DATABASE_URL}"}
to the campaign file, copy what state_dir's journal (and its shards') says into
the database, so that the runs from there on, from any machine, know who was
called. The machine's do-not-call list and its call starts of the last 30 days
(every campaign's, for contact pressure), and the
conversations listen heard (for Reg F's 7 days), are copied too. Refuses when the
database holds the campaign already (unless --merge), and while a run holds the
campaign. The local journal is kept, and marked so that a run from the files is
refused from then on.

Examples:
  callrun state push campaign.yaml
  callrun state push --merge campaign.yaml   # a second machine that ran it from files too`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "merge", Usage: "add to a campaign the database holds already: the calls of another machine that ran it from files"},
				},
				Action: func(c *cli.Context) error {
					path, err := campaignArg(c)
					if err != nil {
						return err
					}
					return statePush(c.Context, path, c.Bool("merge"), s.stdout)
				},
			},
		},
	}
}

// statePush copies the campaign's local journals into its PostgreSQL
// store, holding both the local state directory's lock and the database's
// lock of the whole campaign meanwhile; merge adds them to a campaign the
// database holds already.
func statePush(ctx context.Context, path string, merge bool, out io.Writer) error {
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return err
	}
	if !f.SharedState() {
		return run.UsageError(fmt.Errorf("%s has no state: {postgres: ...} (or the variable it names is not set): give it one to push to", path))
	}
	dir := f.Path(f.StateDir)
	journals, err := store.Journals(dir)
	if err != nil {
		return err
	}
	if len(journals) == 0 {
		return run.UsageError(fmt.Errorf("%s holds no journal to push", dir))
	}
	// The state directory's lock, taken whole, keeps out a run from the
	// files, sharded or not.
	unlockDir, err := store.Lock(dir)
	if err != nil {
		return run.Busy(err)
	}
	defer unlockDir()
	if _, err := os.Stat(filepath.Join(dir, store.PushedFile)); err == nil {
		return run.UsageError(fmt.Errorf("%s was pushed already (see %s)", dir, store.PushedFile))
	}
	pg, err := store.OpenPostgres(ctx, f.State.Postgres, f.Name, 0, 1)
	if err != nil {
		return err
	}
	defer pg.Close()
	unlock, err := pg.Lock(ctx)
	if err != nil {
		return run.Busy(err)
	}
	defer unlock()
	p, err := pg.PushFiles(ctx, dir, journals, merge)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Copied %d record(s) of campaign %s from %d journal file(s) in %s into the %s.\n", p.Records, f.Name, len(journals), dir, pg)
	if p.Keys > 0 {
		fmt.Fprintf(out, "Copied %d of the %d erasure keys and %d of the %d erased people's hashes into the database's (the others were there already).\n", p.KeysNew, p.Keys, p.ErasedNew, p.Erased)
	}
	if p.Entries > 0 {
		fmt.Fprintf(out, "Copied %d of the %d entries of the %s into the database's (the others were there already).\n", p.EntriesNew, p.Entries, p.List)
	}
	if p.Holds > 0 {
		fmt.Fprintf(out, "Copied %d of the %d opt-out holds open beside the %s into the database's: no run on the database starts a call until each is resolved (callrun outcomes resolve).\n", p.HoldsNew, p.Holds, p.List)
	}
	if p.Deliveries > 0 {
		fmt.Fprintf(out, "Copied %d of the %d deliveries in %s into the database's (the others were there already).\n", p.DeliveriesNew, p.Deliveries, dir)
	}
	if p.Agents > 0 {
		fmt.Fprintf(out, "Copied %d of the %d agents callrun created, remembered in %s, into the database's (the others were there already).\n", p.AgentsNew, p.Agents, dir)
	}
	days := int(store.StartsHorizon / (24 * time.Hour))
	if p.Starts > 0 {
		fmt.Fprintf(out, "Copied %d of the %d call starts of the last %d days in the %s into the database's, which contact pressure counts (the others were there already).\n",
			p.StartsNew, p.Starts, days, p.CallStarts)
	}
	if p.Conversations > 0 {
		fmt.Fprintf(out, "Copied %d of the %d conversations of the last %d days beside the %s into the database's, which Reg F's contact pressure counts (the others were there already).\n",
			p.ConversationsNew, p.Conversations, days, p.CallStarts)
	}
	fmt.Fprintf(out, "Runs use the database from now on; the local files stay, marked with %s.\n", store.PushedFile)
	return nil
}
