package main

import (
	"fmt"
	"io"

	"github.com/callrun/callrun/campaign/run"
	"github.com/urfave/cli/v2"
)

// The bash and zsh scripts ask callrun itself for the words that fit,
// through urfave/cli's --generate-bash-completion: they are urfave/cli's
// own autocomplete scripts (autocomplete/ in its repository) with the
// program name filled in, and, for bash, the words read without the
// bash-completion package, which many systems lack. The fish script is
// the one urfave/cli writes from the commands and flags themselves
// (App.ToFishCompletion).
const bashCompletion = `# bash completion for callrun: source <(callrun completion bash)
_callrun_complete() {
  local cur words cword
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:$COMP_CWORD}")
  local request
  if [[ "$cur" == "-"* ]]; then
    request="${words[*]} ${cur} --generate-bash-completion"
  else
    request="${words[*]} --generate-bash-completion"
  fi
  local opts
  opts=$(eval "${request}" 2>/dev/null)
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -o nospace -F _callrun_complete callrun ./callrun
`

const zshCompletion = `#compdef callrun
# zsh completion for callrun: source <(callrun completion zsh)
_callrun_complete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _callrun_complete callrun ./callrun
`

func completionCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Prints a script that completes callrun's commands and flags
(callrun run --re<TAB> gives --retry-failed and --retry-uncertain).

Examples:
  source <(callrun completion bash)      # in ~/.bashrc
  source <(callrun completion zsh)       # in ~/.zshrc (after compinit)
  callrun completion fish > ~/.config/fish/completions/callrun.fish`,
		Action: func(c *cli.Context) error {
			return writeCompletion(c.App, c.Args().First(), s.stdout)
		},
	}
}

func writeCompletion(app *cli.App, shell string, out io.Writer) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(out, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(out, zshCompletion)
		return err
	case "fish":
		script, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = io.WriteString(out, script)
		return err
	}
	return run.UsageError(fmt.Errorf("completion: give bash, zsh or fish, e.g. source <(callrun completion bash)"))
}
