// `agentknock secret list` and `agentknock secret upload`: the SecretList
// and SecretUpload methods of the client-device-protocol.md ("Secret list",
// "Secret upload"), with the reference client's command line; then the
// sources of an upload (a value typed at the terminal without echo, a
// file, standard input, a dotenv file read by the reference's rules, and
// an SSH private key).

package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

const secretUsageText = `agentknock secret: list the paired device's secrets, or upload one for review.

Usage:
  agentknock secret list [OPTIONS]
  agentknock secret upload NAME [--description TEXT] [--update | --replace] SOURCE...
  agentknock secret list --help | agentknock secret upload --help

A secret defines data or operations that the paired device can provide.
Agentknock lists and uploads environment-variable and SSH-key secrets. Both
commands need an active pairing: run ` + "`agentknock pairing start ADDRESS`" + ` and
` + "`agentknock pairing finish`" + ` first.

Commands:
  list      Write the metadata of the available secrets, never their values,
            to standard output as JSON.
  upload    Send a secret, end-to-end encrypted, to the device for review. It
            cannot be used until you approve the upload on the device.

Exit status: 0 on success; 1 when the operation fails or the device rejects
it; 2 for command-line errors; 128+N when signal N interrupts it.

Examples:
  agentknock secret list
  agentknock secret upload github --description "GitHub API access" --from-env GH_TOKEN
  agentknock secret upload development --from-env-file .env
  agentknock secret upload production-ssh --from-ssh-key ~/.ssh/id_ed25519
  agentknock secret upload github --update --from-prompt GH_TOKEN
`

const secretListUsageText = `agentknock secret list: list the secrets available from the paired device.

Usage:
  agentknock secret list [--quiet | --verbose] [--agentknock-home DIR]

Agentknock asks the paired device for the metadata of the secrets available
to this client and writes one JSON object to standard output: every secret
by name, in name order, with its type, its description when it has one, and
its public metadata (the variable names of an environment secret, the public
key of an SSH secret). The output never contains secret values. Messages go
to standard error, so the JSON can be redirected or processed on its own.
While it waits for the device, Agentknock reports progress every 30 seconds.

Options:
  --quiet                Only errors from Agentknock.
  --verbose              Also report the relay's progress.
  --agentknock-home DIR  State directory (default: $AGENTKNOCK_HOME, else
                         $HOME/.agentknock).

Example output:
  {
    "secrets": {
      "git-signing": {
        "description": "Git signing key",
        "type": "ssh",
        "public_key": "ssh-ed25519 AAAA..."
      },
      "github": {
        "description": "GitHub API access",
        "type": "environment",
        "variables": [
          "GH_TOKEN"
        ]
      }
    }
  }
`

const secretUploadUsageText = `agentknock secret upload: upload a secret to the paired device for review.

Usage:
  agentknock secret upload NAME [--description TEXT] [--update | --replace]
      ENVIRONMENT-SOURCE...
  agentknock secret upload NAME [--description TEXT] [--update | --replace]
      --from-ssh-key PATH [--passphrase-prompt | --passphrase-env VAR]

Agentknock builds an environment-variable or SSH-key secret from local data
and sends it, end-to-end encrypted, to the paired device. The command ends
when the device confirms that it received the upload; the secret stays
unavailable until you approve the upload on the device, and Agentknock does
not wait for that decision. Values and keys are never printed. Options may
come before or after NAME.

NAME is the secret's name (not empty, no comma, no whitespace at either
end). A new secret is created
unless --update or --replace is given; you can still rename it when you
approve it on the device. With --update or --replace, NAME is the exact name
of an existing secret.

Modes:
  (default)              Create a new secret.
  --update               Change only what you supply: other variables are
                         kept, and so is the description unless
                         --description is given.
  --replace              Replace the whole secret: what you do not supply is
                         removed.

Options:
  --description TEXT     Description shown on the device. With --update,
                         omit it to keep the current one; "" removes it.
  --quiet                Only errors from Agentknock.
  --verbose              Also report the relay's progress.
  --agentknock-home DIR  State directory (default: $AGENTKNOCK_HOME, else
                         $HOME/.agentknock).

Environment-variable sources (combinable and repeatable; each variable name
at most once; names are letters, digits and _, not starting with a digit):
  --from-env NAME        The value of NAME in Agentknock's own environment.
  --from-file NAME=PATH  The whole content of PATH as the value of NAME,
                         exactly (no trailing newline is removed). NAME=-
                         reads standard input.
  --from-env-file PATH   Every variable of a dotenv file; - reads standard
                         input.
  --from-prompt NAME     Ask for the value on the terminal, without echo.

SSH-key source (cannot be combined with the sources above):
  --from-ssh-key PATH    An Ed25519 or RSA (2048 to 16384 bits) private key
                         in OpenSSH format; -
                         reads standard input. It is sent without its
                         passphrase (inside the encrypted request), with its
                         comment.
  --passphrase-prompt    Ask for the key's passphrase on the terminal,
                         without echo.
  --passphrase-env VAR   Take the key's passphrase from environment
                         variable VAR.

At most one source can read standard input, and standard input must not be
a terminal (use --from-prompt to type a value). Every value must be valid
UTF-8 without NUL bytes. The whole upload, encrypted and encoded, must fit
in one 256 KiB relay message, so values should stay well under 180 KiB.

Dotenv files are read by the rules of the reference client's parser
(dotenvy 0.15.7): one NAME=VALUE per line, optionally preceded by ` + "`export `" + `;
spaces around "=" are allowed; blank lines and lines starting with # are
ignored. Unquoted text ends at a space or tab, after which only a # comment
may follow (a # with no space before it is part of the value). 'Single
quotes' are literal. "Double quotes" understand \\, \', \", \$, "\ " and \n,
and so does a backslash outside quotes. Quoted values may span lines.
$NAME and ${NAME} are expanded outside single quotes: from Agentknock's own
environment first, else from an earlier line of the same file, else to
nothing. Without braces NAME is letters and digits only ("$A_B" is $A
followed by "_B"); write \$ for a literal dollar sign.

A key in a legacy PEM format (BEGIN RSA PRIVATE KEY, BEGIN PRIVATE KEY, ...)
must be converted first with ` + "`ssh-keygen -p -f PATH`" + `, which rewrites it in
OpenSSH format.

Exit status: 0 when the device received the upload; 1 when Agentknock or the
device refused it or the exchange failed; 2 for command-line errors; 128+N
when signal N interrupts it.

Examples:
  Create a secret from the current environment:
    agentknock secret upload github --description "GitHub API access" --from-env GH_TOKEN

  Create a secret from a dotenv file:
    agentknock secret upload development --from-env-file .env

  Create a secret from a file and a prompt:
    agentknock secret upload db --from-file PGPASSFILE=./pgpass --from-prompt PGPASSWORD

  Upload an SSH private key protected by a passphrase:
    agentknock secret upload production-ssh --from-ssh-key ~/.ssh/id_ed25519 --passphrase-prompt

  Update one environment variable of an existing secret:
    agentknock secret upload github --update --from-prompt GH_TOKEN
`

