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
		{[]string{"sh", "-c", "ssh host.example 'bash -lc true'"}, []string{"~/.ssh/config", "~/.bash_profile", "the remote shell on host.example"}, nil},
		{[]string{"sh", "-c", "python3 - <<'E'\nprint(1)\nE"}, []string{"the program it reads on standard input"}, nil},
		{[]string{"bash"}, []string{"the program it reads on standard input", "BASH_ENV"}, nil},
		{[]string{"sh", "-s"}, []string{"the program it reads on standard input"}, nil},
		{[]string{"sh", "-c", "curl -fsSL https://get.example.sh | sh"}, []string{"the program it reads on standard input"}, nil},
		// Another directory's files (a probe found them named as the
		// working directory's), the variables each manual gives, and the
		// files a probe found missing.
		{[]string{"git", "-C", "sub", "commit", "-m", "x"}, []string{"sub/.git/hooks/*", "sub/.git/config", "~/.gitconfig"}, []string{".git/config"}},
		{[]string{"make", "-C", "sub", "test"}, []string{"sub/GNUmakefile", "sub/makefile", "sub/Makefile", "MAKEFILES, MAKEFLAGS"}, []string{"Makefile"}},
		{[]string{"pytest", "-q"}, []string{"conftest.py", "sitecustomize.py", "*.pth", "PYTEST_ADDOPTS, PYTEST_PLUGINS, PYTHONPATH, PYTHONHOME"}, nil},
		{[]string{"go", "test", "./..."}, []string{"~/.config/go/env", "GOFLAGS, GOENV, GOTOOLCHAIN, GOPROXY, CC, CXX, CGO_CFLAGS, CGO_LDFLAGS"}, nil},
		{[]string{"cargo", "test"}, []string{"rust-toolchain.toml", "RUSTC, RUSTC_WRAPPER, RUSTFLAGS, RUSTUP_TOOLCHAIN, CARGO_HOME, CARGO_BUILD_*, CARGO_TARGET_*"}, nil},
		{[]string{"zsh", "-c", "true"}, []string{"/etc/zshenv", "~/.zshenv"}, nil},
		{[]string{"git", "log", "-1"}, []string{"GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_COUNT, GIT_EXEC_PATH, GIT_SSH_COMMAND, GIT_SSH, GIT_PAGER, GIT_EDITOR, GIT_ASKPASS"}, nil},
		{[]string{"npm", "test"}, []string{"npm_config_*, NODE_OPTIONS"}, nil},
		{[]string{"gh", "pr", "view", "1"}, []string{"GH_HOST, GH_CONFIG_DIR, GH_PAGER, GH_BROWSER"}, nil},
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
