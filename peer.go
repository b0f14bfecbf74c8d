// The peer of an invocation-service socket: its PID from the kernel and the
// parent chain to require that it descends from the command
// (command-execution.md, "Invocation service"). Best effort, not a same-user
// security boundary.
package main

import (
	"errors"
	"net"
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

// descendsFrom walks parent records from pid up to owner.
func descendsFrom(pid, owner int) bool {
	for i := 0; i < 256 && pid > 1; i++ {
		if pid == owner {
			return true
		}
		next, err := parentPID(pid)
		if err != nil {
			return false
		}
		pid = next
	}
	return false
}
