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
// This file is the command line, whole: the hidden roles (invocation
// service, Git signing helper), subcommand dispatch, the global options,
// `run`'s options, the state home, the version, and the help texts with
// the man page and shell completion scripts rendered from them. The run
// sequence is run.go; docs/architecture.md says which file answers which
// question and gives the launch path as a reading order, and
// docs/launch-path.md holds the measured facts the launch path relies on.
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
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// Command-line parsing for `agentknock [run]`, with the standard flag package.
//
// The syntax follows the reference Rust client so that scripts and agent
// instructions carry over: repeated -s/--secret, routing options that take
// two or three operands, and a mandatory `--` before the command. The flag
// package parses one value per option, so routing options are first grouped
// with their operands (joined by NUL, which argv cannot contain).

// usageError is a command-line mistake: exit status 2 and a pointer to --help.
// runUsage, when set, is printed as the reference client prints it for the
// same mistake (a usage line and a pointer to `agentknock run --help`).
type usageError struct {
	msg      string
	runUsage bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// runOptions is the parsed `run` command line.
type runOptions struct {
	Secrets          []string
	Routing          map[string]*environmentDelivery
	Reason           string
	NoSSHAgent       bool
	NoSSHPassthrough bool
	NoGitSign        bool
	Quiet            bool   // global option (this file)
	Verbose          bool   // global option
	Home             string // global option
	Command          []string
}

// routingArity is the number of operands of each routing option.
var routingArity = map[string]int{
	"only-env":   2,
	"omit-env":   2,
	"rename-env": 3,
	"stdin":      2,
}

func newRunFlagSet(o *runOptions, routes *[][]string) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	secret := func(v string) error { o.Secrets = append(o.Secrets, v); return nil }
	fs.Func("s", "", secret)
	fs.Func("secret", "", secret)
	fs.Func("reason", "", func(v string) error {
		if v == "" {
			return errEmptyReason
		}
		o.Reason = v
		return nil
	})
	fs.BoolVar(&o.NoSSHAgent, "no-ssh-agent", false, "")
	fs.BoolVar(&o.NoSSHPassthrough, "no-ssh-passthrough", false, "")
	fs.BoolVar(&o.NoGitSign, "no-git-sign", false, "")
	for name := range routingArity {
		fs.Func(name, "", func(v string) error {
			*routes = append(*routes, append([]string{name}, strings.Split(v, "\x00")...))
			return nil
		})
	}
	return fs
}

// groupRoutingOperands rewrites `--rename-env S V N` as `--rename-env S\x00V\x00N`
// so that flag sees one value. It walks the options with the flag set's own
// knowledge of which options take a value, and returns the index of the `--`
// that ends them (-1 when there is none).
func groupRoutingOperands(fs *flag.FlagSet, args []string) ([]string, int, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...), len(out) - 1, nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			if _, ok := routingArity[strings.SplitN(name, "=", 2)[0]]; ok {
				return nil, -1, usagef("--%s takes separate operands, not --%s", strings.SplitN(name, "=", 2)[0], name)
			}
			continue
		}
		if n, ok := routingArity[name]; ok {
			if i+n >= len(args) || slices.Contains(args[i+1:i+1+n], "--") {
				return nil, -1, usagef("--%s needs %s", name, routingOperandNames(name))
			}
			ops := args[i+1 : i+1+n]
			out = append(out, strings.Join(ops, "\x00"))
			i += n
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				continue
			}
			// The flag package would take the "--" as the value.
			if i+1 >= len(args) || args[i+1] == "--" {
				return nil, -1, usagef("%s needs a value: %s %s", a, a, optionValueName(name))
			}
			i++
			out = append(out, args[i])
		}
	}
	return out, -1, nil
}

// optionValueName names the value of a run option in messages.
func optionValueName(name string) string {
	if name == "reason" {
		return "TEXT"
	}
	return "SECRET"
}

// errEmptyReason: --reason with an empty TEXT.
var errEmptyReason = errors.New("--reason needs a non-empty TEXT (it is shown to the approver); leave --reason out to send no reason")

// flagError words an error of the flag package as this client's other
// usage errors, not in the flag package's terms.
func flagError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, errEmptyReason.Error()) {
		return usagef("%s", errEmptyReason)
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return usagef("unknown option -%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usagef("-%s needs a value", name)
	}
	return usagef("%s", strings.TrimPrefix(msg, "invalid value "))
}

