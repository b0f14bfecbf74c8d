// The agent probe: the bench re-executes itself as the command of
// `agentknock run -s signer`, so it runs with the temporary agent in
// SSH_AUTH_SOCK, and measures it against the upstream ssh-agent in turn.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const probeRole = "__agent-probe"

type probeReport struct {
	ListTemp   time.Duration `json:"list_temp"`
	ListDirect time.Duration `json:"list_direct"`
	SignTemp   time.Duration `json:"sign_temp"`
	SignDirect time.Duration `json:"sign_direct"`
	IdleHWM    int64         `json:"idle_hwm_kib"`
	LoadHWM    int64         `json:"load_hwm_kib"`
}

func probeMain(args []string) int {
	fs := flag.NewFlagSet(probeRole, flag.ContinueOnError)
	upstream := fs.String("upstream", "", "the upstream ssh-agent socket")
	pub := fs.String("pub", "", "public key file of the upstream key")
	clients := fs.Int("clients", 50, "")
	rounds := fs.Int("rounds", 7, "")
	signatures := fs.Int("signatures", 30, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, err := probe(os.Getenv("SSH_AUTH_SOCK"), *upstream, *pub, *clients, *rounds, *signatures)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent probe:", err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

func probe(temp, upstream, pub string, clients, rounds, signatures int) (*probeReport, error) {
	if temp == "" || temp == upstream {
		return nil, errors.New("not run with a temporary agent in SSH_AUTH_SOCK")
	}
	pid, err := peerPID(temp)
	if err != nil {
		return nil, err
	}
	rep := &probeReport{}
	if rep.IdleHWM, err = vmHWM(pid); err != nil {
		return nil, err
	}
	var listTemp, listDirect, signTemp, signDirect []time.Duration
	for range rounds {
		t, err := listRound(temp, clients, 2) // the device's key and the upstream one
		if err != nil {
			return nil, fmt.Errorf("through the temporary agent: %w", err)
		}
		d, err := listRound(upstream, clients, 1)
		if err != nil {
			return nil, fmt.Errorf("on ssh-agent: %w", err)
		}
		listTemp, listDirect = append(listTemp, t), append(listDirect, d)
	}
	for range signatures {
		t, err := sign(temp, pub)
		if err != nil {
			return nil, fmt.Errorf("through the temporary agent: %w", err)
		}
		d, err := sign(upstream, pub)
		if err != nil {
			return nil, fmt.Errorf("on ssh-agent: %w", err)
		}
		signTemp, signDirect = append(signTemp, t), append(signDirect, d)
	}
	rep.ListTemp, rep.ListDirect = median(listTemp), median(listDirect)
	rep.SignTemp, rep.SignDirect = median(signTemp), median(signDirect)
	if rep.LoadHWM, err = vmHWM(pid); err != nil {
		return nil, err
	}
	return rep, nil
}

// listRound runs n concurrent `ssh-add -L` against sock and returns the
// time until the last one finished; each must list keys keys.
func listRound(sock string, n, keys int) (time.Duration, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	start := time.Now()
	for range n {
		wg.Go(func() {
			cmd := exec.Command("ssh-add", "-L")
			cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
			out, err := cmd.Output()
			if err == nil && strings.Count(string(out), "\n") != keys {
				err = fmt.Errorf("ssh-add -L listed %q", out)
			}
			if err != nil {
				mu.Lock()
				first = cmp(first, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return time.Since(start), first
}

func sign(sock, pub string) (time.Duration, error) {
	cmd := exec.Command("ssh-keygen", "-Y", "sign", "-q", "-f", pub, "-n", "file")
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	cmd.Stdin = strings.NewReader("agentknock-bench signed data\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err == nil && !bytes.Contains(out, []byte("BEGIN SSH SIGNATURE")) {
		err = fmt.Errorf("no signature in %q", out)
	}
	if err != nil {
		return 0, fmt.Errorf("ssh-keygen -Y sign: %v %s", err, stderr.String())
	}
	return d, nil
}

// vmHWM is a process's peak resident set size in KiB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM")
}
