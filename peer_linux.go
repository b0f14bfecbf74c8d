// The peer PID of a Unix socket on Linux: SO_PEERCRED.

package main

import "golang.org/x/sys/unix"

func socketPeerPID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}