func routingOperandNames(name string) string {
	if name == "rename-env" {
		return "SECRET VAR NEW_VAR"
	}
	return "SECRET VAR"
}

// parseRunArgs parses the arguments after `agentknock` or `agentknock run`.
func parseRunArgs(args []string) (*runOptions, error) {
	o := &runOptions{Routing: map[string]*environmentDelivery{}}
	g, args, err := extractGlobalOptions(args)
	if err != nil {
		return nil, err
	}
	o.Home, o.Quiet, o.Verbose = g.Home, g.Quiet, g.Verbose
	var routes [][]string
	fs := newRunFlagSet(o, &routes)
	grouped, dash, err := groupRoutingOperands(fs, args)
	if err != nil {
		return nil, err
	}
	if err := fs.Parse(grouped); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, flagError(err)
	}
	consumed := len(grouped) - len(fs.Args())
	if dash < 0 || consumed != dash+1 {
		if len(fs.Args()) > 0 {
			return nil, usagef("unexpected argument %q: put the command after `--`", fs.Args()[0])
		}
		return nil, usagef("the command is missing: put it after `--`")
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		return nil, usagef("the command is missing after `--`")
	}
	if o.Command[0] == "" {
		return nil, usagef("the command name cannot be empty")
	}
	if len(o.Secrets) == 0 {
		return nil, usagef("at least one secret is required: use -s SECRET")
	}
	seen := map[string]bool{}
	for _, s := range o.Secrets {
		if err := checkSecretName(s); err != nil {
			return nil, err
		}
		if seen[s] {
			return nil, &usageError{msg: fmt.Sprintf("secret %s was specified more than once", quoted(s)), runUsage: true}
		}
		seen[s] = true
	}
	if err := applyRouting(o, routes); err != nil {
		return nil, err
	}
	return o, nil
}

func checkSecretName(s string) error {
	if s == "" {
		return usagef("a secret name cannot be empty")
	}
	if strings.Contains(s, ",") {
		return usagef("secret name %q contains a comma", s)
	}
	return nil
}

// portableName reports whether s is a POSIX portable environment variable
// name: letters, digits and underscore, not starting with a digit.
func portableName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// applyRouting validates the routing options as a whole, the same rules the
// device applies to the request.
func applyRouting(o *runOptions, routes [][]string) error {
	stdinSecret := ""
	for _, r := range routes {
		kind, secret, vars := r[0], r[1], r[2:]
		if !slices.Contains(o.Secrets, secret) {
			return usagef("--%s names secret %q, which is not selected with -s", kind, secret)
		}
		for _, v := range vars {
			if !portableName(v) {
				return usagef("--%s: %q is not a portable environment variable name (letters, digits and _, not starting with a digit)", kind, v)
			}
		}
		rt := o.Routing[secret]
		if rt == nil {
			rt = &environmentDelivery{}
			o.Routing[secret] = rt
		}
		v := vars[0]
		switch kind {
		case "only-env":
			if slices.Contains(rt.Only, v) {
				return usagef("--only-env %s %s is given more than once", secret, v)
			}
			rt.Only = append(rt.Only, v)
		case "omit-env":
			if slices.Contains(rt.Omit, v) {
				return usagef("--omit-env %s %s is given more than once", secret, v)
			}
			rt.Omit = append(rt.Omit, v)
		case "rename-env":
			if rt.Rename == nil {
				rt.Rename = map[string]string{}
			}
			if _, dup := rt.Rename[v]; dup {
				return usagef("variable %s of secret %q is renamed more than once", v, secret)
			}
			rt.Rename[v] = vars[1]
		case "stdin":
			if stdinSecret != "" {
				return usagef("only one --stdin is allowed (standard input can carry one value)")
			}
			stdinSecret = secret
			rt.Stdin = v
		}
	}
	for _, secret := range o.Secrets {
		rt := o.Routing[secret]
		if rt == nil {
			continue
		}
		if len(rt.Only) > 0 && len(rt.Omit) > 0 {
			return usagef("secret %q: --only-env and --omit-env cannot be combined", secret)
		}
		for src := range rt.Rename {
			if len(rt.Only) > 0 && !slices.Contains(rt.Only, src) {
				return usagef("secret %q: --rename-env %s is not among its --only-env variables", secret, src)
			}
			if slices.Contains(rt.Omit, src) {
				return usagef("secret %q: %s is both renamed and omitted", secret, src)
			}
			if src == rt.Stdin {
				return usagef("secret %q: %s cannot be both renamed and sent to standard input", secret, src)
			}
		}
		if rt.Stdin != "" {
			if len(rt.Only) > 0 && !slices.Contains(rt.Only, rt.Stdin) {
				return usagef("secret %q: --stdin %s is not among its --only-env variables", secret, rt.Stdin)
			}
			if slices.Contains(rt.Omit, rt.Stdin) {
				return usagef("secret %q: %s is both sent to standard input and omitted", secret, rt.Stdin)
			}
		}
	}
	return nil
}

