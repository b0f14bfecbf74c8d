// Shell completion: the table agrees with the parsers and the help texts,
// and the generated scripts complete in real bash and fish and parse in zsh.
// Also the package documentation that `go doc .` and pkg.go.dev show.

package main

import (
	"flag"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

func completionEntry(t *testing.T, path string) completionCommand {
	for _, c := range completionCommands {
		if c.path == path {
			return c
		}
	}
	t.Fatalf("no completion entry %q", path)
	return completionCommand{}
}

func isGlobal(o completionOption) bool {
	return slices.ContainsFunc(globalCompletionOptions, func(g completionOption) bool { return slices.Equal(g.names, o.names) })
}

// bareNames are the option names without dashes, global options left out.
func bareNames(opts []completionOption) []string {
	var names []string
	for _, o := range opts {
		if isGlobal(o) {
			continue
		}
		for _, n := range o.names {
			names = append(names, strings.TrimLeft(n, "-"))
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// The run options in the table are exactly those of the run parser, and an
// option's operand count is the parser's.
func TestCompletionRunOptionsAreTheParsers(t *testing.T) {
	var routes [][]string
	fs := newRunFlagSet(&runOptions{}, &routes)
	var parser []string
	fs.VisitAll(func(f *flag.Flag) { parser = append(parser, f.Name) })
	parser = append(parser, "h", "help") // the flag package's own
	sort.Strings(parser)
	for _, path := range []string{"", "run"} {
		c := completionEntry(t, path)
		got := bareNames(c.options)
		if path == "" {
			got = slices.DeleteFunc(got, func(n string) bool { return n == "V" || n == "version" })
		}
		if !slices.Equal(got, parser) {
			t.Errorf("%q: completion options %q, parser %q", path, got, parser)
		}
		for _, o := range c.options {
			if isGlobal(o) {
				continue
			}
			name := strings.TrimLeft(o.names[0], "-")
			want := 0
			if n, ok := routingArity[name]; ok {
				want = n
			} else if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					want = 1
				}
			}
			if len(o.operands) != want {
				t.Errorf("%q %s: %d operands in the table, the parser takes %d", path, name, len(o.operands), want)
			}
		}
	}
}

// Every option that the table gives for secret list and secret upload is
// one their parsers know, with the same number of operands.
func TestCompletionSecretOptionsAreKnown(t *testing.T) {
	parsers := map[string]func([]string) error{
		"secret list":   func(a []string) error { _, err := parseSecretListArgs(a); return err },
		"secret upload": func(a []string) error { _, err := parseSecretUploadArgs(a); return err },
	}
	for path, parse := range parsers {
		for _, o := range completionEntry(t, path).options {
			if o.names[len(o.names)-1] == "--help" || isGlobal(o) {
				continue // flag.ErrHelp, which the command turns into its help text
			}
			for _, n := range o.names {
				args := []string{n}
				for range o.operands {
					args = append(args, "x=y")
				}
				err := parse(append(args, "--no-such-option"))
				if err == nil || !strings.Contains(err.Error(), "not defined: -no-such-option") {
					t.Errorf("%s %q: %v (want the parser to reach the unknown option after it)", path, args, err)
				}
			}
		}
	}
}

// The global options of the table are those that extractGlobalOptions
// takes out, with their operands, and every other option's operand count
// is the one globals.go steps over.
func TestCompletionGlobalOptions(t *testing.T) {
	for _, o := range globalCompletionOptions {
		args := []string{o.names[0]}
		for range o.operands {
			args = append(args, "/x")
		}
		if _, rest, err := extractGlobalOptions(append(args, "pairing")); err != nil || !slices.Equal(rest, []string{"pairing"}) {
			t.Errorf("%q is not a global option: %q %v", args, rest, err)
		}
	}
	for _, c := range completionCommands {
		for _, g := range globalCompletionOptions {
			if !slices.ContainsFunc(c.options, func(o completionOption) bool { return slices.Equal(o.names, g.names) }) {
				t.Errorf("%q lacks global option %q", c.path, g.names)
			}
		}
		for _, o := range c.options {
			if isGlobal(o) {
				continue
			}
			for _, n := range o.names {
				if got := optionOperands[strings.TrimLeft(n, "-")]; got != len(o.operands) {
					t.Errorf("%q %s: %d operands in the table, %d in optionOperands", c.path, n, len(o.operands), got)
				}
			}
		}
	}
}

var longOption = regexp.MustCompile(`(?:^|[\s\[("|])(--[a-z][a-z-]*[a-z])`)

// Every long option a help text mentions is in the table, and every table
// option is documented in some help text (hence in the man page).
func TestCompletionTableMatchesHelp(t *testing.T) {
	all := map[string]bool{}
	for _, c := range completionCommands {
		for _, o := range c.options {
			for _, n := range o.names {
				all[n] = true
			}
		}
	}
	var help strings.Builder
	for _, s := range manSections() {
		help.WriteString(s.text)
		for _, m := range longOption.FindAllStringSubmatch(s.text, -1) {
			if !all[m[1]] {
				t.Errorf("help mentions %s, which the completion table lacks", m[1])
			}
		}
	}
	for _, c := range completionCommands {
		for _, o := range c.options {
			documented := false
			for _, n := range o.names {
				documented = documented || regexp.MustCompile(`(^|[\s\[(|"])`+regexp.QuoteMeta(n)+`\b`).MatchString(help.String())
			}
			if !documented {
				t.Errorf("%q: no help text mentions %q", c.path, o.names)
			}
		}
	}
}

func writeCompletionFile(t *testing.T, shell string) string {
	t.Helper()
	var b strings.Builder
	var err error
	switch shell {
	case "bash":
		err = writeBashCompletion(&b)
	case "zsh":
		err = writeZshCompletion(&b)
	case "fish":
		err = writeFishCompletion(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agentknock."+shell)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// completionFixture is a directory with a file, a subdirectory and nothing
// else, so that file and directory completions have known answers.
func completionFixture(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id_ed25519"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bashComplete runs the completion function the way bash's programmable
// completion does, on COMP_WORDS as bash splits them (at '=' too).
func bashComplete(t *testing.T, script, dir string, words []string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
		"COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_agentknock\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_VAR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash %q: %v\n%s", words, err, out)
	}
	got := strings.Fields(string(out))
	sort.Strings(got)
	return got
}

func TestBashCompletion(t *testing.T) {
	needProgram(t, "bash", "bash")
	script := writeCompletionFile(t, "bash")
	dir := completionFixture(t)
	cases := []struct {
		words []string
		want  []string // nil: exactly no candidates
		some  bool     // want is a subset of the candidates
	}{
		{[]string{"agentknock", "pai"}, []string{"pairing"}, false},
		{[]string{"agentknock", ""}, []string{"completion", "pairing", "run", "secret"}, false},
		{[]string{"agentknock", "pairing", "st"}, []string{"start", "status"}, false},
		{[]string{"agentknock", "pairing", "remove", "--f"}, []string{"--force"}, false},
		{[]string{"agentknock", "secret", "upload", "x", "--from-e"}, []string{"--from-env", "--from-env-file"}, false},
		{[]string{"agentknock", "completion", "z"}, []string{"zsh"}, false},
		{[]string{"agentknock", "--no-ssh-p"}, []string{"--no-ssh-passthrough"}, false},
		{[]string{"agentknock", "run", "--ver"}, []string{"--verbose"}, false},
		// Option operands by kind: a directory, a file, NAME=PATH, a variable.
		{[]string{"agentknock", "--agentknock-home", ""}, []string{"keys"}, false},
		{[]string{"agentknock", "--agentknock-home", "="}, []string{"=keys"}, false},
		{[]string{"agentknock", "--agentknock-home", "=", "k"}, []string{"keys"}, false},
		{[]string{"agentknock", "secret", "upload", "x", "--from-ssh-key", "id"}, []string{"id_ed25519"}, false},
		{[]string{"agentknock", "secret", "upload", "x", "--from-file", "TOKEN", "=", "i"}, []string{"id_ed25519"}, false},
		{[]string{"agentknock", "secret", "upload", "x", "--from-file", "TOK"}, nil, false},
		{[]string{"agentknock", "secret", "upload", "x", "--from-env", "AGENTKNOCK_TEST_V"}, []string{"AGENTKNOCK_TEST_VAR"}, false},
		// Operands that are not files complete to nothing, however many.
		{[]string{"agentknock", "-s", ""}, nil, false},
		{[]string{"agentknock", "-s", "a", "--rename-env", "a", "X", ""}, nil, false},
		// ... and the word after them is an option again.
		{[]string{"agentknock", "-s", "a", "--rename-env", "a", "X", "Y", "--rea"}, []string{"--reason"}, false},
		// After "--": the command, then whatever it takes.
		{[]string{"agentknock", "-s", "a", "--", "agentknock-no-such-comman"}, nil, false},
		{[]string{"agentknock", "-s", "a", "--", "bas"}, []string{"bash"}, true},
		// A subcommand name after "--" is the command's argument.
		{[]string{"agentknock", "-s", "a", "--", "x", "pairing", "st"}, nil, false},
	}
	for _, c := range cases {
		got := bashComplete(t, script, dir, c.words)
		ok := slices.Equal(got, c.want)
		if c.some {
			ok = !slices.ContainsFunc(c.want, func(w string) bool { return !slices.Contains(got, w) })
		}
		if !ok {
			t.Errorf("%q: completed %q, want %q", c.words, got, c.want)
		}
	}
}

func TestFishCompletion(t *testing.T) {
	needProgram(t, "fish", "fish")
	script := writeCompletionFile(t, "fish")
	if out, err := exec.Command("fish", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("fish -n: %v\n%s", err, out)
	}
	dir := completionFixture(t)
	cases := []struct {
		line string
		want []string
	}{
		{"agentknock pai", []string{"pairing"}},
		{"agentknock pairing st", []string{"start", "status"}},
		{"agentknock secret upload x --from-ssh-key id", []string{"id_ed25519"}},
		{"agentknock --agentknock-home k", []string{"keys/"}},
		{"agentknock secret upload x --from-file TOKEN=i", []string{"TOKEN=id_ed25519"}},
		{"agentknock -s a --rename-env a X ", nil},
		{"agentknock completion ", []string{"bash", "fish", "zsh"}},
	}
	for _, c := range cases {
		cmd := exec.Command("fish", "--no-config", "-c", "source "+script+"; complete -C '"+c.line+"'")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish %q: %v\n%s", c.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: completed %q, want %q", c.line, got, c.want)
		}
	}
}

// zshStubs stand in for zsh's completion builtins and functions, which exist
// only inside the completion system: each prints what it was asked to do.
const zshStubs = `compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
_files() { print -- "FILES $*" }
_normal() { print -- "NORMAL ${words[*]} $CURRENT" }
_message() { print -- "MESSAGE $*" }
_parameters() { print -- "PARAMETERS $*" }
compset() { [[ $1 == -P && $PREFIX == *=* ]] && { PREFIX=${PREFIX#*=}; return 0 }; return 1 }
compdef() { : }
`

func TestZshCompletion(t *testing.T) {
	needProgram(t, "zsh", "zsh")
	script := writeCompletionFile(t, "zsh")
	if out, err := exec.Command("zsh", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	cases := []struct {
		words []string
		want  string // what the completion asked for, one request per line
	}{
		{[]string{"agentknock", "pai"}, "run pairing secret completion"},
		{[]string{"agentknock", "pairing", "st"}, "start finish abort status remove"},
		{[]string{"agentknock", "completion", ""}, "bash zsh fish"},
		{[]string{"agentknock", "secret", "upload", "x", "--from-ssh-key", "i"}, "FILES"},
		{[]string{"agentknock", "--agentknock-home=/t"}, "FILES -/"},
		{[]string{"agentknock", "secret", "upload", "x", "--from-file", "TOKEN=i"}, "FILES"},
		{[]string{"agentknock", "secret", "upload", "x", "--from-env", ""}, "PARAMETERS -g *export*"},
		{[]string{"agentknock", "-s", "a", "--rename-env", "a", "X", ""}, "MESSAGE value"},
		{[]string{"agentknock", "-s", "a", "--", "git", "com"}, "NORMAL git com 2"},
		{[]string{"agentknock", "secret", "list", "--q"}, "-h --help --agentknock-home --quiet --verbose"},
	}
	for _, c := range cases {
		prog := zshStubs + "source " + script + "\nwords=(\"$@\")\nCURRENT=$#words\nPREFIX=${words[CURRENT]}\n_agentknock\n"
		out, err := exec.Command("zsh", append([]string{"-f", "-c", prog, "zsh"}, c.words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("zsh %q: %v\n%s", c.words, err, out)
		}
		if got := strings.Join(strings.Fields(string(out)), " "); got != c.want {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
	if out, err := exec.Command("bash", "-n", writeCompletionFile(t, "bash")).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}

// Global options (globals.go) wherever they stand before `--`.

// Follows the reference's agentknock_home_is_global_and_stops_at_the_command_separator.
func TestGlobalOptionsAnywhereBeforeTheCommand(t *testing.T) {
	cases := []struct {
		args []string
		want globalOptions
		rest []string
	}{
		{[]string{"--agentknock-home", "h", "pairing", "status"}, globalOptions{Home: "h"}, []string{"pairing", "status"}},
		{[]string{"pairing", "status", "--agentknock-home", "h"}, globalOptions{Home: "h"}, []string{"pairing", "status"}},
		{[]string{"secret", "--agentknock-home=h", "list", "--quiet"}, globalOptions{Home: "h", Quiet: true}, []string{"secret", "list"}},
		{[]string{"--quiet", "run", "-s", "x", "--", "true"}, globalOptions{Quiet: true}, []string{"run", "-s", "x", "--", "true"}},
		{[]string{"-s", "x", "--verbose", "--", "tool", "--agentknock-home", "child", "--quiet"}, globalOptions{Verbose: true},
			[]string{"-s", "x", "--", "tool", "--agentknock-home", "child", "--quiet"}},
		// Operands of other options are not taken for global options.
		{[]string{"-s", "x", "--reason", "--quiet", "--rename-env", "x", "--verbose", "B", "--", "t"}, globalOptions{},
			[]string{"-s", "x", "--reason", "--quiet", "--rename-env", "x", "--verbose", "B", "--", "t"}},
		{[]string{"secret", "upload", "n", "--description", "--agentknock-home", "--from-env", "A"}, globalOptions{},
			[]string{"secret", "upload", "n", "--description", "--agentknock-home", "--from-env", "A"}},
	}
	for _, c := range cases {
		g, rest, err := extractGlobalOptions(c.args)
		if err != nil || g != c.want || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("%q: %+v %q %v, want %+v %q", c.args, g, rest, err, c.want, c.rest)
		}
	}
	for _, bad := range [][]string{
		{"--agentknock-home", "", "pairing", "status"},
		{"--agentknock-home=", "pairing", "status"},
		{"pairing", "status", "--agentknock-home"},
		{"--agentknock-home", "a", "pairing", "status", "--agentknock-home", "b"},
		{"--quiet", "pairing", "status", "--verbose"},
		{"--quiet=yes", "pairing", "status"},
	} {
		if _, _, err := extractGlobalOptions(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// The man page says what --help says: the roff, stripped of its markup, has
// the words of every help text in order and nothing else.

// manWords strips the roff that writeManPage produces back to words:
// requests (section and list macros) go, font changes and escapes become
// the characters they stand for.
func manWords(roff string) []string {
	var words []string
	for _, l := range strings.Split(roff, "\n") {
		if strings.HasPrefix(l, ".") {
			continue
		}
		l = strings.NewReplacer(`\fB`, "", `\fI`, "", `\fR`, "", `\&`, "", `\-`, "-", `\e`, `\`).Replace(l)
		words = append(words, strings.Fields(l)...)
	}
	return words
}

// helpWords are the words the man page must carry: every help text without
// its headings (the man page sets those as section titles), and the main
// text's first line as the NAME line.
func helpWords(t *testing.T) []string {
	var words []string
	for i, s := range manSections() {
		lines := strings.Split(s.text, "\n")
		if i == 0 {
			name, summary, ok := strings.Cut(lines[0], ": ")
			if !ok {
				t.Fatalf("the first help line %q is not NAME: SUMMARY", lines[0])
			}
			words = append(words, name, "-")
			words = append(words, strings.Fields(strings.TrimSuffix(summary, "."))...)
			lines = lines[1:]
		}
		for j, l := range lines {
			heading := strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") &&
				(j == 0 || strings.TrimSpace(lines[j-1]) == "") &&
				j+1 < len(lines) && strings.HasPrefix(lines[j+1], "  ")
			if !heading {
				words = append(words, strings.Fields(l)...)
			}
		}
	}
	return words
}

func TestManPageSaysWhatHelpSays(t *testing.T) {
	var b strings.Builder
	if err := writeManPage(&b, "1.2.3", "2026-01-02"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, `.TH AGENTKNOCK 1 "2026-01-02" "agentknock 1.2.3" "User Commands"`+"\n") {
		t.Errorf("title line: %q", strings.SplitN(page, "\n", 2)[0])
	}
	for _, want := range []string{".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH \"AGENTKNOCK SECRET UPLOAD\"\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	got, want := manWords(page), helpWords(t)
	for i := 0; i < len(got) || i < len(want); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			lo := max(0, i-8)
			t.Fatalf("man page and help differ at word %d:\n man: %q\nhelp: %q",
				i, got[lo:min(len(got), i+8)], want[lo:min(len(want), i+8)])
		}
	}
}

// Options must appear in a list as bold terms, and a line of help text that
// starts with '.' must not turn into a roff request.
func TestManPageMarkup(t *testing.T) {
	var b strings.Builder
	if err := writeManPage(&b, "1", ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TP\n\\fB\\-\\-rename\\-env\\fR \\fISECRET\\fR \\fIVAR\\fR \\fINEW\\fR\n",
		".TP\n\\fB\\-\\-from\\-file\\fR \\fINAME=PATH\\fR\n",
		".nf\n{\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if got := roffEscape(`.env and 'x' \n -`); got != `\&.env and 'x' \en \-` {
		t.Errorf("roffEscape: %q", got)
	}
	// A help text whose lines do not line up in two columns stays verbatim.
	var v strings.Builder
	renderIndented(&v, []string{"  a  b", "   c"})
	if !strings.Contains(v.String(), ".nf\n") {
		t.Errorf("misaligned list rendered as %q", v.String())
	}
}

func TestManDateFromSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767312000")
	if d := manDate(); d != "2026-01-02" {
		t.Errorf("SOURCE_DATE_EPOCH=1767312000 gave %q", d)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	if d := manDate(); d != "" {
		t.Errorf("no SOURCE_DATE_EPOCH gave %q", d)
	}
}

// The stamped version wins over the one the module system records.

func TestClientVersion(t *testing.T) {
	saved := version
	defer func() { version = saved }()
	version = "1.2.3"
	if v := clientVersion(); v != "1.2.3" {
		t.Errorf("stamped 1.2.3, reported %q", v)
	}
	version = "dev"
	// A test binary records no module version: "dev" stays.
	if v := clientVersion(); v != "dev" {
		t.Errorf("unstamped test binary reported %q", v)
	}
}

// The release configuration agrees with itself: every build file names the
// Go release that go.mod's `go` line pins (scripts/pinned-go), and the
// completion help names each directory the packages install a completion
// into (.goreleaser.yaml), for each package format.

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildFilesNameThePinnedToolchain(t *testing.T) {
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+\.\d+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod's go line names no exact release (go X.Y.Z): nothing keeps an older Go from building")
	}
	want := "GOTOOLCHAIN=go" + m[1]
	for _, f := range []string{".goreleaser.yaml", ".ko.yaml"} {
		got := regexp.MustCompile(`GOTOOLCHAIN=\S+`).FindAllString(readRepoFile(t, f), -1)
		if len(got) == 0 {
			t.Errorf("%s sets no GOTOOLCHAIN", f)
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%s says %s, go.mod %s", f, g, want)
			}
		}
	}
}

func TestCompletionHelpNamesThePackagesPaths(t *testing.T) {
	dsts := regexp.MustCompile(`(?m)^\s+dst: (/usr/share/\S*(?:completion|zsh|fish)\S*)$`).FindAllStringSubmatch(readRepoFile(t, ".goreleaser.yaml"), -1)
	if len(dsts) < 3 {
		t.Fatalf(".goreleaser.yaml installs %d completions", len(dsts))
	}
	help := strings.Join(strings.Fields(completionUsageText), " ")
	for _, d := range dsts {
		if !strings.Contains(help, d[1]) {
			t.Errorf("the packages install %s; agentknock completion --help does not say so", d[1])
		}
	}
}

// main.go's first comment is the package documentation only when nothing
// separates it from the package clause: a blank line between them leaves
// `go doc .` and `go list -f '{{.Doc}}' .` empty.
func TestPackageDocumentation(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Command agentknock ") {
		t.Fatalf("main.go has no package documentation starting \"Command agentknock\" (is there a blank line before `package main`?)")
	}
}

// Under `set -o pipefail` a pipeline whose reader stops early fails at
// random: `rpm -qpl PKG | grep -q X` is 141 whenever rpm writes again after
// grep has matched and gone (SIGPIPE), which once failed .ci/run on a package
// that was right. The scripts read such output from a here-string or let the
// reader read to the end (awk 'NR <= N') instead.
func TestScriptsHaveNoEarlyExitingReaderUnderPipefail(t *testing.T) {
	files, err := filepath.Glob("scripts/*")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, ".ci/run")
	early := regexp.MustCompile(`\|\s*(grep\s+(-[a-zA-Z]*q|--quiet)|head\b|sed\s+-?[0-9]*q)`)
	checked := 0
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		text := readRepoFile(t, f)
		if !strings.Contains(text, "pipefail") {
			continue
		}
		checked++
		for i, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.Contains(line, "|| true") {
				continue
			}
			if m := early.FindString(line); m != "" {
				t.Errorf("%s:%d: %q stops reading early under pipefail: %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d scripts set pipefail: the glob found the wrong files", checked)
	}
}
