// Process replacement shared by Linux and macOS: command-execution.md,
// "Common execution semantics" steps 6, 8 and 9, and "Signals and process
// state". The platform files provide the steps; the order is here, once.

package main

import (
	"os"
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

// handOffSteps are one platform's primitives for the hand-off from the
// approval wait to the command.
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

// replaceProcess runs the hand-off in the order that loses no signal: the
// Go handler is stopped only after the signals are blocked on this thread
// (signal.Stop waits for every caught signal to reach the channel; resetting
// a signal first would drop the channel and any signal still in flight),
// the pending set is read after that, and the executable is checked last
// (only the standard-input dup2 follows), so that nothing waits between the
// check and execve.
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
	if sig := s.pendingTermination(); sig != 0 {
		return &interrupted{sig}
	}
	if err := s.restoreCallerState(); err != nil {
		return err
	}
	traceStep("signals handed off")
	if err := s.lastCheck(); err != nil {
		return &revalidationError{err}
	}
	// The pipe becomes standard input only now, so that every earlier
	// failure, the last check's included, leaves the caller's standard
	// input in place; a dup2 waits on nothing.
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