// firstNonUTF8 returns the index of the first argument that is not valid
// UTF-8, or -1. The protocol carries arguments as JSON strings, so such an
// argument could not be shown to the approver faithfully.
func firstNonUTF8(args []string) int {
	for i, a := range args {
		if !utf8.ValidString(a) {
			return i
		}
	}
	return -1
}

// Global options: --agentknock-home, --quiet and --verbose mean the same
// wherever they stand before the `--` that starts a command, as the
// reference client takes --agentknock-home before or after the subcommand
// (`agentknock --agentknock-home DIR pairing status` and
// `agentknock pairing status --agentknock-home DIR`). They are taken out of
// the arguments first, so every subcommand parser sees only its own options.

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

// The client's version: stamped at release time with
// -ldflags=-X main.version=..., else the module version that `go install
// agentknock.dev/agentknock@vX.Y.Z` records in the binary.

var version = "dev"

// clientVersion is what --version and the protocol's app_info report.
func clientVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return version
}

// The agentknock(1) man page, rendered from the help texts themselves so
// that the two cannot drift apart (main_test.go compares them word for
// word). Written by the hidden command `agentknock __man VERSION` at release
// time (scripts/release-docs); the roff follows man(7).

// manRole is the hidden command that writes the man page.
const manRole = "__man"

// manSection is one help text and the man page section it becomes.
type manSection struct {
	title string // "" for the main help text
	text  string
}

// manSections are every help text that --help prints, in the order the man
// page shows them.
func manSections() []manSection {
	return []manSection{
		{"", usageText},
		{"AGENTKNOCK PAIRING", pairingUsage},
		{"AGENTKNOCK SECRET", secretUsageText},
		{"AGENTKNOCK SECRET LIST", secretListUsageText},
		{"AGENTKNOCK SECRET UPLOAD", secretUploadUsageText},
		{"AGENTKNOCK COMPLETION", completionUsageText},
	}
}

func manMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: agentknock %s VERSION\n", manRole)
		return 2
	}
	if err := writeManPage(os.Stdout, args[0], manDate()); err != nil {
		fmt.Fprintf(os.Stderr, "%s%v\n", messagePrefix, err)
		return 1
	}
	return 0
}

// manDate is the page's date: SOURCE_DATE_EPOCH when set, as reproducible
// builds define it (https://reproducible-builds.org/specs/source-date-epoch/),
// else none, so that the same source always gives the same page.
func manDate() string {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC().Format("2006-01-02")
		}
	}
	return ""
}

func writeManPage(w io.Writer, version, date string) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH AGENTKNOCK 1 %q %q \"User Commands\"\n", date, "agentknock "+version)
	// No hyphenation and no justification: option names and paths must read
	// exactly as they are typed.
	b.WriteString(".nh\n.ad l\n")
	for _, s := range manSections() {
		lines := strings.Split(strings.TrimRight(s.text, "\n"), "\n")
		if s.title == "" {
			name, summary, _ := strings.Cut(lines[0], ": ")
			fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(strings.TrimSuffix(summary, ".")))
			lines = lines[1:]
		} else {
			fmt.Fprintf(&b, ".SH %q\n", s.title)
		}
		renderHelpBlocks(&b, lines, s.title == "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderHelpBlocks turns help text into roff. A blank line separates blocks;
// lines at column 0 are prose, filled by the formatter; a lone prose line
// ending in ':' directly above indented lines is a heading; indented lines
// aligned in two columns are a tagged list; other indented lines (usage
// lines, examples, JSON) are kept verbatim.
func renderHelpBlocks(b *strings.Builder, lines []string, main bool) {
	described := false
	for len(lines) > 0 {
		for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
			lines = lines[1:]
		}
		n := 0
		for n < len(lines) && strings.TrimSpace(lines[n]) != "" {
			n++
		}
		block := lines[:n]
		lines = lines[n:]
		if len(block) == 0 {
			continue
		}
		prose := 0
		for prose < len(block) && !strings.HasPrefix(block[prose], " ") {
			prose++
		}
		indented := block[prose:]
		if prose == 1 && len(indented) > 0 && strings.HasSuffix(block[0], ":") {
			heading := strings.TrimSuffix(block[0], ":")
			if main && heading == "Usage" {
				b.WriteString(".SH SYNOPSIS\n")
			} else {
				fmt.Fprintf(b, ".SS %q\n", heading)
			}
		} else if prose > 0 {
			if main && !described {
				b.WriteString(".SH DESCRIPTION\n")
				described = true
			}
			b.WriteString(".PP\n")
			for _, l := range block[:prose] {
				b.WriteString(roffEscape(l) + "\n")
			}
		}
		if len(indented) > 0 {
			renderIndented(b, indented)
		}
	}
}

