// Global options: --agentknock-home, --quiet and --verbose mean the same
// wherever they stand before the `--` that starts a command, as the
// reference client takes --agentknock-home before or after the subcommand
// (`agentknock --agentknock-home DIR pairing status` and
// `agentknock pairing status --agentknock-home DIR`). They are taken out of
// the arguments first, so every subcommand parser sees only its own options.

package main

import "strings"

// globalOptions are the options every subcommand accepts.
type globalOptions struct {
	Home    string
	Quiet   bool
	Verbose bool
}

// optionOperands is how many operands each value-taking option of any
// subcommand has, so that an operand that looks like a global option
// (`--reason --quiet`) is not taken for one.
var optionOperands = map[string]int{
	"s": 1, "secret": 1, "reason": 1,
	"only-env": 2, "omit-env": 2, "rename-env": 3, "stdin": 2,
	"relay": 1, "description": 1, "from-env": 1, "from-file": 1,
	"from-env-file": 1, "from-prompt": 1, "from-ssh-key": 1, "passphrase-env": 1,
}

// extractGlobalOptions removes the global options that come before the
// first `--` and returns them with the remaining arguments in order.
func extractGlobalOptions(args []string) (globalOptions, []string, error) {
	var g globalOptions
	var rest []string
	homeSeen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "agentknock-home":
			if homeSeen {
				return g, nil, usagef("--agentknock-home is given more than once")
			}
			homeSeen = true
			if !hasValue {
				if i+1 >= len(args) || args[i+1] == "--" {
					return g, nil, usagef("--agentknock-home needs a directory")
				}
				i++
				value = args[i]
			}
			if value == "" {
				return g, nil, usagef("--agentknock-home: the path cannot be empty")
			}
			g.Home = value
			continue
		case "quiet", "verbose":
			if hasValue {
				return g, nil, usagef("--%s takes no value", name)
			}
			if name == "quiet" {
				g.Quiet = true
			} else {
				g.Verbose = true
			}
			continue
		}
		rest = append(rest, a)
		if n := optionOperands[name]; n > 0 && !hasValue {
			for j := 0; j < n && i+1 < len(args) && args[i+1] != "--"; j++ {
				i++
				rest = append(rest, args[i])
			}
		}
	}
	if g.Quiet && g.Verbose {
		return g, nil, usagef("--quiet and --verbose cannot be used together")
	}
	return g, rest, nil
}
