// The invocation service, standard-input delivery: command-execution.md,
// "Invocation service, standard input, and SSH operations" (step 5 of the
// run sequence). A separate copy of this executable, started before the
// launcher replaces itself, writes the approved value to a pipe that becomes
// the command's standard input. It exits when the value is written or when
// the command (the owner PID, which the exec keeps) exits.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// serviceRole is the hidden first argument that starts the service.
const serviceRole = "__agentknock-invocation-service"

// serviceStartup is what the launcher sends the service through its private
// startup pipe. It never appears on a command line or in the environment.
// (The SSH operations will add the invocation id, token and key here.)
type serviceStartup struct {
	OwnerPID int    `json:"owner_pid"`
	Stdin    string `json:"stdin"`
}

// Descriptors the service inherits, after stdin, stdout and stderr.
const (
	serviceStartupFD = 3
	serviceStdinFD   = 4
)

// startInvocationService starts the service and returns the read end of
// the standard-input pipe, which the launcher puts on descriptor 0 just
// before exec.
func startInvocationService(start serviceStartup) (*os.File, error) {
	self, err := serviceExecutable()
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

	// The first copy only starts the real service and exits, so the
	// service is not a child of the command (which could not reap it).
	cmd := exec.Command(self, serviceRole, "detach")
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{startupR, stdinW}
	if err := cmd.Run(); err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	data, err := json.Marshal(start)
	if err == nil {
		_, err = startupW.Write(data)
	}
	if err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	return stdinR, nil
}

// serviceMain is the service process; with "detach" it is the short-lived
// first copy that starts it.
func serviceMain(args []string) int {
	startupPipe := os.NewFile(serviceStartupFD, "startup")
	stdinPipe := os.NewFile(serviceStdinFD, "stdin")
	var st syscall.Stat_t
	if syscall.Fstat(serviceStartupFD, &st) != nil || syscall.Fstat(serviceStdinFD, &st) != nil {
		fmt.Fprintln(os.Stderr, messagePrefix+"the invocation service is started by agentknock run, not by hand")
		return 2
	}
	if len(args) > 0 && args[0] == "detach" {
		self, err := serviceExecutable()
		if err != nil {
			return 1
		}
		cmd := exec.Command(self, serviceRole)
		cmd.Env = []string{}
		cmd.ExtraFiles = []*os.File{startupPipe, stdinPipe}
		// Its own session: a terminal's Ctrl-C or hangup for the command's
		// process group does not reach the service.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return 1
		}
		return 0
	}
	data, err := io.ReadAll(startupPipe)
	startupPipe.Close()
	var start serviceStartup
	if err == nil {
		err = json.Unmarshal(data, &start)
	}
	if err != nil || start.OwnerPID <= 1 {
		return 1
	}
	ownerGone, err := watchOwner(start.OwnerPID)
	if err != nil {
		return 1
	}
	// A dedicated writer: the value may exceed the pipe buffer, and the
	// command reads it at its own pace (or never).
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(stdinPipe, start.Stdin)
		stdinPipe.Close()
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil && !errors.Is(err, syscall.EPIPE) {
			return 1
		}
	case <-ownerGone:
	}
	return 0
}

// becomeStdin puts the service's pipe on descriptor 0, inheritable, just
// before exec (nil: standard input stays the caller's). When the caller had
// closed descriptor 0, the pipe may already be there, still close-on-exec.
func becomeStdin(f *os.File) error {
	if f == nil {
		return nil
	}
	fd := int(f.Fd())
	if fd == 0 {
		_, err := unix.FcntlInt(0, unix.F_SETFD, 0)
		return err
	}
	return unix.Dup2(fd, 0)
}
