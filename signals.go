// Termination signals while agentknock waits: command-execution.md,
// "Signals and process state". SIGINT and SIGTERM cancel the operation
// unless the caller ignores them, in which case agentknock ignores them too,
// as the command would, or (Linux, with the entry hook) blocks them, in
// which case they stay pending for the command. The caller's ignores and
// blocks are given back when the process starts (applyCallerSignals,
// callerstate_linux.go), not here: the runtime replaced them before main,
// and the first hash runs before this watch exists.

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalsIgnoreVisible are the signals whose inherited SIG_IGN the Go
// runtime keeps and signal.Ignored reports: the only ignores visible without
// a snapshot taken before the runtime started. (It never touches SIGTSTP,
// SIGTTIN, SIGTTOU and SIGCONT either, so their ignores reach the command,
// but signal.Ignored does not see them.)
var signalsIgnoreVisible = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT}

// signalWatch receives SIGINT and SIGTERM from the Go handler. Only one
// goroutine reads it: the one that waits for approval and then execs.
type signalWatch struct {
	ch chan os.Signal
	// testOnlyAfterBlock, set only by the agentknock_testapproval build,
	// runs once the hand-off has blocked SIGINT and SIGTERM, so a test can
	// make a signal pending at exactly that point.
	testOnlyAfterBlock func()
}

func watchTermination(cs callerState) *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 4)}
	var caught []os.Signal
	for _, sig := range []syscall.Signal{unix.SIGINT, unix.SIGTERM} {
		switch {
		case cs.ignored[sig]:
			signal.Ignore(sig)
		case cs.blocks(sig):
			// Pending for the command (Linux: forwarded to the main
			// thread); it does not cancel, as it would not end the command.
		default:
			caught = append(caught, sig)
		}
	}
	if len(caught) > 0 {
		signal.Notify(w.ch, caught...)
	}
	return w
}

// stop ends Go's handling and reports a signal that was already caught.
// signal.Stop returns only after every caught signal reached the channel.
func (w *signalWatch) stop() syscall.Signal {
	signal.Stop(w.ch)
	select {
	case sig := <-w.ch:
		return sig.(syscall.Signal)
	default:
		return 0
	}
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case unix.SIGINT:
		return "SIGINT"
	case unix.SIGTERM:
		return "SIGTERM"
	}
	return unix.SignalName(sig)
}

// exitStatusFor is the conventional shell status for death by sig.
func exitStatusFor(sig syscall.Signal) int { return 128 + int(sig) }

func toSignal(s os.Signal) syscall.Signal { return s.(syscall.Signal) }

// callerStateLimits is what a build without a snapshot taken before the Go
// runtime started cannot give the command (measured on Go 1.26: the
// runtime's signal table and its minit mask, runtime/signal_unix.go).
const callerStateLimits = "a caller's SIG_IGN on signals other than SIGHUP, SIGINT and job control is lost, " +
	"and so is a caller's block on SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGURG, SIGPROF and the synchronous signals"

// pendingTermination reports a SIGINT or SIGTERM in the pending set that
// the caller neither ignores nor blocks: one that arrived during the
// hand-off, which the command must not outlive.
func pendingTermination(pending uint64, cs callerState) syscall.Signal {
	for _, sig := range []syscall.Signal{unix.SIGINT, unix.SIGTERM} {
		if pending&(1<<(uint(sig)-1)) != 0 && !cs.blocks(sig) && !cs.ignored[sig] {
			return sig
		}
	}
	return 0
}