func renderIndented(b *strings.Builder, lines []string) {
	if items, ok := helpTable(lines); ok {
		for _, it := range items {
			fmt.Fprintf(b, ".TP\n%s\n", roffTerm(it.term))
			for _, d := range it.desc {
				b.WriteString(roffEscape(d) + "\n")
			}
		}
		return
	}
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		if len(l) >= indent {
			l = l[indent:]
		}
		b.WriteString(roffEscape(l) + "\n")
	}
	b.WriteString(".fi\n.RE\n")
}

type helpItem struct {
	term string
	desc []string
}

// helpTable recognises a two-column list: every line is either a term, two
// or more spaces and a description starting at one common column, or a
// continuation indented to that column.
func helpTable(lines []string) ([]helpItem, bool) {
	col := -1
	var items []helpItem
	for _, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if col >= 0 && indent == col && len(items) > 0 {
			items[len(items)-1].desc = append(items[len(items)-1].desc, strings.TrimSpace(l))
			continue
		}
		gap := strings.Index(l[indent:], "  ")
		if gap < 0 {
			return nil, false
		}
		term := l[indent : indent+gap]
		rest := l[indent+gap:]
		c := len(l) - len(strings.TrimLeft(rest, " "))
		if col >= 0 && c != col {
			return nil, false
		}
		col = c
		items = append(items, helpItem{term: term, desc: []string{strings.TrimSpace(rest)}})
	}
	return items, len(items) > 0
}

// roffTerm sets a list term: placeholders (SECRET, NAME=PATH) in italics,
// the words to type in bold.
func roffTerm(term string) string {
	words := strings.Split(term, " ")
	for i, w := range words {
		font := `\fB`
		if isPlaceholder(strings.Trim(w, "[],.|")) {
			font = `\fI`
		}
		words[i] = font + roffEscape(w) + `\fR`
	}
	return strings.Join(words, " ")
}

func isPlaceholder(w string) bool {
	if w == "" || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for _, c := range w {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '=' || c == '-') {
			return false
		}
	}
	return true
}

// roffEscape makes a line of help text literal roff text: backslashes and
// hyphens escaped (so options stay ASCII hyphen-minus when copied), and a
// leading dot or apostrophe kept from being read as a request.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// `agentknock completion bash|zsh|fish`: shell completion scripts, all three
// written from one table of commands, options and operand kinds, so that a
// shell completes the same words whichever it is. The table is checked
// against the parsers and the help texts by main_test.go.

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
// "--" (this file); completionCommands adds them to each entry.
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

// completionWordList writes shell function name, which echoes the words
// that list picks from command path $1; a path with none has no case.
func completionWordList(b *strings.Builder, comment, name string, list func(completionCommand) []string) {
	fmt.Fprintln(b, comment)
	fmt.Fprintf(b, "%s() {\n  case $1 in\n", name)
	for _, c := range completionCommands {
		if words := list(c); len(words) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", shellQuote(c.path), strings.Join(words, " "))
		}
	}
	fmt.Fprintln(b, "  esac\n}")
}

