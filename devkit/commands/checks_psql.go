// psql's -v/--set/--variable NAME=VALUE (check=psql-var), from
// https://www.postgresql.org/docs/current/app-psql.html ("Variables"):
// psql reserves upper-case names for its special variables, some of which
// change what it runs (PROMPT1/2/3 run backquoted commands), so only the
// everyday ones are understood; a user variable is interpolated into the
// SQL (:name), so its value must be plain enough to add no statement.
package commands

import "strings"

// psqlEverydayVars are special variables that change how psql reports
// and stops on errors, commits and prints: none runs a program or names a
// file.
var psqlEverydayVars = map[string]bool{"ON_ERROR_STOP": true, "ON_ERROR_ROLLBACK": true, "AUTOCOMMIT": true,
	"ECHO": true, "QUIET": true, "VERBOSITY": true, "FETCH_COUNT": true}

func checkPsqlVar(in checkInput) checkResult {
	for _, w := range in.Words {
		name, value, _ := strings.Cut(w, "=")
		switch {
		case w == "":
			return checkResult{NotUnderstood: "a variable (-v) decided at run time may set one that runs a command (PROMPT1)"}
		case !isShellName(name):
			return checkResult{NotUnderstood: "-v " + Literal(w) + " is not NAME=VALUE"}
		case strings.ToUpper(name) == name && !psqlEverydayVars[name]:
			return checkResult{NotUnderstood: "the special variable " + Literal(name) + " is not one the device knows to run nothing (PROMPT1, PROMPT2 and PROMPT3 run backquoted commands)"}
		case strings.ContainsFunc(value, func(r rune) bool {
			return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || r == '@' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}):
			return checkResult{NotUnderstood: "the value of " + Literal(name) + " (" + Literal(value) + ") is more than a plain word: interpolated as :" + name + " it may add SQL the device has not read"}
		}
	}
	return checkResult{}
}
