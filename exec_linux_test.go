// Process replacement (command-execution.md, "Native executable
// replacement"): the exec happens under the Go runtime's exec lock.

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A setuid program keeps its privilege through the launcher: exec happens
// under the runtime's exec lock, so no thread is being created at the
// moment of exec (which makes the kernel drop setuid). Without the lock a
// setuid target lost root in about 3% of runs (docs/launch-path.md).
func TestSetuidTargetKeepsItsPrivilege(t *testing.T) {
	idPath, err := exec.LookPath("id")
	if err != nil {
		t.Skip("no id(1)")
	}
	dir := unprivilegedDir(t, "agentknock-setuid-")
	data, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	setuidID := filepath.Join(dir, "id")
	if err := os.WriteFile(setuidID, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(setuidID, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777) // the launcher runs as nobody and writes its request here
	os.WriteFile(filepath.Join(approval, "response.json"), []byte(`{"secrets":{"x":{}},"thread_churn":true}`), 0o644)

	// The control: the copy really is setuid here (no nosuid mount).
	direct := exec.Command(setuidID, "-u")
	direct.SysProcAttr = nobody
	if out, err := direct.Output(); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Skipf("setuid programs do not work in %s (%v, %q)", dir, err, out)
	}
	lost := 0
	const runs = 200
	for i := 0; i < runs; i++ {
		cmd := exec.Command(testBinary, "--quiet", "-s", "x", "--", setuidID, "-u")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval)
		cmd.SysProcAttr = nobody
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v %q %s", i, err, out, stderr.String())
		}
		if strings.TrimSpace(string(out)) != "0" {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("the setuid program ran without its privilege in %d of %d runs", lost, runs)
	}
}
