package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// session is one invocation of callrun: where it prints and logs, and
// what main reports when the app has run. main makes it; newApp and the
// commands' constructors close over it, and hand the plain functions the
// part they need.
type session struct {
	// stdout is for what a command prints (plans, JSON, tables); stderr
	// for logs, prompts and the final error.
	stdout, stderr io.Writer
	// log is the logger setupLogging makes, writing to stderr; the zero
	// Logger, before it, logs nothing.
	log zerolog.Logger
	// logJSON is set when logs are JSON lines, so that main reports the
	// final error as one more JSON line rather than as text.
	logJSON bool
	// logs is where the logger writes when stderr is a terminal, for a
	// run's progress line to keep its row; nil otherwise.
	logs *run.LineGuard
	// unknownCommand is the command name that matched none, for main to
	// exit 2, and unknownNearest the command it may have meant.
	unknownCommand, unknownNearest string
}

// newApp builds the command-line application of session s. It holds no
// state of its own: each command's action fills an options struct and
// calls a plain function, which is what tests call.
func newApp(s *session) *cli.App {
	app := &cli.App{
		Name:                 "callrun",
		Usage:                "run outbound AI phone-call campaigns from a YAML file and CSV contact sheets",
		Version:              buildVersion(),
		EnableBashCompletion: true,
		Writer:               s.stdout,
		ErrWriter:            s.stderr,
		Description: `callrun reads a campaign file (agents and CSV contact sheets), creates the agents
the service lacks, and starts one call per contact at a controlled rate, never
phoning anyone twice by accident.

First time? One command rehearses the example campaign against an emulator of
the service in the same process (nobody is phoned), and its report shows what
happened on each call:
  callrun run --sandbox examples/quickstart/campaign.yaml
Then open the report.html its last line names.`,
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodesHelp + "\n",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"CALLRUN_LOG_LEVEL"}},
			&cli.StringFlag{Name: "log-format", Value: "auto", Usage: "auto (console on a terminal, JSON otherwise), console or json", EnvVars: []string{"CALLRUN_LOG_FORMAT"}},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log only warnings and errors"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never draw a progress bar"},
		},
		Before: s.setupLogging,
		// Errors are printed and mapped to exit codes by main, in one place.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return run.UsageError(flagError(c, err))
		},
		CommandNotFound: func(c *cli.Context, name string) {
			s.unknownCommand = name
			var names []string
			for _, cmd := range c.App.VisibleCommands() {
				names = append(names, cmd.Name)
			}
			s.unknownNearest = campaign.Nearest(name, names)
		},
		Commands: []*cli.Command{
			runCommand(s),
			initCommand(s),
			planCommand(s),
			statusCommand(s),
			reportCommand(s),
			eraseCommand(s),
			authCommand(s),
			agentsCommand(s),
			suppressCommand(s),
			historyCommand(s),
			stateCommand(s),
			listenCommand(s),
			outcomesCommand(s),
			sandboxCommand(s),
			completionCommand(s),
		},
	}
	// urfave/cli does not pass the app's OnUsageError down: a bad flag on a
	// subcommand must exit 2 as well.
	var mark func([]*cli.Command)
	mark = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.OnUsageError = app.OnUsageError
			mark(c.Subcommands)
		}
	}
	mark(app.Commands)
	return app
}

// flagError rewrites a flag error of urfave/cli ("flag provided but not
// defined: -offlin") in callrun's words: the command it was given to, the
// flag as written, the nearest flag that command or the app has, and where
// to read more.
func flagError(c *cli.Context, err error) error {
	cmd := "callrun"
	var flags []cli.Flag
	if c.Command != nil {
		if c.Command.HelpName != "" {
			cmd = c.Command.HelpName
		}
		flags = c.Command.Flags
	}
	if c.App != nil {
		flags = append(slices.Clone(flags), c.App.Flags...)
	}
	short := strings.TrimPrefix(cmd, "callrun ") + ": "
	if cmd == "callrun" {
		short = ""
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, n)
				}
			}
		}
		hint := ""
		if near := campaign.Nearest(name, names); near != "" {
			hint = fmt.Sprintf("; did you mean --%s?", near)
		}
		return fmt.Errorf("%sno flag --%s%s (see %s --help)", short, name, hint, cmd)
	}
	msg = flagDash.ReplaceAllString(msg, "flag --$1")
	return fmt.Errorf("%s%s (see %s --help)", short, msg, cmd)
}

// flagDash finds the single-dash flag names of the flag package's errors.
var flagDash = regexp.MustCompile(`flag -([a-z][a-z0-9-]+)`)

// setupLogging makes s's logger, as the global flags say.
func (s *session) setupLogging(c *cli.Context) error {
	level, err := zerolog.ParseLevel(strings.ToLower(c.String("log-level")))
	if err != nil || level == zerolog.NoLevel {
		return run.UsageError(fmt.Errorf("--log-level %q: use debug, info, warn or error", c.String("log-level")))
	}
	if c.Bool("quiet") && level < zerolog.WarnLevel {
		level = zerolog.WarnLevel
	}
	out := s.stderr
	if terminal(s.stderr) != nil {
		s.logs = run.NewLineGuard(s.stderr)
		out = s.logs
	}
	w := out
	switch c.String("log-format") {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: out, TimeFormat: "15:04:05"}
	case "auto":
		if terminal(s.stderr) != nil {
			w = zerolog.ConsoleWriter{Out: out, TimeFormat: "15:04:05"}
		}
	default:
		return run.UsageError(fmt.Errorf("--log-format %q: use auto, console or json", c.String("log-format")))
	}
	_, console := w.(zerolog.ConsoleWriter)
	s.logJSON = !console
	s.log = zerolog.New(redactingWriter{w}).Level(level).With().Timestamp().Logger()
	s.log.Debug().Str("version", c.App.Version).Str("command", c.Args().First()).Msg("callrun starting")
	return nil
}

// terminal returns w when it is a terminal, else nil.
func terminal(w io.Writer) *os.File {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

// redactingWriter blanks out every secret (apiclient.Redact) of each log
// event before w writes it: whatever text from the service a log line
// quotes, JSON-escaped or not, no token or client secret reaches the log.
type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, apiclient.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// campaignArg returns the one CAMPAIGN.yaml argument of a command.
func campaignArg(c *cli.Context) (string, error) {
	full := c.Command.HelpName // "callrun agents list"
	name := strings.TrimPrefix(full, "callrun ")
	switch c.NArg() {
	case 1:
		return c.Args().First(), nil
	case 0:
		return "", run.UsageError(fmt.Errorf("%s: give the campaign file, e.g. %s examples/quickstart/campaign.yaml", name, full))
	}
	return "", run.UsageError(fmt.Errorf("%s: expected one campaign file, got %d arguments: %s", name, c.NArg(), strings.Join(c.Args().Slice(), " ")))
}

// formatFlag is the --format flag of commands that print text or JSON.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"}
}

func checkFormat(c *cli.Context) (string, error) {
	f := c.String("format")
	if f != "text" && f != "json" {
		return "", run.UsageError(fmt.Errorf("--format %q: use text or json", f))
	}
	return f, nil
}

// printJSON prints v as indented JSON: what a command prints with
// --format json.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
