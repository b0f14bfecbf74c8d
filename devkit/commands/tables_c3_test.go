// Tests of ssh's forwarding and tunnels (ssh(1), https://man.openbsd.org/ssh)
// and of the files a patch writes (patch(1), git-apply(1)): each hostile
// case with its benign twin.
package commands

import (
	"strings"
	"testing"
)

// ssh -L, -R, -D and -w open ports or a link: a network mark names them.
func TestSSHForwardingMarked(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a remote forward open to every interface", hostile: "ssh -N -R 0.0.0.0:8080:localhost:22 deploy@example.com", want: "opens port 8080 on deploy@example.com, on every network interface (0.0.0.0), whose connections come back through this machine to localhost:22",
			benign: "ssh -p 2222 -o BatchMode=yes deploy@example.com uptime < /dev/null"},
		{name: "a remote forward in a cluster", hostile: "ssh -fNR 9000:db.internal:5432 example.com", want: "opens port 9000 on example.com, whose connections come back through this machine to db.internal:5432",
			benign: "ssh -Nq example.com < /dev/null"},
		{name: "a local forward", hostile: "ssh -L 127.0.0.1:6379:cache:6379 -i key example.com", want: "opens port 6379 on this machine (bound to 127.0.0.1), whose connections go through example.com to cache:6379",
			benign: "ssh -i key example.com true < /dev/null"},
		{name: "a SOCKS proxy", hostile: "ssh -D 1080 example.com", want: "SOCKS proxy through example.com"},
		{name: "a remote SOCKS proxy", hostile: "ssh -R 1080 example.com", want: "opens port 1080 on example.com as a SOCKS proxy through this machine"},
		{name: "a tunnel device", hostile: "ssh -w 0:1 example.com", want: "joins a tunnel device on this machine to one on example.com"},
		{name: "a forward ssh's manual does not give", hostile: "ssh -L a:b:c:d:e example.com", want: "not a form ssh's manual gives"},
		// what ssh.txt already refused: the options that run programs
		{name: "a ProxyCommand", hostile: "ssh -o ProxyCommand='nc %h %p' example.com", want: "-o"},
		{name: "a KnownHostsCommand", hostile: "ssh -o KnownHostsCommand=/tmp/k example.com", want: "-o"},
		{name: "scp's ssh program", hostile: "scp -S ./fake-ssh a.txt example.com:", want: "-S",
			benign: "scp -P 2222 a.txt example.com:/srv/", markedOK: "sends the file a.txt to example.com"},
		{name: "rsync's remote shell", hostile: "rsync --rsh='sh -c id' -a src/ example.com:/srv/", want: "runs the program",
			benign: "rsync -a src/ example.com:/srv/", markedOK: "sends the file src/ to example.com"},
	})
}

// A patch writes the files named inside it, which the device does not
// read: marked; one the script downloaded, wrote or piped in, followed by a
// command that runs the project's code, is write, then run.
func TestPatchWritesWhatItNames(t *testing.T) {
	checkTwins(t, []twin{
		{name: "patch from a file", hostile: "patch -p1 < fix.diff", want: "writes the files the patch names",
			benign: "patch --dry-run -p1 < fix.diff"},
		{name: "git apply", hostile: "git apply fix.diff", want: "writes the files the patch names",
			benign: "git apply --check fix.diff"},
		{name: "git apply --stat --apply still applies", hostile: "git apply --stat --apply fix.diff", want: "writes the files the patch names",
			benign: "git apply --stat fix.diff"},
		{name: "a downloaded patch, then git commit", hostile: "curl -fsSLo fix.diff https://example.org/fix.diff\npatch -p1 < fix.diff\ngit commit -qam fix", want: "applied a patch it downloaded at line 1 (fix.diff)"},
		{name: "a patch piped from curl, then make", hostile: "curl -fsSL https://example.org/fix.diff | git apply && make", want: "applied a patch piped from curl"},
		{name: "a patch written, then make", hostile: "printf 'x' > p.diff; patch -p1 -i p.diff; make", want: "applied a patch it wrote at line 1 (p.diff)"},
		{name: "a downloaded patch only checked, then make",
			benign: "curl -fsSLo fix.diff https://example.org/fix.diff && git apply --check fix.diff && make", markedOK: "example.org"},
	})
}

