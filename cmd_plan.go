package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func planCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "plan",
		Usage:     "check a campaign and show what run would do, changing nothing",
		ArgsUsage: "CAMPAIGN.yaml",
		Description: `Reads the campaign file and every sheet, validates every row, and counts what
run would do: agents to create or found, and per sheet the rows to call, already
done, invalid (with reasons), duplicate and suppressed; then an estimated time.
Online it lists agents and reads their call endpoints (read-only); --offline makes
no network request at all, for CI.

--format json prints JSON on stdout whatever happens: the plan, or, for a
campaign that cannot be planned, {"errors": [...]} with the file, line, key
and message of each problem.

--report DIR writes report.csv and report.html into DIR as they would be
before any call: every row by name with what run would do with it (to_call,
waiting for its hours, held by contact pressure, done, invalid, duplicate,
suppressed) and why, and from when for those that wait. Open report.html in a
browser and find anyone by name; docs/report.md says what each status means.

--format github prints the plan and then one GitHub Actions annotation per
problem (::error file=...,line=...::...), so that a pull request shows each
on the line of the campaign file or the sheet row it is about.

Examples:
  callrun plan campaign.yaml
  callrun plan --report before campaign.yaml                       # who would be called, by name
  callrun plan --offline --strict --format json campaign.yaml     # in CI
  callrun plan --offline --strict --format github campaign.yaml   # in GitHub Actions

Online, plan fails as run would when run would refuse the campaign: an
agent name that two agents of the account share. Offline, agents are not
known: the plan says so, and run may still refuse.

Exit codes: 0 fine; 1 run would refuse (an agent name two agents share);
2 the campaign file, a sheet's header or a sheet's encoding is broken, or
a column says do not call (or reads neither yes nor no) and the campaign
neither maps it nor ignores it (do_not_call: {ignore: [...]}); 4 with
--strict, some rows are invalid or repaired, a sheet has no rows, a cell
of a do-not-call column says neither yes nor no, phone_number lists a
column named for a fax, a pager or an assistant's line, or run would
refuse.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "offline", Usage: "make no network request (no credentials needed)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 4 when any row is invalid or repaired, a sheet has no rows, or run would refuse"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, or github (annotations for GitHub Actions)"},
			&cli.StringFlag{Name: "report", Usage: "write report.csv and report.html of the plan into `DIR`: every row by name, with what run would do and why"},
			shardFlag(),
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "text" && format != "json" && format != "github" {
				return usageError(fmt.Errorf("--format %q: use text, json or github", format))
			}
			path, err := campaignArg(c)
			if err != nil {
				return planFailed(s.stdout, format, path, err)
			}
			shard, err := shardArg(c)
			if err != nil {
				return planFailed(s.stdout, format, path, err)
			}
			return runPlan(c.Context, s.log, planOptions{path: path, offline: c.Bool("offline"), strict: c.Bool("strict"), format: format, shard: shard, report: c.String("report")}, s.stdout)
		},
	}
}

type planOptions struct {
	path    string
	offline bool
	strict  bool
	format  string
	shard   campaign.Shard
	now     time.Time // the plan's time; zero: now
	report  string    // --report: the directory of the plan's report.csv and report.html; "": none
}

// runPlan builds the plan of the campaign file and prints it in o.format.
// With the github format, every problem it finds, in the campaign file or
// in a sheet, is also printed as an annotation. With the json format,
// stdout always holds JSON: the plan, or, when there is none, the errors.
func runPlan(ctx context.Context, log zerolog.Logger, o planOptions, out io.Writer) error {
	plan, f, err := buildPlan(ctx, log, o, out)
	if o.format == "github" {
		writeAnnotations(out, o.path, f, plan, err)
	}
	if plan == nil && err != nil {
		return planFailed(out, o.format, o.path, err)
	}
	return err
}

// planError is one entry of the errors `plan --format json` prints: the
// file, the line and the key of the campaign file a problem is about (0
// and "" when it is about no line or key), and what is wrong.
type planError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

// planFailed returns err, the error that left plan without a plan to
// print, after printing it as {"errors": [...]} when the format is json,
// so that a script reading stdout gets JSON whatever happened: each
// problem of a campaign file or sheet with its file, line and key, any
// other error as one entry on the campaign file.
func planFailed(out io.Writer, format, path string, err error) error {
	if format != "json" {
		return err
	}
	if werr := printJSON(out, struct {
		Errors []planError `json:"errors"`
	}{planErrors(path, err)}); werr != nil {
		return errors.Join(err, fmt.Errorf("printing the errors as JSON: %w", werr))
	}
	return err
}

// planErrors lists err as plan's JSON does: each problem of a
// *campaign.FileError, or err itself on the campaign file at path.
func planErrors(path string, err error) []planError {
	var fe *campaign.FileError
	if !errors.As(err, &fe) || len(fe.Problems) == 0 {
		return []planError{{File: path, Message: run.Message(err)}}
	}
	errs := make([]planError, len(fe.Problems))
	for i, p := range fe.Problems {
		errs[i] = planError{File: p.File, Line: p.Line, Key: p.Key, Message: apiclient.Redact(p.Msg)}
	}
	return errs
}

// printJSON prints v as indented JSON.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// buildPlan is runPlan but for the annotations. It returns the plan and
// the campaign file as far as it got.
func buildPlan(ctx context.Context, log zerolog.Logger, o planOptions, out io.Writer) (*campaign.Plan, *campaign.File, error) {
	plan, f, err := makePlan(ctx, log, o)
	if err != nil {
		return plan, f, err
	}
	if o.format == "json" {
		// A sheet that could not be read to its end fails the plan (exit
		// 2) after the plan of the others: its errors are in the plan.
		doc := struct {
			*campaign.Plan
			Errors []planError `json:"errors,omitempty"`
		}{Plan: plan}
		if len(plan.SheetProblems) > 0 {
			doc.Errors = planErrors(o.path, &campaign.FileError{Problems: plan.SheetProblems})
		}
		err = printJSON(out, doc)
	} else {
		err = plan.WriteText(out)
	}
	if err != nil {
		return plan, f, err
	}
	if o.report != "" && o.format == "text" {
		fmt.Fprintf(out, "Plan report: %s\nPlan page: %s\n", filepath.Join(o.report, campaign.ReportCSV), filepath.Join(o.report, campaign.ReportHTML))
	}
	if len(plan.SheetProblems) > 0 {
		return plan, f, &campaign.FileError{Problems: plan.SheetProblems}
	}
	if err := plan.Refusal(); err != nil {
		if o.strict {
			return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: %w", err))
		}
		return plan, f, err
	}
	if n := plan.NotDialledColumns; o.strict && n > 0 {
		return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: phone_number lists %d column(s) named for a line callrun does not call (an assistant's, a fax, a pager); their numbers are passed over: remove them from phone_number (the warnings above name each)", n))
	}
	if o.strict && plan.Totals.Invalid > 0 {
		return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: %d invalid row(s) in %s; the plan above lists each with its sheet, row and column", plan.Totals.Invalid, o.path))
	}
	if n := len(plan.Repairs) + plan.RepairsOmitted; o.strict && n > 0 {
		return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: %d repaired number(s) in %s; check each (the plan above lists them) and fix the sheet", n, o.path))
	}
	if n := plan.SuppressionIgnored; o.strict && n > 0 {
		return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: %d entr(ies) of the suppression files are no phone number and suppress nobody; the warnings above list them", n))
	}
	if n := plan.UnclearDoNotCall; o.strict && n > 0 {
		return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: %d cell(s) of the do_not_call: columns say neither yes nor no, and their rows are not called; write 1 or yes where the contact is not to be called, 0 or no where they may be (the warnings above name the first of each column)", n))
	}
	if o.strict {
		for _, s := range plan.Sheets {
			if s.Rows == 0 {
				return plan, f, withExitCode(exitInvalidRows, fmt.Errorf("plan --strict: sheet %s has a header and no rows", s.File))
			}
		}
	}
	return plan, f, nil
}

// makePlan loads the campaign, reads its sheets and state, asks the
// service (online) and counts what run would do.
func makePlan(ctx context.Context, log zerolog.Logger, o planOptions) (*campaign.Plan, *campaign.File, error) {
	f, err := campaign.Load(o.path, campaign.LoadOptions{Offline: o.offline})
	if err != nil {
		return nil, nil, err
	}
	log.Debug().Str("campaign", o.path).Int("sheets", len(f.Sheets)).Int("agents", len(f.Agents)).Bool("offline", o.offline).Msg("campaign loaded")
	if err := f.CheckSheets(); err != nil {
		return nil, f, err
	}
	norm := phone.NewNormalizer()
	suppress, err := f.LoadSuppression(ctx, norm)
	if err != nil {
		return nil, f, err
	}
	f.SetShard(o.shard)
	now := o.now
	if now.IsZero() {
		now = time.Now()
	}
	// Online, a campaign whose service is callrun's own sandbox is planned
	// as its runs are: a rehearsal's, on the rehearsal's state.
	rehearsal := false
	if !o.offline {
		if rehearsal, err = run.SandboxService(ctx, f); err != nil {
			return nil, f, err
		}
	}
	state, where, warning, pressure, err := planState(ctx, f, o.offline, rehearsal, suppress, now)
	if err != nil {
		return nil, f, err
	}
	defer state.Close()
	if rehearsal {
		where += " (a rehearsal's: " + run.RehearsalNote(f.Service.BaseURL, f.Path(f.StateDir)+"-sandbox") + ")"
	}
	opts := campaign.PlanOptions{Offline: o.offline, Norm: norm, Suppress: suppress, Now: now, Pressure: pressure,
		Done: func(c *campaign.Contact) bool {
			key, _ := campaign.SettledKey(f, state, c)
			st, ok := state.Status(key)
			return ok && st != store.Pending
		}}
	var fields [][]campaign.PlanField // each agent's call endpoint's, online
	if o.offline {
		opts.Agents = campaign.OfflineAgents(f.Agents)
		opts.Warnings = f.AccountFieldWarnings(nil)
	} else {
		svc, err := run.OpenService(ctx, log, f)
		if err != nil {
			return nil, f, err
		}
		defer svc.Close()
		if opts.Agents, err = campaign.PlanAgents(ctx, svc.Client, f.Agents); err != nil {
			return nil, f, err
		}
		if fields, opts.Warnings, err = checkEndpoints(ctx, svc, f, opts.Agents); err != nil {
			return nil, f, err
		}
	}
	if warning != "" {
		opts.Warnings = append(opts.Warnings, warning)
	}
	if o.report != "" {
		if opts.Report, err = startPlanReport(f, state, o.report, now); err != nil {
			return nil, f, err
		}
		defer opts.Report.Abort()
	}
	plan, err := campaign.BuildPlan(ctx, f, opts)
	if err != nil {
		return nil, f, err
	}
	if o.report != "" {
		if err := opts.Report.Finish(); err != nil {
			return nil, f, fmt.Errorf("--report %s: %w", o.report, err)
		}
		log.Info().Str("report", filepath.Join(o.report, campaign.ReportHTML)).Msg("wrote the plan's report.csv and report.html")
	}
	for i := range fields {
		plan.Agents[i].Fields = fields[i]
	}
	plan.Store = where
	return plan, f, nil
}

// planState reads what the journal says, for plan's done counts, and the
// store's do-not-call list into sup: no lock, as plan may run beside a
// run; and the store's call starts, for the contacts contact pressure
// holds back at now (nil with pressure off). Offline, a journal, list and
// call starts in PostgreSQL are not read (--offline makes no network
// request), and warning says so. where says which journal it read, for
// the plan's Journal line.
func planState(ctx context.Context, f *campaign.File, offline, rehearsal bool, sup *campaign.Suppression, now time.Time) (_ *store.State, where, warning string, _ *campaign.PlanPressure, _ error) {
	if f.State != nil && offline {
		// Offline asks no database, but the state directory is local.
		if err := store.CheckPushed(f.Path(f.StateDir)); err != nil {
			return nil, "", "", nil, err
		}
		return store.EmptyState(), "PostgreSQL (not read: --offline)", "the journal and the do-not-call list are in PostgreSQL, which --offline does not ask: no contact counts as done, and none as on the do-not-call list; nor does it see the call starts contact pressure counts there, so none counts as held (run holds back the numbers called too often)", nil, nil
	}
	saved, err := f.OpenStore(ctx, rehearsal)
	if err != nil {
		return nil, "", "", nil, err
	}
	defer saved.Close()
	dnc, err := saved.DoNotCall()
	if err != nil {
		return nil, "", "", nil, err
	}
	if err := sup.LoadDoNotCall(ctx, dnc); err != nil {
		return nil, "", "", nil, err
	}
	var pressure *campaign.PlanPressure
	if !rehearsal { // a rehearsal holds nobody back
		if pressure, err = f.ReadPressure(ctx, saved, now); err != nil {
			return nil, "", "", nil, err
		}
	}
	st, err := saved.ReadState(ctx)
	return st, saved.String(), "", pressure, err
}

// checkEndpoints reads the call endpoint of every agent that exists,
// returns its form fields for the plan, and checks that each sheet sends
// only fields its agent's endpoint takes: a *campaign.FileError names
// every field that it does not. The fields beyond the seven that the
// sheets of agents still to be created send are warnings: they are
// checked when run has created them.
func checkEndpoints(ctx context.Context, svc *run.Service, f *campaign.File, agents []campaign.AgentPlan) ([][]campaign.PlanField, []string, error) {
	fields := make([][]campaign.PlanField, len(agents))
	var problems []campaign.Problem
	var toCreate []string
	for i, a := range agents {
		if a.Action == campaign.ActionCreate {
			toCreate = append(toCreate, a.Spec.Name)
		}
		if a.AgentID == "" {
			continue
		}
		ep, err := svc.Client.GetCallEndpoint(ctx, a.AgentID)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the call endpoint of agent %q: %w", a.Spec.Name, err)
		}
		fields[i] = campaign.PlanFields(ep)
		var fe *campaign.FileError
		if err := f.CheckEndpointFields(a.Spec.Name, ep); errors.As(err, &fe) {
			problems = append(problems, fe.Problems...)
		}
	}
	if len(problems) > 0 {
		return nil, nil, &campaign.FileError{Problems: problems}
	}
	var warnings []string
	if len(toCreate) > 0 {
		warnings = f.AccountFieldWarnings(toCreate)
	}
	return fields, warnings, nil
}

// startPlanReport starts the report of a plan in dir (plan --report),
// which it creates if need be; the state directory, where run's own
// report is, is refused.
func startPlanReport(f *campaign.File, state *store.State, dir string, now time.Time) (*campaign.PlanReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("--report %s: %w", dir, err))
	}
	for _, own := range []string{f.Path(f.StateDir), f.Path(f.StateDir) + "-sandbox"} {
		if a, err := filepath.Abs(own); err == nil && a == abs {
			return nil, usageError(fmt.Errorf("--report %s: that is the campaign's state directory, where run writes its own report; give the plan's report another directory", dir))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	return campaign.StartPlanReport(f, state, dir, now)
}
