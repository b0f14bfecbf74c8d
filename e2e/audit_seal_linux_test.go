// A full disk under the device's state (a small tmpfs, which needs root):
// a request the policy approves is denied with an answer the client shows,
// never left waiting, and the log continues once there is room.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditFullDiskDeniesWithAnAnswer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	t.Parallel()
	w := newWorld(t)
	full := filepath.Join(w.root, "full")
	os.Mkdir(full, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s (a container without CAP_SYS_ADMIN)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", full).Run() })
	entries, _ := os.ReadDir(w.state)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(w.state, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(full, e.Name()), data, 0o600)
	}
	w.state = full
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": secretValue(t, "demo")})
	w.startServe(autoPolicy, "")
	w.pair()
	if r := w.agentknock("-s", "demo", "--", "echo", "room"); r.code != 0 {
		t.Fatalf("run with room: %s", r)
	}
	filler := filepath.Join(full, "filler")
	f, _ := os.Create(filler)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	r := w.agentknock("-s", "demo", "--", "echo", "no room")
	if r.code != 1 || strings.Contains(r.stdout, "no room") || !strings.Contains(r.stderr, "The command didn't run") {
		t.Errorf("a request on a full disk: %s\nserve:\n%s", r, clip(w.log()))
	}
	os.Remove(filler)
	if r := w.agentknock("-s", "demo", "--", "echo", "room again"); r.code != 0 {
		t.Errorf("once there is room: %s\nserve:\n%s", r, clip(w.log()))
	}
	w.stopServe()
	if r := w.verifyWithKey(); r.code != 0 {
		t.Errorf("log --verify --key: %s", r)
	}
}
