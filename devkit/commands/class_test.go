// Tests of the class (Step 21): irreversible when any command's form is;
// read-only only by the agent gate's rules (every command a read-only
// form, no sensitive path, a system executable with this host's hash, no
// computed value in a script, nothing marked, no network client sending a
// secret unless the secret is for it); otherwise other, and a script not
// understood is "possibly irreversible". And a benchmark of its cost.
package commands

import (
	"crypto/sha256"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func classOf(argv []string) *Analysis {
	r := testRequest(argv)
	r.Secrets = []Secret{{Name: "gh", Env: "GH_TOKEN"}}
	return testAnalyzer.Analyze(r)
}

func TestClassGit(t *testing.T) {
	cases := []struct {
		argv []string
		want Class
		why  string
	}{
		{[]string{"git", "status"}, ClassReadOnly, "read-only: git status, executable /usr/bin/git"},
		{[]string{"git", "log", "-n", "5"}, ClassReadOnly, "read-only: git log"},
		{[]string{"git", "log", "-1", "--oneline"}, ClassReadOnly, "read-only: git log"},
		{[]string{"git", "diff", "--stat", "HEAD~1"}, ClassReadOnly, "read-only: git diff"},
		{[]string{"git", "show", "HEAD"}, ClassReadOnly, "read-only: git show"},
		{[]string{"git", "branch"}, ClassReadOnly, "read-only: git branch"},
		{[]string{"git", "branch", "-a"}, ClassReadOnly, "read-only: git branch -a"},
		{[]string{"git", "tag", "-l", "v*"}, ClassReadOnly, "read-only: git tag -l"},
		{[]string{"git", "remote", "-v"}, ClassReadOnly, "read-only: git remote -v"},
		{[]string{"git", "rev-parse", "--show-toplevel"}, ClassReadOnly, "read-only: git rev-parse"},
		{[]string{"git", "ls-files"}, ClassReadOnly, "read-only: git ls-files"},
		{[]string{"git", "blame", "main.go"}, ClassReadOnly, "read-only: git blame"},
		{[]string{"git", "describe", "--tags"}, ClassReadOnly, "read-only: git describe"},
		{[]string{"git", "config", "--get", "user.name"}, ClassReadOnly, "read-only: git config --get"},
		{[]string{"git", "config", "--list"}, ClassReadOnly, "read-only: git config --list"},
		{[]string{"git", "shortlog", "-sn"}, ClassReadOnly, "read-only: git shortlog"},
		{[]string{"git", "reflog"}, ClassReadOnly, "read-only: git reflog"},
		{[]string{"git", "grep", "-n", "TODO"}, ClassReadOnly, "read-only: git grep"},
		{[]string{"git", "--version"}, ClassReadOnly, "read-only: git --version"},
		{[]string{"git", "-C", "sub", "status"}, ClassReadOnly, "read-only: git status"},
		// Twins that change something.
		{[]string{"git", "branch", "feature"}, ClassOther, ""},
		{[]string{"git", "tag", "v1"}, ClassOther, ""},
		{[]string{"git", "config", "user.name", "x"}, ClassOther, ""},
		{[]string{"git", "push", "origin", "main"}, ClassOther, ""},
		{[]string{"git", "commit", "-m", "x"}, ClassOther, ""},
		{[]string{"git", "diff", "--output=/tmp/x"}, ClassOther, ""},
		// Irreversible, in every spelling.
		{[]string{"git", "push", "--force", "origin", "main"}, ClassIrreversible, "irreversible: git push --force"},
		{[]string{"git", "push", "-f", "origin", "main"}, ClassIrreversible, "irreversible: git push -f"},
		{[]string{"git", "push", "-uf", "origin", "main"}, ClassIrreversible, "irreversible: git push -f"},
		{[]string{"git", "push", "--force-with-lease", "origin", "main"}, ClassIrreversible, "irreversible: git push --force-with-lease"},
		{[]string{"git", "push", "--force-with-lease=main:abc", "origin", "main"}, ClassIrreversible, "irreversible"},
		{[]string{"git", "push", "--force-if-includes", "origin", "main"}, ClassIrreversible, "irreversible"},
		{[]string{"git", "push", "--mirror", "origin"}, ClassIrreversible, "irreversible: git push --mirror"},
		{[]string{"git", "push", "origin", "+main"}, ClassIrreversible, "irreversible: git the refspec +main forces the update"},
		{[]string{"git", "push", "origin", "+refs/heads/main:refs/heads/main"}, ClassIrreversible, "forces the update"},
		{[]string{"git", "push", "origin", ":old"}, ClassIrreversible, "deletes the remote ref"},
		{[]string{"git", "push", "--delete", "origin", "old"}, ClassIrreversible, "irreversible: git push --delete"},
		{[]string{"git", "push", "-d", "origin", "old"}, ClassIrreversible, "irreversible: git push -d"},
		{[]string{"git", "push", "origin", ":refs/tags/v1"}, ClassIrreversible, "deletes the remote ref"},
		{[]string{"git", "branch", "-D", "old"}, ClassIrreversible, "irreversible: git branch -D"},
		{[]string{"git", "reset", "--hard", "HEAD~3"}, ClassIrreversible, "irreversible: git reset --hard"},
		{[]string{"git", "clean", "-fd"}, ClassIrreversible, "irreversible: git clean -f"},
		{[]string{"git", "clean", "-xdf"}, ClassIrreversible, "irreversible: git clean -f"},
		{[]string{"git", "filter-branch", "--tree-filter", "rm -f x", "HEAD"}, ClassIrreversible, "irreversible: git filter-branch"},
		{[]string{"git", "filter-repo", "--path", "x", "--invert-paths"}, ClassIrreversible, "irreversible: git filter-repo"},
		{[]string{"git", "update-ref", "-d", "refs/heads/x"}, ClassIrreversible, "irreversible: git update-ref -d"},
		{[]string{"git", "stash", "clear"}, ClassIrreversible, "irreversible: git stash clear"},
		{[]string{"git", "reflog", "expire", "--all"}, ClassIrreversible, "irreversible: git reflog expire"},
		// Not understood: possibly irreversible.
		{[]string{"git", "-c", "core.pager=less", "log"}, ClassOther, "possibly irreversible: not understood"},
		{[]string{"git", "--exec-path=/tmp", "status"}, ClassOther, "possibly irreversible: not understood"},
		{[]string{"git", "log", "--ext-diff"}, ClassOther, "possibly irreversible: not understood"},
		{[]string{"git", "help", "config"}, ClassOther, "possibly irreversible: not understood"},
		// A sensitive path as an argument.
		{[]string{"git", "diff", "--no-index", "/home/u/.ssh/id_ed25519", "/dev/null"}, ClassOther, "credential file"},
	}
	for _, c := range cases {
		a := classOf(c.argv)
		if a.Class != c.want || !strings.Contains(a.Why, c.why) {
			t.Errorf("%q: class %s (%s), want %s (%q)", c.argv, a.Class, a.Why, c.want, c.why)
		}
	}
}

func TestClassScripts(t *testing.T) {
	cases := []struct {
		script string
		want   Class
		why    string
	}{
		{"git status && git log -1", ClassReadOnly, "read-only: git status, git log, executable /usr/bin/sh"},
		{"git status; git diff --stat", ClassReadOnly, "read-only"},
		{"X=1; git status", ClassOther, "computes a value"},
		{"export A=1; git status", ClassOther, "export is not a read-only form"},
		{"git log -1 \"$REF\"", ClassOther, "parameter expansion"},
		{"printf -v x %s 1; git status", ClassOther, "printf -v"},
		{"echo $((1+2)); git status", ClassOther, "arithmetic"},
		{"git status && git push --force", ClassIrreversible, "irreversible: git push --force"},
		{"frobnicate; git push origin +main", ClassIrreversible, "forces the update"},
		{"frobnicate && git status", ClassOther, "possibly irreversible: not understood"},
		{"cd sub && git status", ClassOther, "cd is not a read-only form"},
		// A redirection that writes a file is a write.
		{": > main.go", ClassOther, "the script writes /work/app/main.go (line 1)"},
		{"git log -1 > log.txt", ClassOther, "the script writes /work/app/log.txt"},
		{"git diff >> ../notes", ClassOther, "writes outside the working directory: /work/notes"},
		{"git status > /dev/null 2>&1", ClassReadOnly, "read-only"},
		{"git log -1 >&2", ClassReadOnly, "read-only"},
	}
	for _, c := range cases {
		a := classOf([]string{"sh", "-c", c.script})
		if a.Class != c.want || !strings.Contains(a.Why, c.why) {
			t.Errorf("sh -c %q: class %s (%s), want %s (%q)", c.script, a.Class, a.Why, c.want, c.why)
		}
	}
}

// The executable decides: a read-only form run from outside the system
// directories, or with a hash that is not this host's file, is not
// read-only.
func TestClassExecutable(t *testing.T) {
	r := testRequest([]string{"git", "status"})
	r.Secrets = nil
	r.Executable = "/tmp/git"
	if a := testAnalyzer.Analyze(r); a.Class != ClassOther || !strings.Contains(a.Why, "is not in /usr/bin") {
		t.Errorf("git in /tmp: %s (%s)", a.Class, a.Why)
	}
	for _, p := range []string{"/usr/bin/git", "/bin/git"} {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		r.Executable = p
		sum := sha256.Sum256(data)
		r.ExecutableSHA256 = sum[:]
		if a := testAnalyzer.Analyze(r); a.Class != ClassReadOnly {
			t.Errorf("this host's %s with its own hash: %s (%s)", p, a.Class, a.Why)
		}
		other := sha256.Sum256([]byte("not git"))
		r.ExecutableSHA256 = other[:]
		if a := testAnalyzer.Analyze(r); a.Class != ClassOther || !strings.Contains(a.Why, "sha-256 differs") {
			t.Errorf("%s with another hash: %s (%s)", p, a.Class, a.Why)
		}
		return
	}
	t.Log("no git on this host: the hash half is not checked")
}

// A network client sending a secret is not read-only, except the program
// whose own API the secret is for (for-secret).
func TestClassSecretForItsAPI(t *testing.T) {
	fsys := fstest.MapFS{"t/api.txt": {Data: []byte(`program apicli
manual https://example.org/apicli
class read-only
effect net for-secret=API_TOKEN
operands url

program fetcher
manual https://example.org/fetcher
class read-only
effect net
operands url
`)}}
	cat, errs := loadTables(fsys, "t")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	z := &Analyzer{cat: cat, hashes: &hashCache{}}
	run := func(prog, env string) *Analysis {
		return z.Analyze(Request{Argv: []string{prog, "https://api.example/x"}, Executable: "/usr/bin/" + prog, Dir: "/w",
			Secrets: []Secret{{Name: "s", Env: env}}})
	}
	if a := run("apicli", "API_TOKEN"); a.Class != ClassReadOnly {
		t.Errorf("apicli with its own token: %s (%s)", a.Class, a.Why)
	}
	if a := run("apicli", "OTHER_TOKEN"); a.Class != ClassOther || !strings.Contains(a.Why, "OTHER_TOKEN") {
		t.Errorf("apicli with another token: %s (%s)", a.Class, a.Why)
	}
	if a := run("fetcher", "API_TOKEN"); a.Class != ClassOther {
		t.Errorf("a fetcher with a token: %s (%s)", a.Class, a.Why)
	}
}

// BenchmarkClass: the class of a simple argv costs microseconds (the
// executable's hash is remembered by the Analyzer); matching alone is the
// baseline in the same run (go test -bench Class -run X ./devkit/commands).
func BenchmarkClass(b *testing.B) {
	r := Request{Argv: []string{"git", "log", "-n", "5"}, Executable: "/usr/bin/git", Dir: "/w", Secrets: []Secret{{Name: "gh", Env: "GH_TOKEN"}}}
	if data, err := os.ReadFile(r.Executable); err == nil {
		sum := sha256.Sum256(data)
		r.ExecutableSHA256 = sum[:]
	}
	z := New()
	b.Run("match-only", func(b *testing.B) {
		p := z.cat.byName["git"]
		words := []word{{val: "log", fixed: true, prefix: "log"}, {val: "-n", fixed: true, prefix: "-n"}, {val: "5", fixed: true, prefix: "5"}}
		for b.Loop() {
			matchCommand(p, words)
		}
	})
	b.Run("analyze-argv", func(b *testing.B) {
		for b.Loop() {
			if a := z.Analyze(r); a.Class != ClassReadOnly {
				b.Fatal(a.Why)
			}
		}
	})
	b.Run("analyze-sh-c", func(b *testing.B) {
		s := Request{Argv: []string{"sh", "-c", "git status && git log -1"}, Executable: "/usr/bin/sh", Dir: "/w"}
		for b.Loop() {
			z.Analyze(s)
		}
	})
}