// secretMain dispatches `agentknock secret ...`; args follow "secret".
func secretMain(args []string, g globalOptions, cs callerState) int {
	if code, answered := groupHelp(args, secretUsageText); answered {
		return code
	}
	switch args[0] {
	case "list":
		o, err := parseSecretListArgs(args[1:])
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(secretListUsageText)
			return 0
		}
		if err != nil {
			return reportSecretUsage(err)
		}
		o.secretCommonOptions = o.merge(g)
		return runSecretList(o, cs)
	case "upload":
		o, err := parseSecretUploadArgs(args[1:])
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(secretUploadUsageText)
			return 0
		}
		if err != nil {
			return reportSecretUsage(err)
		}
		o.secretCommonOptions = o.merge(g)
		return runSecretUpload(o, cs)
	}
	return reportSecretUsage(usagef("unknown secret command %q: use list or upload", args[0]))
}

func reportSecretUsage(err error) int { return reportUsageFor("secret", err) }

// secretPairing resolves the home and reads its active pairing, reporting
// a failure with nothingDone after it.
func secretPairing(homeFlag, nothingDone string, out *output) (string, *pairingState, bool) {
	report := stopReport{consequence: nothingDone, notContacted: true, rerun: "this command"}
	home, err := stateHome(homeFlag)
	if err != nil {
		out.stopped(report, err, failHomeNotSet)
		return "", nil, false
	}
	p, err := activePairing(home, out)
	if err != nil {
		out.stopped(report, err, failOther)
		return "", nil, false
	}
	return home, p, true
}

// ---- secret list ----

func runSecretList(o *secretListOptions, cs callerState) int {
	out := newPlainOutput(o.Quiet, o.Verbose, &secretListStageMessages)
	home, p, ok := secretPairing(o.Home, "Agentknock didn't receive a secret list.", out)
	if !ok {
		return 1
	}
	watch := watchTermination(cs)
	var listing []byte
	_, _, err := askDevice(home, p, secretListMethod(&listing), watch, out)
	var answered *answeredError
	switch {
	case errors.As(err, &answered), err != nil:
		out.stopped(stopReport{consequence: "Agentknock didn't receive a secret list.", rerun: "this command"}, err, failOther)
		return exitStatusOf(err)
	}
	if _, err := os.Stdout.Write(listing); err != nil {
		out.failure("cannot write the secret list: %v", err)
		return 1
	}
	return 0
}

// listedSecret is one secret in the output of `secret list`. A type this
// client does not know is shown with its name, type and description only.
type listedSecret struct {
	// Members in name order, as the reference's JSON map writes them.
	Description *string  `json:"description"` // null when there is none, as the reference prints it
	PublicKey   *string  `json:"public_key,omitempty"`
	Type        string   `json:"type"`
	Variables   []string `json:"variables,omitzero"`
}

