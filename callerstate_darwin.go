// The caller's signal state and standard descriptors on macOS, for
// command-execution.md "Signals and process state". As on Linux, the Go
// runtime changes them before main (it installs handlers over most
// inherited SIG_IGN dispositions, unblocks termination signals on every
// thread and reopens a closed descriptor 0, 1 or 2 on /dev/null), so a
// build linked with -ldflags=-E=agentknock_rt0 enters through
// agentknock_rt0 (entry_darwin_arm64.s), which saves them through
// libSystem before the runtime starts. The open-file limit needs no
// snapshot: the runtime leaves it alone, syscall's init records it before
// raising it, and syscall.Exec puts it back.
//
// A build without the flag (or for darwin/amd64, which has no hook) falls
// back openly to what is still visible at main (callerStateLimits):
//   - ignores: the runtime keeps an inherited SIG_IGN on SIGHUP and SIGINT
//     (visible to signal.Ignored) and never touches SIGTSTP, SIGTTIN,
//     SIGTTOU and SIGCONT, so those reach the command unchanged; it
//     installs handlers over every other ignore, which execve then resets
//     to SIG_DFL;
//   - mask: every thread keeps the caller's blocked signals except those
//     the runtime unblocks; that mask is restored on the exec thread;
//   - a standard descriptor the caller closed reaches the command as the
//     runtime's /dev/null.

package main

import (
	"os/signal"
	"syscall"
)

// Written once by agentknock_rt0 before the runtime starts, read-only after.
var (
	callerActions   [31]darwinSigaction
	callerMask      uint32
	callerClosedStd uint64 // bit n: descriptor n was closed
	callerCaptured  uint64
)

type callerState struct {
	exact   bool // taken before the runtime started
	ignored [65]bool
	mask    uint64 // blocked signals, bit n-1 for signal n
	// closedStd has bit n set when the caller left descriptor n (0, 1 or
	// 2) closed; the runtime's /dev/null there is closed again before exec.
	closedStd uint8
}

// loadCallerState must run before the first signal.Notify.
func loadCallerState() callerState {
	var cs callerState
	if callerCaptured == 1 {
		cs.exact = true
		cs.ignored, cs.mask, cs.closedStd = darwinEntryState(callerActions, callerMask, callerClosedStd)
		return cs
	}
	for _, sig := range signalsIgnoreVisible {
		cs.ignored[sig] = signal.Ignored(sig)
	}
	var old uint32
	if threadSigmask(darwinSigBlock, nil, &old) == nil {
		cs.mask = uint64(old)
	}
	return cs
}

func (cs callerState) blocks(sig syscall.Signal) bool {
	return cs.mask&(1<<(uint(sig)-1)) != 0
}

func (cs callerState) describe() string {
	if cs.exact {
		return "exact (captured at process entry)"
	}
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; a standard descriptor the caller closed reaches the command as /dev/null)"
}
