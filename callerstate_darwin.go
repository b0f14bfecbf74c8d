// The caller's signal state on macOS, for command-execution.md "Signals and
// process state". There is no entry hook on macOS: Linux's snapshot is taken
// by raw system calls before the runtime starts, and macOS supports system
// calls only through libSystem, which cannot be called that early. So what
// the runtime overwrites before main is not known (callerStateLimits says
// exactly what), and the rest is restored:
//   - ignores: the runtime keeps an inherited SIG_IGN on SIGHUP and SIGINT
//     (visible to signal.Ignored) and never touches SIGTSTP, SIGTTIN,
//     SIGTTOU and SIGCONT, so those reach the command unchanged; it
//     installs handlers over every other ignore, which execve then resets
//     to SIG_DFL;
//   - mask: every thread keeps the caller's blocked signals except those
//     the runtime unblocks; that mask is restored on the exec thread;
//   - open-file limit: syscall.Exec restores the caller's soft limit.

package main

import (
	"os/signal"
	"syscall"
)

type callerState struct {
	ignored [65]bool
	mask    uint64 // the caller's mask less what the runtime unblocks
	// closedStd stays 0: without an entry hook a descriptor the caller
	// closed cannot be told from the runtime's /dev/null.
	closedStd uint8
}

// loadCallerState must run before the first signal.Notify.
func loadCallerState() callerState {
	var cs callerState
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
	return "approximate (macOS, no entry hook: " + callerStateLimits + ")"
}
