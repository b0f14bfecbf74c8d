// Process replacement shared by Linux and macOS: command-execution.md,
// "Common execution semantics" steps 4, 6, 8 and 9, and "Signals and
// process state": the SIGINT/SIGTERM watch while agentknock waits, the
// pending check's rule, and the macOS hand-off's order (replaceProcess).
// On Linux the hand-off is execCommand in exec_linux.go, whole, because it
// also holds every thread and its last steps must run under the runtime's
// exec lock.

package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// interrupted is a termination signal that arrived before the exec: the
// command does not run.
type interrupted struct{ sig syscall.Signal }

// Error words it as the reference client does ("received a signal"), with
// the signal named.
func (e *interrupted) Error() string {
	return "Agentknock received a signal (interrupted by " + signalName(e.sig) + ")"
}

// handOffSteps are macOS's primitives for the hand-off from the approval
// wait to the command (exec_darwin.go).
type handOffSteps interface {
	// blockTermination blocks SIGINT and SIGTERM on the calling (locked)
	// thread and, where the platform needs it, gives them back to the
	// caller's disposition.
	blockTermination() error
	// stopWatching ends Go's handling of SIGINT and SIGTERM once every
	// signal already caught has been delivered, and reports one.
	stopWatching() syscall.Signal
	// pendingTermination reports a SIGINT or SIGTERM pending on the thread.
	pendingTermination() syscall.Signal
	// restoreCallerState puts back the caller's ignores, file limit and
	// mask as far as the platform knows them, with SIGPIPE at its default.
	restoreCallerState() error
	// connectStdin makes the service's pipe descriptor 0.
	connectStdin() error
	// lastCheck requires the retained executable to be what was approved.
	lastCheck() error
	// exec replaces the process; it returns only on failure.
	exec() error
}

// replaceProcess runs the hand-off in the spec's order ("Common execution
// semantics": revalidate, then check for a pending signal, then replace;
// "Signals and process state": block, check, restore), which also loses no
// signal: the Go handler is stopped only after the signals are blocked on
// this thread (signal.Stop waits for every caught signal to reach the
// channel; resetting a signal first would drop the channel and any signal
// still in flight); the executable is checked while the launcher still
// runs with its own limits, so no check can fail for want of a descriptor
// the command's limit would not give; the pending set is read after the
// check, so a signal that arrived during a long hash stops the run; and the
// caller's state is restored last, after which only the standard-input
// dup2 runs before execve.
// testOnlyAfterBlock lets a test make a signal pending at exactly that point.
func replaceProcess(s handOffSteps, testOnlyAfterBlock func()) error {
	if err := s.blockTermination(); err != nil {
		return err
	}
	if testOnlyAfterBlock != nil {
		testOnlyAfterBlock()
	}
	if sig := s.stopWatching(); sig != 0 {
		return &interrupted{sig}
	}
	if err := s.lastCheck(); err != nil {
		return &revalidationError{err}
	}
	if sig := s.pendingTermination(); sig != 0 {
		return &interrupted{sig}
	}
	if err := s.restoreCallerState(); err != nil {
		return err
	}
	traceStep("signals handed off")
	// The pipe becomes standard input only now, so that every earlier
	// failure leaves the caller's standard input in place.
	if err := s.connectStdin(); err != nil {
		return err
	}
	traceFlush()
	return s.exec()
}

// becomeStdin puts the service's pipe on descriptor 0, inheritable, just
// before exec (nil: standard input stays the caller's). When the caller had
// closed descriptor 0, the pipe may already be there, still close-on-exec.
func becomeStdin(f *os.File) error {
	if f == nil {
		return nil
	}
	fd := int(f.Fd())
	if fd == 0 {
		_, err := unix.FcntlInt(0, unix.F_SETFD, 0)
		return err
	}
	return unix.Dup2(fd, 0)
}

// revalidationError is a failed last check of the executable: the run
// reports it as it stands, since it already names the file and the reason.
type revalidationError struct{ err error }

func (e *revalidationError) Error() string { return e.err.Error() }
func (e *revalidationError) Unwrap() error { return e.err }

// Termination signals while agentknock waits: command-execution.md,
// "Signals and process state". SIGINT and SIGTERM cancel the operation
// unless the caller ignores them, in which case agentknock ignores them too,
// as the command would, or (with the entry hook) blocks them, in which
// case they stay pending for the command. The caller's ignores and
// blocks are given back when the process starts (applyCallerSignals,
// exec_linux.go; darwinEarlySignals, exec_darwin.go), not here: the runtime replaced them before main,
// and the first hash runs before this watch exists.

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
	// deferred catches the signals the caller blocks that the platform
	// keeps for the command itself (deferredTermination; macOS only).
	deferred deferredSignals
	// testOnlyAfterBlock, set only by the agentknock_testapproval build,
	// runs once the hand-off has blocked SIGINT and SIGTERM, so a test can
	// make a signal pending at exactly that point.
	testOnlyAfterBlock func()
}

func watchTermination(cs callerState) *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 4), deferred: catchDeferred(deferredTermination(runtime.GOOS, cs))}
	var caught []os.Signal
	for _, sig := range []syscall.Signal{unix.SIGINT, unix.SIGTERM} {
		switch {
		case cs.ignored[sig]:
			signal.Ignore(sig)
		case cs.blocks(sig):
			// Pending for the command (Linux: forwarded to the main
			// thread; macOS: deferred, then raised on the exec thread);
			// it does not cancel, as it would not end the command.
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

// blocks reports whether the caller had sig blocked (callerState's mask
// has bit sig-1 set, as the kernel's sigset does, on both platforms).
func (cs callerState) blocks(sig syscall.Signal) bool {
	return cs.mask&(1<<(uint(sig)-1)) != 0
}
