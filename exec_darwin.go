// Process replacement on macOS: command-execution.md, "macOS
// implementation", "Process replacement", with the common hand-off of
// "Signals and process state" (replaceProcess, exec.go). execve of the
// captured absolute path for binaries and scripts alike; the identity and
// hash checks (revalidate) are the last step before it. The path can still
// be replaced between that check and execve; macOS offers no descriptor
// execution to close that race.

package main

import (
	"os"
	"runtime"
	"syscall"
)

// execCommand returns only on failure.
func execCommand(wd workdir, x *executable, argv, env []string, stdin *os.File, cs callerState, watch *signalWatch) error {
	return replaceProcess(&darwinHandOff{wd: wd, x: x, argv: argv, env: env, stdin: stdin, cs: cs, watch: watch}, watch.testOnlyAfterBlock)
}

type darwinHandOff struct {
	wd          workdir
	x           *executable
	argv, env   []string
	stdin       *os.File
	cs          callerState
	watch       *signalWatch
	threadMask  uint32 // the thread's mask before blockTermination
	maskChanged bool
}

// blockTermination blocks SIGINT and SIGTERM on this thread only. Their
// dispositions need no change: once signal.Stop has run, the Go handler
// ends the process by the signal itself (as SIG_DFL would end the
// command), and the ones the caller ignores were set to SIG_IGN at the
// start of the wait.
func (h *darwinHandOff) blockTermination() error {
	runtime.LockOSThread()
	set := terminationSet()
	if err := threadSigmask(darwinSigBlock, &set, &h.threadMask); err != nil {
		return err
	}
	h.maskChanged = true
	return nil
}

func (h *darwinHandOff) stopWatching() syscall.Signal { return h.watch.stop() }

func (h *darwinHandOff) pendingTermination() syscall.Signal {
	pending, err := threadPendingSignals()
	if err != nil {
		return 0
	}
	return pendingTermination(uint64(pending), h.cs)
}

// restoreCallerState puts back the thread's mask, which is the caller's
// mask less the signals the Go runtime unblocks (callerstate_darwin.go).
// Caught signals, SIGPIPE among them, become SIG_DFL at execve; inherited
// ignores the runtime left alone are still in place.
func (h *darwinHandOff) restoreCallerState() error {
	if !h.maskChanged {
		return nil
	}
	return threadSigmask(darwinSigSetmask, &h.threadMask, nil)
}

func (h *darwinHandOff) connectStdin() error { return becomeStdin(h.stdin) }

func (h *darwinHandOff) lastCheck() error { return h.x.revalidate(h.wd) }

// exec uses syscall.Exec for the runtime's exec lock and its restoration
// of the open-file limit the runtime raised.
func (h *darwinHandOff) exec() error { return syscall.Exec(h.x.path, h.argv, h.env) }

// terminationSet is SIGINT and SIGTERM as a macOS sigset_t.
func terminationSet() uint32 {
	return 1<<(uint(syscall.SIGINT)-1) | 1<<(uint(syscall.SIGTERM)-1)
}
