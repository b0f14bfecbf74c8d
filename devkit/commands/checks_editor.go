// The named check for a Git command that opens an editor: the editor is a
// program the device does not see (git-var(1), GIT_EDITOR: $GIT_EDITOR,
// else core.editor, else $VISUAL, else $EDITOR, else vi), chosen by the
// environment and the configuration, not by the command's words.
package commands

import (
	"slices"
	"strings"
)

// gitEditorShown is how the marks name the editor git picks.
const gitEditorShown = "an editor for the message ($GIT_EDITOR, core.editor, $VISUAL or $EDITOR, else vi: a program the device does not see)"

// checkGitCommitEditor: git commit opens an editor unless the message
// comes from -m, -F or -C, or --no-edit keeps it, or a plain --fixup
// builds it (git-commit(1), https://git-scm.com/docs/git-commit); -c
// (--reedit-message), --amend and --squash without a message open it.
// --dry-run and the status formats (--short, --porcelain, --long) commit
// nothing and open no editor.
func checkGitCommitEditor(in checkInput) checkResult {
	start := 0
	for i, a := range in.Argv {
		if a == "commit" {
			start = i + 1
			break
		}
	}
	args := in.Argv[start:]
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, eq := strings.Cut(a, "=")
		if name == "--fixup" && !eq && i+1 < len(args) {
			val = args[i+1]
		}
		switch name {
		case "--message", "--file", "--reuse-message", "--no-edit", "--dry-run", "--short", "--porcelain", "--long":
			return checkResult{}
		case "--fixup":
			if !strings.HasPrefix(val, "amend:") && !strings.HasPrefix(val, "reword:") {
				return checkResult{}
			}
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		// a cluster of one-letter options: the first that takes a value
		// takes the rest of the word
		if i := strings.IndexAny(a[1:], "mFCc"); i >= 0 && a[1+i] != 'c' {
			return checkResult{}
		}
	}
	return checkResult{Runs: true, Mark: "opens " + gitEditorShown}
}

// checkPager: an interactive pager takes commands from the person at its
// prompt, some of which run programs (less(1): "!" and "|" run shell
// commands, "v" the editor; more(1): "!" and "v"); less also runs the
// input preprocessor $LESSOPEN names on each file operand, unless -L. The
// device cannot tell whether the invocation's output is a terminal (an
// agent's tool may give it one), so a pager anywhere in a script, a
// pipeline's end included, is marked as able to run what a person types.
// Asked only for its version it pages nothing.
func checkPager(what string) func(checkInput) checkResult {
	return func(in checkInput) checkResult {
		if len(in.Argv) == 2 && (in.Argv[1] == "-V" || in.Argv[1] == "--version") {
			return checkResult{}
		}
		return checkResult{Runs: true, Mark: what}
	}
}

// checkOutputPager: a program that pages its output only when that
// output is a terminal (dpkg -l): marked as a pager (checkPager) unless
// its output goes to a pipe, a file or a substitution, or an option that
// turns the pager off is given.
func checkOutputPager(what string, off ...string) func(checkInput) checkResult {
	return func(in checkInput) checkResult {
		if in.OutAway || slices.ContainsFunc(in.Argv, func(a string) bool { return slices.Contains(off, a) }) {
			return checkResult{}
		}
		return checkResult{Runs: true, Mark: what}
	}
}

// checkBatPager: bat pages its output through less (or $BAT_PAGER,
// $PAGER, its configuration's --pager) when the output is a terminal, and
// a pager runs what a person types (checkPager); --paging=never, its alias
// -P, or -p given twice (-pp) turn the pager off, and the last of these
// and --paging=auto/always wins (bat --help).
func checkBatPager(in checkInput) checkResult {
	paging, plain := true, 0
	for i := 1; i < len(in.Argv); i++ {
		a := in.Argv[i]
		switch {
		case a == "--":
			i = len(in.Argv)
		case a == "--paging" && i+1 < len(in.Argv):
			paging = in.Argv[i+1] != "never"
			i++
		case strings.HasPrefix(a, "--paging="):
			paging = a != "--paging=never"
		case a == "--plain":
			plain++
		case strings.HasPrefix(a, "--"):
			if batValueOptions[a] {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			for _, c := range a[1:] {
				if c == 'P' {
					paging = false
				}
				if c == 'p' {
					plain++
				}
				if strings.ContainsRune("lHmr", c) {
					break // the rest of the word is its value
				}
			}
		}
	}
	if !paging || plain >= 2 || len(in.Argv) == 2 && (in.Argv[1] == "-V" || in.Argv[1] == "--version") {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: "shows its output through a pager (less, or $BAT_PAGER or $PAGER) when the output is a terminal, where a person can run shell commands; --paging=never (-P) turns it off"}
}

// batValueOptions are bat's long options whose value may be the next word.
var batValueOptions = map[string]bool{"--language": true, "--highlight-line": true, "--file-name": true, "--diff-context": true, "--tabs": true,
	"--wrap": true, "--terminal-width": true, "--color": true, "--italic-text": true, "--decorations": true, "--map-syntax": true,
	"--ignored-suffix": true, "--theme": true, "--style": true, "--line-range": true}

// gitEditorRule is when a Git subcommand other than commit opens the
// message editor (from its manual): by default, or when an option asks;
// never with one of the quiet options. valueLetters are its one-letter
// options that take the rest of a cluster as their value.
type gitEditorRule struct {
	sub          string
	byDefault    bool
	when         string // how the manual qualifies the default
	opens, quiet []string
	valueLetters string
}

// checkGitEditor applies a gitEditorRule to the command's argv.
func checkGitEditor(r gitEditorRule) func(checkInput) checkResult {
	return func(in checkInput) checkResult {
		start := 0
		for i, a := range in.Argv {
			if a == r.sub {
				start = i + 1
				break
			}
		}
		opens := r.byDefault
		for _, a := range in.Argv[start:] {
			if a == "--" {
				break
			}
			name, _, _ := strings.Cut(a, "=")
			var spellings []string
			switch {
			case strings.HasPrefix(a, "--"):
				spellings = []string{name}
			case len(a) > 1 && a[0] == '-':
				for _, c := range a[1:] {
					spellings = append(spellings, "-"+string(c))
					if strings.ContainsRune(r.valueLetters, c) {
						break
					}
				}
			}
			for _, s := range spellings {
				if slices.Contains(r.quiet, s) {
					return checkResult{}
				}
				if slices.Contains(r.opens, s) {
					opens = true
				}
			}
		}
		if !opens {
			return checkResult{}
		}
		return checkResult{Runs: true, Mark: "opens " + gitEditorShown + r.when}
	}
}

// The rules, from git-tag(1), git-merge(1) and git-revert(1)
// (https://git-scm.com/docs): an annotated tag without -m or -F opens the
// editor; merge and revert open it by default when run from a terminal,
// which the device cannot tell.
var (
	gitTagEditor = gitEditorRule{sub: "tag", opens: []string{"-a", "--annotate"},
		quiet: []string{"-m", "--message", "-F", "--file", "-l", "--list", "-d", "--delete", "-v", "--verify"}, valueLetters: "mFn"}
	gitMergeEditor = gitEditorRule{sub: "merge", byDefault: true, when: ", when run from a terminal",
		quiet: []string{"--no-edit", "--ff-only", "--squash", "--no-commit", "--abort", "--quit"}, valueLetters: "mFXs"}
	gitRevertEditor = gitEditorRule{sub: "revert", byDefault: true, when: ", when run from a terminal",
		quiet: []string{"--no-edit", "-n", "--no-commit", "--abort", "--quit", "--skip"}, valueLetters: "m"}
)
