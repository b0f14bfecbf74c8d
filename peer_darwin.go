// The peer of an invocation-service socket on macOS: LOCAL_PEERPID and the
// kinfo_proc parent chain (command-execution.md, "macOS implementation",
// "Invocation service").
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
	if err := raw.Control(func(fd uintptr) {
		pid, pidErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return 0, err
	}
	return pid, pidErr
}

func descendsFrom(pid, owner int) bool {
	for i := 0; i < 256 && pid > 1; i++ {
		if pid == owner {
			return true
		}
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil {
			return false
		}
		pid = int(kp.Eproc.Ppid)
	}
	return false
}
