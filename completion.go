// `agentknock completion bash|zsh|fish`: shell completion scripts, all three
// written from one table of commands, options and operand kinds, so that a
// shell completes the same words whichever it is. The table is checked
// against the parsers and the help texts by completion_test.go.

package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

const completionUsageText = `agentknock completion: write a shell completion script to standard output.

Usage:
  agentknock completion bash | zsh | fish

The script completes commands, options, and the operands of options that
take a file or a directory; after "--" it completes the command to run.

Installation:
  bash   agentknock completion bash > ~/.local/share/bash-completion/completions/agentknock
  zsh    agentknock completion zsh > "${fpath[1]}/_agentknock"
  fish   agentknock completion fish > ~/.config/fish/completions/agentknock.fish

Packages install the scripts where each shell finds them:
/usr/share/bash-completion/completions/agentknock,
/usr/share/zsh/vendor-completions/_agentknock (deb) or
/usr/share/zsh/site-functions/_agentknock (rpm, apk), and
/usr/share/fish/vendor_completions.d/agentknock.fish.
`

// An option's operands are a string of kinds, one letter per operand, so
// that the shell scripts can walk them: w a word the shell cannot guess (a
// secret name, a variable, a reason), f a file, d a directory, e an
// environment variable of the caller, a NAME=PATH.

type completionOption struct {
	names    []string
	operands string // one operand kind per operand
}

type completionCommand struct {
	path        string   // words after "agentknock"; "" is the implicit run form
	subcommands []string // words that lead to another entry
	words       []string // fixed operand words
	options     []completionOption
	command     bool // "--" COMMAND [ARG ...] ends the options
}

var runCompletionOptions = []completionOption{
	{[]string{"-s", "--secret"}, "w"},
	{[]string{"--only-env"}, "ww"},
	{[]string{"--omit-env"}, "ww"},
	{[]string{"--rename-env"}, "www"},
	{[]string{"--stdin"}, "ww"},
	{[]string{"--reason"}, "w"},
	{[]string{"--no-ssh-agent"}, ""},
	{[]string{"--no-ssh-passthrough"}, ""},
	{[]string{"--no-git-sign"}, ""},
	{[]string{"-h", "--help"}, ""},
}

// globalCompletionOptions are accepted by every command, anywhere before
// "--" (globals.go); completionCommands adds them to each entry.
var globalCompletionOptions = []completionOption{
	{[]string{"--agentknock-home"}, "d"},
	{[]string{"--quiet"}, ""},
	{[]string{"--verbose"}, ""},
}

var helpCompletionOption = completionOption{[]string{"-h", "--help"}, ""}

func pairingCompletionEntry(sub string, extra ...completionOption) completionCommand {
	return completionCommand{path: "pairing " + sub, options: append(extra, helpCompletionOption)}
}

// completionCommands is the command line as the shells see it.
var completionCommands = withGlobalOptions([]completionCommand{
	{
		path:        "",
		subcommands: []string{"run", "pairing", "secret", "completion"},
		options:     append([]completionOption{{[]string{"-V", "--version"}, ""}}, runCompletionOptions...),
		command:     true,
	},
	{path: "run", options: runCompletionOptions, command: true},
	{
		path:        "pairing",
		subcommands: []string{"start", "finish", "abort", "status", "remove"},
		options:     []completionOption{helpCompletionOption},
	},
	pairingCompletionEntry("start", completionOption{[]string{"--relay"}, "w"}),
	pairingCompletionEntry("finish"),
	pairingCompletionEntry("abort"),
	pairingCompletionEntry("status"),
	pairingCompletionEntry("remove", completionOption{[]string{"--force"}, ""}),
	{
		path:        "secret",
		subcommands: []string{"list", "upload"},
		options:     []completionOption{helpCompletionOption},
	},
	{path: "secret list", options: []completionOption{helpCompletionOption}},
	{
		path: "secret upload",
		options: []completionOption{
			{[]string{"--description"}, "w"},
			{[]string{"--update"}, ""},
			{[]string{"--replace"}, ""},
			{[]string{"--from-env"}, "e"},
			{[]string{"--from-file"}, "a"},
			{[]string{"--from-env-file"}, "f"},
			{[]string{"--from-prompt"}, "w"},
			{[]string{"--from-ssh-key"}, "f"},
			{[]string{"--passphrase-prompt"}, ""},
			{[]string{"--passphrase-env"}, "e"},
			helpCompletionOption,
		},
	},
	{path: "completion", words: []string{"bash", "zsh", "fish"}, options: []completionOption{helpCompletionOption}},
})

