package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
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
known: the plan says so, and run may still refuse. Online and offline
(the state in files), plan fails as run would stop when the campaign
called some of its contacts already from another state directory on this
CALLRUN_HOME (a second checkout, or a state directory restored from an
older backup): it says RUN WOULD STOP, names the journal and the rows,
and says what to decide; --report marks each row called_elsewhere. So
does it, online and offline (the state in files), while an opt-out whose
number callrun listen could not read is held on the store, which stops
every run there: it says RUN WOULD STOP, names each held delivery, and
gives the commands that resolve one (callrun outcomes resolve).
Online, so does it when this machine's clock is over a minute from the
service's, as the service's answers date them; and, online and offline
(the state in files), when the store's erased set holds a hash whose
erasure key is gone: run stops on both.

Exit codes: 0 fine; 1 run would refuse (an agent name two agents share)
or stop (contacts called already from another state directory, an
opt-out held on the store, this machine's clock over a minute from the
service's, an erased set whose erasure key is gone);
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
				return run.UsageError(fmt.Errorf("--format %q: use text, json or github", format))
			}
			path, err := campaignArg(c)
			if err != nil {
				return planFailed(s.stdout, format, path, err)
			}
			shard, err := shardArg(c)
			if err != nil {
				return planFailed(s.stdout, format, path, err)
			}
			return runPlan(c.Context, s.log, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: c.Bool("offline"), Shard: shard, Report: c.String("report")}, strict: c.Bool("strict"), format: format}, s.stdout)
		},
	}
}

// planOptions are what `callrun plan` was asked: the plan to build, and
// how to print it.
type planOptions struct {
	run.PlanOptions
	strict bool
	format string // text, json or github
}

// runPlan builds the plan of the campaign file and prints it in o.format.
// With the github format, every problem it finds, in the campaign file or
// in a sheet, is also printed as an annotation. With the json format,
// stdout always holds JSON: the plan, or, when there is none, the errors.
func runPlan(ctx context.Context, log zerolog.Logger, o planOptions, out io.Writer) error {
	plan, f, err := buildPlan(ctx, log, o, out)
	if o.format == "github" {
		writeAnnotations(out, o.Path, f, plan, err)
	}
	if plan == nil && err != nil {
		return planFailed(out, o.format, o.Path, err)
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

// buildPlan is runPlan but for the annotations. It returns the plan and
// the campaign file as far as it got.
func buildPlan(ctx context.Context, log zerolog.Logger, o planOptions, out io.Writer) (*campaign.Plan, *campaign.File, error) {
	plan, f, err := run.Plan(ctx, log, o.PlanOptions)
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
			doc.Errors = planErrors(o.Path, &campaign.FileError{Problems: plan.SheetProblems})
		}
		err = printJSON(out, doc)
	} else {
		err = plan.WriteText(out)
	}
	if err != nil {
		return plan, f, err
	}
	if o.Report != "" && o.format == "text" {
		fmt.Fprintf(out, "Plan report: %s\nPlan page: %s\n", filepath.Join(o.Report, campaign.ReportCSV), filepath.Join(o.Report, campaign.ReportHTML))
	}
	if len(plan.SheetProblems) > 0 {
		return plan, f, &campaign.FileError{Problems: plan.SheetProblems}
	}
	if err := plan.Refusal(); err != nil {
		if o.strict {
			return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: %w", err))
		}
		return plan, f, err
	}
	if n := plan.NotDialledColumns; o.strict && n > 0 {
		return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: phone_number lists %d column(s) named for a line callrun does not call (an assistant's, a fax, a pager); their numbers are passed over: remove them from phone_number (the warnings above name each)", n))
	}
	if o.strict && plan.Totals.Invalid > 0 {
		return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: %d invalid row(s) in %s; the plan above lists each with its sheet, row and column", plan.Totals.Invalid, o.Path))
	}
	if n := len(plan.Repairs) + plan.RepairsOmitted; o.strict && n > 0 {
		return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: %d repaired number(s) in %s; check each (the plan above lists them) and fix the sheet", n, o.Path))
	}
	if n := plan.SuppressionIgnored; o.strict && n > 0 {
		return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: %d entr(ies) of the suppression files are no phone number and suppress nobody; the warnings above list them", n))
	}
	if n := plan.UnclearDoNotCall; o.strict && n > 0 {
		return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: %d cell(s) of the do_not_call: columns (or titles of groups of rows) say neither yes nor no, or mention do not call without saying it, and their rows are not called; write 1 or yes where the contact is not to be called, 0 or no where they may be (the warnings above name the first of each column)", n))
	}
	if o.strict {
		for _, s := range plan.Sheets {
			if s.Rows == 0 {
				return plan, f, run.WithExitCode(run.ExitInvalidRows, fmt.Errorf("plan --strict: sheet %s has a header and no rows", s.File))
			}
		}
	}
	return plan, f, nil
}
