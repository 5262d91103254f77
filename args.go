package main

import (
	"strings"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

// completionFlag is the last argument of urfave/cli's shell-completion
// requests (see cmd_completion.go).
const completionFlag = "--generate-bash-completion"

// interspersed reorders a command line so that urfave/cli v2, which stops
// reading flags at the first argument and knows the app's flags only
// before the command name, reads it as README.md promises: flags may come
// anywhere. A command's own flags that follow its arguments move in front
// of them (`callrun plan CAMPAIGN.yaml --offline`), and the global flags
// (--log-level, --quiet, ...) move in front of the command name wherever
// they stand. Whether a flag takes a value comes from its definition; "--"
// ends the flags. A help flag anywhere asks for the command's help alone,
// whatever arguments came with it. A shell-completion request is left as
// it is: urfave/cli reads it from os.Args.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == completionFlag {
		return args
	}
	var global, pre, path, local, positional []string
	i := 1
	// Global flags, then the command path.
	cmds, flags := app.Commands, app.Flags
	var cmd *cli.Command
	takeGlobal := func(a string) bool {
		if lookupFlag(app.Flags, a) == nil || (cmd != nil && lookupFlag(cmd.Flags, a) != nil) {
			return false
		}
		global = append(global, a)
		if takesValue(app.Flags, a) && i+1 < len(args) {
			global = append(global, args[i+1])
			i++
		}
		return true
	}
	for i < len(args) {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			if isHelp(a) && cmd != nil {
				return helpOnly(args[0], global, path)
			}
			if !takeGlobal(a) {
				to := &local
				if cmd == nil {
					to = &pre // the app's own: --help, --version, or a mistake
				}
				*to = append(*to, a)
				if takesValue(flags, a) && i+1 < len(args) {
					*to = append(*to, args[i+1])
					i++
				}
			}
			i++
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			break
		}
		cmd = next
		path = append(path, a)
		i++
		cmds, flags = cmd.Subcommands, cmd.Flags
		if len(cmds) == 0 {
			break
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case isHelp(a) && cmd != nil:
			return helpOnly(args[0], global, path)
		case !strings.HasPrefix(a, "-") || a == "-":
			positional = append(positional, a)
		case lookupFlag(flags, a) != nil:
			local = append(local, a)
			if takesValue(flags, a) && i+1 < len(args) {
				local = append(local, args[i+1])
				i++
			}
		case cmd == nil:
			positional = append(positional, a) // no command: the app says so
		case takeGlobal(a):
			// moved in front of the command name
		default:
			local = append(local, a) // unknown: the command's usage error names it
		}
	}
	out := append([]string{args[0]}, global...)
	out = append(out, pre...)
	out = append(out, path...)
	out = append(out, local...)
	return append(out, positional...)
}

// helpOnly is the command line that shows the help of the command path.
func helpOnly(prog string, global, path []string) []string {
	out := append([]string{prog}, global...)
	out = append(out, path...)
	return append(out, "--help")
}

func isHelp(arg string) bool { return arg == "--help" || arg == "-h" || arg == "-help" }

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagName returns the name in "--name=value" or "-n".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func lookupFlag(flags []cli.Flag, arg string) cli.Flag {
	name := flagName(arg)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether arg is a flag whose value is the next
// argument: a known flag that is not boolean and not written --name=value.
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	f := lookupFlag(flags, arg)
	if f == nil {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}

// shardFlag is --shard K/N, on the commands that work on a campaign's
// saved state.
func shardFlag() cli.Flag {
	return &cli.StringFlag{Name: "shard", Usage: "work on shard K of N (K counts from 0): the contacts whose number hashes to K, paced at per_second/N", EnvVars: []string{"CALLRUN_SHARD"}}
}

// shardArg reads --shard; the zero Shard (the whole campaign) when it is
// not given.
func shardArg(c *cli.Context) (campaign.Shard, error) {
	if c.String("shard") == "" {
		return campaign.Shard{}, nil
	}
	s, err := campaign.ParseShard(c.String("shard"))
	if err != nil {
		return s, run.UsageError(err)
	}
	return s, nil
}
