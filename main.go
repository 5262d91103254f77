// Command callrun runs outbound AI phone-call campaigns from a YAML campaign
// file and CSV contact sheets, on the Voice AI Agent service.
package main

import (
	"context"
	"fmt"
	"os"

	_ "time/tzdata" // calling hours need time zones even where the system has none

	"github.com/callrun/callrun/campaign/run"
)

func main() {
	ctx, stop := signalContext(context.Background())
	s := &session{stdout: os.Stdout, stderr: os.Stderr}
	app := newApp(s)
	err := interruption(ctx, app.RunContext(ctx, interspersed(app, os.Args)))
	code := exitCode(ctx, err)
	if s.unknownCommand != "" && err == nil {
		code = run.ExitUsage
		hint := ""
		if s.unknownNearest != "" {
			hint = fmt.Sprintf("; did you mean %q?", s.unknownNearest)
		}
		fmt.Fprintf(s.stderr, "callrun: no command %q%s (see callrun --help)\n", s.unknownCommand, hint)
	}
	stop()
	if err != nil && code != exitOK {
		if s.logJSON {
			logFailure(s.log, err, code)
		} else {
			fmt.Fprintln(s.stderr, "callrun:", run.Message(err))
		}
	}
	os.Exit(code)
}