// formatSecretList renders a checked list as indented JSON with the names
// of secrets and of variables sorted, so that the output is stable. The
// encoder escapes control characters, so device text cannot reach the
// terminal raw.
func formatSecretList(r *secretListResponse) ([]byte, error) {
	secrets := make(map[string]listedSecret, len(r.Secrets))
	for _, s := range r.Secrets {
		l := listedSecret{Type: s.Type}
		if s.HasDescription {
			d := s.Description
			l.Description = &d
		}
		switch s.Type {
		case secretTypeEnvironment:
			l.Variables = append([]string{}, s.Variables...)
			slices.Sort(l.Variables)
		case secretTypeSSH:
			key := s.PublicKey
			l.PublicKey = &key
		}
		secrets[s.Name] = l
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(struct {
		Secrets map[string]listedSecret `json:"secrets"`
	}{secrets})
	return buf.Bytes(), err
}

// secretListMethod is SecretList for askDevice; the formatted list goes to
// *listing. The completion goes before the output: printing into a closed
// pipe ends the process, and the device should still learn that the list
// arrived.
func secretListMethod(listing *[]byte) pairedMethod[*secretListResponse] {
	return pairedMethod[*secretListResponse]{
		request: newMethodRequest(methodSecretList),
		check:   checkSecretListResponse,
		settle: func(r *secretListResponse) (any, error) {
			var err error
			if *listing, err = formatSecretList(r); err != nil {
				return nil, err
			}
			return newInfoCompletion(), nil
		},
	}
}

// The command lines of `agentknock secret list` and `agentknock secret
// upload`, parsed with the standard flag package, and the checks on the
// upload sources that come before the device is contacted.

// secretCommonOptions are the global options (main.go) as both
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

// `agentknock secret upload`: the SecretUpload method of the client-device
// protocol ("Secret upload"), from the sources below.

func runSecretUpload(o *secretUploadOptions, cs callerState) int {
	out := newPlainOutput(o.Quiet, o.Verbose, &secretUploadStageMessages)
	// The pairing is checked before any source is read, so that nobody
	// types a value for an upload that cannot be sent.
	home, p, ok := secretPairing(o.Home, "Nothing was uploaded.", out)
	if !ok {
		return 1
	}
	watch := watchTermination(cs)
	secret, err := readUploadSecret(o, defaultUploadInput(watch))
	if err != nil {
		var intr *interrupted
		if errors.As(err, &intr) {
			out.failure("%v; nothing was uploaded.", err)
			return exitStatusFor(intr.sig)
		}
		if errors.As(err, new(*usageError)) {
			return reportSecretUsage(err)
		}
		out.failure("cannot prepare the secret upload: %v", err)
		return 1
	}
	req, err := newSecretUploadRequest(o.Mode, secret)
	if err != nil {
		out.failure("cannot prepare the secret upload: %v", err)
		return 1
	}
	select {
	case sig := <-watch.ch:
		out.failure("%v; nothing was uploaded.", &interrupted{sig: toSignal(sig)})
		return exitStatusFor(toSignal(sig))
	default:
	}

	resp, _, err := askDevice(home, p, secretUploadMethod(req), watch, out)
	var answered *answeredError
	switch {
	case errors.As(err, &answered), err != nil:
		out.stopped(stopReport{consequence: "Agentknock didn't receive confirmation that the device saved the upload; it may have received it. Check the device before you upload again.", rerun: "this command"}, err, failOther)
		return exitStatusOf(err)
	}
	if resp.Outcome == outcomeDenied {
		out.failure("The device rejected the secret upload: %s", printable(resp.Message))
		return 1
	}
	fmt.Printf("Secret upload %s delivered to the device.\n", quoted(o.Name))
	fmt.Println("The secret isn't available until you approve the upload on the device.")
	fmt.Println("Suggested action: Review the secret upload on the device.")
	return 0
}

// secretUploadMethod is SecretUpload for askDevice: the completion echoes
// what the device said of the upload.
func secretUploadMethod(req secretUploadRequest) pairedMethod[*resultResponse] {
	return pairedMethod[*resultResponse]{
		request: req,
		check:   checkSecretUploadResponse,
		settle:  func(r *resultResponse) (any, error) { return newSecretUploadCompletion(r), nil },
	}
}

// The sources of `agentknock secret upload` (client-device-protocol.md, "Secret
// upload": the proposed secret): the process environment, files, standard
// input, dotenv files, terminal prompts and SSH private keys (all
// below). Errors name
// variables and files, never values.

// maxSourceSize bounds what one source may supply: the whole request,
// encrypted and base64-encoded, must fit in one relay frame anyway, and the
// bound keeps a source such as /dev/zero from filling memory.
const maxSourceSize = relayMaxFrame

// uploadInput is where the sources come from; tests replace parts of it.
type uploadInput struct {
	// watch, when set, interrupts a blocked read or prompt on SIGINT or
	// SIGTERM.
	watch     *signalWatch
	lookupEnv func(string) (string, bool)
	stdin     io.Reader
	prompt    func(label string) (string, error)
}

func defaultUploadInput(watch *signalWatch) uploadInput {
	return uploadInput{
		watch:     watch,
		lookupEnv: os.LookupEnv,
		stdin:     os.Stdin,
		prompt:    func(label string) (string, error) { return promptHidden(watch, label) },
	}
}

// readUploadSecret builds the proposed secret. Prompts come last, so that
// nobody types a value for an upload that a file then makes fail.
func readUploadSecret(o *secretUploadOptions, in uploadInput) (uploadSecret, error) {
	secret := uploadSecret{Name: o.Name, Description: o.Description}
	if o.SSHKey != "" {
		key, err := readSSHKeySource(o, in)
		if err != nil {
			return uploadSecret{}, err
		}
		secret.Type = secretTypeSSH
		secret.PrivateKey = secretText(key)
		return secret, nil
	}

	vars := map[string]uploadVariable{}
	add := func(name, value string) error {
		if _, dup := vars[name]; dup {
			return fmt.Errorf("variable %s is given by more than one source", name)
		}
		if err := checkSecretValue(name, value); err != nil {
			return err
		}
		vars[name] = uploadVariable{Value: secretText(value)}
		return nil
	}
	for _, s := range o.Sources {
		switch s.Kind {
		case sourceEnv:
			value, ok := in.lookupEnv(s.Name)
			if !ok {
				return uploadSecret{}, fmt.Errorf("environment variable %s (--from-env) is not set", s.Name)
			}
			if err := add(s.Name, value); err != nil {
				return uploadSecret{}, err
			}
		case sourceFile:
			data, err := readSourceData(s.Path, in)
			if err != nil {
				return uploadSecret{}, err
			}
			if err := add(s.Name, string(data)); err != nil {
				return uploadSecret{}, err
			}
		case sourceEnvFile:
			data, err := readSourceData(s.Path, in)
			if err != nil {
				return uploadSecret{}, err
			}
			entries, err := parseDotenv(sourceLabel(s.Path), data, in.lookupEnv)
			if err != nil {
				return uploadSecret{}, err
			}
			for _, e := range entries {
				if err := add(e.Name, e.Value); err != nil {
					return uploadSecret{}, fmt.Errorf("%s, line %d: %v", sourceLabel(s.Path), e.Line, err)
				}
			}
		}
	}
	for _, s := range o.Sources {
		if s.Kind != sourcePrompt {
			continue
		}
		if _, dup := vars[s.Name]; dup {
			return uploadSecret{}, fmt.Errorf("variable %s is given by more than one source", s.Name)
		}
		value, err := in.prompt("Value for " + s.Name + ": ")
		if err != nil {
			return uploadSecret{}, promptError("the value of "+s.Name, err)
		}
		if err := add(s.Name, value); err != nil {
			return uploadSecret{}, err
		}
	}
	secret.Type = secretTypeEnvironment
	secret.Variables = vars
	return secret, nil
}

// checkSecretValue applies the protocol's rule for values: JSON strings of
// valid UTF-8, which an environment entry further requires to be NUL-free.
func checkSecretValue(name, value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("the value of %s is not valid UTF-8", name)
	}
	for i := 0; i < len(value); i++ {
		if value[i] == 0 {
			return fmt.Errorf("the value of %s contains a NUL byte", name)
		}
	}
	return nil
}

