// Command callrun runs outbound AI phone-call campaigns from a YAML campaign
// file and CSV contact sheets, on the Voice AI Agent service.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	_ "time/tzdata" // calling hours need time zones even where the system has none
)

func main() {
	ctx, stop := signalContext(context.Background())
	if setMemoryLimit() {
		go watchMemoryLimit(ctx, time.Second)
	}
	app := newApp()
	err := app.RunContext(ctx, interspersed(app, os.Args))
	code := exitCode(ctx, err)
	if unknownCommand != "" && err == nil {
		hint := ""
		if unknownNearest != "" {
			hint = fmt.Sprintf("; did you mean %q?", unknownNearest)
		}
		fmt.Fprintf(os.Stderr, "callrun: no command %q%s (see callrun --help)\n", unknownCommand, hint)
	}
	stop()
	if err != nil && code != exitOK {
		if logJSON {
			logFailure(log, err, code)
		} else {
			fmt.Fprintln(os.Stderr, "callrun:", message(err))
		}
	}
	os.Exit(code)
}
