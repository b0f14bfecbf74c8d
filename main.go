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
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
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
	Quiet            bool   // global option (globals.go)
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

// The state home: --agentknock-home, else AGENTKNOCK_HOME, else
// $HOME/.agentknock, as the reference client resolves it. Resolving it never
// changes the environment the command receives.

func stateHome(flagValue string) (string, error) {
	if flagValue != "" {
		abs, err := filepath.Abs(flagValue)
		if err != nil {
			return "", fmt.Errorf("--agentknock-home %q: %v", flagValue, err)
		}
		return abs, nil
	}
	if v, ok := os.LookupEnv("AGENTKNOCK_HOME"); ok {
		if v == "" || !filepath.IsAbs(v) {
			return "", classify(failHomeNotSet, fmt.Errorf("AGENTKNOCK_HOME must be a non-empty absolute path, not %q", v))
		}
		return filepath.Clean(v), nil
	}
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", classify(failHomeNotSet, fmt.Errorf("HOME is not set to an absolute path, so Agentknock cannot find its pairing"))
	}
	return filepath.Join(home, ".agentknock"), nil
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
