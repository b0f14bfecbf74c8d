// The caller's signal state, open-file limit and standard descriptors, for
// command-execution.md "Signals and process state": the command must get the
// caller's signal mask, ignored signals (SIGPIPE excepted), RLIMIT_NOFILE
// and standard streams.
//
// The Go runtime changes all of them before main runs (it installs handlers
// over most inherited SIG_IGN dispositions, unblocks termination signals on
// every thread, raises the soft file limit and reopens a closed descriptor
// 0, 1 or 2 on /dev/null). What it overwrites can only be read before it starts, so the
// release build enters through agentknock_rt0 (entry_linux_*.s, linked with
// -ldflags=-E=agentknock_rt0), which saves the state with raw system calls
// and jumps to the runtime's own entry. A build without that flag (plain
// `go build`, `go install`) has no snapshot; it falls back openly to what is
// still visible at main, and --version and --verbose say so.

package main

import (
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

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
	callerClosedStd   uint64 // bit n: descriptor n was closed
	callerCaptured    uint64
)

// lowLimitMessage is what agentknock_rt0 writes before exiting when the
// open-file limit leaves the runtime no room to start. Never changed.
//
//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
var lowLimitMessage = messagePrefix + "the open-file limit (ulimit -n) is too low for agentknock to start; raise it (a run needs about 32 descriptors).\n"

// callerState is what the command must inherit.
type callerState struct {
	exact   bool         // taken before the runtime started
	ignored [65]bool     // by signal number
	mask    uint64       // blocked signals, bit n-1 for signal n
	nofile  *unix.Rlimit // nil when unknown
	// closedStd has bit n set when the caller left descriptor n (0, 1 or
	// 2) closed; the runtime's /dev/null there is closed again before exec.
	closedStd uint8
}

// forwardHandler and forwardRestorer are the addresses of
// agentknock_forward and agentknock_sigreturn (entry_linux_*.s).
var forwardHandler, forwardRestorer uintptr

const (
	saOnstack  = 0x08000000
	saRestart  = 0x10000000
	saRestorer = 0x04000000
)

// The signals the runtime unblocks on every thread and acts on by ending
// the process (SIGHUP, SIGINT, SIGTERM) or with a goroutine dump (SIGQUIT).
var runtimeUnblocked = []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM}

// init gives the caller's signal state back before the run does anything
// (command-execution.md, "Signals and process state": the launcher is the
// command-to-be, and a signal must act on it as it would on the command).
// What the runtime did between its start and here (main is reached about
// 3 ms after the exec, 1.3 ms of it package initialisation) cannot be
// undone: a signal in that window meets the runtime's handlers.
//
// The main goroutine stays on the main thread (the thread group leader) for
// the whole process: it is the thread that execs, so a signal pending on it
// is pending in the command, and it is where signals the caller blocked are
// sent on.
func init() {
	runtime.LockOSThread()
	applyCallerSignals(loadCallerState())
}

// applyCallerSignals makes, from now until the exec:
//   - every signal the caller ignored ignored again, except those the
//     runtime needs to work (synchronous faults, SIGCHLD for waiting on the
//     service, SIGURG for preemption, SIGPROF, and its signals 32 and 33),
//     which are ignored again only just before the exec;
//   - SIGQUIT at the kernel's default when the caller left it there, instead
//     of the runtime's goroutine dump, which no caller asked for;
//   - each of SIGHUP, SIGINT, SIGQUIT and SIGTERM that the caller blocked
//     blocked on this thread again and, on every other thread (where the
//     runtime unblocks them), sent on to this one by agentknock_forward, so
//     that it stays pending until the command unblocks it, as after a
//     direct exec.
//
// A build without the entry hook knows only SIGHUP's and SIGINT's ignores
// and nothing of the blocks; it only replaces SIGQUIT's dump by the
// default.
func applyCallerSignals(cs callerState) {
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if cs.ignored[sig] && ignorableEarly(sig) {
			_ = setDisposition(sig, sigIGN)
		}
	}
	if !cs.ignored[unix.SIGQUIT] && !cs.blocks(unix.SIGQUIT) {
		_ = setDisposition(unix.SIGQUIT, sigDFL)
	}
	if !cs.exact {
		return
	}
	var block unix.Sigset_t
	for _, sig := range runtimeUnblocked {
		if cs.blocks(sig) && !cs.ignored[sig] {
			block.Val[0] |= 1 << (uint(sig) - 1)
		}
	}
	if block.Val[0] == 0 {
		return
	}
	if unix.PthreadSigmask(unix.SIG_BLOCK, &block, nil) != nil {
		return
	}
	for _, sig := range runtimeUnblocked {
		if block.Val[0]&(1<<(uint(sig)-1)) != 0 {
			act := kernelSigaction{Handler: uint64(forwardHandler), Flags: saOnstack | saRestart | saRestorer,
				Restorer: uint64(forwardRestorer), Mask: ^uint64(0)}
			unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
		}
	}
}

// ignorableEarly reports whether the runtime keeps working with sig
// ignored.
func ignorableEarly(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGKILL, unix.SIGSTOP, unix.SIGILL, unix.SIGTRAP, unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV, unix.SIGSYS,
		unix.SIGCHLD, unix.SIGURG, unix.SIGPROF, 32, 33:
		return false
	}
	return true
}

// forwarded reports whether a signal the caller blocked is sent on to the
// main thread (applyCallerSignals), so that nothing else may change its
// disposition before the exec.
func (cs callerState) forwarded(sig syscall.Signal) bool {
	return cs.exact && cs.blocks(sig) && !cs.ignored[sig]
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
		cs.closedStd = uint8(callerClosedStd & 7)
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
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; the caller's open-file limit is not restored, and a standard descriptor the caller closed cannot be told from /dev/null)"
}
