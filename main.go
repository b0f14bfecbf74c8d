// Command agentknock runs one command with secrets that a paired device
// approves. An AI coding agent or a person runs
//
//	agentknock run -s gh-token -- gh pr merge 12
//
// agentknock selects and inspects the command, asks the device through an
// untrusted relay (end-to-end encrypted, Agentknock v1), and on approval
// replaces itself with the command, the secret in its environment or on
// its standard input. During the command an invocation service can offer a
// temporary SSH agent and Git SSH signing whose key stays on the device.
//
// This file is the entry point: the hidden roles (invocation service, Git
// signing helper), subcommand dispatch and help. The run sequence is
// run.go; docs/architecture.md walks a request through the files in order,
// and docs/launch-path.md holds the measured facts the launch path relies
// on.
//
// # References
//
// Comments cite sections of these public documents by file name and
// section title, for example command-execution.md, "Signals and process
// state". Each is pinned to the version the code was written against:
//
//   - command-execution.md, the execution semantics:
//     https://github.com/agentknock/agentknock-cli/blob/7e7d950164ac446f86688cb0cff9805708564754/docs/command-execution.md
//   - client-device-protocol.md, the messages between client and device:
//     https://github.com/agentknock/agentknock-cli/blob/2e4d6ae267e7a1e7a0e399aac61fc43e935d17be/docs/client-device-protocol.md
//   - client-relay-protocol.md, the WebSocket relay:
//     https://github.com/agentknock/agentknock-cli/blob/cf8f4bc54fe5f04cc4f76df71fb32e3910957bcc/docs/client-relay-protocol.md
//   - cryptosystem.md, HPKE, PSKs and the paired exchange:
//     https://github.com/agentknock/agentknock-cli/blob/2c59f63acca1ecb3ff2428d0d43797549e3f6670/docs/cryptosystem.md
//
// The reference Rust client in the same repository is the model for the
// command line, the output and pairing.json.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

const usageText = `agentknock: run a command with secrets approved on a paired device.

Usage:
  agentknock [run] -s SECRET [-s SECRET ...] [OPTIONS] -- COMMAND [ARG ...]
  agentknock pairing start ADDRESS | finish | abort | status | remove [--force]
  agentknock secret list | upload NAME [SOURCES]
  agentknock completion bash | zsh | fish
  agentknock -h | --help | --version | -V [--verbose]

Agentknock selects and inspects COMMAND, sends the device the secret names,
the reason, the command and its arguments, the working directory, the
executable's path and SHA-256 hash, how standard input, output and error are
connected, and the programs that launched Agentknock. When a person approves,
Agentknock replaces itself with the command (same process ID, the command's
own exit status), with the returned variables in its environment. It never
prints secret values. It does not invoke a shell: COMMAND and each ARG are
passed unchanged. The "--" is required; everything after it belongs to the
command. All arguments must be valid UTF-8.

Run options:
  -s, --secret SECRET          Secret to use (repeat for more; unique; no commas).
  --only-env SECRET VAR        Deliver only VAR of SECRET (repeatable).
  --omit-env SECRET VAR        Deliver SECRET without VAR (repeatable;
                               not together with --only-env for SECRET).
  --rename-env SECRET VAR NEW  Deliver VAR of SECRET as NEW.
  --stdin SECRET VAR           Write VAR of SECRET to the command's standard
                               input instead of its environment (at most one).
  --reason TEXT                Why the command needs the secrets (shown to
                               the approver as reported by this client).
  --no-ssh-agent               Remove SSH_AUTH_SOCK instead of providing a
                               temporary agent for an SSH secret.
  --no-ssh-passthrough         Do not expose keys of the existing SSH agent.
  --no-git-sign                Do not configure Git SSH signing through
                               Agentknock.

Global options (every command; before or after the subcommand, anywhere
before the "--" that starts COMMAND, with the same meaning wherever they
stand):
  --agentknock-home DIR        State directory (default: $AGENTKNOCK_HOME,
                               else $HOME/.agentknock). The command's own
                               HOME and AGENTKNOCK_HOME are left unchanged.
  --quiet                      No messages from Agentknock at all, errors
                               included, as with the reference client: the
                               exit status says what happened. The
                               command's own output is unchanged.
  --verbose                    Also report each stage of the exchange, the
                               variable names and launch details (never
                               values).

While Agentknock waits for the device it prints nothing, then one progress
line every 30 seconds with the total elapsed time (none with --quiet).

Variable names in routing options must be portable: letters, digits and _,
not starting with a digit. If several secrets deliver the same variable,
their values must be equal or the command does not run.

When the command does not run, Agentknock says why in one line, then "The
command didn't run.", then a line starting "Suggested action:" and, on
lines of their own, the command to run next (for example "agentknock
pairing start <PAIRING_ADDRESS>" when this client is not paired).

Exit status: the command's own status once it runs; 1 when Agentknock stops
before running it (not found, denied, changed during approval, ...); 2 for
command-line errors; 128+N when signal N interrupts it before the command
starts.

Examples:
  agentknock -s github -- gh pr merge 12
  agentknock run -s github --reason "Merge the reviewed PR" -- gh pr merge 12
  agentknock -s github -s cloudflare -- wrangler deploy
  agentknock -s aws --only-env aws AWS_ACCESS_KEY_ID --only-env aws AWS_SECRET_ACCESS_KEY -- aws s3 ls
  agentknock -s db --rename-env db PASSWORD PGPASSWORD -- psql -h db.internal
  agentknock -s vault --stdin vault TOKEN -- vault login -
  agentknock -s production-ssh -- ssh deploy@example.com
  agentknock -s git-signing -- git -c gpg.format=ssh commit -S -m "Describe the change"

An SSH secret's private key stays on the device: the command gets a
temporary SSH agent (SSH_AUTH_SOCK) whose key lists first and whose every
signature the device approves separately, and Git SSH signing through a
helper (gpg.ssh.program). Keys of an existing agent stay available unless
--no-ssh-passthrough.
`