// completionTables writes the table as the POSIX shell functions that the
// bash and zsh scripts share: each prints what its arguments select.
func completionTables(b *strings.Builder) {
	completionWordList(b, "# Words that lead from command path $1 to the next one.", "_agentknock_subcommands",
		func(c completionCommand) []string { return c.subcommands })
	completionWordList(b, "# Fixed operand words of command path $1.", "_agentknock_words",
		func(c completionCommand) []string { return c.words })
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

// The three completion scripts of `agentknock completion`, each written
// from the table in this file.

// shellQuote quotes s for sh, bash, zsh and fish alike: the table holds only
// letters, digits, spaces, '-' and '|', none of which needs escaping inside
// single quotes in any of them.
func shellQuote(s string) string { return "'" + s + "'" }

func writeBashCompletion(w io.Writer) error {
	return writeTableCompletion(w, "# bash completion for agentknock, written by `agentknock completion bash`.\n", bashCompletionDriver)
}

func writeZshCompletion(w io.Writer) error {
	return writeTableCompletion(w, "#compdef agentknock\n# zsh completion for agentknock, written by `agentknock completion zsh`.\n", zshCompletionDriver)
}

// writeTableCompletion is the bash and zsh script: the shared shell tables,
// then the shell's own driver.
func writeTableCompletion(w io.Writer, header, driver string) error {
	var b strings.Builder
	b.WriteString(header)
	completionTables(&b)
	b.WriteString(driver)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFishCompletion(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# fish completion for agentknock, written by `agentknock completion fish`.\n")
	fmt.Fprintln(&b, "function __agentknock_subcommands\n    switch $argv[1]")
	for _, c := range completionCommands {
		if len(c.subcommands) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(c.subcommands, " "))
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_words\n    switch $argv[1]")
	for _, c := range completionCommands {
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(c.words, " "))
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_options\n    switch $argv[1]")
	for _, c := range completionCommands {
		fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(optionNames(c.options), " "))
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_operands\n    switch \"$argv[1]|$argv[2]\"")
	for _, c := range completionCommands {
		for _, g := range operandGroups(c) {
			fmt.Fprintf(&b, "        case %s\n            echo %s\n", strings.Join(g.patterns, " "), g.kinds)
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_takes_command\n    switch $argv[1]")
	var paths []string
	for _, c := range completionCommands {
		if c.command {
			paths = append(paths, shellQuote(c.path))
		}
	}
	fmt.Fprintf(&b, "        case %s\n            return 0\n    end\n    return 1\nend\n", strings.Join(paths, " "))
	b.WriteString(fishCompletionDriver)
	_, err := io.WriteString(w, b.String())
	return err
}

// The drivers walk the words before the cursor: a known subcommand extends
// the command path, an option skips as many words as it has operands, and a
// "--" where the path takes a command hands the rest to the shell's own
// command completion. At the cursor they complete an operand by its kind,
// an option, or a subcommand or fixed word.

const bashCompletionDriver = `_agentknock_operand() {
  # $1 kind, $2 text typed so far, $3 prefix that the replaced word needs
  local IFS=$'\n'
  case $1 in
    f) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
    d) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
    e) COMPREPLY=($(compgen -e -- "$2")) ;;
    a) if [[ $2 == *=* ]]; then
         compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "${2#*=}"))
       fi ;;
  esac
  if [[ -n $3 && ${#COMPREPLY[@]} -gt 0 ]]; then COMPREPLY=("${COMPREPLY[@]/#/$3}"); fi
}
_agentknock() {
  local words=() raw=() i w cword=0
  # bash splits words at "=" (COMP_WORDBREAKS); join them again so that
  # --option=value and NAME=PATH count as one word.
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    if ((i > 1)) && [[ $w == = || ${words[-1]} == *= ]]; then
      words[-1]+=$w
    else
      words+=("$w"); raw+=("$i")
    fi
    ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
  done
  local cmdpath="" kinds="" dashdash=-1 s
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ -n $kinds ]]; then kinds=${kinds:1}; continue; fi
    if [[ $w == -- ]] && _agentknock_takes_command "$cmdpath"; then dashdash=$i; break; fi
    if [[ $w == -?* ]]; then
      [[ $w == *=* ]] || kinds=$(_agentknock_operands "$cmdpath" "$w")
      continue
    fi
    for s in $(_agentknock_subcommands "$cmdpath"); do
      if [[ $w == "$s" ]]; then cmdpath=${cmdpath:+$cmdpath }$w; break; fi
    done
  done
  # The shell replaces only the raw word at the cursor: a candidate keeps
  # whatever of NAME= or --option= that word holds.
  local cur=${words[cword]} rawcur=${COMP_WORDS[COMP_CWORD]} prefix=""
  case $rawcur in
    =) prefix== ;;
    *=*) prefix=${rawcur%%=*}= ;;
  esac
  COMPREPLY=()
  if ((dashdash >= 0)); then
    if ((cword == dashdash + 1)); then
      COMPREPLY=($(compgen -c -- "$cur"))
    elif declare -F _command_offset >/dev/null; then
      _command_offset "${raw[dashdash + 1]}"
    else
      compopt -o default 2>/dev/null
    fi
    return 0
  fi
  if [[ -n $kinds ]]; then
    _agentknock_operand "${kinds:0:1}" "$cur" "$prefix"
    return 0
  fi
  if [[ $cur == -?*=* ]]; then
    kinds=$(_agentknock_operands "$cmdpath" "${cur%%=*}")
    [[ -n $kinds ]] && _agentknock_operand "${kinds:0:1}" "${cur#*=}" "$prefix"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_agentknock_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_agentknock_subcommands "$cmdpath") $(_agentknock_words "$cmdpath")" -- "$cur"))
  fi
  return 0
}
complete -F _agentknock agentknock
`

const zshCompletionDriver = `_agentknock() {
  local i w cmdpath="" kinds="" dashdash=0 s
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if [[ -n $kinds ]]; then kinds=${kinds:1}; continue; fi
    if [[ $w == -- ]] && _agentknock_takes_command "$cmdpath"; then dashdash=$i; break; fi
    if [[ $w == -?* ]]; then
      [[ $w == *=* ]] || kinds=$(_agentknock_operands "$cmdpath" "$w")
      continue
    fi
    for s in ${=$(_agentknock_subcommands "$cmdpath")}; do
      if [[ $w == "$s" ]]; then cmdpath=${cmdpath:+$cmdpath }$w; break; fi
    done
  done
  local cur=${words[CURRENT]} kind=""
  if ((dashdash > 0)); then
    shift $dashdash words
    ((CURRENT -= dashdash))
    _normal
    return
  fi
  if [[ -n $kinds ]]; then
    kind=${kinds:0:1}
  elif [[ $cur == -?*=* ]]; then
    kind=$(_agentknock_operands "$cmdpath" "${cur%%=*}")
    kind=${kind:0:1}
    compset -P '*='
  fi
  if [[ -n $kind ]]; then
    case $kind in
      f) _files ;;
      d) _files -/ ;;
      e) _parameters -g '*export*' ;;
      a) compset -P '*=' && _files ;;
      *) _message 'value' ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    compadd -- ${=$(_agentknock_options "$cmdpath")}
  else
    compadd -- ${=$(_agentknock_subcommands "$cmdpath")} ${=$(_agentknock_words "$cmdpath")}
  fi
}
if [[ $funcstack[1] == _agentknock ]]; then
  _agentknock "$@"
else
  compdef _agentknock agentknock
fi
`

const fishCompletionDriver = `function __agentknock_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmdpath ''
    set -l kinds ''
    set -l i 2
    while test $i -le (count $tokens)
        set -l w $tokens[$i]
        if test -n "$kinds"
            set kinds (string sub -s 2 -- $kinds)
        else if test "$w" = -- && __agentknock_takes_command "$cmdpath"
            if test $i -eq (count $tokens)
                __fish_complete_command $cur
            else
                complete -C (string join ' ' -- (string escape -- $tokens[(math $i + 1)..-1]) $cur)
            end
            return
        else if string match -q -- '-?*' $w
            string match -q -- '*=*' $w; or set kinds (__agentknock_operands "$cmdpath" $w)
        else if contains -- $w (__agentknock_subcommands "$cmdpath")
            if test -n "$cmdpath"
                set cmdpath "$cmdpath $w"
            else
                set cmdpath $w
            end
        end
        set i (math $i + 1)
    end
    set -l kind (string sub -l 1 -- "$kinds")
    set -l prefix ''
    set -l value $cur
    if test -z "$kind"; and string match -q -- '-?*=*' $cur
        set -l parts (string split -m 1 = -- $cur)
        set kind (string sub -l 1 -- (__agentknock_operands "$cmdpath" $parts[1]))
        set prefix $parts[1]=
        set value $parts[2]
    end
    if test "$kind" = a
        string match -q -- '*=*' $value; or return
        set -l parts (string split -m 1 = -- $value)
        set prefix $prefix$parts[1]=
        set value $parts[2]
        set kind f
    end
    switch "$kind"
        case f
            for p in (__fish_complete_path $value)
                echo $prefix$p
            end
        case d
            for p in (__fish_complete_directories $value)
                echo $prefix$p
            end
        case e
            for v in (set --names --export)
                echo $prefix$v
            end
        case w
            return
        case '*'
            if string match -q -- '-*' $cur
                __agentknock_options "$cmdpath"
            else
                __agentknock_subcommands "$cmdpath"
                __agentknock_words "$cmdpath"
            end
    end
end
complete -c agentknock -f -a '(__agentknock_complete)'
`
