// The installer check (`check=pip-install`): a package named on the
// command line is fetched and its build and install code runs, which the
// table's "runs the project's code" line does not say. A local path (".",
// ./dir) is the project's own code and needs no mark.
package commands

import "strings"

// checkPipInstall marks each operand that names code fetched from the
// network: a requirement name (from the index, pypi.org unless -i says
// otherwise) or a URL, git+URL included (from its host).
func checkPipInstall(in checkInput) checkResult {
	var fetched []string
	for _, w := range in.Words {
		switch {
		case w == "" || w == "." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "/"):
			// the project's (or a local) directory or file: its own code
		case strings.Contains(w, "://"):
			h, _ := hostOfURL(w)
			fetched = append(fetched, Literal(w)+" from "+cmpOr(h, "a host decided at run time"))
		default:
			fetched = append(fetched, "package "+Literal(w)+" from the package index (pypi.org unless configured otherwise)")
		}
	}
	if len(fetched) == 0 {
		return checkResult{}
	}
	return checkResult{Mark: in.Program + " install runs the build and install code of " + strings.Join(fetched, ", ") + ", fetched from the network"}
}
