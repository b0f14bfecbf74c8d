// Termination signals while agentknock waits: command-execution.md,
// "Signals and process state". SIGINT and SIGTERM cancel the operation
// unless the caller ignores them, in which case agentknock ignores them too,
// as the command would.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalsKeptIgnored are the signals whose inherited SIG_IGN the Go runtime
// leaves in place: the only ignores still visible without a snapshot taken
// before the runtime started.
var signalsKeptIgnored = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// signalWatch receives SIGINT and SIGTERM from the Go handler. Only one
// goroutine reads it: the one that waits for approval and then execs.
type signalWatch struct {
	ch chan os.Signal
	// afterBlock, when set (only by the agentknock_testapproval build), runs
	// once the hand-off has blocked SIGINT and SIGTERM, so a test can make a
	// signal pending at exactly that point.
	afterBlock func()
}

func watchTermination(cs callerState) *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 4)}
	var caught []os.Signal
	for _, sig := range []syscall.Signal{unix.SIGINT, unix.SIGTERM} {
		if cs.ignored[sig] {
			signal.Ignore(sig)
		} else {
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
