// The built client's --help, --version and completion command, as users
// and packaging scripts run them: every help text that a command prints is
// one that the man page carries, and `completion` is a command only in the
// command position.

package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestEveryHelpIsInTheManPage(t *testing.T) {
	inPage := map[string]bool{}
	for _, s := range manSections() {
		inPage[s.text] = true
	}
	for _, c := range completionCommands {
		args := append(strings.Fields(c.path), "--help")
		out, err := exec.Command(testBinary, args...).Output()
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if !inPage[string(out)] {
			t.Errorf("agentknock %s prints a help text that the man page does not carry:\n%s", strings.Join(args, " "), out)
		}
	}
}

// --version and -V print one line, `agentknock VERSION`, which scripts
// compare whole (the reference's form); --verbose adds the platform and
// the signal state.
func TestVersionFirstLine(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-V"}, {"--verbose", "--version"}, {"-V", "--verbose"}} {
		out, err := exec.Command(testBinary, args...).Output()
		first, rest, _ := strings.Cut(string(out), "\n")
		// The test binary is not stamped: it reports "dev" or, built in a
		// git checkout, the version go build derives from the commit.
		v, ok := strings.CutPrefix(first, "agentknock ")
		verbose := slices.Contains(args, "--verbose")
		if err != nil || !ok || v == "" || strings.ContainsAny(v, " \t") ||
			(verbose && !strings.Contains(rest, "signal state: exact")) || (!verbose && rest != "") {
			t.Errorf("%q: %v %q", args, err, out)
		}
	}
}

// The pairing options in the completion table are those the pairing parser
// knows: an unknown one fails before the subcommand is looked at.
func TestCompletionPairingOptionsAreKnown(t *testing.T) {
	for _, c := range completionCommands {
		if !strings.HasPrefix(c.path, "pairing ") {
			continue
		}
		for _, o := range c.options {
			if o.names[len(o.names)-1] == "--help" || isGlobal(o) {
				continue
			}
			args := []string{"pairing", "no-such-subcommand", o.names[0]}
			for range o.operands {
				args = append(args, "x")
			}
			out, _ := exec.Command(testBinary, args...).CombinedOutput()
			if !strings.Contains(string(out), `unknown pairing command "no-such-subcommand"`) {
				t.Errorf("%q: %s", args, out)
			}
		}
	}
	out, _ := exec.Command(testBinary, "pairing", "status", "--no-such-option").CombinedOutput()
	if !strings.Contains(string(out), "not defined") {
		t.Errorf("the pairing parser accepted an unknown option: %s", out)
	}
}

func TestCompletionCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, err := exec.Command(testBinary, "completion", shell).Output()
		if err != nil || !strings.Contains(string(out), "completion for agentknock") {
			t.Errorf("completion %s: %v %.80q", shell, err, out)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		out, err := exec.Command(testBinary, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), "error: ") {
			t.Errorf("%q: %v %q", args, err, out)
		}
	}
	// In the implicit run form, "completion" after "--" is the command to
	// run: the parser takes it as such.
	o, err := parseRunArgs([]string{"-s", "x", "--", "completion", "bash"})
	if err != nil || strings.Join(o.Command, " ") != "completion bash" {
		t.Errorf("-s x -- completion bash: %v %+v", err, o)
	}
}
