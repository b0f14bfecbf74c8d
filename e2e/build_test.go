// The client under test is the release build (README "Build"): on Linux and
// darwin/arm64 it enters through agentknock_rt0 and reports an exact signal
// state.
package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

func TestReleaseBuild(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(agentknockBin, "--version", "--verbose").Output()
	if err != nil {
		t.Fatalf("agentknock --version --verbose: %v", err)
	}
	want := "signal state: exact"
	if !releaseHasEntryHook() {
		want = "signal state: approximate"
	}
	if !strings.Contains(string(out), want) {
		t.Fatalf("agentknock --version --verbose:\n%s\nwant %q", out, want)
	}
}
