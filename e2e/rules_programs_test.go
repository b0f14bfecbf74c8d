// A pin's "does not bind" list, per program, end to end (issue 27's pins
// probe): for the families the probe measured (git hooks, npm scripts,
// GNUmakefile, python's site files, a login bash's and an interactive
// zsh's startup files, ssh's configuration, cargo's build.rs) the pin
// names the program's own files before the person confirms it, and
// `rules` lists them. Where this host has the program, the change made
// through that file then runs unasked under the rule: what the list
// warned of. ssh (which takes ~ from the password database, not HOME) and
// cargo (whose build would compile; a stand-in named cargo) are checked
// by their lists alone. As
// the client reports them, npm is the node script npm-cli.js its link
// leads to and cargo is often rustup: the lists are the programs' still.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// onHost reports whether name is a program on this host, saying so when
// it is not: its part is then not checked, which fails the test where
// AGENTKNOCK_TEST_REQUIRE_SANDBOX is set (.ci/run installs every program
// this test runs).
func onHost(t *testing.T, name string) bool {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		missingProgram(t, name)
		return false
	}
	return true
}

func missingProgram(t *testing.T, name string) {
	t.Helper()
	if os.Getenv("AGENTKNOCK_TEST_REQUIRE_SANDBOX") != "" {
		t.Errorf("%s is not on this host, and AGENTKNOCK_TEST_REQUIRE_SANDBOX asks for every part of this test", name)
		return
	}
	t.Logf("%s is not on this host: its part is not checked", name)
}

func TestRulePerProgramFilesDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	run := func(argv ...string) []string { return append([]string{"-s", "gh", "--"}, argv...) }
	write := func(path, text string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o700)
		writeScript(t, path, text)
	}

	// git commit runs the hooks in .git/hooks.
	if onHost(t, "git") {
		if out, err := exec.Command("git", "init", "-q", w.work).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		who := runOpts{env: []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}}
		args := run("git", "commit", "-q", "--allow-empty", "-m", "x")
		if r := w.pin(who, args, ".git/hooks/*", ".git/config", "~/.gitconfig", "files named by include.path, includeIf"); r.code != 0 {
			t.Fatalf("pinned git commit: %s", r)
		}
		w.listedByRules(".git/hooks/*")
		write(filepath.Join(w.work, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho from the hook\n")
		if r := w.unasked(who, args...); !strings.Contains(r.stdout+r.stderr, "from the hook") { // git gives a hook's output to stderr
			t.Errorf("git commit after a hook was added: %s", r)
		}
	}

	// make reads GNUmakefile before Makefile.
	if onHost(t, "make") {
		os.WriteFile(filepath.Join(w.work, "Makefile"), []byte("all:\n\t@echo from Makefile\n"), 0o600)
		args := run("make", "-s")
		if r := w.pin(runOpts{}, args, "GNUmakefile", "makefile", "Makefile", "files named by include, -include, sinclude"); r.stdout != "from Makefile\n" {
			t.Fatalf("pinned make: %s", r)
		}
		w.listedByRules("GNUmakefile", "files named by include, -include, sinclude")
		os.WriteFile(filepath.Join(w.work, "GNUmakefile"), []byte("all:\n\t@echo from GNUmakefile\n"), 0o600)
		if r := w.unasked(runOpts{}, args...); r.stdout != "from GNUmakefile\n" {
			t.Errorf("make after a GNUmakefile was added: %s", r)
		}
	}

	// npm test runs package.json's pretest, test and posttest scripts.
	if onHost(t, "npm") {
		pkg := filepath.Join(w.work, "package.json")
		os.WriteFile(pkg, []byte(`{"name":"x","version":"1.0.0","scripts":{"test":"echo from test"}}`), 0o600)
		quiet := runOpts{env: []string{"npm_config_update_notifier=false"}}
		args := run("npm", "test", "--silent")
		if r := w.pin(quiet, args, "package.json", ".npmrc", "~/.npmrc", "node via PATH"); !strings.Contains(r.stdout, "from test") {
			t.Fatalf("pinned npm test: %s", r)
		}
		w.listedByRules("package.json")
		os.WriteFile(pkg, []byte(`{"name":"x","version":"1.0.0","scripts":{"pretest":"echo from pretest","test":"echo from test"}}`), 0o600)
		if r := w.unasked(quiet, args...); !strings.Contains(r.stdout, "from pretest") {
			t.Errorf("npm test after a pretest script was added: %s", r)
		}
	}

	// python runs usercustomize from the user's site-packages first. The
	// system's python3: a version manager's shim would need its own
	// directory under HOME.
	if py := "/usr/bin/python3"; !fileExists(py) {
		missingProgram(t, py)
	} else {
		os.WriteFile(filepath.Join(w.work, "tool.py"), []byte("print('tool')\n"), 0o600)
		args := run(py, "tool.py")
		if r := w.pin(runOpts{}, args, "tool.py", "sitecustomize.py", "usercustomize.py", "*.pth"); r.stdout != "tool\n" {
			t.Fatalf("pinned python3 tool.py: %s", r)
		}
		w.listedByRules("usercustomize.py")
		site := exec.Command(py, "-c", "import site; print(site.getusersitepackages())")
		site.Env = w.baseEnv()
		out, err := site.Output()
		if err != nil {
			t.Fatalf("python3's user site: %v", err)
		}
		write(filepath.Join(strings.TrimSpace(string(out)), "usercustomize.py"), "print('from usercustomize')\n")
		if r := w.unasked(runOpts{}, args...); r.stdout != "from usercustomize\ntool\n" {
			t.Errorf("python3 after usercustomize.py was added: %s", r)
		}
	}

	// A login bash reads ~/.bash_profile.
	if onHost(t, "bash") {
		args := run("bash", "-lc", "echo hi")
		if r := w.pin(runOpts{}, args, "~/.bash_profile", "~/.bash_login", "~/.profile", "/etc/profile", "BASH_ENV"); !strings.HasSuffix(r.stdout, "hi\n") {
			t.Fatalf("pinned bash -lc: %s", r)
		}
		w.listedByRules("~/.bash_profile")
		write(filepath.Join(w.userHome, ".bash_profile"), "echo from bash_profile\n")
		if r := w.unasked(runOpts{}, args...); !strings.Contains(r.stdout, "from bash_profile\n") {
			t.Errorf("bash -lc after ~/.bash_profile was written: %s", r)
		}
	}

	// An interactive zsh reads ~/.zshrc (the probe found it unlisted).
	if onHost(t, "zsh") {
		args := run("zsh", "-ic", "echo hi")
		if r := w.pin(runOpts{}, args, "~/.zshenv", "/etc/zshrc", "~/.zshrc"); !strings.Contains(r.stdout, "hi\n") {
			t.Fatalf("pinned zsh -ic: %s", r)
		}
		w.listedByRules("~/.zshrc")
		write(filepath.Join(w.userHome, ".zshrc"), "echo from zshrc\n")
		if r := w.unasked(runOpts{}, args...); !strings.Contains(r.stdout, "from zshrc\n") {
			t.Errorf("zsh -ic after ~/.zshrc was written: %s", r)
		}
	}

	// ssh and cargo: the list alone (ssh -G prints its configuration and
	// connects nowhere; cargo finds no Cargo.toml here and stops).
	if onHost(t, "ssh") {
		w.pin(runOpts{}, run("ssh", "-G", "host.example"), "~/.ssh/config", "/etc/ssh/ssh_config", "files named by Include")
		w.listedByRules("~/.ssh/config", "files named by Include")
	}
	// cargo's list is the program's, whatever cargo builds: an executable
	// named cargo that builds nothing (a copy of /bin/true) stands in on
	// every host, so no Rust toolchain is needed and nothing compiles.
	stub := filepath.Join(t.TempDir(), "cargo")
	if data, err := os.ReadFile("/bin/true"); err != nil || os.WriteFile(stub, data, 0o755) != nil {
		t.Fatalf("a stand-in cargo: %v", err)
	}
	if r := w.pin(runOpts{}, run(stub, "build", "-q"), "build.rs", ".cargo/config.toml", "~/.cargo/config.toml", "rust-toolchain.toml"); r.code != 0 {
		t.Fatalf("pinned cargo build: %s", r)
	}
	w.listedByRules("build.rs")
	w.leakCheck(token)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