// shortUsageText is what -h prints: the forms and the options in a line
// each; --help prints usageText, the full text (as the reference's -h and
// --help differ).
const shortUsageText = `agentknock: run a command with secrets approved on a paired device.

Usage:
  agentknock [run] -s SECRET [-s SECRET ...] [OPTIONS] -- COMMAND [ARG ...]
  agentknock pairing start ADDRESS | finish | abort | status | remove [--force]
  agentknock secret list | upload NAME [SOURCES]
  agentknock completion bash | zsh | fish

Options:
  -s, --secret SECRET          Secret to use (repeat for more)
  --reason TEXT                Why the command needs the secrets
  --only-env SECRET VAR        Deliver only VAR of SECRET
  --omit-env SECRET VAR        Deliver SECRET without VAR
  --rename-env SECRET VAR NEW  Deliver VAR of SECRET as NEW
  --stdin SECRET VAR           Write VAR of SECRET to the command's standard input
  --no-ssh-agent               Provide no temporary SSH agent
  --no-ssh-passthrough         Hide the existing SSH agent's keys
  --no-git-sign                Provide no Git SSH signing
  --agentknock-home DIR        State directory
  --quiet                      No messages from Agentknock, errors included
  --verbose                    Each stage, the variable names, launch details
  -h, --help                   This summary; --help prints the full text
  -V, --version                The version

Pair first: agentknock pairing start ADDRESS, then agentknock pairing finish.
`

// shortHelpAsked says whether the help option among a run's arguments (up
// to the "--") is -h rather than --help.
func shortHelpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h":
			return true
		case "--help", "-help":
			return false
		}
	}
	return false
}

func main() {
	// Git runs the signing helper under its own name (gitsign.go).
	if filepath.Base(os.Args[0]) == gitSignHelperName {
		if !enoughDescriptors() {
			os.Exit(1)
		}
		os.Exit(gitSignMain(os.Args[1:]))
	}
	os.Exit(agentknockMain(os.Args[1:]))
}

func agentknockMain(args []string) int {
	traceStep("runtime start")
	if len(args) > 0 && args[0] == serviceRole {
		if !enoughDescriptors() {
			return 1
		}
		return serviceMain(args[1:])
	}
	if len(args) > 0 && args[0] == manRole {
		return manMain(args[1:])
	}
	// Captured before anything installs a signal handler.
	cs := loadCallerState()
	if i := firstNonUTF8(args); i >= 0 {
		return reportUsage(usagef("argument %d is not valid UTF-8; Agentknock accepts only UTF-8 arguments", i+1))
	}
	g, args, err := extractGlobalOptions(args)
	if err != nil {
		return reportUsage(err)
	}
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usageText)
		return 2
	}
	switch args[0] {
	case "-h":
		fmt.Print(shortUsageText)
		return 0
	case "-help", "--help":
		fmt.Print(usageText)
		return 0
	case "--version", "-V":
		// One line, the reference client's form, which scripts compare
		// whole; --verbose adds the platform and the signal state.
		fmt.Printf("agentknock %s\n", clientVersion())
		if g.Verbose {
			fmt.Printf("platform: %s/%s\nsignal state: %s\n", runtime.GOOS, runtime.GOARCH, cs.describe())
		}
		return 0
	case "completion":
		return completionMain(args[1:])
	case "run":
		args = args[1:]
	case "pairing", "secret":
		if !enoughDescriptors() {
			return 1
		}
		if args[0] == "pairing" {
			return pairingMain(args[1:], g, cs)
		}
		return secretMain(args[1:], g, cs)
	default:
		if len(args[0]) == 0 || args[0][0] != '-' {
			return reportUsage(usagef("unknown command %q", args[0]))
		}
	}
	o, err := parseRunArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		if shortHelpAsked(args) {
			fmt.Print(shortUsageText)
		} else {
			fmt.Print(usageText)
		}
		return 0
	}
	if err != nil {
		return reportUsage(err)
	}
	o.Home, o.Quiet, o.Verbose = g.Home, g.Quiet, g.Verbose
	return runCommand(o, cs)
}

// enoughDescriptors stops a subcommand that talks to the relay or the
// service when the open-file limit leaves no room for the runtime's poller
// and a connection, which would otherwise end in a runtime stack trace.
// `run` makes its own, exact check before the request.
func enoughDescriptors() bool {
	if err := checkDescriptors(runDescriptors, false); err != nil {
		fmt.Fprintln(os.Stderr, messagePrefix+err.Error())
		return false
	}
	return true
}

func reportUsage(err error) int {
	var ue *usageError
	if errors.As(err, &ue) && ue.runUsage {
		fmt.Fprintf(os.Stderr, "error: %v\n\nUsage: agentknock [run] -s <SECRET> [-s <SECRET> ...] -- <COMMAND> [ARGUMENT]...\n\nFor more information, run 'agentknock run --help'.\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "error: %v\n\nFor more information, try 'agentknock --help'.\n", err)
	return 2
}
