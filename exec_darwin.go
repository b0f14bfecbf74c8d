// Process replacement on macOS: command-execution.md, "macOS
// implementation", "Process replacement", with the common hand-off of
// "Signals and process state" (replaceProcess, exec.go). execve of the
// candidate pathname for binaries and scripts alike (darwinExecPath: what
// a shell would pass, so a virtualenv's python and a script's $0 behave as
// without agentknock); the identity and hash checks of that name
// (revalidate) come just before it. The path can still be replaced
// between that check and execve; macOS offers no descriptor execution to
// close that race.

package main

import (
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
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

// pendingTermination sees this thread's pending signals only (macOS's
// sigpending; threadPendingSignals says which those are).
func (h *darwinHandOff) pendingTermination() syscall.Signal {
	pending, err := threadPendingSignals()
	if err != nil {
		return 0
	}
	return pendingTermination(uint64(pending), h.cs)
}

// restoreCallerState puts back, with a snapshot from agentknock_rt0, the
// caller's ignores (SIGPIPE stays caught, so execve makes it SIG_DFL) and
// mask; without one, the thread's mask from before the block, which is the
// caller's mask less the signals the Go runtime unblocks. Caught signals
// become SIG_DFL at execve; inherited ignores the runtime left alone are
// still in place. The open-file limit is syscall.Exec's.
func (h *darwinHandOff) restoreCallerState() error {
	if !h.maskChanged {
		return nil
	}
	mask := h.threadMask
	if h.cs.exact {
		for sig := 1; sig <= 31; sig++ {
			if h.cs.ignored[sig] && sig != int(unix.SIGPIPE) && sig != int(unix.SIGKILL) && sig != int(unix.SIGSTOP) {
				if err := setDisposition(syscall.Signal(sig), darwinSigIgn); err != nil {
					return err
				}
			}
		}
		mask = uint32(h.cs.mask)
	}
	return threadSigmask(darwinSigSetmask, &mask, nil)
}

func (h *darwinHandOff) connectStdin() error { return becomeStdin(h.stdin) }

func (h *darwinHandOff) lastCheck() error { return h.x.revalidate(h.wd) }

// exec closes again a standard descriptor the caller left closed (known
// only with the entry snapshot; descriptor 0 stays when it is the
// service's pipe), then uses syscall.Exec for the runtime's exec lock and
// its restoration of the open-file limit the runtime raised.
func (h *darwinHandOff) exec() error {
	for fd := 0; fd < 3; fd++ {
		if h.cs.closedStd&(1<<fd) != 0 && !(fd == 0 && h.stdin != nil) {
			// The command must not inherit the runtime's /dev/null
			// either way; a failed close changes nothing for it.
			_ = unix.Close(fd)
		}
	}
	return syscall.Exec(darwinExecPath(h.x), h.argv, h.env)
}

// terminationSet is SIGINT and SIGTERM as a macOS sigset_t.
func terminationSet() uint32 {
	return 1<<(uint(syscall.SIGINT)-1) | 1<<(uint(syscall.SIGTERM)-1)
}
