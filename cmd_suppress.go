package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/callrun/callrun/report/store"
	"github.com/urfave/cli/v2"
)

func suppressCommand(s *session) *cli.Command {
	action := func(fn func(ctx context.Context, l *dncSession, args []string, c *cli.Context) error, minArgs int, what string) cli.ActionFunc {
		return func(c *cli.Context) error {
			name := c.Command.HelpName
			if c.NArg() < 1+minArgs {
				return run.UsageError(fmt.Errorf("%s: give the campaign file%s, e.g. %s examples/quickstart/campaign.yaml%s", name, what, name, map[bool]string{true: " +14155550132", false: ""}[minArgs > 0]))
			}
			l, err := openDNC(c.Context, c.Args().First(), c.Bool("sandbox"))
			if err != nil {
				return err
			}
			defer l.close()
			return fn(c.Context, l, c.Args().Slice()[1:], c)
		}
	}
	return &cli.Command{
		Name:  "suppress",
		Usage: "keep the store's do-not-call list, which every campaign on the store honours",
		Description: `The do-not-call list is the store's, not one campaign's: with files, one file in
CALLRUN_HOME (default: the user's state directory) shared by every campaign on the
machine; with state: {postgres: ...}, a table of the database, shared by every machine.
callrun listen adds the numbers whose delivery says opt-out (outcomes.opt_out). plan
counts contacts on it as suppressed, and run checks it right before each call start.
The campaign file says which store, and the region numbers without +country are
read in. Nothing is ever deleted: a removal is kept, with its reason.`,
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "put numbers on the do-not-call list", ArgsUsage: "CAMPAIGN.yaml NUMBER...",
				Description: "Example: callrun suppress add spring.yaml +14155550132 \"(415) 555-0133\"",
				Flags:       []cli.Flag{sandboxStateFlag()},
				Action:      action(suppressAdd, 1, " and one or more numbers"),
			},
			{
				Name: "remove", Usage: "take numbers off the do-not-call list (the removal is kept, with its reason)", ArgsUsage: "CAMPAIGN.yaml NUMBER...",
				Description: "Example: callrun suppress remove --reason \"asked to be called again, ticket 4411\" spring.yaml +14155550132",
				Flags:       []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why the number may be called again (required; kept on the list)"}, sandboxStateFlag()},
				Action:      action(suppressRemove, 1, " and one or more numbers"),
			},
			{
				Name: "list", Usage: "show the numbers on the do-not-call list, or with --history every entry", ArgsUsage: "CAMPAIGN.yaml",
				Description: "Example: callrun suppress list --history spring.yaml",
				Flags:       []cli.Flag{formatFlag(), &cli.BoolFlag{Name: "history", Usage: "every entry, removals included, oldest first"}, sandboxStateFlag()},
				Action:      action(suppressList, 0, ""),
			},
			{
				Name: "import", Usage: "put every number of a CSV (read as a suppress: file is) on the do-not-call list", ArgsUsage: "CAMPAIGN.yaml FILE",
				Description: "Example: callrun suppress import spring.yaml crm-dnc.csv --column \"Phone Number\"",
				Flags:       []cli.Flag{&cli.StringFlag{Name: "column", Usage: "the column of phone numbers (default: every column whose first rows read as numbers)"}, sandboxStateFlag()},
				Action:      action(suppressImport, 1, " and the CSV file"),
			},
			{
				Name: "export", Usage: "write the numbers on the do-not-call list as CSV", ArgsUsage: "CAMPAIGN.yaml",
				Description: "Example: callrun suppress export spring.yaml --output dnc.csv",
				Flags:       []cli.Flag{&cli.StringFlag{Name: "output", Usage: "write to this file (default: standard output)"}, sandboxStateFlag()},
				Action:      action(suppressExport, 0, ""),
			},
		},
	}
}