// promptError keeps an interruption recognisable and words the rest.
func promptError(what string, err error) error {
	var intr *interrupted
	if errors.As(err, &intr) {
		return err
	}
	return fmt.Errorf("cannot read %s from the terminal: %v", what, err)
}

func sourceLabel(path string) string {
	if path == "-" {
		return "standard input"
	}
	return fmt.Sprintf("%q", path)
}

// readSourceData reads a whole file, or standard input for "-", at most
// maxSourceSize bytes. The read can block (a FIFO, a pipe that stays open),
// so it runs where a termination signal can still end the upload.
func readSourceData(path string, in uploadInput) ([]byte, error) {
	label := sourceLabel(path)
	return interruptible(in.watch, func() ([]byte, error) {
		var r io.Reader
		if path == "-" {
			if f, ok := in.stdin.(*os.File); ok && isTerminal(f) {
				return nil, errors.New("standard input is a terminal, where a value would be echoed; use --from-prompt NAME to type a value, or redirect standard input")
			}
			r = in.stdin
		} else {
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %v", label, unwrapPathError(err))
			}
			defer f.Close()
			r = f
		}
		data, err := io.ReadAll(io.LimitReader(r, maxSourceSize+1))
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", label, unwrapPathError(err))
		}
		if len(data) > maxSourceSize {
			return nil, fmt.Errorf("%s is larger than %d KiB, more than one upload can carry", label, maxSourceSize>>10)
		}
		return data, nil
	})
}

// unwrapPathError drops the path that os errors repeat; the caller names
// the source once.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	terminal := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		terminal = err == nil
	})
	return terminal
}

// interruptible runs f on its own goroutine and returns early, as
// *interrupted, when watch reports SIGINT or SIGTERM first. The abandoned
// goroutine ends with the process.
func interruptible[T any](watch *signalWatch, f func() (T, error)) (T, error) {
	if watch == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case sig := <-watch.ch:
		var zero T
		return zero, &interrupted{sig: toSignal(sig)}
	}
}

