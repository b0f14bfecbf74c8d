// Tests that need a program from outside Go say which, and what installs
// it: without it they skip (go test -v shows the reason; README's "Test"
// lists them), and under .ci/run, which installs every one of them and sets
// AGENTKNOCK_TEST_REQUIRE_SANDBOX, they fail instead, so that a skip
// cannot hide a failure.

package main

import (
	"os"
	"os/exec"
	"testing"
)

// needProgram returns the path of program, or skips (fails under CI)
// naming the Debian package that provides it.
func needProgram(t *testing.T, program, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	why := "needs " + program + " (apt-get install " + debianPackage + ")"
	if os.Getenv("AGENTKNOCK_TEST_REQUIRE_SANDBOX") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}
