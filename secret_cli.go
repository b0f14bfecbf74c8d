// The command lines of `agentknock secret list` and `agentknock secret
// upload`, parsed with the standard flag package, and the checks on the
// upload sources that come before the device is contacted.

package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"unicode"
)

// secretCommonOptions are the global options (globals.go) as both
// subcommands use them.
type secretCommonOptions globalOptions

// parseSecretGlobals takes the global options out of a subcommand's own
// arguments (the unit tests call the parsers directly).
func parseSecretGlobals(args []string) (secretCommonOptions, []string, error) {
	g, rest, err := extractGlobalOptions(args)
	return secretCommonOptions(g), rest, err
}

// merge adds the global options given before the subcommand.
func (c secretCommonOptions) merge(g globalOptions) secretCommonOptions {
	if g.Home != "" {
		c.Home = g.Home
	}
	c.Quiet = c.Quiet || g.Quiet
	c.Verbose = c.Verbose || g.Verbose
	return c
}

type secretListOptions struct {
	secretCommonOptions
}

// sourceKind is one kind of environment-variable source.
type sourceKind int

const (
	sourceEnv     sourceKind = iota + 1 // --from-env NAME
	sourceFile                          // --from-file NAME=PATH
	sourceEnvFile                       // --from-env-file PATH
	sourcePrompt                        // --from-prompt NAME
)

// uploadSource is one environment-variable source. arg is the option's
// value as given; checkUploadSources splits it into Name (empty for a
// dotenv file) and Path (empty for an environment variable or a prompt).
type uploadSource struct {
	Kind sourceKind
	Name string
	Path string
	arg  string
}

func (k sourceKind) option() string {
	switch k {
	case sourceEnv:
		return "--from-env"
	case sourceFile:
		return "--from-file"
	case sourceEnvFile:
		return "--from-env-file"
	}
	return "--from-prompt"
}

func (s uploadSource) readsStdin() bool {
	return (s.Kind == sourceFile || s.Kind == sourceEnvFile) && s.Path == "-"
}

type secretUploadOptions struct {
	secretCommonOptions
	Name        string
	Description *string // nil: absent (UPDATE keeps the current one)
	Mode        string
	Sources     []uploadSource // environment-variable sources, in order

	SSHKey           string // --from-ssh-key PATH, "" when absent
	PassphrasePrompt bool
	PassphraseEnv    string
}

func parseSecretListArgs(args []string) (*secretListOptions, error) {
	o := &secretListOptions{}
	var err error
	if o.secretCommonOptions, args, err = parseSecretGlobals(args); err != nil {
		return nil, err
	}
	fs := flag.NewFlagSet("secret list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	positional, err := parseSecretFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(positional) > 0 {
		return nil, usagef("unexpected argument %q: secret list takes no arguments", positional[0])
	}
	return o, nil
}

