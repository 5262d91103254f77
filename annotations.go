package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
)

// writeAnnotations prints what `plan --format github` found as GitHub
// Actions workflow commands: an ::error for each problem of the campaign
// file and each invalid row, a ::warning for each repaired number and each
// warning of the plan, each on the file and line it is about, so that a
// pull request shows it beside the diff. path is the campaign file as
// given; f and plan are as far as plan got (either may be nil); err is
// what plan returns. File names are the ones plan was given, relative to
// where it runs: the repository's root in a workflow.
func writeAnnotations(w io.Writer, path string, f *campaign.File, plan *campaign.Plan, err error) {
	sheetPath := func(file string) string {
		if f == nil {
			return file
		}
		return filepath.ToSlash(filepath.Clean(f.Path(file)))
	}
	if plan != nil {
		for _, p := range plan.Problems {
			msg := p.Message
			if p.Field != "" && p.Field != "row" {
				msg = p.Field + ": " + msg
			}
			annotate(w, "error", sheetPath(p.File), p.Row, "invalid row "+fmt.Sprint(p.Row), msg)
		}
		if plan.ProblemsOmitted > 0 {
			annotate(w, "error", path, 0, "invalid rows", fmt.Sprintf("%d more invalid row(s) not listed one by one; run callrun plan for the counts", plan.ProblemsOmitted))
		}
		for _, r := range plan.Repairs {
			annotate(w, "warning", sheetPath(r.File), r.Row, "repaired number", r.Field+": "+r.Why)
		}
		for _, msg := range plan.Warnings {
			annotate(w, "warning", path, 0, "callrun plan", msg)
		}
	}
	var fe *campaign.FileError
	switch {
	case errors.As(err, &fe):
		for _, p := range fe.Problems {
			title := "campaign file"
			if p.Key != "" {
				title = p.Key
			}
			annotate(w, "error", filepath.ToSlash(p.File), p.Line, title, p.Msg)
		}
	case err != nil:
		annotate(w, "error", path, 0, "callrun plan", run.Message(err))
	}
}

// annotate writes one workflow command. GitHub reads the message up to the
// end of the line, so %, CR and LF are escaped in it, and in the
// properties also ":" and ",".
func annotate(w io.Writer, level, file string, line int, title, msg string) {
	props := "file=" + escapeProperty(file)
	if line > 0 {
		props += fmt.Sprintf(",line=%d", line)
	}
	props += ",title=" + escapeProperty(title)
	fmt.Fprintf(w, "::%s %s::%s\n", level, props, escapeData(msg))
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