// dncSession is a campaign file and its store's do-not-call list, for
// `callrun suppress`.
type dncSession struct {
	f     *campaign.File
	list  store.DoNotCallList
	store store.Store
}

// openDNC loads the campaign file (offline: the list needs no service)
// and opens its store's list: the rehearsals' with --sandbox, or while
// the campaign's service is callrun's sandbox ([run.Rehearsing]), as
// listen and run keep it.
func openDNC(ctx context.Context, path string, sandbox bool) (*dncSession, error) {
	f, err := campaign.Load(path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return nil, err
	}
	st, err := f.OpenStore(ctx, run.Rehearsing(ctx, f, sandbox))
	if err != nil {
		return nil, err
	}
	list, err := st.DoNotCall()
	if err != nil {
		st.Close()
		return nil, err
	}
	return &dncSession{f: f, list: list, store: st}, nil
}

func (l *dncSession) close() { l.store.Close() }

// numbers reads numbers given on the command line; a number that does
// not read is a usage error naming it, and nothing is written.
func (l *dncSession) numbers(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		n, err := l.f.ReadNumber(a)
		if err != nil {
			return nil, run.UsageError(fmt.Errorf("%v: nothing was changed", err))
		}
		out = append(out, n)
	}
	return out, nil
}

func suppressAdd(ctx context.Context, l *dncSession, args []string, c *cli.Context) error {
	numbers, err := l.numbers(args)
	if err != nil {
		return err
	}
	now := time.Now()
	es := make([]store.DoNotCallEntry, len(numbers))
	for i, n := range numbers {
		es[i] = store.DoNotCallEntry{Number: n, At: now, Source: "suppress add"}
	}
	wrote, err := l.list.Add(ctx, es)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%d number(s) put on the %s; %d on it already.\n", len(wrote), l.list, len(dedupe(numbers))-len(wrote))
	return nil
}

func suppressRemove(ctx context.Context, l *dncSession, args []string, c *cli.Context) error {
	reason := c.String("reason")
	if reason == "" {
		return run.UsageError(errors.New("suppress remove needs --reason: why the number may be called again (it is kept on the list's history)"))
	}
	numbers, err := l.numbers(args)
	if err != nil {
		return err
	}
	now := time.Now()
	es := make([]store.DoNotCallEntry, len(numbers))
	for i, n := range numbers {
		es[i] = store.DoNotCallEntry{Number: n, At: now, Removed: true, Source: "suppress remove", Reason: reason}
	}
	wrote, err := l.list.Add(ctx, es)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%d number(s) taken off the %s; %d not on it.\n", len(wrote), l.list, len(dedupe(numbers))-len(wrote))
	return nil
}

func dedupe(ns []string) []string {
	ns = slices.Clone(ns)
	slices.Sort(ns)
	return slices.Compact(ns)
}

