// The caller's signal state on macOS, for command-execution.md "Signals and
// process state". There is no entry hook on macOS (system calls go through
// libSystem, which is not usable before the runtime starts), so only what the
// runtime leaves visible is known: the inherited SIG_IGN of SIGHUP, SIGINT
// and the job-control signals. syscall.Exec restores the open-file limit.
package main

import (
	"os/signal"
)

type callerState struct {
	ignored [65]bool
}

func loadCallerState() callerState {
	var cs callerState
	for _, sig := range signalsKeptIgnored {
		cs.ignored[sig] = signal.Ignored(sig)
	}
	return cs
}

func (cs callerState) describe() string {
	return "approximate (macOS: ignored signals other than SIGHUP, SIGINT and job control, and signals the Go runtime unblocks, are not restored)"
}