// Reading a value from the controlling terminal without echo, for
// `secret upload --from-prompt` and `--passphrase-prompt`. Echo is turned
// off with termios ioctls and the saved settings are put back on every
// path, a SIGINT or SIGTERM during the prompt included.

// promptHidden writes label to /dev/tty and reads one line there with echo
// off. It returns *interrupted when watch reports a signal first.
func promptHidden(watch *signalWatch, label string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return "", errors.New("there is no terminal to prompt on; use another source such as --from-file NAME=- or --passphrase-env VAR")
	}
	defer tty.Close()
	// The ioctls go through the raw connection: tty.Fd() would switch the
	// file to blocking mode, and Close could then no longer end the read
	// that an interruption abandons.
	rc, err := tty.SyscallConn()
	if err != nil {
		return "", err
	}
	var saved *unix.Termios
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) {
		saved, ioctlErr = unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	}); err != nil || ioctlErr != nil {
		return "", errors.New("/dev/tty is not a terminal")
	}
	hidden := *saved
	hidden.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK
	// ECHONL still shows the newline, so the next message starts on its
	// own line; ICANON makes the terminal deliver whole lines.
	hidden.Lflag |= unix.ECHONL | unix.ICANON
	setTermios := func(t *unix.Termios) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t) }); cerr != nil {
			return cerr
		}
		return err
	}
	if err := setTermios(&hidden); err != nil {
		return "", errors.New("cannot turn off echo on the terminal")
	}
	defer setTermios(saved)

	if _, err := io.WriteString(tty, label); err != nil {
		return "", err
	}
	line, err := interruptible(watch, func() (string, error) { return readTerminalLine(tty) })
	var intr *interrupted
	if errors.As(err, &intr) {
		// The user's line was not finished; end it before the message.
		io.WriteString(tty, "\n")
	}
	return line, err
}

// readTerminalLine reads up to a newline, which it drops with a preceding
// carriage return. End of input with nothing typed is an error, so that
// Ctrl-D does not upload an empty value by accident.
func readTerminalLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err == io.EOF && line == "" {
		return "", errors.New("the input ended before a value was entered")
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

// The dotenv format of `secret upload --from-env-file`, read by the rules of
// the Rust crate dotenvy 0.15.7 that the reference client uses
// (https://docs.rs/dotenvy/0.15.7), so that one file uploads the same values
// with either client:
//
//   - NAME=VALUE lines, optionally preceded by `export `; spaces around
//     the "=" are allowed; blank lines and lines starting with # are skipped.
//   - Unquoted text ends at a space or tab; only a # comment may follow.
//     A # with no space before it belongs to the value.
//   - 'Single quotes' are literal. "Double quotes" take the escapes \\, \',
//     \", \$, "\ " and \n; a backslash outside quotes takes the same ones.
//     Quoted and unquoted pieces next to each other join into one value,
//     and quoted values may span lines.
//   - $NAME and ${NAME} are substituted outside single quotes: the value of
//     NAME in Agentknock's environment, else its value earlier in the same
//     file, else nothing. Without braces the name is letters and digits
//     only, so "$A_B" is $A followed by "_B"; a $ that starts no name
//     disappears.
//
// A malformed line is reported by number; neither the value nor the text
// of the line is ever quoted, since either may be secret.

// dotenvEntry is one variable, with the line where it starts.
type dotenvEntry struct {
	Name  string
	Value string
	Line  int
}

// parseDotenv reads data; source names it in errors ("\".env\"",
// "standard input"); lookupEnv is the environment that substitution
// consults first (os.LookupEnv).
func parseDotenv(source string, data []byte, lookupEnv func(string) (string, bool)) ([]dotenvEntry, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	fail := func(line int, err error) error {
		return fmt.Errorf("environment file %s isn't valid: line %d: %v", source, line, err)
	}
	known := map[string]string{} // earlier values, for substitution
	var entries []dotenvEntry
	lineNo := 1
	for text != "" {
		start := lineNo
		logical, rest, lines, err := nextDotenvLine(text)
		if err != nil {
			return nil, fail(start, err)
		}
		text, lineNo = rest, lineNo+lines
		if !utf8.ValidString(logical) {
			return nil, fail(start, errors.New("not valid UTF-8"))
		}
		name, value, ok, err := parseDotenvLine(logical, known, lookupEnv)
		if err != nil {
			return nil, fail(start, err)
		}
		if !ok {
			continue
		}
		if !portableName(name) {
			return nil, fail(start, errors.New("the text before \"=\" is not a portable variable name (letters, digits and _, not starting with a digit)"))
		}
		known[name] = value
		entries = append(entries, dotenvEntry{Name: name, Value: value, Line: start})
	}
	return entries, nil
}

// quoteState is where a physical line leaves the quoting, as dotenvy
// decides whether the next line continues the same entry.
type quoteState int

const (
	qComplete quoteState = iota
	qSpace
	qEscape
	qWeak
	qWeakEscape
	qStrong
)

// nextDotenvLine cuts one entry off text: one line, or several while a
// quote is open. A # after whitespace outside quotes ends it. It returns
// the entry without its line end, the remaining text and how many lines
// it used.
func nextDotenvLine(text string) (logical, rest string, lines int, err error) {
	state := qComplete
	var b strings.Builder
	for {
		line, after, found := strings.Cut(text, "\n")
		if found {
			line += "\n"
		}
		text = after
		lines++
		if b.Len() == 0 && strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "#") {
			return "", text, lines, nil
		}
		cut := -1
		for i, c := range line {
			switch state {
			case qSpace:
				switch c {
				case '#':
					cut = i
				case '\\':
					state = qEscape
				case '"':
					state = qWeak
				case '\'':
					state = qStrong
				default:
					state = qComplete
				}
			case qEscape:
				state = qComplete
			case qComplete:
				switch {
				case unicode.IsSpace(c) && c != '\n' && c != '\r':
					state = qSpace
				case c == '\\':
					state = qEscape
				case c == '"':
					state = qWeak
				case c == '\'':
					state = qStrong
				}
			case qWeak:
				switch c {
				case '\\':
					state = qWeakEscape
				case '"':
					state = qComplete
				}
			case qWeakEscape:
				state = qWeak
			case qStrong:
				if c == '\'' {
					state = qComplete
				}
			}
			if cut >= 0 {
				break
			}
		}
		if cut >= 0 {
			b.WriteString(line[:cut])
			return b.String(), text, lines, nil
		}
		b.WriteString(line)
		if state == qComplete || state == qSpace || state == qEscape || !found {
			if state == qWeak || state == qWeakEscape || state == qStrong {
				return "", "", lines, errors.New("the quoted value is not closed")
			}
			s := strings.TrimSuffix(b.String(), "\n")
			return strings.TrimSuffix(s, "\r"), text, lines, nil
		}
	}
}

