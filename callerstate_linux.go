// The caller's signal state and open-file limit, for command-execution.md
// "Signals and process state": the command must get the caller's signal
// mask, ignored signals (SIGPIPE excepted) and RLIMIT_NOFILE.
//
// The Go runtime changes all three before main runs (it installs handlers
// over most inherited SIG_IGN dispositions, unblocks termination signals on
// every thread, and raises the soft file limit); ../shared/notes has the
// measurements. What it overwrites can only be read before it starts, so the
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
	callerCaptured    uint64
)

// callerState is what the command must inherit.
type callerState struct {
	exact   bool         // taken before the runtime started
	ignored [65]bool     // by signal number
	mask    uint64       // blocked signals, bit n-1 for signal n
	nofile  *unix.Rlimit // nil when unknown
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
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; the caller's open-file limit is not restored)"
}
