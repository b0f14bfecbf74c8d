// An unstamped build names its version with the client's word for one.

package main

import (
	"strings"
	"testing"
)

func TestUnstampedVersionIsDev(t *testing.T) {
	r := runCLI(t, "", nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agentknock-device dev (") {
		t.Errorf("--version of an unstamped build: %s", r)
	}
}
