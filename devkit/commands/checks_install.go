// The installer check (`check=package-install`): a package named on the
// command line is fetched and its build and install code runs, which the
// table's "runs the project's code" line does not say. A local path (".",
// ./dir) is the project's own code and needs no mark.
package commands

import (
	"path"
	"slices"
	"strings"
)

// checkPackageInstall marks each operand that names code fetched from the
// network: a requirement name (from the index, pypi.org unless -i says
// otherwise) or a URL, git+URL included (from its host).
func checkPackageInstall(in checkInput) checkResult {
	if nodeInstaller(in.Program) && (nodeRemoval(in.Argv) || slices.Contains(in.Argv, "--ignore-scripts")) {
		// a removal fetches nothing, and --ignore-scripts runs no
		// package's install scripts (npm-install, "ignore-scripts")
		return checkResult{}
	}
	var fetched []string
	for _, w := range in.Words {
		switch {
		case w == "" || w == "." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "file:"):
			// the project's (or a local) directory or file: its own code
		case strings.Contains(w, "://"):
			h, _ := hostOfURL(w)
			fetched = append(fetched, Literal(w)+" from "+cmpOr(h, "a host decided at run time"))
		case nodeInstaller(in.Program) && (strings.HasPrefix(w, "github:") || !strings.HasPrefix(w, "@") && strings.Contains(w, "/")):
			// npm reads USER/REPO and github:USER/REPO as a GitHub repository
			fetched = append(fetched, Literal(w)+" from github.com")
		default:
			fetched = append(fetched, "package "+Literal(w)+" from "+packageSource(in))
		}
	}
	if len(fetched) == 0 {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: in.Program + " runs the build and install code of " + strings.Join(fetched, ", ") + ", fetched from the network"}
}

// checkPipProject: a project directory named by a local path (".",
// ./pkg, /src/pkg) is built by its own files, setup.py, setup.cfg and the
// build backend pyproject.toml names (pip install's "Local project
// installs"), and a local source archive by the setup code inside it: those
// are the files whose code runs. A requirement name builds only what the
// index sends (check=package-install marks that), so it names none.
func checkPipProject(in checkInput) checkResult {
	var code []string
	for _, w := range in.Words {
		if !localPath(w) && !(strings.Contains(w, "/") && !strings.ContainsAny(w, ":@")) {
			continue
		}
		if archiveName(w) {
			code = append(code, w)
			continue
		}
		for _, f := range []string{"setup.py", "pyproject.toml", "setup.cfg"} {
			code = append(code, path.Join(w, f))
		}
	}
	return codeResult(code, "builds the project from it (its build code runs)")
}

// checkPipRequirements: a requirements file (-r) names what pip installs,
// and can hold options (-e ., --index-url, -r of another file): its
// contents decide what is built and run.
func checkPipRequirements(in checkInput) checkResult {
	var code []string
	for _, w := range in.Words {
		if w != "" && w != "-" && !strings.Contains(w, "://") {
			code = append(code, w)
		}
	}
	return codeResult(code, "installs what it names (-r: packages, options, more files)")
}

// checkGPGVerify: the gpg table describes --verify alone; gpg without a
// command guesses one from its input (decrypt, import, verify), so a
// command line without --verify is not understood.
func checkGPGVerify(in checkInput) checkResult {
	if !slices.Contains(in.Argv, "--verify") {
		return checkResult{NotUnderstood: "only gpg --verify is described, and this command line has no --verify"}
	}
	return checkResult{}
}

// checkLocalCopy: scp and rsync reach another host only through an
// operand naming one (host:path, user@host:path, rsync's host::module
// and rsync:// URLs; scp(1) and rsync(1)): with none, they copy between
// local paths and start no ssh, so ssh's configuration and the remote
// shell's variables do not apply. A word decided at run time could name a
// host.
func checkLocalCopy(in checkInput) checkResult {
	for _, w := range in.Words {
		if w == "" {
			return checkResult{}
		}
		if i := strings.IndexByte(w, ':'); i >= 0 && !strings.Contains(w[:i], "/") {
			return checkResult{}
		}
	}
	return checkResult{NoConfig: true}
}