// parseDotenvLine reads one entry: ok is false for a blank or comment line.
func parseDotenvLine(line string, known map[string]string, lookupEnv func(string) (string, bool)) (name, value string, ok bool, err error) {
	s := strings.TrimFunc(line, unicode.IsSpace)
	if s == "" || s[0] == '#' {
		return "", "", false, nil
	}
	errSyntax := errors.New("expected NAME=VALUE")
	key := func() (string, error) {
		if s == "" || !(s[0] == '_' || 'A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z') {
			return "", errSyntax
		}
		n := strings.IndexFunc(s, func(c rune) bool {
			return !(c == '_' || c == '.' || c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)))
		})
		if n < 0 {
			n = len(s)
		}
		k := s[:n]
		s = strings.TrimLeftFunc(s[n:], unicode.IsSpace)
		return k, nil
	}
	if name, err = key(); err != nil {
		return "", "", false, err
	}
	if name == "export" && !strings.HasPrefix(s, "=") {
		if name, err = key(); err != nil {
			return "", "", false, err
		}
	}
	if !strings.HasPrefix(s, "=") {
		return "", "", false, errSyntax
	}
	s = strings.TrimLeftFunc(s[1:], unicode.IsSpace)
	if s == "" || s[0] == '#' {
		return name, "", true, nil
	}
	value, err = dotenvValue(s, known, lookupEnv)
	return name, value, err == nil, err
}

// dotenvValue applies quoting, escapes and substitution to the text after
// the "=".
func dotenvValue(in string, known map[string]string, lookupEnv func(string) (string, bool)) (string, error) {
	const (
		noSubst = iota
		plainSubst
		bracedSubst
	)
	var out, subName strings.Builder
	strong, weak, escaped, expectEnd := false, false, false, false
	mode := noSubst
	substitute := func() {
		n := subName.String()
		subName.Reset()
		if v, ok := lookupEnv(n); ok {
			out.WriteString(v)
		} else {
			out.WriteString(known[n])
		}
	}
	for _, c := range in {
		switch {
		case expectEnd:
			switch c {
			case ' ', '\t':
				continue
			case '#':
				return finishDotenvValue(&out, mode == bracedSubst || strong || weak, substitute)
			}
			return "", errors.New("unquoted text after a space (quote a value that contains spaces)")
		case escaped:
			switch c {
			case '\\', '\'', '"', '$', ' ':
				out.WriteRune(c)
			case 'n':
				out.WriteByte('\n')
			default:
				return "", errors.New(`unsupported escape sequence (use \\, \', \", \$, "\ " or \n)`)
			}
			escaped = false
		case strong:
			if c == '\'' {
				strong = false
			} else {
				out.WriteRune(c)
			}
		case mode != noSubst:
			if unicode.IsLetter(c) || unicode.IsDigit(c) {
				subName.WriteRune(c)
				continue
			}
			if mode == bracedSubst {
				if c == '}' {
					mode = noSubst
					substitute()
				} else {
					subName.WriteRune(c)
				}
				continue
			}
			if c == '{' && subName.Len() == 0 {
				mode = bracedSubst
				continue
			}
			substitute()
			if c == '$' {
				continue // another substitution starts at once
			}
			// dotenvy ends a bare name at any other character and keeps
			// that character, even a closing double quote.
			mode = noSubst
			out.WriteRune(c)
		case c == '$':
			mode = plainSubst
		case weak:
			switch c {
			case '"':
				weak = false
			case '\\':
				escaped = true
			default:
				out.WriteRune(c)
			}
		case c == '\'':
			strong = true
		case c == '"':
			weak = true
		case c == '\\':
			escaped = true
		case c == ' ' || c == '\t':
			expectEnd = true
		default:
			out.WriteRune(c)
		}
	}
	return finishDotenvValue(&out, mode == bracedSubst || strong || weak, substitute)
}

