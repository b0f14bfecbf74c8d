// The invocation service: command-execution.md, "Invocation service,
// standard input, and SSH operations" (step 5 of the run sequence). A
// separate copy of this executable, started before the launcher replaces
// itself, writes an approved value to the pipe that becomes the command's
// standard input and, for an SSH secret, serves a temporary SSH agent in a
// private directory whose selected key stays on the device. It lives until
// its work is done or the command (the owner PID, which the exec keeps)
// exits. It holds no live HPKE context: each SSH signature is a new paired
// exchange with the stored pairing.
//
// This file is the launcher's side: the startup data and starting the
// service. The service process is service_main.go, its sockets
// service_listen.go, the agent agent.go and Git signing gitsign.go.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// serviceRole is the hidden first argument that starts the service.
const serviceRole = "__agentknock-invocation-service"

// serviceStartup is what the launcher sends the service through its private
// startup pipe. It never appears on a command line or in the environment.
type serviceStartup struct {
	OwnerPID int         `json:"owner_pid"`
	Self     selfImage   `json:"self"` // what the Git helper is made from
	Stdin    *string     `json:"stdin,omitempty"`
	SSH      *serviceSSH `json:"ssh,omitempty"`
}

// serviceSSH is what the SSH agent needs: the invocation it belongs to, the
// selected key, where the pairing lives and the agent to pass other keys to.
type serviceSSH struct {
	Home         string `json:"home"`
	InvocationID ULID   `json:"invocation_id"`
	Token        []byte `json:"invocation_token"`
	Secret       string `json:"secret"`
	PublicKey    string `json:"public_key"`
	Upstream     string `json:"upstream,omitempty"` // previous agent; "" with --no-ssh-passthrough
	Passthrough  bool   `json:"passthrough"`        // other keys may sign through the helper
	GitSign      bool   `json:"git_sign"`           // service.sock and the Git helper
}

// Descriptors the service inherits, after stdin, stdout and stderr.
const (
	serviceStartupFD = 3 // startup data, read to EOF
	serviceStdinFD   = 4 // write end of the command's standard input
	serviceReadyFD   = 5 // the service writes "ready DIR" or "error TEXT"
)

// serviceHandle is what the launcher keeps of a started service.
type serviceHandle struct {
	stdin *os.File // read end for descriptor 0, or nil
	dir   string   // private directory with agent.sock, or ""
}

// agentSocket is the temporary agent's socket, or "" without one.
func (h *serviceHandle) agentSocket() string {
	if h == nil || h.dir == "" {
		return ""
	}
	return filepath.Join(h.dir, "agent.sock")
}

// gitSettings make Git sign through the helper: the program itself, and
// the default key for a repository without user.signingKey.
func (h *serviceHandle) gitSettings() []gitSetting {
	if h == nil || h.dir == "" {
		return nil
	}
	helper := filepath.Join(h.dir, gitSignHelperName)
	if _, err := os.Lstat(helper); err != nil {
		return nil
	}
	settings := []gitSetting{{"gpg.ssh.program", helper}}
	// Git splits the default key command at whitespace, so a helper path
	// with spaces (from TMPDIR) can only serve repositories that name
	// user.signingKey.
	if !strings.ContainsAny(helper, " \t\n") {
		settings = append(settings, gitSetting{"gpg.ssh.defaultKeyCommand", helper + " default-key"})
	}
	return settings
}

// stdinPipe is the pipe for descriptor 0, or nil.
func (h *serviceHandle) stdinPipe() *os.File {
	if h == nil {
		return nil
	}
	return h.stdin
}

// startInvocationService starts the service and waits until it is ready.
func startInvocationService(start serviceStartup) (*serviceHandle, error) {
	self, err := serviceExecutable(start.Self)
	if err != nil {
		return nil, err
	}
	startupR, startupW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer startupR.Close()
	defer startupW.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer stdinW.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		return nil, err
	}
	defer readyR.Close()
	defer readyW.Close()

	// The first copy only starts the real service and exits, so the
	// service is not a child of the command (which could not reap it). It
	// gets the caller's environment (relay URL, proxies), never a secret.
	image, err := json.Marshal(start.Self)
	if err != nil {
		stdinR.Close()
		return nil, err
	}
	cmd := exec.Command(self, serviceRole, "detach", string(image))
	cmd.ExtraFiles = []*os.File{startupR, stdinW, readyW}
	if err := cmd.Run(); err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	readyW.Close()
	data, err := json.Marshal(start)
	if err == nil {
		_, err = startupW.Write(data)
	}
	startupW.Close()
	if err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	// A read error or EOF leaves a line that is neither "ready" nor
	// "error": the service died, and the switch below says so.
	line, _ := bufio.NewReader(readyR).ReadString('\n')
	line = strings.TrimSuffix(line, "\n")
	h := &serviceHandle{}
	switch {
	case strings.HasPrefix(line, "ready"):
		h.dir = strings.TrimPrefix(strings.TrimPrefix(line, "ready"), " ")
	case strings.HasPrefix(line, "error "):
		stdinR.Close()
		return nil, fmt.Errorf("the invocation service failed: %s", strings.TrimPrefix(line, "error "))
	default:
		stdinR.Close()
		return nil, errors.New("the invocation service did not start")
	}
	if start.Stdin != nil {
		h.stdin = stdinR
	} else {
		stdinR.Close()
	}
	return h, nil
}
