// Tests of what a pin cannot bind, per program, from the tables: the files
// each program reads as code for that request (git hooks and config,
// package.json scripts, ssh config, the makefiles GNU make tries, python's
// site files, cargo's build.rs), and the startup files a shell reads.
package commands

import (
	"strings"
	"testing"
)

func unboundNames(a *Analysis) string {
	var n []string
	for _, u := range a.UnboundItems {
		n = append(n, u.Name)
	}
	return " | " + strings.Join(n, " | ") + " | "
}

func TestUnboundPerProgram(t *testing.T) {
	cases := []struct {
		argv   []string
		want   []string
		absent []string
	}{
		{[]string{"git", "commit", "-m", "x"}, []string{".git/hooks/*", ".git/config", "~/.gitconfig"}, []string{"PATH"}},
		{[]string{"git", "status"}, []string{".git/config", "~/.gitconfig"}, []string{".git/hooks/*"}},
		{[]string{"git", "push", "origin", "main"}, []string{".git/hooks/*", ".git/config"}, nil},
		{[]string{"npm", "test"}, []string{"package.json"}, nil},
		{[]string{"npm", "run", "build"}, []string{"package.json"}, nil},
		{[]string{"ssh", "host.example"}, []string{"~/.ssh/config", "/etc/ssh/ssh_config"}, nil},
		{[]string{"scp", "a", "host.example:b"}, []string{"~/.ssh/config"}, nil},
		{[]string{"rsync", "-a", "a/", "host.example:b/"}, []string{"~/.ssh/config"}, nil},
		{[]string{"make", "test"}, []string{"GNUmakefile", "makefile", "Makefile"}, nil},
		{[]string{"make", "-f", "ci.mk", "test"}, []string{"ci.mk"}, []string{"Makefile"}},
		{[]string{"python3", "-m", "unittest"}, []string{"sitecustomize.py", "usercustomize.py"}, nil},
		{[]string{"python3", "tool.py"}, []string{"tool.py", "sitecustomize.py"}, nil},
		{[]string{"cargo", "test"}, []string{"build.rs", ".cargo/config.toml"}, nil},
		{[]string{"cargo", "build", "--release"}, []string{"build.rs"}, nil},
		{[]string{"bash", "-lc", "true"}, []string{"~/.bash_profile", "~/.bash_login", "~/.profile", "BASH_ENV"}, nil},
		{[]string{"bash", "-c", "true"}, []string{"BASH_ENV", "~/.bashrc"}, []string{"~/.bash_profile"}},
		{[]string{"bash", "--login", "-c", "true"}, []string{"~/.bash_profile"}, nil},
		{[]string{"sh", "-c", "git commit -m x && make"}, []string{"git via PATH", ".git/hooks/*", "make via PATH", "Makefile", "PATH"}, nil},
		{[]string{"sh", "-c", "ssh host.example 'bash -lc true'"}, []string{"~/.ssh/config", "~/.bash_profile"}, nil},
		{[]string{"sh", "-c", "python3 - <<'E'\nprint(1)\nE"}, []string{"the program it reads on standard input"}, nil},
	}
	for _, c := range cases {
		r := testRequest(c.argv)
		a := testAnalyzer.Analyze(r)
		if m := missingTables(a); len(m) > 0 {
			t.Logf("%q needs the tables for %v, not in this tree: not checked", c.argv, m)
			continue
		}
		got := unboundNames(a)
		for _, w := range append(c.want, "directory /work/app", "the inherited environment") {
			if !strings.Contains(got, " | "+w+" | ") {
				t.Errorf("%q: %q not listed in%s", c.argv, w, got)
			}
		}
		for _, w := range c.absent {
			if strings.Contains(got, " | "+w+" | ") {
				t.Errorf("%q: %q listed in%s", c.argv, w, got)
			}
		}
	}
}
