package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func initCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented campaign file for a contact sheet",
		ArgsUsage: "CONTACTS.csv",
		Description: `Reads the sheet's header and first rows, maps the columns it recognises by their
names and values (Phone, Mobile, Téléphone, First Name, Vorname, E-Mail, ...) to the
call endpoint's form fields, and writes campaign.yaml next to the sheet. Several
phone columns become phone_number: [Mobile, Phone]; a country column (Country, Land,
Pays, ...) becomes country_column:, and decides the region when most rows agree; a
full Name column is split; an id column is sent as ghl_contact_id only when it holds
HighLevel contact ids. What it cannot decide (the region, the phone column) it leaves
as a TODO that plan refuses. It never overwrites a file without --force.

When it can ask the service (CALLRUN_BASE_URL, CALLRUN_CLIENT_ID and
CALLRUN_CLIENT_SECRET set, as the file it writes reads them, and logged in with
callrun auth login), it reads an agent's call endpoint for the fields your account
defines beyond the seven (city, zip_code, ...) and maps the columns whose header
matches one. --offline never asks.

Example:
  callrun init --agent "Spring Promo" contacts/leads.csv
  callrun plan --offline contacts/campaign.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "the agent's name (default: from the sheet's name)"},
			&cli.StringFlag{Name: "region", Usage: "country of numbers written without +country, e.g. US, GB, DE (default: guessed)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "where to write (default: campaign.yaml next to the sheet; - for stdout, with the sheet's path relative to the current directory)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing file"},
			&cli.BoolFlag{Name: "offline", Usage: "do not ask the service for your account's form fields"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return run.UsageError(errors.New("init: give one contact sheet, e.g. callrun init contacts.csv"))
			}
			if r := c.String("region"); r != "" && !phone.ValidRegion(r) {
				return run.UsageError(fmt.Errorf("--region %q: give a two-letter country code such as US, GB or DE", r))
			}
			o := initOptions{sheet: c.Args().First(), output: c.String("output"), agent: c.String("agent"), region: c.String("region"), force: c.Bool("force")}
			if !c.Bool("offline") {
				o.getenv = os.LookupEnv
			}
			return initCampaign(c.Context, s.log, o, s.stdout, s.stderr)
		},
	}
}

// initOptions are the inputs of initCampaign.
type initOptions struct {
	sheet, output, agent, region string
	force                        bool
	// getenv reads the variables the written file's service block names,
	// to ask the service for the account's fields; nil never asks.
	getenv func(string) (string, bool)
}

// initCampaign writes a campaign file for sheet and says on stdout what to
// do next. With output "-" the file itself goes to stdout, and what init
// has to say to stderr.
func initCampaign(ctx context.Context, log zerolog.Logger, o initOptions, stdout, stderr io.Writer) error {
	sheetPath, output, agent, region, force := o.sheet, o.output, o.agent, o.region, o.force
	toStdout := output == "-"
	out := stdout // what init has to say
	if toStdout {
		out = stderr
	}
	enc := sheet.GuessEncoding(sheetPath)
	r, err := sheet.OpenWith(sheetPath, sheet.Options{Encoding: enc})
	if err != nil {
		return run.UsageError(err)
	}
	defer r.Close()
	if enc != "" {
		fmt.Fprintf(out, "%s is not UTF-8 text but reads cleanly in the %s code page: the campaign file says encoding: %s.\n", sheetPath, enc, enc)
	}
	if output == "" {
		output = filepath.Join(filepath.Dir(sheetPath), "campaign.yaml")
	}
	rel, err := filepath.Rel(filepath.Dir(output), sheetPath)
	if err != nil {
		abs, _ := filepath.Abs(sheetPath)
		rel = abs
	}
	header := r.Header()
	// The first rows tell, by their values, which columns hold phone
	// numbers, countries and contact ids.
	var rows [][]string
	for len(rows) < initRows {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Err == nil {
			rows = append(rows, slices.Clone(rec.Fields))
		}
	}
	var b bytes.Buffer
	opts := campaign.InitOptions{
		Sheet: filepath.ToSlash(rel), SheetName: filepath.Base(sheetPath), Agent: agent, Header: header, Region: region, Rows: rows, Encoding: enc,
		Workbook: r.Workbook(),
	}
	notes, err := campaign.WriteInit(&b, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", sheetPath, err)
	}
	if o.getenv != nil {
		// Ask the service as the file just written would, for the fields
		// the account defines; init goes on without them if it cannot.
		opts.AccountFields, opts.AccountFrom, err = accountFields(ctx, log, output, b.Bytes(), o.getenv)
		switch {
		case err != nil:
			fmt.Fprintf(out, "Could not ask the service for your account's own form fields (%v); columns are mapped to the seven fields only.\n", err)
		case len(opts.AccountFields) > 0:
			fmt.Fprintf(out, "Your account's own form fields, from %s: %s.\n", opts.AccountFrom, strings.Join(opts.AccountFields, ", "))
			b.Reset()
			if notes, err = campaign.WriteInit(&b, opts); err != nil {
				return fmt.Errorf("%s: %w", sheetPath, err)
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	if toStdout {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(output, flag, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return run.UsageError(fmt.Errorf("%s already exists; callrun init does not overwrite it (use --force, or -o another.yaml)", output))
	}
	if err != nil {
		return err
	}
	if _, err := fh.Write(b.Bytes()); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %s. Fill in its TODOs (the agent's prompt%s) and check its calling hours, then check it:\n  callrun plan --offline %s\n", output, todoList(b.String()), output)
	return nil
}

// initRows is how many rows of the sheet init reads to tell its columns
// apart by their values.
const initRows = 500

// todoList names the TODOs of a written campaign file beyond the prompt,
// for init's last line: ", the region" and the like.
func todoList(file string) string {
	var more string
	if strings.Contains(file, "region: TODO") {
		more += ", the region"
	}
	if strings.Contains(file, `phone_number: "TODO"`) {
		more += ", the phone column"
	}
	return more
}

// accountFields asks the service that the campaign file data (to be
// written at path) names, with the variables of getenv, for the form
// fields its account defines beyond the seven: those the call endpoint of
// the file's agent lists, or, when that agent does not exist yet, of the
// account's first agent. from says which agent's endpoint it read. It
// asks nothing, and returns no error, when CALLRUN_BASE_URL is not set.
func accountFields(ctx context.Context, log zerolog.Logger, path string, data []byte, getenv func(string) (string, bool)) (fields []string, from string, err error) {
	if v, ok := getenv("CALLRUN_BASE_URL"); !ok || v == "" {
		return nil, "", nil
	}
	f, err := campaign.Parse(path, data, campaign.LoadOptions{ServiceOnly: true, Getenv: getenv})
	if err != nil {
		return nil, "", err
	}
	svc, err := run.NewService(ctx, log, f, nil)
	if err != nil {
		return nil, "", err
	}
	defer svc.Close()
	defer svc.Client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	agents, err := svc.Client.ListAllAgents(ctx)
	if err != nil {
		return nil, "", err
	}
	if len(agents) == 0 {
		return nil, "", errors.New("the account has no agent yet whose call endpoint lists them")
	}
	agent := agents[0]
	for _, a := range agents {
		if a.Name == f.Agents[0].Name {
			agent = a
			break
		}
	}
	ep, err := svc.Client.GetCallEndpoint(ctx, agent.AgentID)
	if err != nil {
		return nil, "", err
	}
	for _, name := range ep.Fields() {
		if !slices.Contains(campaign.FormFields, name) {
			fields = append(fields, name)
		}
	}
	return fields, fmt.Sprintf("agent %q's call endpoint", agent.Name), nil
}
