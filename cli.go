// Command-line parsing for `agentknock [run]`, with the standard flag package.
//
// The syntax follows the reference Rust client so that scripts and agent
// instructions carry over: repeated -s/--secret, routing options that take
// two or three operands, and a mandatory `--` before the command. The flag
// package parses one value per option, so routing options are first grouped
// with their operands (joined by NUL, which argv cannot contain).

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

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
