//go:build agentknock_testapproval

// The test approval's thread-directed signal on Linux (approval_testhook.go).

package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// raiseOnThisThread makes sig pending on the calling thread only.
func raiseOnThisThread(sig syscall.Signal) { unix.Tgkill(unix.Getpid(), unix.Gettid(), sig) }