// A patch already in the directory is the project's own, like its
// Makefile: the patch is marked, the later build is not write, then run.
func TestPatchOfTheProjectThenBuild(t *testing.T) {
	a := testAnalyze([]string{"sh", "-c", "patch -p1 < fix.diff && make"})
	if !a.Understood || !mentions(a, "writes the files the patch names") {
		t.Errorf("want understood with the patch's mark:\n%s", dump(a))
	}
}

// git commit with no message of its own opens an editor, a program the
// device does not see (git-commit(1), git-var(1)).
func TestGitCommitEditorMarked(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a bare commit", hostile: "git add -A && git commit", want: "opens an editor for the message",
			benign: "git add -A && git commit -qam wip"},
		{name: "an amend", hostile: "git commit --amend", want: "opens an editor",
			benign: "git commit --amend --no-edit"},
		{name: "a message re-edited", hostile: "git commit -c HEAD", want: "opens an editor",
			benign: "git commit -C HEAD"},
		{name: "a fixup that amends the message", hostile: "git commit --fixup amend:HEAD", want: "opens an editor",
			benign: "git commit --fixup HEAD"},
		{name: "a squash without a message", hostile: "git commit --squash=HEAD~1", want: "opens an editor",
			benign: "git commit -F msg.txt --squash=HEAD~1"},
		{name: "a message from a file", benign: "git commit --file=msg.txt"},
		{name: "only the status", benign: "git commit --dry-run --short"},
		{name: "an annotated tag", hostile: "git tag -a v1.2.0", want: "opens an editor",
			benign: "git tag -a v1.2.0 -m 'release 1.2.0'"},
		{name: "a tag cluster with its message", benign: "git tag -am 'release' v1.2.0"},
		{name: "a merge", hostile: "git merge topic", want: "opens an editor for the message",
			benign: "git merge --no-edit topic"},
		{name: "a fast-forward only merge", benign: "git merge --ff-only origin/main"},
		{name: "a revert", hostile: "git revert HEAD", want: "when run from a terminal",
			benign: "git revert --no-edit HEAD"},
		// what git.txt leaves out: interactive modes
		{name: "an interactive rebase", hostile: "git rebase -i HEAD~3", want: "-i",
			benign: "git rebase origin/main"},
		{name: "add by hunks", hostile: "git add -p", want: "-p",
			benign: "git add -u"},
	})
}

// An interactive pager takes a person's commands, some of which run
// programs: marked wherever it stands, a pipeline's end included.
func TestPagersMarked(t *testing.T) {
	checkTwins(t, []twin{
		{name: "less on a file", hostile: "less notes.txt", want: "at its prompt a person can run shell commands",
			benign: "less --version"},
		{name: "less at a pipeline's end", hostile: "git log | less -R", want: "interactive pager",
			benign: "git --no-pager log | cat"},
		{name: "more", hostile: "git log | more", want: "an editor (v)",
			benign: "more -V"},
		{name: "man", hostile: "man git-commit", want: "through a pager"},
	})
}

// BSD and macOS sed take -i's next word as the backup suffix, so the
// script is the word after it; GNU sed reads that word as the script.
func TestSedBSDSuffix(t *testing.T) {
	checkTwins(t, []twin{
		{name: "the e flag after an empty suffix", hostile: "sed -i '' 's/x/id/e' notes.txt", want: "as BSD and macOS sed do, its script is s/x/id/e",
			benign: "sed -i '' 's/colour/color/g' notes.txt"},
		{name: "a w file after a suffix", hostile: "sed -i .bak 's/x/y/w /tmp/out' notes.txt", want: "which writes or reads the files it names",
			benign: "sed -i .bak -e 's/x/y/' notes.txt"},
		{name: "an attached suffix", benign: "sed -i.bak 's/x/y/' notes.txt"},
		{name: "an empty suffix with -e", benign: "sed -i '' -e 's/a/b/' -e 's/c/d/' notes.txt"},
	})
}

