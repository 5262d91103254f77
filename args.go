package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves the flags that follow a command's arguments in front
// of them, so `callrun plan CAMPAIGN.yaml --offline` works as design.md
// writes it: urfave/cli v2 stops reading flags at the first argument.
// Whether a flag takes a value comes from the command's own definition;
// "--" ends the flags, as usual.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags, then the command path.
	cmds, flags := app.Commands, app.Flags
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			i++
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			break
		}
		out = append(out, a)
		i++
		cmds, flags = cmd.Subcommands, cmd.Flags
		if len(cmds) == 0 {
			break
		}
	}
	var positional []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-" && knownFlag(flags, a):
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	return append(out, positional...)
}

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

func knownFlag(flags []cli.Flag, arg string) bool {
	return lookupFlag(flags, arg) != nil || flagName(arg) == "help" || flagName(arg) == "h" || arg == "--generate-bash-completion"
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
