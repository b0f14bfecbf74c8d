// The temporary SSH agent series of scripts/bench: ssh-add -L and signing
// through the agent a run provides, against ssh-agent directly.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// agentBench runs the probe as the command of `agentknock run -s signer`,
// so that it sees the temporary agent, with a plain ssh-agent holding one
// key as the upstream agent.
func agentBench(c config, root string, w *world, self string) error {
	dir := filepath.Join(root, "agent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key := filepath.Join(dir, "upstream")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "upstream", "-f", key).CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-keygen: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "upstream.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		return err
	}
	defer func() { agent.Process.Kill(); agent.Wait() }()
	for i := 0; ; i++ {
		probe := exec.Command("ssh-add", "-l")
		probe.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := probe.CombinedOutput(); err == nil || bytes.Contains(out, []byte("no identities")) {
			break
		}
		if i == 500 {
			return errors.New("ssh-agent did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-add: %v\n%s", err, out)
	}
	cmd := w.command("agentknock", "run", "--quiet", "-s", "signer", "--", self, probeRole,
		"-upstream", sock, "-pub", key+".pub", "-clients", fmt.Sprint(c.agentClients),
		"-rounds", fmt.Sprint(c.agentRounds), "-signatures", fmt.Sprint(c.signatures))
	cmd.Env = append(cmd.Env, "SSH_AUTH_SOCK="+sock)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("agent probe: %v\n%s", err, stderr.String())
	}
	var p probeReport
	if err := json.Unmarshal(out, &p); err != nil {
		return fmt.Errorf("agent probe printed %q: %v", out, err)
	}
	fmt.Printf("\ntemporary SSH agent (upstream: ssh-agent with one Ed25519 key):\n")
	fmt.Printf("  %d concurrent ssh-add -L, median of %d rounds: %s through the agent, %s on ssh-agent: %.2fx\n",
		c.agentClients, c.agentRounds, ms(p.ListTemp), ms(p.ListDirect), ratio(p.ListTemp, p.ListDirect))
	fmt.Printf("  signing with the upstream key (ssh-keygen -Y sign), median of %d: %s through the agent, %s on ssh-agent: %.2fx\n",
		c.signatures, ms(p.SignTemp), ms(p.SignDirect), ratio(p.SignTemp, p.SignDirect))
	fmt.Printf("  peak RSS of the invocation service: %.1f MiB idle, %.1f MiB after the load\n", float64(p.IdleHWM)/1024, float64(p.LoadHWM)/1024)
	return nil
}
