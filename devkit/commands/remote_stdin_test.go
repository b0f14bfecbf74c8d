// Tests that a secret on a remote command's standard input is sent to
// that host, and that the remote command's paths are not this machine's.
package commands

import (
	"strings"
	"testing"
)

func TestRemoteCommandStdinIsSent(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`ssh deploy@build.example 'cat > /tmp/t' <<<"$GH_TOKEN"`, "sends its input, secret data (from GH_TOKEN), to deploy@build.example"},
		{`printf %s "$GH_TOKEN" | ssh build.example sh -c 'cat >~/.tok'`, "to build.example"},
		{`ssh build.example 'cat > x'`, "sends standard input, which carries secret GH_HOST, to build.example"},
	} {
		a := testAnalyze([]string{"bash", "-c", c.script})
		if !mentions(a, c.want) || mentions(a, "outside the working directory") {
			t.Errorf("%s: want %q and no local write mark:\n%s", c.script, c.want, dump(a))
		}
	}
	// Benign twin: a file that is no secret copied to the remote host.
	a := testAnalyze([]string{"sh", "-c", `ssh build.example 'cat > /tmp/notes' < notes.txt`})
	for _, m := range a.Marks {
		if m.Secret || strings.Contains(m.Text, "outside the working directory") {
			t.Errorf("benign remote copy marked: %s\n%s", m.Text, dump(a))
		}
	}
}
