// `secret set|ssh|list|remove`: the device's secret store, managed without
// a running serve (serve re-reads secrets on each request). Values are read
// from files or standard input, never from the command line, and never
// printed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"agentknock.dev/agentknock/devkit/device"
)

func cmdSecret(c *cli, args []string) error {
	if len(args) == 0 {
		return usagef("usage: %s secret set|ssh|list|remove ...", progName)
	}
	switch args[0] {
	case "set":
		return cmdSecretSet(c, args[1:])
	case "ssh":
		return cmdSecretSSH(c, args[1:])
	case "list":
		return cmdSecretList(c, args[1:])
	case "remove":
		return cmdSecretRemove(c, args[1:])
	case "-h", "-help", "--help":
		io.WriteString(c.stdout, helpSecret)
		return errHelpShown
	}
	return usagef("unknown secret command %q (want set, ssh, list or remove)", args[0])
}

func cmdSecretSet(c *cli, args []string) error {
	fs := c.flags("secret set")
	description := fs.String("description", "", "")
	operands, err := c.parse(fs, helpSecret, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 2, -1, "secret set NAME VAR=@FILE|VAR=- ... [--description TEXT]"); err != nil {
		return err
	}
	name := operands[0]
	if name == "" {
		return usagef("the secret name is empty")
	}
	vars := make(map[string]string)
	stdinUsed := false
	for _, spec := range operands[1:] {
		variable, source, ok := strings.Cut(spec, "=")
		if !ok || !(source == "-" || strings.HasPrefix(source, "@")) {
			return usagef("%q: give a variable as VAR=@FILE or VAR=- (values never go on the command line)", spec)
		}
		if _, dup := vars[variable]; dup {
			return usagef("variable %s given twice", variable)
		}
		var data []byte
		if source == "-" {
			if stdinUsed {
				return usagef("standard input can supply only one value (VAR=- given twice)")
			}
			stdinUsed = true
			data, err = io.ReadAll(c.stdin)
			if err != nil {
				return fmt.Errorf("reading %s from standard input: %w", variable, err)
			}
		} else {
			path := source[1:]
			if data, err = os.ReadFile(path); err != nil {
				return fmt.Errorf("reading %s: %w", variable, err)
			}
		}
		value, err := secretValue(data)
		if err != nil {
			return fmt.Errorf("%s: %w", variable, err)
		}
		vars[variable] = value
	}
	dir, err := c.stateDir()
	if err != nil {
		return err
	}
	if _, err := device.Init(dir); err != nil {
		return err
	}
	if err := device.SetEnvSecret(dir, name, *description, vars); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "stored environment secret %s (%d variable(s))\n", clean(name), len(vars))
	return nil
}

// secretValue turns file or stdin bytes into a value: exactly one trailing
// "\n" is removed (what `echo` and editors add); anything else is kept.
func secretValue(data []byte) (string, error) {
	data = bytes.TrimSuffix(data, []byte("\n"))
	if !utf8.Valid(data) {
		return "", errors.New("the value is not valid UTF-8")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", errors.New("the value contains a NUL byte")
	}
	return string(data), nil
}

func cmdSecretSSH(c *cli, args []string) error {
	fs := c.flags("secret ssh")
	description := fs.String("description", "", "")
	importPath := fs.String("import", "", "")
	generate := fs.String("generate", "", "")
	operands, err := c.parse(fs, helpSecret, args)
	if err != nil {
		return err
	}
	const usage = "secret ssh NAME --import FILE | --generate ed25519|rsa [--description TEXT]"
	if err := wantOperands(operands, 1, 1, usage); err != nil {
		return err
	}
	name := operands[0]
	if (*importPath == "") == (*generate == "") {
		return usagef("give exactly one of --import FILE and --generate ed25519|rsa")
	}
	if *generate != "" && !oneOf(*generate, "ed25519", "rsa") {
		return usagef("--generate wants ed25519 or rsa, not %q", *generate)
	}
	var key []byte
	if *importPath != "" {
		if *importPath == "-" {
			key, err = io.ReadAll(c.stdin)
		} else {
			key, err = os.ReadFile(*importPath)
		}
		if err != nil {
			return fmt.Errorf("reading the private key: %w", err)
		}
		if err := checkUnencrypted(key, *importPath); err != nil {
			return err
		}
	}
	dir, err := c.stateDir()
	if err != nil {
		return err
	}
	if _, err := device.Init(dir); err != nil {
		return err
	}
	var pub string
	if key != nil {
		pub, err = device.ImportSSHSecret(dir, name, *description, key)
	} else {
		pub, err = device.GenerateSSHSecret(dir, name, *description, *generate)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, strings.TrimSpace(pub))
	fmt.Fprintf(c.stderr, "stored SSH secret %s; its public key is printed above\n", clean(name))
	return nil
}

// checkUnencrypted gives the one refusal users hit most a clear message;
// every other problem with the key is reported by the device library.
func checkUnencrypted(key []byte, path string) error {
	_, err := ssh.ParseRawPrivateKey(key)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return fmt.Errorf("%s is protected by a passphrase; the device stores unencrypted keys only "+
			"(decrypt a copy first: cp KEY COPY && ssh-keygen -p -N '' -f COPY)", path)
	}
	return nil
}

func cmdSecretList(c *cli, args []string) error {
	fs := c.flags("secret list")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpSecret, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "secret list [--json]"); err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	secrets, err := device.ListSecrets(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(c.stdout, nonNil(secrets))
	}
	if len(secrets) == 0 {
		fmt.Fprintln(c.stderr, "no secrets (add one with 'secret set' or 'secret ssh')")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tVARIABLES / PUBLIC KEY\tDESCRIPTION")
	for _, s := range secrets {
		detail := cleanList(s.Variables, ",")
		if s.Type == "ssh" {
			detail = clean(s.PublicKey)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", clean(s.Name), clean(s.Type), detail, clean(s.Description))
	}
	return tw.Flush()
}

func cmdSecretRemove(c *cli, args []string) error {
	fs := c.flags("secret remove")
	operands, err := c.parse(fs, helpSecret, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 1, 1, "secret remove NAME"); err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	if err := device.RemoveSecret(dir, operands[0]); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "removed secret %s\n", clean(operands[0]))
	return nil
}

// printJSON writes v indented, for --json outputs.
func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// nonNil makes an empty list print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
