package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// The completion scripts ask callrun itself for the words that fit, through
// urfave/cli's --generate-bash-completion; they are urfave/cli's own
// autocomplete scripts with the program name filled in.
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

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: `Prints a script that completes callrun's commands and flags.

Examples:
  source <(callrun completion bash)      # in ~/.bashrc
  source <(callrun completion zsh)       # in ~/.zshrc (after compinit)`,
		Action: func(c *cli.Context) error {
			return writeCompletion(c.Args().First(), os.Stdout)
		},
	}
}

func writeCompletion(shell string, out io.Writer) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(out, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(out, zshCompletion)
		return err
	}
	return usageError(fmt.Errorf("completion: give bash or zsh, e.g. source <(callrun completion bash)"))
}
