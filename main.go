// Command callrun runs outbound AI phone-call campaigns from a YAML campaign
// file and CSV contact sheets, on the Voice AI Agent service.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/rs/zerolog"

	_ "time/tzdata" // calling hours need time zones even where the system has none
)

// memoryLimit is the soft limit on the Go heap: the garbage collector works
// harder near it instead of letting the heap double. A million-contact run
// keeps about 40 MiB live. GOMEMLIMIT in the environment overrides it.
const memoryLimit = 48 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signalContext(context.Background())
	app := newApp()
	err := app.RunContext(ctx, interspersed(app, os.Args))
	code := exitCode(ctx, err)
	if unknownCommand != "" && err == nil {
		fmt.Fprintf(os.Stderr, "callrun: no command %q; see callrun --help\n", unknownCommand)
	}
	stop()
	if err != nil && code != exitOK {
		if logJSON {
			log.WithLevel(zerolog.ErrorLevel).Int("exit_code", code).Msg(message(err))
		} else {
			fmt.Fprintln(os.Stderr, "callrun:", message(err))
		}
	}
	os.Exit(code)
}
