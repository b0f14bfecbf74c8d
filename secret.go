// `agentknock secret list` and `agentknock secret upload`: the SecretList
// and SecretUpload methods of the client-device-protocol.md ("Secret list",
// "Secret upload"), with the reference client's command line. The sources
// of an upload are read in secret_sources.go.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
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
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, secretUsageText)
		return 2
	}
	if isHelp(args[0]) {
		fmt.Print(secretUsageText)
		return 0
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