func suppressList(ctx context.Context, l *dncSession, args []string, c *cli.Context) error {
	if len(args) > 0 {
		return run.UsageError(fmt.Errorf("suppress list takes the campaign file only, got also: %v", args))
	}
	format, err := checkFormat(c)
	if err != nil {
		return err
	}
	out := c.App.Writer
	n := 0
	if format == "json" {
		// A JSON array, written as the list is read.
		if _, err := fmt.Fprint(out, "["); err != nil {
			return err
		}
		err := l.list.Each(ctx, !c.Bool("history"), func(e store.DoNotCallEntry) error {
			b, err := json.MarshalIndent(e, "  ", "  ")
			if err != nil {
				return err
			}
			sep := ",\n  "
			if n == 0 {
				sep = "\n  "
			}
			n++
			_, err = fmt.Fprintf(out, "%s%s", sep, b)
			return err
		})
		if err != nil {
			return err
		}
		end := "\n]\n"
		if n == 0 {
			end = "]\n"
		}
		_, err = fmt.Fprint(out, end)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	err = l.list.Each(ctx, !c.Bool("history"), func(e store.DoNotCallEntry) error {
		if n == 0 {
			fmt.Fprintln(tw, "NUMBER\tWHEN (UTC)\tWHAT\tSOURCE\tREASON")
		}
		n++
		what := "added"
		if e.Removed {
			what = "removed"
		}
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shownNumber(e), e.At.UTC().Format(time.RFC3339), what, e.Source, e.Reason)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(out, "The %s holds no number.\n", l.list)
		return nil
	}
	return tw.Flush()
}

// importBatch is how many numbers `suppress import` puts on the list at a
// time: its memory follows a batch, not the file.
const importBatch = 50_000

func suppressImport(ctx context.Context, l *dncSession, args []string, c *cli.Context) error {
	if len(args) != 1 {
		return run.UsageError(fmt.Errorf("suppress import takes the campaign file and one CSV file, got %d files", len(args)))
	}
	path, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	read, err := l.f.ReadNumbers(ctx, path, c.String("column"))
	if err != nil {
		return run.UsageError(fmt.Errorf("%v: nothing was imported", err))
	}
	for _, p := range read.Problems {
		fmt.Fprintf(c.App.ErrWriter, "%s row %d: %s (ignored)\n", args[0], p.Row, p.Message)
	}
	now := time.Now()
	numbers := read.Len()
	next := read.Batches(importBatch)
	source := "import " + args[0]
	wrote, err := l.list.Import(ctx, func() ([]store.DoNotCallEntry, error) {
		numbers := next()
		es := make([]store.DoNotCallEntry, len(numbers))
		for i, n := range numbers {
			es[i] = store.DoNotCallEntry{Number: n, At: now, Source: source}
		}
		return es, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d number(s) of %s were put on the list before the import stopped; run it again to put on the rest: those on it already are counted, not written again)", err, wrote, args[0])
	}
	fmt.Fprintf(c.App.Writer, "%d number(s) of %s put on the %s; %d on it already", wrote, args[0], l.list, numbers-wrote)
	if read.Ignored > 0 {
		fmt.Fprintf(c.App.Writer, "; %d entr(ies) that are no phone number ignored", read.Ignored)
	}
	fmt.Fprintln(c.App.Writer, ".")
	if read.Ignored > 0 {
		return run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("%d entr(ies) of %s are no phone number and were not imported; the lines above name them", read.Ignored, args[0]))
	}
	return nil
}

func suppressExport(ctx context.Context, l *dncSession, args []string, c *cli.Context) error {
	if len(args) > 0 {
		return run.UsageError(fmt.Errorf("suppress export takes the campaign file only, got also: %v (write to a file with --output)", args))
	}
	var out io.Writer = c.App.Writer
	var file *durable.File
	if p := c.String("output"); p != "" {
		// Every number on the list: made private, as the reports are, and
		// put in place whole, or not at all.
		var err error
		if file, err = durable.Create(p, private.FileMode(filepath.Dir(p))); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
		defer file.Abort()
		out = file
	}
	w := csv.NewWriter(out)
	w.Write([]string{"phone_number", "added_at", "source"}) //nolint:errcheck // Flush reports it
	erased := 0
	err := l.list.Each(ctx, true, func(e store.DoNotCallEntry) error {
		if e.Number == "" { // an erased person's: no number to give another system
			erased++
			return nil
		}
		return w.Write([]string{e.Number, e.At.UTC().Format(time.RFC3339), e.Source})
	})
	if err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if erased > 0 {
		fmt.Fprintf(c.App.ErrWriter, "%d erased people on the list are not exported: the list keeps only a keyed hash of their numbers, which no other system can use.\n", erased)
	}
	if file != nil {
		return file.Commit()
	}
	return nil
}

// shownNumber is how suppress list shows an entry's number:
// an erased person's entry holds only their keyed hash, shown as
// "(erased person)".
func shownNumber(e store.DoNotCallEntry) string {
	if e.Hash != "" {
		return "(erased person)"
	}
	return e.Number
}