// codeResult is a check's answer naming the files whose code runs.
func codeResult(files []string, why string) checkResult {
	if len(files) == 0 {
		return checkResult{}
	}
	return checkResult{Code: &codeFiles{files: files, why: why}}
}

// localPath: a word pip and its like read as a local path, not a
// requirement name or a URL.
func localPath(w string) bool {
	return w == "." || w == ".." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~/")
}

// archiveName: a distribution file rather than a directory.
func archiveName(w string) bool {
	for _, x := range []string{".whl", ".tar.gz", ".tgz", ".tar.bz2", ".zip"} {
		if strings.HasSuffix(w, x) {
			return true
		}
	}
	return false
}

// packageSource is where a package named on the command line comes from,
// as each installer's manual says: its registry unless configured or told
// otherwise (cargo install --git takes the crate from that repository).
func packageSource(in checkInput) string {
	switch in.Program {
	case "cargo":
		for _, a := range in.Argv {
			if a == "--git" || strings.HasPrefix(a, "--git=") {
				return "the repository given with --git"
			}
		}
		return "crates.io"
	case "gem":
		return "rubygems.org unless --source says otherwise"
	case "npm", "yarn", "yarnpkg", "pnpm":
		return "registry.npmjs.org unless --registry or .npmrc says otherwise"
	}
	return "the package index (pypi.org unless configured otherwise)"
}

// nodeInstaller: npm, yarn and pnpm run a package's preinstall, install
// and postinstall scripts when they add it
// (https://docs.npmjs.com/cli/using-npm/scripts#npm-install).
func nodeInstaller(program string) bool {
	switch program {
	case "npm", "yarn", "yarnpkg", "pnpm":
		return true
	}
	return false
}

// nodeRemoval: the subcommand (the first word after the program that is
// not an option) removes packages; a subcommand hidden behind an option's
// value is not recognised, so the operands are still marked.
func nodeRemoval(argv []string) bool {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "remove", "rm", "r", "un", "uninstall", "unlink":
			return true
		}
		return false
	}
	return false
}

// checkGoRunSource: go run's first operand is the package it builds and
// runs; path@version fetches that module (from the module proxy,
// proxy.golang.org unless GOPROXY says otherwise) and runs its code,
// which the "whose code runs" line of the project does not say. The
// words after it are the program's arguments.
func checkGoRunSource(in checkInput) checkResult {
	if len(in.Words) == 0 {
		return checkResult{}
	}
	pkg := in.Words[0]
	if pkg == "" {
		return checkResult{NotUnderstood: "go run: the package is decided at run time"}
	}
	if !strings.Contains(pkg, "@") {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: "go run runs the code of " + Literal(pkg) + ", fetched from the module proxy (proxy.golang.org unless GOPROXY says otherwise)"}
}

// checkGoInstallSource: go install PATH@VERSION downloads that module
// (from the module proxy, proxy.golang.org unless GOPROXY says
// otherwise), builds the program and installs it in GOBIN ($GOPATH/bin,
// ~/go/bin by default: go help install), outside the working directory
// and usually on PATH, so that a later command by its name, or a tool
// whose configuration names it (a protoc or buf plugin), runs code the
// device has not seen. A package of the project (./cmd/x) is its own.
func checkGoInstallSource(in checkInput) checkResult {
	var fetched []string
	for _, w := range in.Words {
		if w == "" {
			return checkResult{NotUnderstood: "go install: the package is decided at run time"}
		}
		if strings.Contains(w, "@") {
			fetched = append(fetched, Literal(w))
		}
	}
	if len(fetched) == 0 {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: "go install puts the program built from " + strings.Join(fetched, ", ") + ", fetched from the module proxy, in GOBIN (~/go/bin), where a later command by its name runs it"}
}

