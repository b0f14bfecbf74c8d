// A pin confirmed on the terminal of `agentknock-device approve` (the
// screen and pseudo-terminal helpers are Linux-only).
package e2e

import (
	"io"
	"os/exec"
	"testing"
)

// On a terminal, `approve --pin` shows the list and asks; "y" pins.
func TestRulePinConfirmedOnTheApproveTerminal(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	p := w.startAgentknock(runOpts{}, "-s", "gh", "--", "bash", "-c", "make -v >/dev/null; echo ok")
	id := w.waitPending()[0].ID
	tty, err := openPty()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.close()
	cmd := exec.Command(deviceBin, "approve", id, "--pin", "30")
	cmd.Env = append(w.baseEnv(), "AGENTKNOCK_DEVICE_STATE="+w.state)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty.slave, tty.slave, tty.slave
	cmd.SysProcAttr = tty.sysProcAttr()
	scr := &screen{}
	go io.Copy(&scr.buf, tty.master)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scr.waitFor(t, 0, "    - make via PATH: ", "    - BASH_ENV: ", "pin it anyway, knowing the above is not bound? [y/N] ")
	io.WriteString(tty.master, "y\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("approve on a terminal: %v\n%s", err, scr.text())
	}
	if r := p.wait(); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("make via PATH", "BASH_ENV")
	w.unasked(runOpts{}, "-s", "gh", "--", "bash", "-c", "make -v >/dev/null; echo ok")
	w.leakCheck(token)
}
