// The sources of `agentknock secret upload` (client-device-protocol.md, "Secret
// upload": the proposed secret): the process environment, files, standard
// input, dotenv files (secret_dotenv.go), terminal prompts
// (secret_prompt.go) and SSH private keys (secret_sshkey.go). Errors name
// variables and files, never values.

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

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
