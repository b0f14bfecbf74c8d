// Shared helpers of the package's tests: the request every test analyses
// (working directory /work/app; GH_TOKEN and AWS_SECRET_ACCESS_KEY in the
// environment, GH_HOST on standard input).
package commands

import (
	"path"
	"slices"
	"strings"
)

var testAnalyzer = New()

var testSecrets = []Secret{
	{Name: "gh", Env: "GH_TOKEN"},
	{Name: "aws", Env: "AWS_SECRET_ACCESS_KEY"},
	{Name: "GH_HOST", Stdin: true},
}

func testRequest(argv []string) Request {
	return Request{Argv: argv, Executable: "/usr/bin/" + path.Base(argv[0]), Dir: "/work/app", Secrets: testSecrets}
}

func testAnalyze(argv []string) *Analysis {
	return testAnalyzer.Analyze(testRequest(argv))
}

// flagged: not understood, or a "!" mark.
func flagged(a *Analysis) bool { return !a.Understood || len(a.Marks) > 0 }

// mentions reports whether any line of the analysis contains want.
func mentions(a *Analysis, want string) bool {
	var all []string
	for _, f := range slices.Concat(a.Reasons, a.Marks, a.Runs) {
		all = append(all, f.Text)
	}
	all = append(all, a.Shown...)
	all = append(all, a.SecretLines...)
	all = append(all, a.Destinations...)
	return slices.ContainsFunc(all, func(l string) bool { return strings.Contains(l, want) })
}

// missingTables lists the programs an analysis found no table for: a case
// that needs another family's table (merged later) says so instead of
// failing on a table that is not in this tree.
func missingTables(a *Analysis) []string {
	var out []string
	for _, r := range a.Reasons {
		if name, ok := strings.CutSuffix(r.Text, " is not a command the device knows, so it cannot say what it does with the secrets or the network"); ok {
			out = append(out, name)
		}
	}
	return out
}
