// The caller's signal state, open-file limit and standard descriptors, for
// command-execution.md "Signals and process state": the command must get the
// caller's signal mask, ignored signals (SIGPIPE excepted), RLIMIT_NOFILE
// and standard streams.
//
// The Go runtime changes all of them before main runs (it installs handlers
// over most inherited SIG_IGN dispositions, unblocks termination signals on
// every thread, raises the soft file limit and reopens a closed descriptor
// 0, 1 or 2 on /dev/null). What it overwrites can only be read before it starts, so the
// release build enters through agentknock_rt0 (entry_linux_*.s, linked with
// -ldflags=-E=agentknock_rt0), which saves the state with raw system calls
// and jumps to the runtime's own entry. A build without that flag (plain
// `go build`, `go install`) has no snapshot; it falls back openly to what is
// still visible at main, and --version and --verbose say so.

package main

import (
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// kernelSigaction is struct sigaction as rt_sigaction(2) reads and writes it
// on amd64 and arm64.
type kernelSigaction struct {
	Handler  uint64
	Flags    uint64
	Restorer uint64
	Mask     uint64
}

const (
	sigDFL = 0
	sigIGN = 1
)

// Written once by agentknock_rt0 before the runtime starts, read-only after.
var (
	callerActions     [64]kernelSigaction
	callerMask        uint64
	callerNofile      [2]uint64
	callerNofileSaved uint64
	callerClosedStd   uint64 // bit n: descriptor n was closed
	callerCaptured    uint64
)

// lowLimitMessage is what agentknock_rt0 writes before exiting when the
// open-file limit leaves the runtime no room to start. Never changed.
//
//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
var lowLimitMessage = messagePrefix + "the open-file limit (ulimit -n) is too low for agentknock to start; raise it (a run needs about 32 descriptors).\n"

// callerState is what the command must inherit.
type callerState struct {
	exact   bool         // taken before the runtime started
	ignored [65]bool     // by signal number
	mask    uint64       // blocked signals, bit n-1 for signal n
	nofile  *unix.Rlimit // nil when unknown
	// closedStd has bit n set when the caller left descriptor n (0, 1 or
	// 2) closed; the runtime's /dev/null there is closed again before exec.
	closedStd uint8
}

// loadCallerState must run before the first signal.Notify.
func loadCallerState() callerState {
	var cs callerState
	if callerCaptured == 1 {
		cs.exact = true
		for i, a := range callerActions {
			cs.ignored[i+1] = a.Handler == sigIGN
		}
		cs.mask = callerMask
		cs.closedStd = uint8(callerClosedStd & 7)
		if callerNofileSaved == 1 {
			cs.nofile = &unix.Rlimit{Cur: callerNofile[0], Max: callerNofile[1]}
		}
		return cs
	}
	for _, sig := range signalsIgnoreVisible {
		cs.ignored[sig] = signal.Ignored(sig)
	}
	var old unix.Sigset_t
	if unix.PthreadSigmask(unix.SIG_BLOCK, nil, &old) == nil {
		cs.mask = old.Val[0]
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
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; the caller's open-file limit is not restored, and a standard descriptor the caller closed cannot be told from /dev/null)"
}
