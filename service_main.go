// The invocation service process (command-execution.md, "Invocation
// service, standard input, and SSH operations"): started twice through the
// hidden serviceRole argument, first as a short-lived copy that detaches
// the service into its own session, then as the service, which reads its
// startup data, watches the owner, starts the SSH agent when asked, reports
// readiness and writes the standard-input value.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// serviceMain is the service process; with "detach" it is the short-lived
// first copy that starts it.
func serviceMain(args []string) int {
	var st unix.Stat_t
	for _, fd := range []int{serviceStartupFD, serviceStdinFD, serviceReadyFD} {
		if unix.Fstat(fd, &st) != nil {
			fmt.Fprintln(os.Stderr, messagePrefix+"the invocation service is started by agentknock run, not by hand")
			return 2
		}
	}
	startupPipe := os.NewFile(serviceStartupFD, "startup")
	stdinPipe := os.NewFile(serviceStdinFD, "stdin")
	ready := os.NewFile(serviceReadyFD, "ready")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(ready, "error "+format+"\n", a...)
		return 1
	}
	if len(args) == 2 && args[0] == "detach" {
		var image selfImage
		if err := json.Unmarshal([]byte(args[1]), &image); err != nil {
			return fail("unreadable startup data")
		}
		self, err := serviceExecutable(image)
		if err != nil {
			return fail("%v", err)
		}
		cmd := exec.Command(self, serviceRole)
		cmd.ExtraFiles = []*os.File{startupPipe, stdinPipe, ready}
		// Its own session: a terminal's Ctrl-C or hangup for the command's
		// process group does not reach the service.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fail("cannot start: %v", err)
		}
		return 0
	}

	data, err := io.ReadAll(startupPipe)
	startupPipe.Close()
	var start serviceStartup
	if err == nil {
		err = json.Unmarshal(data, &start)
	}
	// The owner may be PID 1: a container's entrypoint.
	if err != nil || start.OwnerPID < 1 {
		return fail("unreadable startup data")
	}
	ownerGone, err := watchOwner(start.OwnerPID)
	if err != nil {
		return fail("cannot watch the command: %v", err)
	}

	var agent *sshAgentService
	if start.SSH != nil {
		if agent, err = startSSHAgent(start.SSH, start.Self, start.OwnerPID, ownerGone); err != nil {
			return fail("%v", err)
		}
		defer agent.close()
	}
	dir := ""
	if agent != nil {
		dir = agent.dir
	}
	fmt.Fprintf(ready, "ready %s\n", dir)
	ready.Close()

	// A dedicated writer: the value may exceed the pipe buffer, and the
	// command reads it at its own pace (or never).
	written := make(chan error, 1)
	if start.Stdin != nil {
		go func() {
			_, err := io.WriteString(stdinPipe, *start.Stdin)
			stdinPipe.Close()
			written <- err
		}()
	} else {
		stdinPipe.Close()
		written <- nil
	}
	if agent == nil {
		select {
		case <-written:
		case <-ownerGone:
		}
		return 0
	}
	<-ownerGone
	return 0
}
