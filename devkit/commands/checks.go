// Named checks of the command tables (`check=NAME`): the few judgements
// that data cannot express, one small function each. The registry is one
// map so that adding a check is a one-line change.
package commands

// checkInput is what a check sees: the program, the whole argv of the
// command, and the words the table line carrying the check matched (the
// option's value, or the operands).
type checkInput struct {
	Program string
	Argv    []string
	Words   []string
}

// checkResult is what a check concludes. Empty fields mean nothing found.
type checkResult struct {
	NotUnderstood string // the command is not understood, because of this
	Irreversible  string // the form is irreversible, because of this
	Mark          string // a "!" mark to show
}

// checks is the registry the table loader validates `check=NAME` against.
var checks = map[string]func(checkInput) checkResult{
	"git-refspec": checkGitRefspec,

	// Step 21's service and database checks: checks_sql.go, checks_services.go.
	"sql": checkSQL, "sqlite3-sql": checkSQLiteOperands, "mongosh-js": checkMongoJS, "mongosh-operands": checkMongoshOperands,
	"migration-verb": checkMigrationVerb, "gh-api-method": checkGHAPIMethod, "gh-api-endpoint": checkGHAPIEndpoint, "cloud-verb": checkCloudVerb,
}

// checkGitRefspec: a refspec that starts with "+" forces the update (it
// may discard commits on the remote), and one with an empty source
// (":branch") deletes the remote ref; both are irreversible.
func checkGitRefspec(in checkInput) checkResult {
	for _, w := range in.Words {
		switch {
		case len(w) > 1 && w[0] == '+':
			return checkResult{Irreversible: "the refspec " + w + " forces the update"}
		case len(w) > 1 && w[0] == ':':
			return checkResult{Irreversible: "the refspec " + w + " deletes the remote ref"}
		}
	}
	return checkResult{}
}
