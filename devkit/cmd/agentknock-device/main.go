// Command agentknock-device runs a local Agentknock v1 relay and a software
// device on one machine (design.md, "Local relay and device"), so that a dev
// VM, a CI job or the end-to-end tests can use agentknock fully offline.
// This file is the entry point: global options, command dispatch, errors
// and exit statuses (2 for usage errors, 1 for other failures).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const progName = "agentknock-device"

// version is set at link time (-ldflags "-X main.version=..."); an unstamped
// build says "dev", the word the client uses.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// cli carries what every command needs.
type cli struct {
	stateFlag string
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	getenv    func(string) string
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// errHelpShown ends a command that printed its help on request.
var errHelpShown = errors.New("help shown")

type command struct {
	run  func(c *cli, args []string) error
	help string
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"init":    {cmdInit, helpInit},
		"secret":  {cmdSecret, helpSecret},
		"serve":   {cmdServe, helpServe},
		"pending": {cmdPending, helpPending},
		"approve": {cmdApprove, helpApprove},
		"deny":    {cmdDeny, helpDeny},
		"pairing": {cmdPairing, helpPairing},
		"clients": {cmdClients, helpClients},
		"revoke":  {cmdRevoke, helpRevoke},
		"uploads": {cmdUploads, helpUploads},
		"rules":   {cmdRules, helpRules},
		"log":     {cmdLog, helpLog},
		"explain": {cmdExplainArgv, helpExplainArgv},
		"upload":  {cmdUpload, helpUpload},
		"help":    {cmdHelp, helpHelp},
		// Hidden: the man page, written at release time (manpage.go).
		manCommand: {cmdMan, "usage: agentknock-device __man VERSION\n"},
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	fs := flag.NewFlagSet(progName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.stateFlag, "state", "", "")
	showVersion := fs.Bool("version", false, "")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, fullHelp())
		return 0
	case err != nil:
		return c.exit(usageError{err.Error()})
	case *showVersion:
		fmt.Fprintf(stdout, "%s %s (Agentknock v1 relay and software device)\n", progName, version)
		return 0
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return c.exit(usagef("no command given"))
	}
	cmd, ok := commands[rest[0]]
	if !ok {
		return c.exit(usagef("unknown command %q", rest[0]))
	}
	return c.exit(cmd.run(c, rest[1:]))
}

func (c *cli) exit(err error) int {
	var u usageError
	switch {
	case err == nil || errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &u):
		fmt.Fprintf(c.stderr, "%s: error: %s\nRun '%s --help' for usage.\n", progName, u.msg, progName)
		return 2
	default:
		fmt.Fprintf(c.stderr, "%s: error: %s\n", progName, err)
		return 1
	}
}

// flags makes a command's flag set. Every command also accepts --state, so
// it may follow the command name.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.stateFlag, "state", c.stateFlag, "")
	return fs
}

// parse parses flags anywhere among the arguments (flag stops at the first
// operand; our commands put options after operands, as in
// `secret set NAME VAR=- --description TEXT`) and returns the operands.
// "--" ends the options.
func (c *cli) parse(fs *flag.FlagSet, help string, args []string) ([]string, error) {
	var operands []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(c.stdout, help)
			return nil, errHelpShown
		}
		if err != nil {
			return nil, usageError{err.Error()}
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), nil
		}
		if len(rest) == 0 {
			return operands, nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// stateDir resolves the state directory: --state, $AGENTKNOCK_DEVICE_STATE,
// $XDG_DATA_HOME/agentknock-device, ~/.local/share/agentknock-device.
func (c *cli) stateDir() (string, error) {
	dir := c.stateFlag
	if dir == "" {
		dir = c.getenv("AGENTKNOCK_DEVICE_STATE")
	}
	if dir == "" {
		// The XDG base directory specification ignores relative values.
		if xdg := c.getenv("XDG_DATA_HOME"); filepath.IsAbs(xdg) {
			dir = filepath.Join(xdg, progName)
		}
	}
	if dir == "" {
		home := c.getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("no state directory: set --state or AGENTKNOCK_DEVICE_STATE (%v)", err)
			}
		}
		dir = filepath.Join(home, ".local", "share", progName)
	}
	return filepath.Abs(dir)
}

// existingState is stateDir for commands that only read or change existing
// state: a missing directory is reported instead of created.
func (c *cli) existingState() (string, error) {
	dir, err := c.stateDir()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no device state in %s (run '%s init' first)", dir, progName)
		}
		return "", err
	}
	return dir, nil
}

// wantOperands checks the operand count of a command.
func wantOperands(operands []string, min, max int, usage string) error {
	if len(operands) < min || (max >= 0 && len(operands) > max) {
		return usagef("usage: %s %s", progName, usage)
	}
	return nil
}

func oneOf(s string, choices ...string) bool {
	for _, c := range choices {
		if s == c {
			return true
		}
	}
	return false
}
