// Tests of the Perl reader (langscan.go): substitutions only.
package commands

import "testing"

// Perl: substitutions only, nothing that interpolates or evaluates.
func TestPerlSubstitutionsOnly(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a rename across files", benign: `perl -pi -e 's/\bOldName\b/NewName/g' src/a.ts src/b.ts`,
			hostile: `perl -pi -e 's/x/@{[system("id")]}/' a.ts`, want: "more than substitutions"},
		{name: "a secret interpolated", hostile: `perl -pi -e 's/TOKEN/$ENV{GH_TOKEN}/' a.txt`, want: "more than substitutions"},
		{name: "the e flag", hostile: `perl -pi -e 's/x/qx(id)/e' a.txt`, want: "more than substitutions"},
		{name: "code in the pattern", hostile: `perl -pi -e 's/(?{ system("id") })x/y/' a.txt`, want: "more than substitutions"},
		{name: "an anchored pattern and tr", benign: `perl -pi -e 's/^v\d+$/v2/; tr/a-z/A-Z/' VERSION`},
		{name: "any other perl", hostile: `perl -ne 'print if /x/' f`, want: "more than substitutions"},
	})
}