func finishDotenvValue(out *strings.Builder, open bool, substitute func()) (string, error) {
	if open {
		return "", errors.New("a quote or ${ is not closed")
	}
	substitute()
	return out.String(), nil
}

// The SSH-key source of `secret upload --from-ssh-key` (client-device
// protocol, "Secret upload": private_key is a passphrase-free OpenSSH key
// inside the encrypted request): read the key, decrypt it when it has a
// passphrase, and re-encode it without one, keeping its comment. Only
// Ed25519 and RSA keys are accepted, the two kinds a v1 device signs with.

const opensshKeyMagic = "openssh-key-v1\x00"

// sshKeyInput is a private key as read, with what the conversion needs to
// word its errors and to find a passphrase.
type sshKeyInput struct {
	Data  []byte
	Label string // the source in messages: "\"/path\"" or "standard input"
	Path  string // the file, for the ssh-keygen hint and FILE.pub; "" for standard input
	// Passphrase is nil without --passphrase-prompt or --passphrase-env; it
	// is asked only for an encrypted key.
	Passphrase func() ([]byte, error)
}

func readSSHKeySource(o *secretUploadOptions, in uploadInput) (string, error) {
	data, err := readSourceData(o.SSHKey, in)
	if err != nil {
		return "", err
	}
	k := sshKeyInput{Data: data, Label: sourceLabel(o.SSHKey)}
	if o.SSHKey != "-" {
		k.Path = o.SSHKey
	}
	switch {
	case o.PassphraseEnv != "":
		k.Passphrase = func() ([]byte, error) {
			v, ok := in.lookupEnv(o.PassphraseEnv)
			if !ok {
				return nil, fmt.Errorf("environment variable %s (--passphrase-env) is not set", o.PassphraseEnv)
			}
			return []byte(v), nil
		}
	case o.PassphrasePrompt:
		k.Passphrase = func() ([]byte, error) {
			v, err := in.prompt("Passphrase for " + k.Label + ": ")
			if err != nil {
				return nil, promptError("the passphrase", err)
			}
			return []byte(v), nil
		}
	}
	return convertSSHPrivateKey(k)
}

// convertSSHPrivateKey returns the key as unencrypted OpenSSH PEM text.
// The x/crypto parsers' messages are not passed on: they are generic at
// best, and nothing about the key material belongs in an error.
func convertSSHPrivateKey(k sshKeyInput) (string, error) {
	block, _ := pem.Decode(k.Data)
	if block == nil {
		if _, _, _, _, err := ssh.ParseAuthorizedKey(k.Data); err == nil {
			return "", fmt.Errorf("%s holds a public key; give the private key (the file without .pub)", k.Label)
		}
		return "", fmt.Errorf("%s does not hold a private key in OpenSSH format (-----BEGIN OPENSSH PRIVATE KEY-----)", k.Label)
	}
	switch block.Type {
	case "OPENSSH PRIVATE KEY":
	case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
		hint := k.Path
		if hint == "" {
			hint = "FILE"
		}
		return "", fmt.Errorf("%s uses legacy PEM format (%s), which Agentknock doesn't support. Suggested action: Convert the key in place with ssh-keygen -p -f <PATH> (here: ssh-keygen -p -f %s), then try again", k.Label, block.Type, hint)
	default:
		return "", fmt.Errorf("%s holds a %q PEM block, not an OpenSSH private key", k.Label, block.Type)
	}
	info, err := inspectOpenSSHKey(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key", k.Label)
	}
	// The device rejects other kinds and sizes (the Android app's rules
	// for a SecretUpload); a usage error says so before anything is sent.
	if info.KeyType != ssh.KeyAlgoED25519 && info.KeyType != ssh.KeyAlgoRSA {
		return "", usagef("%s holds a %s key; only Ed25519 and RSA keys can be uploaded", k.Label, printable(info.KeyType))
	}
	if info.KeyType == ssh.KeyAlgoRSA {
		bits := rsaPublicKeyBits(info.PublicKey)
		if bits < minRSABits || bits > maxRSABits {
			return "", usagef("%s holds a %d-bit RSA key; the device accepts RSA keys of %d to %d bits", k.Label, bits, minRSABits, maxRSABits)
		}
	}

	var key any
	if info.Encrypted {
		if k.Passphrase == nil {
			return "", fmt.Errorf("%s is encrypted. Suggested action: Use --passphrase-prompt or --passphrase-env <NAME> so that Agentknock can decrypt it for the upload", k.Label)
		}
		passphrase, err := k.Passphrase()
		if err != nil {
			return "", err
		}
		key, err = ssh.ParseRawPrivateKeyWithPassphrase(pem.EncodeToMemory(block), passphrase)
		clear(passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return "", fmt.Errorf("the passphrase for %s is incorrect", k.Label)
		}
	} else {
		key, err = ssh.ParseRawPrivateKey(pem.EncodeToMemory(block))
	}
	if err != nil {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key", k.Label)
	}
	var public ssh.PublicKey
	switch priv := key.(type) {
	case *ed25519.PrivateKey:
		public, err = ssh.NewPublicKey(priv.Public())
	case *rsa.PrivateKey:
		public, err = ssh.NewPublicKey(priv.Public())
	default:
		return "", fmt.Errorf("%s holds an unsupported key; only Ed25519 and RSA keys can be uploaded", k.Label)
	}
	if err != nil || !bytes.Equal(public.Marshal(), info.PublicKey) {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key (its public and private parts differ)", k.Label)
	}

	comment := info.Comment
	if info.Encrypted && k.Path != "" {
		// The comment of an encrypted key is encrypted with it and the
		// parser does not return it; the usual companion file has it.
		comment = companionComment(k.Path+".pub", public)
	}
	out, err := ssh.MarshalPrivateKey(key, comment)
	if err != nil {
		return "", fmt.Errorf("cannot re-encode %s", k.Label)
	}
	text := string(pem.EncodeToMemory(out))
	if err := checkUploadPrivateKey(text); err != nil {
		return "", fmt.Errorf("cannot re-encode %s: %v", k.Label, err)
	}
	return text, nil
}