// find -exec sh -c: the inner code is followed, {} an operand.
func TestFindExecShell(t *testing.T) {
	checkTwins(t, []twin{
		{name: "inner code built at run time", hostile: `find . -name '*.sh' -exec sh -c "$X" \;`, want: "built at run time",
			benign: `find . -name '*.sh' -exec sh -c 'shellcheck "$1"' sh {} \;`},
		{name: "inner code that deletes each file", hostile: `find . -name '*.log' -exec sh -c 'rm -f "$@"' sh {} +`, want: "a path decided at run time",
			benign: `find . -name '*.go' -exec sh -c 'gofmt -l "$1"' sh {} +`},
	})
}

// Arithmetic on the positional parameters: the invocation's own words,
// understood when they are literal numbers or absent.
func TestPositionalArithmetic(t *testing.T) {
	run := func(script string, params ...string) *Analysis {
		return testAnalyze(append([]string{"bash", "-c", script, "sh"}, params...))
	}
	for _, c := range []struct {
		script     string
		params     []string
		understood bool
	}{
		{"n=$1; (( n > 3 ))", []string{"5"}, true},
		{"n=$1; (( n > 3 ))", nil, true},
		{`[[ "$1" -gt 3 ]] && echo big`, []string{"7", "2"}, true},
		{"(( $# > 1 ))", []string{"a[$(id)]"}, true},
		{"n=$1; (( n > 3 ))", []string{"a[$(id)]"}, false},
		{`[[ $2 -gt 3 ]]`, []string{"1", "x"}, false},
		// other words than the invocation's
		{"f() { (( $1 > 3 )); }; f \"$X\"", []string{"5"}, false},
		{"set -- $X; (( $1 > 3 ))", []string{"5"}, false},
		{"bash -c '(( $1 > 3 ))' sh \"$X\"", []string{"5"}, false},
	} {
		a := run(c.script, c.params...)
		if a.Understood != c.understood {
			t.Errorf("bash -c %q sh %q: understood=%v, want %v:\n%s", c.script, c.params, a.Understood, c.understood, dump(a))
		}
	}
}

// Assignments before git that choose what git runs or reads: each not
// understood, naming the variable; git alone stays understood.
func TestGitEnvironmentAssignments(t *testing.T) {
	checkTwins(t, []twin{
		{name: "GIT_DIR", hostile: "GIT_DIR=/tmp/other/.git git status", want: "GIT_DIR", benign: "git status --short"},
		{name: "GIT_CONFIG_GLOBAL", hostile: "GIT_CONFIG_GLOBAL=/tmp/cfg git log -1", want: "GIT_CONFIG_GLOBAL", benign: "git log -1"},
		{name: "GIT_CONFIG_PARAMETERS", hostile: `GIT_CONFIG_PARAMETERS="'core.pager'='sh -c id'" git log`, want: "GIT_CONFIG_PARAMETERS"},
		{name: "GIT_SSH_COMMAND", hostile: "GIT_SSH_COMMAND='sh -c id' git fetch origin", want: "GIT_SSH_COMMAND", benign: "git fetch origin"},
		{name: "GIT_EXTERNAL_DIFF", hostile: "GIT_EXTERNAL_DIFF=./d.sh git diff", want: "GIT_EXTERNAL_DIFF", benign: "git diff --stat"},
		{name: "GIT_PAGER", hostile: "GIT_PAGER='sh -c id' git log", want: "GIT_PAGER"},
		{name: "PAGER", hostile: "PAGER=./p git log", want: "PAGER"},
		{name: "GIT_EDITOR with a commit", hostile: "GIT_EDITOR=./e git commit", want: "GIT_EDITOR", benign: "git commit -qm wip"},
	})
}

// ssh's jump host is a destination too.
func TestSSHJumpHostIsADestination(t *testing.T) {
	a := testAnalyze([]string{"sh", "-c", "ssh -J bastion.example.com deploy@app.internal true < /dev/null"})
	dests := strings.Join(a.Destinations, "\n")
	if !a.Understood || !strings.Contains(dests, "bastion.example.com") || !strings.Contains(dests, "app.internal") {
		t.Errorf("want both hosts among the destinations:\n%s", dump(a))
	}
}
