// Process replacement shared by Linux and macOS: command-execution.md,
// "Common execution semantics" steps 4, 6, 8 and 9, and "Signals and
// process state": the SIGINT/SIGTERM watch while agentknock waits, the
// pending check's rule, which caller ignores can be put back at init, and
// the errors and standard-input step both hand-offs share. The hand-offs
// themselves are per platform: execCommand in exec_linux.go (whole,
// because it also holds every thread and its last steps run under the
// runtime's exec lock) and darwinReplaceProcess in darwin_decisions.go
// (the macOS order, with exec_darwin.go's libSystem steps).

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
// unless the caller (with the entry hook) blocks them, in which case they
// stay pending for the command, or ignores them, in which case agentknock
// ignores them too, as the command would. The caller's ignores and
// blocks are given back when the process starts (applyCallerSignals,
// exec_linux.go; darwinEarlySignals, exec_darwin.go), not here: the runtime replaced them before main,
// and the first hash runs before this watch exists.

// signalsIgnoreVisible are the signals whose inherited SIG_IGN the Go
// runtime keeps and signal.Ignored reports: the only ignores visible without
// a snapshot taken before the runtime started. (It never touches SIGTSTP,
// SIGTTIN, SIGTTOU and SIGCONT either, so their ignores reach the command,
// but signal.Ignored does not see them.)
var signalsIgnoreVisible = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT}

// ignorableEarly reports whether a caller's SIG_IGN on sig can be put back
// at init, the runtime still working, on Linux and macOS alike: not
// SIGKILL and SIGSTOP (the kernel refuses), the synchronous faults (the
// runtime turns them into panics), SIGCHLD (a process that ignores it has
// its children reaped by the kernel on both, so waiting for the
// invocation service would fail), SIGURG (the runtime's preemption),
// SIGPROF (profiling, and Linux's thread hold), nor the runtime's signals
// 32 and 33 (Linux's; macOS has 31 signals). Those are ignored again just
// before the exec instead (restoreCallerState, exec_linux.go;
// darwinIgnoredAtExec, which leaves SIGURG caught on macOS).
func ignorableEarly(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGKILL, unix.SIGSTOP, unix.SIGILL, unix.SIGTRAP, unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV, unix.SIGSYS,
		unix.SIGCHLD, unix.SIGURG, unix.SIGPROF, 32, 33:
		return false
	}
	return true
}

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
		case cs.exact && cs.blocks(sig):
			// Pending for the command (Linux: forwarded to the main
			// thread, also when the caller ignores it too, whose ignore
			// is set again only at the exec: signal.Ignore here would
			// let another thread discard it; macOS: deferred, then
			// raised on the exec thread, or, ignored too, left ignored
			// since init, as XNU discards an ignored signal when it is
			// sent); it does not cancel, as it would not end the command.
		case cs.ignored[sig]:
			signal.Ignore(sig)
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
