// The command model end to end (issue 27): a pin's "does not bind" list
// is computed per program from the device's tables, with the real client
// and device: the files git reads as code for the request, and the
// startup files of a login bash, are named before the pin is made and
// listed by `rules`.
package e2e

import "testing"

func TestPinListsWhatEachProgramReads(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	// git and bash may behave differently on this host (no repository
	// here): the exit status does not matter, the list does.
	args := []string{"-s", "gh", "--", "sh", "-c", "git status --short; bash -lc true"}
	w.pin(runOpts{}, args, "git via PATH", ".git/config", "~/.gitconfig", "~/.bash_profile", "~/.bash_login", "~/.profile", "PATH")
	w.listedByRules(".git/config", "~/.gitconfig", "~/.bash_profile")
	w.leakCheck(token)
}