func withGlobalOptions(cmds []completionCommand) []completionCommand {
	for i := range cmds {
		cmds[i].options = append(cmds[i].options[:len(cmds[i].options):len(cmds[i].options)], globalCompletionOptions...)
	}
	return cmds
}

func completionMain(args []string) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Print(completionUsageText)
		return 0
	}
	if len(args) != 1 {
		return reportUsageFor("completion", usagef("completion needs one shell: bash, zsh or fish"))
	}
	var err error
	switch args[0] {
	case "bash":
		err = writeBashCompletion(os.Stdout)
	case "zsh":
		err = writeZshCompletion(os.Stdout)
	case "fish":
		err = writeFishCompletion(os.Stdout)
	default:
		return reportUsageFor("completion", usagef("unknown shell %q: use bash, zsh or fish", args[0]))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s%v\n", messagePrefix, err)
		return 1
	}
	return 0
}

// completionTables writes the table as the POSIX shell functions that the
// bash and zsh scripts share: each prints what its arguments select.
func completionTables(b *strings.Builder) {
	fmt.Fprintln(b, "# Words that lead from command path $1 to the next one.")
	fmt.Fprintln(b, "_agentknock_subcommands() {\n  case $1 in")
	for _, c := range completionCommands {
		if len(c.subcommands) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", shellQuote(c.path), strings.Join(c.subcommands, " "))
		}
	}
	fmt.Fprintln(b, "  esac\n}")
	fmt.Fprintln(b, "# Fixed operand words of command path $1.")
	fmt.Fprintln(b, "_agentknock_words() {\n  case $1 in")
	for _, c := range completionCommands {
		if len(c.words) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", shellQuote(c.path), strings.Join(c.words, " "))
		}
	}
	fmt.Fprintln(b, "  esac\n}")
	fmt.Fprintln(b, "# Options of command path $1.")
	fmt.Fprintln(b, "_agentknock_options() {\n  case $1 in")
	for _, c := range completionCommands {
		fmt.Fprintf(b, "    %s) echo %s ;;\n", shellQuote(c.path), strings.Join(optionNames(c.options), " "))
	}
	fmt.Fprintln(b, "  esac\n}")
	fmt.Fprintln(b, "# Operand kinds of option $2 of command path $1, one letter per operand:")
	fmt.Fprintln(b, "# w word, f file, d directory, e environment variable, a NAME=PATH.")
	fmt.Fprintln(b, "_agentknock_operands() {\n  case \"$1|$2\" in")
	for _, c := range completionCommands {
		for _, kinds := range operandGroups(c) {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", strings.Join(kinds.patterns, "|"), kinds.kinds)
		}
	}
	fmt.Fprintln(b, "  esac\n}")
	fmt.Fprintln(b, "# Whether command path $1 takes \"--\" COMMAND [ARG ...].")
	fmt.Fprint(b, "_agentknock_takes_command() {\n  case $1 in\n    ")
	var paths []string
	for _, c := range completionCommands {
		if c.command {
			paths = append(paths, shellQuote(c.path))
		}
	}
	fmt.Fprintf(b, "%s) return 0 ;;\n  esac\n  return 1\n}\n", strings.Join(paths, "|"))
}

type operandGroup struct {
	patterns []string
	kinds    string
}

// operandGroups lists, per operand string, the "path|option" case patterns
// of the options of c that take operands.
func operandGroups(c completionCommand) []operandGroup {
	byKinds := map[string][]string{}
	for _, o := range c.options {
		if o.operands == "" {
			continue
		}
		for _, n := range o.names {
			byKinds[o.operands] = append(byKinds[o.operands], shellQuote(c.path+"|"+n))
		}
	}
	var groups []operandGroup
	for k, p := range byKinds {
		groups = append(groups, operandGroup{p, k})
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].kinds < groups[j].kinds })
	return groups
}

func optionNames(opts []completionOption) []string {
	var names []string
	for _, o := range opts {
		names = append(names, o.names...)
	}
	return names
}
