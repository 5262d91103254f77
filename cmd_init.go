package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/callrun/callrun/campaign"
	"github.com/urfave/cli/v2"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented campaign file for a contact sheet",
		ArgsUsage: "CONTACTS.csv",
		Description: `Reads the sheet's header, maps the columns it recognises (Phone, Mobile, First
Name, Vorname, E-Mail, Contact Id, ...) to the call endpoint's form fields, and
writes campaign.yaml next to the sheet, with TODOs for what it could not work out.
It never overwrites a file without --force.

Example:
  callrun init --agent "Spring Promo" contacts/leads.csv
  callrun plan --offline contacts/campaign.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "the agent's name (default: from the sheet's name)"},
			&cli.StringFlag{Name: "region", Usage: "country of numbers written without +country, e.g. US, GB, DE (default: guessed)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "where to write (default: campaign.yaml next to the sheet)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing file"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError(errors.New("init: give one contact sheet, e.g. callrun init contacts.csv"))
			}
			if r := c.String("region"); r != "" && !campaign.ValidRegion(r) {
				return usageError(fmt.Errorf("--region %q: give a two-letter country code such as US, GB or DE", r))
			}
			return initCampaign(c.Args().First(), c.String("output"), c.String("agent"), c.String("region"), c.Bool("force"), os.Stdout)
		},
	}
}

// initCampaign writes a campaign file for sheet and says what to do next.
func initCampaign(sheet, output, agent, region string, force bool, out io.Writer) error {
	r, err := campaign.OpenSheet(sheet)
	if err != nil {
		return usageError(err)
	}
	defer r.Close()
	if output == "" {
		output = filepath.Join(filepath.Dir(sheet), "campaign.yaml")
	}
	rel, err := filepath.Rel(filepath.Dir(output), sheet)
	if err != nil {
		abs, _ := filepath.Abs(sheet)
		rel = abs
	}
	header := r.Header()
	fields, _ := campaign.SuggestMapping(header)
	var sample []string
	if col, ok := fields["phone_number"]; ok {
		idx, _ := r.Column(col)
		for range 200 {
			rec, err := r.Next()
			if err != nil {
				break
			}
			if rec.Err == nil {
				sample = append(sample, rec.Fields[idx])
			}
		}
	}
	var b bytes.Buffer
	err = campaign.WriteInit(&b, campaign.InitOptions{
		Sheet: filepath.ToSlash(rel), SheetName: filepath.Base(sheet), Agent: agent, Header: header, Region: region, Sample: sample,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", sheet, err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(output, flag, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usageError(fmt.Errorf("%s already exists; callrun init does not overwrite it (use --force, or -o another.yaml)", output))
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
	fmt.Fprintf(out, "Wrote %s. Fill in its TODOs (the agent's prompt, your calling hours), then check it:\n  callrun plan --offline %s\n", output, output)
	return nil
}
