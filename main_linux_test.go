// Command-line tests: every usage error exits 2 with its message, and
// valid routing reaches the request.

package main

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRunArgumentErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-s", "a", "ls"}, "put the command after `--`"},
		{[]string{"-s", "a"}, "the command is missing"},
		{[]string{"-s", "a", "--"}, "the command is missing after `--`"},
		{[]string{"--", "ls"}, "at least one secret is required"},
		{[]string{"-s", "a", "-s", "a", "--", "ls"}, `secret "a" was specified more than once`},
		{[]string{"-s", "a,b", "--", "ls"}, `secret name "a,b" contains a comma`},
		{[]string{"-s", "", "--", "ls"}, "a secret name cannot be empty"},
		{[]string{"-s", "a", "--reason", "", "--", "ls"}, "--reason needs a non-empty TEXT"},
		{[]string{"-s", "a", "--quiet", "--verbose", "--", "ls"}, "--quiet and --verbose cannot be used together"},
		{[]string{"-s", "a", "--bogus", "--", "ls"}, "unknown option --bogus"},
		{[]string{"-s", "a", "--only-env", "a", "1X", "--", "ls"}, `"1X" is not a portable environment variable name`},
		{[]string{"-s", "a", "--rename-env", "a", "X", "NEW-NAME", "--", "ls"}, `"NEW-NAME" is not a portable`},
		{[]string{"-s", "a", "--only-env", "a", "X", "--omit-env", "a", "Y", "--", "ls"}, "--only-env and --omit-env cannot be combined"},
		{[]string{"-s", "a", "--only-env", "a", "X", "--rename-env", "a", "Y", "Z", "--", "ls"}, "--rename-env Y is not among its --only-env variables"},
		{[]string{"-s", "a", "--only-env", "a", "X", "--stdin", "a", "Y", "--", "ls"}, "--stdin Y is not among its --only-env variables"},
		{[]string{"-s", "a", "--rename-env", "a", "X", "Z", "--stdin", "a", "X", "--", "ls"}, "cannot be both renamed and sent to standard input"},
		{[]string{"-s", "a", "--omit-env", "a", "X", "--rename-env", "a", "X", "Z", "--", "ls"}, "X is both renamed and omitted"},
		{[]string{"-s", "a", "--omit-env", "a", "X", "--stdin", "a", "X", "--", "ls"}, "X is both sent to standard input and omitted"},
		{[]string{"-s", "a", "-s", "b", "--stdin", "a", "X", "--stdin", "b", "Y", "--", "ls"}, "only one --stdin is allowed"},
		{[]string{"-s", "a", "--only-env", "b", "X", "--", "ls"}, `--only-env names secret "b", which is not selected with -s`},
		{[]string{"-s", "a", "--only-env", "a", "X", "--only-env", "a", "X", "--", "ls"}, "--only-env a X is given more than once"},
		{[]string{"-s", "a", "--rename-env", "a", "X", "Y", "--rename-env", "a", "X", "Z", "--", "ls"}, "is renamed more than once"},
		{[]string{"-s", "a", "--only-env", "a", "--", "ls"}, "--only-env needs SECRET VAR"},
		{[]string{"-s", "a", "--rename-env", "a", "X"}, "--rename-env needs SECRET VAR NEW_VAR"},
		{[]string{"-s", "a", "--only-env=a", "X", "--", "ls"}, "takes separate operands"},
	}
	for _, c := range cases {
		_, err := parseRunArgs(c.args)
		if _, ok := err.(*usageError); !ok || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

func TestRunArgumentsParse(t *testing.T) {
	o, err := parseRunArgs([]string{"-s", "gh", "--secret", "db", "--reason", "--only-env",
		"--only-env", "gh", "GH_TOKEN", "--rename-env", "db", "PASSWORD", "PGPASSWORD",
		"--stdin", "db", "TOKEN", "--omit-env", "db", "OTHER", "--no-ssh-agent", "--quiet",
		"--agentknock-home", "/tmp/h", "--", "psql", "--only-env", "-s", "--"})
	if err != nil {
		t.Fatal(err)
	}
	want := &runOptions{
		Secrets: []string{"gh", "db"},
		Routing: map[string]*environmentDelivery{
			"gh": {Only: []string{"GH_TOKEN"}},
			"db": {Rename: map[string]string{"PASSWORD": "PGPASSWORD"}, Stdin: "TOKEN", Omit: []string{"OTHER"}},
		},
		Reason: "--only-env", NoSSHAgent: true, Quiet: true, Home: "/tmp/h",
		Command: []string{"psql", "--only-env", "-s", "--"},
	}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("got %+v\nwant %+v", o, want)
	}
}

// The binary: usage errors exit 2 with `error: ...` and a pointer to --help,
// before anything else happens.
func TestUsageErrorsExitTwo(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-s", "a", "--", "echo", "\xff"}, "argument 5 is not valid UTF-8"},
		{[]string{"-s", "\xfe", "--", "echo"}, "argument 2 is not valid UTF-8"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "-s", "a,b", "--", "ls"}, "contains a comma"},
		{[]string{"-s", "a", "--stdin", "a", "X", "--stdin", "a", "Y", "--", "ls"}, "only one --stdin"},
	}
	for _, c := range cases {
		cmd := exec.Command(testBinary, c.args...)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), "error: ") ||
			!strings.Contains(string(out), c.want) || !strings.Contains(string(out), "--help") {
			t.Errorf("%q: %v %q", c.args, err, out)
		}
	}
	out, err := exec.Command(testBinary).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "Usage:") {
		t.Errorf("no arguments: %v %q", err, out)
	}
	out, err = exec.Command(testBinary, "--help").Output()
	if err != nil || !strings.Contains(string(out), "Examples:") || !strings.Contains(string(out), "--rename-env SECRET VAR NEW") {
		t.Errorf("--help: %v %q", err, out)
	}
}

func TestStateHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("AGENTKNOCK_HOME", "")
	if _, err := stateHome(""); err == nil {
		t.Error("an empty AGENTKNOCK_HOME was accepted")
	}
	t.Setenv("AGENTKNOCK_HOME", "relative/dir")
	if _, err := stateHome(""); err == nil {
		t.Error("a relative AGENTKNOCK_HOME was accepted")
	}
	t.Setenv("AGENTKNOCK_HOME", "/srv/ak")
	if h, _ := stateHome(""); h != "/srv/ak" {
		t.Errorf("AGENTKNOCK_HOME gave %q", h)
	}
	if h, _ := stateHome("/opt/flag"); h != "/opt/flag" {
		t.Errorf("--agentknock-home gave %q", h)
	}
	os.Unsetenv("AGENTKNOCK_HOME")
	if h, _ := stateHome(""); h != "/home/someone/.agentknock" {
		t.Errorf("default gave %q", h)
	}
}

// The built client's --help, --version and completion command, as users
// and packaging scripts run them: every help text that a command prints is
// one that the man page carries, and `completion` is a command only in the
// command position.

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
