// The installer check (`check=package-install`): a package named on the
// command line is fetched and its build and install code runs, which the
// table's "runs the project's code" line does not say. A local path (".",
// ./dir) is the project's own code and needs no mark.
package commands

import "strings"

// checkPackageInstall marks each operand that names code fetched from the
// network: a requirement name (from the index, pypi.org unless -i says
// otherwise) or a URL, git+URL included (from its host).
func checkPackageInstall(in checkInput) checkResult {
	var fetched []string
	for _, w := range in.Words {
		switch {
		case w == "" || w == "." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "/"):
			// the project's (or a local) directory or file: its own code
		case strings.Contains(w, "://"):
			h, _ := hostOfURL(w)
			fetched = append(fetched, Literal(w)+" from "+cmpOr(h, "a host decided at run time"))
		default:
			fetched = append(fetched, "package "+Literal(w)+" from "+packageSource(in))
		}
	}
	if len(fetched) == 0 {
		return checkResult{}
	}
	return checkResult{Mark: in.Program + " runs the build and install code of " + strings.Join(fetched, ", ") + ", fetched from the network"}
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
	}
	return "the package index (pypi.org unless configured otherwise)"
}
