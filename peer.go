// The peer of an invocation-service socket: its PID from the kernel and the
// parent chain to require that it descends from the command
// (command-execution.md, "Invocation service"). Best effort, not a same-user
// security boundary.

package main

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

func peerPID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pid int
	var pidErr error
	if err := raw.Control(func(fd uintptr) { pid, pidErr = socketPeerPID(int(fd)) }); err != nil {
		return 0, err
	}
	return pid, pidErr
}

// descendsFrom walks parent records from pid up to owner. Every process the
// service can see descends from the init of its PID namespace (a peer
// outside it has PID 0), so an owner that is PID 1 accepts them all. Where
// parent records cannot be read at all (no /proc and a kernel without
// PIDFD_GET_INFO), the weaker same-session check stands in, as in the
// reference client (https://github.com/agentknock/agentknock-cli).
func descendsFrom(pid, owner int) bool {
	if pid <= 0 {
		return false
	}
	if owner == 1 {
		return true
	}
	peer := pid
	for i := 0; i < 256 && pid > 1; i++ {
		if pid == owner {
			return true
		}
		next, err := parentPID(pid)
		if errors.Is(err, errNoParentRecords) {
			return sameSession(peer, owner)
		}
		if err != nil {
			return false
		}
		pid = next
	}
	return false
}

// errNoParentRecords is parentPID's answer when this host has no way to read
// any process's parent.
var errNoParentRecords = errors.New("parent process records cannot be read here")

// sameSession reports whether pid is in the owner's session. The service's
// directory (mode 0700) already limits peers to the same user.
func sameSession(pid, owner int) bool {
	a, err := unix.Getsid(pid)
	if err != nil {
		return false
	}
	b, err := unix.Getsid(owner)
	return err == nil && a == b
}