func parseSecretUploadArgs(args []string) (*secretUploadOptions, error) {
	o := &secretUploadOptions{}
	var err error
	if o.secretCommonOptions, args, err = parseSecretGlobals(args); err != nil {
		return nil, err
	}
	fs := flag.NewFlagSet("secret upload", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var update, replace bool
	var sshKeys []string
	var descriptions int
	fs.BoolVar(&update, "update", false, "")
	fs.BoolVar(&replace, "replace", false, "")
	fs.BoolVar(&o.PassphrasePrompt, "passphrase-prompt", false, "")
	var passphraseEnvs int
	fs.Func("passphrase-env", "", func(v string) error {
		passphraseEnvs++
		o.PassphraseEnv = v
		return nil
	})
	fs.Func("description", "", func(v string) error {
		descriptions++
		o.Description = &v
		return nil
	})
	fs.Func("from-ssh-key", "", func(v string) error { sshKeys = append(sshKeys, v); return nil })
	add := func(kind sourceKind) func(string) error {
		return func(v string) error {
			o.Sources = append(o.Sources, uploadSource{Kind: kind, arg: v})
			return nil
		}
	}
	fs.Func("from-env", "", add(sourceEnv))
	fs.Func("from-file", "", add(sourceFile))
	fs.Func("from-env-file", "", add(sourceEnvFile))
	fs.Func("from-prompt", "", add(sourcePrompt))

	positional, err := parseSecretFlags(fs, args)
	if err != nil {
		return nil, err
	}
	switch len(positional) {
	case 0:
		return nil, usagef("the secret NAME is missing")
	case 1:
		o.Name = positional[0]
	default:
		return nil, usagef("unexpected argument %q: give one secret NAME", positional[1])
	}
	if err := checkSecretName(o.Name); err != nil {
		return nil, err
	}
	if o.Name != strings.TrimFunc(o.Name, unicode.IsSpace) {
		return nil, usagef("secret name %q begins or ends with whitespace, which the device rejects", o.Name)
	}
	if descriptions > 1 {
		return nil, usagef("--description is given more than once")
	}
	switch {
	case update && replace:
		return nil, usagef("--update and --replace cannot be used together")
	case update:
		o.Mode = uploadModeUpdate
	case replace:
		o.Mode = uploadModeReplace
	default:
		o.Mode = uploadModeCreate
	}
	if passphraseEnvs > 1 {
		return nil, usagef("--passphrase-env is given more than once")
	}
	if passphraseEnvs == 1 && !validEnvironmentName(o.PassphraseEnv) {
		return nil, usagef("--passphrase-env: %q is not an environment variable name", o.PassphraseEnv)
	}
	if err := checkUploadSources(o, sshKeys); err != nil {
		return nil, err
	}
	return o, nil
}

// checkUploadSources applies the combination rules that the command line
// alone decides; duplicates within dotenv files are found when reading.
func checkUploadSources(o *secretUploadOptions, sshKeys []string) error {
	if len(sshKeys) > 1 {
		return usagef("--from-ssh-key is given more than once; a secret holds one key")
	}
	if len(sshKeys) == 1 {
		if sshKeys[0] == "" {
			return usagef("--from-ssh-key: the path cannot be empty")
		}
		if len(o.Sources) > 0 {
			return usagef("--from-ssh-key cannot be combined with environment-variable sources")
		}
		o.SSHKey = sshKeys[0]
	}
	passphraseEnvSet := o.PassphraseEnv != ""
	if o.SSHKey == "" && (o.PassphrasePrompt || passphraseEnvSet) {
		return usagef("--passphrase-prompt and --passphrase-env apply only to --from-ssh-key")
	}
	if o.PassphrasePrompt && passphraseEnvSet {
		return usagef("--passphrase-prompt and --passphrase-env cannot be used together")
	}
	if o.SSHKey == "" && len(o.Sources) == 0 {
		return usagef("a source is required: --from-env, --from-file, --from-env-file, --from-prompt or --from-ssh-key")
	}

	stdinUsers := 0
	if o.SSHKey == "-" {
		stdinUsers++
	}
	seen := map[string]bool{}
	for i := range o.Sources {
		s := &o.Sources[i]
		switch s.Kind {
		case sourceEnv, sourcePrompt:
			s.Name = s.arg
		case sourceEnvFile:
			s.Path = s.arg
		case sourceFile:
			var ok bool
			if s.Name, s.Path, ok = strings.Cut(s.arg, "="); !ok {
				return usagef("--from-file takes NAME=PATH (or NAME=- for standard input)")
			}
		}
		if (s.Kind == sourceFile || s.Kind == sourceEnvFile) && s.Path == "" {
			return usagef("%s: the path cannot be empty", s.Kind.option())
		}
		if s.readsStdin() {
			stdinUsers++
		}
		if s.Kind == sourceEnvFile {
			continue
		}
		if !portableName(s.Name) {
			return usagef("%s: %q is not a portable environment variable name (letters, digits and _, not starting with a digit)", s.Kind.option(), s.Name)
		}
		if seen[s.Name] {
			return usagef("variable %s is given by more than one source", s.Name)
		}
		seen[s.Name] = true
	}
	if stdinUsers > 1 {
		return usagef("only one secret source can read from standard input (-)")
	}
	return nil
}

// parseSecretFlags parses options before and after the arguments (with
// pairing.go's parseInterspersed) and marks flag errors as usage errors.
func parseSecretFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	positional, err := parseInterspersed(fs, args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, usagef("%v", err)
	}
	return positional, err
}