// checkCargoGit: cargo install --git URL builds the crate of that
// repository, running its build scripts (build.rs) and procedural
// macros, and installs the program in ~/.cargo/bin
// (https://doc.rust-lang.org/cargo/commands/cargo-install.html).
func checkCargoGit(in checkInput) checkResult {
	for _, w := range in.Words {
		h, _ := hostOfURL(w)
		return checkResult{Runs: true, Mark: "cargo runs the build and install code of " + Literal(w) + " from " + cmpOr(h, "a host decided at run time") + ", fetched from the network"}
	}
	return checkResult{}
}

// checkGoLdflags: go build -ldflags passes its words to the linker
// (https://pkg.go.dev/cmd/link). Stripping (-s, -w), setting a string
// variable (-X importpath.name=value) and -buildid only shape the binary;
// -extld, -extldflags and the rest can name a program the linker runs, so
// they are not understood.
func checkGoLdflags(in checkInput) checkResult {
	for _, v := range in.Words {
		if v == "" {
			return checkResult{NotUnderstood: "go: -ldflags decided at run time"}
		}
		words := strings.Fields(v)
		for i := 0; i < len(words); i++ {
			switch w := words[i]; {
			case w == "-s" || w == "-w" || strings.HasPrefix(w, "-buildid="):
			case w == "-X" && i+1 < len(words) && strings.Contains(words[i+1], "="):
				i++
			case strings.HasPrefix(w, "-X=") && strings.Contains(w[3:], "="):
			default:
				return checkResult{NotUnderstood: "go: the linker flag " + Literal(w) + " is not one the device knows"}
			}
		}
	}
	return checkResult{}
}

// checkHelmChart: helm install and helm upgrade deploy a chart into the
// cluster, where its templates become workloads and its hooks run jobs:
// code the device cannot see, run with the cluster's credentials. A chart
// by path (./charts/api) or by a repository's reference (REPO/NAME, from
// a repository helm repo add named) is the project's choice; one by URL
// (https://, oci://) or from --repo URL is fetched from that host as it
// runs, and is marked (https://helm.sh/docs/helm/helm_install/).
func checkHelmChart(in checkInput) checkResult {
	var fetched []string
	// What it deploys is the chart's and the values files' contents, which
	// the request names but does not carry: the pin's list names them.
	var code []string
	// The chart is the last operand (NAME CHART, or CHART with -g).
	if n := len(in.Words); n > 0 {
		switch w := in.Words[n-1]; {
		case w == "":
			fetched = append(fetched, "a chart decided at run time")
		case strings.Contains(w, "://") && !strings.HasPrefix(w, "file://"):
			h, _ := hostOfURL(w)
			fetched = append(fetched, Literal(w)+" from "+cmpOr(h, "a host decided at run time"))
		default:
			code = append(code, w)
		}
	}
	for k, a := range in.Argv {
		switch {
		case (a == "-f" || a == "--values") && k+1 < len(in.Argv) && in.Argv[k+1] != "":
			code = append(code, in.Argv[k+1])
		case strings.HasPrefix(a, "--values=") && len(a) > len("--values="):
			code = append(code, strings.TrimPrefix(a, "--values="))
		}
	}
	for k, a := range in.Argv {
		repo := ""
		switch {
		case a == "--repo" && k+1 < len(in.Argv):
			repo = in.Argv[k+1]
		case strings.HasPrefix(a, "--repo="):
			repo = strings.TrimPrefix(a, "--repo=")
		default:
			continue
		}
		h, _ := hostOfURL(repo)
		fetched = append(fetched, "the chart repository "+Literal(repo)+" at "+cmpOr(h, "a host decided at run time"))
	}
	r := codeResult(code, "deploys what it holds (a chart's templates and hooks, a repository chart as it is when run, the values they render with)")
	if len(fetched) > 0 {
		r.Runs, r.Mark = true, in.Program+" deploys a chart fetched from the network ("+strings.Join(fetched, ", ")+"): its templates and hooks run in the cluster as code the device cannot see"
	}
	return r
}