// openSSHKeyInfo is what the clear part of an OpenSSH key file tells.
type openSSHKeyInfo struct {
	Encrypted bool
	KeyType   string
	PublicKey []byte // wire form
	Comment   string // unencrypted keys only
}

// inspectOpenSSHKey reads the envelope of PROTOCOL.key: the cipher, the
// public key and, for an unencrypted key, the comment at the end of the
// private section.
func inspectOpenSSHKey(der []byte) (openSSHKeyInfo, error) {
	rest, ok := bytes.CutPrefix(der, []byte(opensshKeyMagic))
	if !ok {
		return openSSHKeyInfo{}, errors.New("no openssh-key-v1 header")
	}
	var envelope struct {
		CipherName   string
		KdfName      string
		KdfOpts      string
		NumKeys      uint32
		PubKey       []byte
		PrivKeyBlock []byte
		Rest         []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(rest, &envelope); err != nil {
		return openSSHKeyInfo{}, err
	}
	if envelope.NumKeys != 1 {
		return openSSHKeyInfo{}, errors.New("not exactly one key")
	}
	pub, err := ssh.ParsePublicKey(envelope.PubKey)
	if err != nil {
		return openSSHKeyInfo{}, err
	}
	info := openSSHKeyInfo{Encrypted: envelope.CipherName != "none", KeyType: pub.Type(), PublicKey: envelope.PubKey}
	if info.Encrypted {
		return info, nil
	}
	var private struct {
		Check1  uint32
		Check2  uint32
		KeyType string
		Rest    []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(envelope.PrivKeyBlock, &private); err != nil {
		return openSSHKeyInfo{}, err
	}
	switch private.KeyType {
	case ssh.KeyAlgoED25519:
		var k struct {
			Pub, Priv []byte
			Comment   string
			Pad       []byte `ssh:"rest"`
		}
		if ssh.Unmarshal(private.Rest, &k) == nil {
			info.Comment = k.Comment
		}
	case ssh.KeyAlgoRSA:
		var k struct {
			N, E, D, Iqmp, P, Q *big.Int
			Comment             string
			Pad                 []byte `ssh:"rest"`
		}
		if ssh.Unmarshal(private.Rest, &k) == nil {
			info.Comment = k.Comment
		}
	}
	return info, nil
}

// companionComment is the comment of path when it holds the same public key.
func companionComment(path string, public ssh.PublicKey) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 64<<10 {
		return ""
	}
	key, comment, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil || !bytes.Equal(key.Marshal(), public.Marshal()) {
		return ""
	}
	return comment
}

// The RSA key sizes a device accepts in a SecretUpload.
const (
	minRSABits = 2048
	maxRSABits = 16384
)

// rsaPublicKeyBits is the modulus size of an SSH wire-format RSA public key
// (0 when it cannot be read).
func rsaPublicKeyBits(wire []byte) int {
	pub, err := ssh.ParsePublicKey(wire)
	if err != nil {
		return 0
	}
	cpk, ok := pub.(ssh.CryptoPublicKey)
	if !ok {
		return 0
	}
	if rk, ok := cpk.CryptoPublicKey().(*rsa.PublicKey); ok {
		return rk.N.BitLen()
	}
	return 0
}
