// Process replacement on macOS, in the order it runs: the host facilities
// checked before the request (the Darwin release floor), the caller's
// signal state, and the hand-off and exec (command-execution.md, "macOS
// implementation", "Process replacement", with the hand-off order of
// "Signals and process state", darwinReplaceProcess in darwin_decisions.go). execve of the
// candidate pathname for binaries and scripts alike (darwinExecPath: what
// a shell would pass, so a virtualenv's python and a script's $0 behave as
// without agentknock); the identity and hash checks of that name
// (revalidate) come just before it. The path can still be replaced
// between that check and execve; macOS offers no descriptor execution to
// close that race. The libSystem functions this path calls, and that
// x/sys/unix does not wrap, close the file (trampolines in libc_darwin.s).

package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func checkHostFacilities(runNeeds) error {
	release, err := unix.Sysctl("kern.osrelease")
	if err != nil {
		release = ""
	}
	product, _ := unix.Sysctl("kern.osproductversion")
	return checkDarwinRelease(release, product)
}

// runDescriptors is unused on macOS, where the runtime's poller (kqueue)
// is one descriptor and low limits have not shown this failure.
const runDescriptors = 0

func checkDescriptors(int, bool) error { return nil }

// The caller's signal state and standard descriptors on macOS, for
// command-execution.md "Signals and process state". As on Linux, the Go
// runtime changes them before main (it installs handlers over most
// inherited SIG_IGN dispositions, unblocks termination signals on every
// thread and reopens a closed descriptor 0, 1 or 2 on /dev/null), so a
// build linked with -ldflags=-E=agentknock_rt0 enters through
// agentknock_rt0 (entry_darwin_arm64.s), which saves them through
// libSystem before the runtime starts. The open-file limit needs no
// snapshot: the runtime leaves it alone, syscall's init records it before
// raising it, and syscall.Exec puts it back.
//
// A build without the flag (or for darwin/amd64, which has no hook) falls
// back openly to what is still visible at main (callerStateLimits):
//   - ignores: the runtime keeps an inherited SIG_IGN on SIGHUP and SIGINT
//     (visible to signal.Ignored) and never touches SIGTSTP, SIGTTIN,
//     SIGTTOU and SIGCONT, so those reach the command unchanged; it
//     installs handlers over every other ignore, which execve then resets
//     to SIG_DFL;
//   - mask: every thread keeps the caller's blocked signals except those
//     the runtime unblocks; that mask is restored on the exec thread;
//   - a standard descriptor the caller closed reaches the command as the
//     runtime's /dev/null.

// Written once by agentknock_rt0 before the runtime starts, read-only after.
var (
	callerActions   [31]darwinSigaction
	callerMask      uint32
	callerClosedStd uint64 // bit n: descriptor n was closed
	callerCaptured  uint64
)

type callerState struct {
	exact   bool // taken before the runtime started
	ignored [65]bool
	mask    uint64 // blocked signals, bit n-1 for signal n
	// closedStd has bit n set when the caller left descriptor n (0, 1 or
	// 2) closed; the runtime's /dev/null there is closed again before exec.
	closedStd uint8
}

// init puts back, before the run does anything, the caller's ignores that
// the runtime can work with and SIGQUIT's default (darwinEarlySignals), as
// Linux's init does: from selection on, a SIGTERM the caller ignores no
// longer ends the launcher and SIGQUIT never prints a goroutine dump. A
// signal in the few milliseconds between the runtime's start and here
// still meets the runtime's handlers. What the caller blocks is caught
// from the approval wait on (deferredTermination) and, before that, acts
// as the runtime makes it act: macOS has no counterpart yet of Linux's
// forwarding handler.
func init() {
	ignore, quitDefault := darwinEarlySignals(loadCallerState())
	for _, sig := range ignore {
		// A disposition the kernel refuses stays as the runtime set it;
		// nothing better can be done for it here.
		_ = setDisposition(sig, darwinSigIgn)
	}
	if quitDefault {
		_ = setDisposition(unix.SIGQUIT, darwinSigDfl)
	}
}

// loadCallerState must run before the first signal.Notify.
func loadCallerState() callerState {
	var cs callerState
	if callerCaptured == 1 {
		cs.exact = true
		cs.ignored, cs.mask, cs.closedStd = darwinEntryState(callerActions, callerMask, callerClosedStd)
		return cs
	}
	for _, sig := range signalsIgnoreVisible {
		cs.ignored[sig] = signal.Ignored(sig)
	}
	var old uint32
	if threadSigmask(darwinSigBlock, nil, &old) == nil {
		cs.mask = uint64(old)
	}
	return cs
}

func (cs callerState) describe() string {
	if cs.exact {
		return "exact (captured at process entry)"
	}
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; a standard descriptor the caller closed reaches the command as /dev/null)"
}

// The hand-off and the exec (the file's header says what they rest on):
// darwinHandOff gives darwinReplaceProcess its steps.

// execCommand returns only on failure.
func execCommand(wd workdir, x *executable, argv, env []string, stdin *os.File, cs callerState, watch *signalWatch) error {
	return darwinReplaceProcess(&darwinHandOff{wd: wd, x: x, argv: argv, env: env, stdin: stdin, cs: cs, watch: watch}, watch.testOnlyAfterBlock)
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

// restoreCallerState gives the command the caller's state in the order of
// restoreDarwinCallerState (darwin_decisions.go): with a snapshot from
// agentknock_rt0, the caller's ignores (SIGPIPE stays caught, so execve
// makes it SIG_DFL; SIGURG stays the runtime's) and mask; without one, the
// thread's mask from before the block, which is the caller's mask less the
// signals the Go runtime unblocks; then the signals the caller blocked that
// arrived while agentknock ran, made pending on this thread. Caught signals
// become SIG_DFL at execve; inherited ignores the runtime left alone are
// still in place. The open-file limit is syscall.Exec's.
func (h *darwinHandOff) restoreCallerState() error {
	if !h.maskChanged {
		return nil
	}
	return restoreDarwinCallerState(h, h.cs, h.threadMask)
}

func (h *darwinHandOff) ignore(sig syscall.Signal) error { return setDisposition(sig, darwinSigIgn) }

func (h *darwinHandOff) setMask(mask uint32) error {
	return threadSigmask(darwinSigSetmask, &mask, nil)
}

func (h *darwinHandOff) collectDeferred() []syscall.Signal { return h.watch.deferred.collect() }

func (h *darwinHandOff) raiseOnThread(sig syscall.Signal) error { return raiseOnThisThread(sig) }

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

// The few libSystem functions the macOS launch path needs that
// golang.org/x/sys/unix does not wrap: fcntl(F_GETPATH) with a buffer,
// proc_pidpath(3), pthread_sigmask(2), pthread_self(3) with
// pthread_kill(2), sigaction(2) and sigpending(2). macOS supports
// system calls only through libSystem (Go's own syscall.Exec says raw
// system calls "should never be used" there), so these are called the way
// x/sys calls libSystem: a trampoline per function (libc_darwin.s) and the
// runtime's syscall.syscall, which switches to the system stack.

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

var libc_fcntl_trampoline_addr uintptr

//go:cgo_import_dynamic libc_fcntl fcntl "/usr/lib/libSystem.B.dylib"

var libc_proc_pidpath_trampoline_addr uintptr

//go:cgo_import_dynamic libc_proc_pidpath proc_pidpath "/usr/lib/libSystem.B.dylib"

var libc_pthread_sigmask_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_sigmask pthread_sigmask "/usr/lib/libSystem.B.dylib"

var libc_sigaction_trampoline_addr uintptr

//go:cgo_import_dynamic libc_sigaction sigaction "/usr/lib/libSystem.B.dylib"

var libc_pthread_self_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_self pthread_self "/usr/lib/libSystem.B.dylib"

var libc_pthread_kill_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_kill pthread_kill "/usr/lib/libSystem.B.dylib"

var libc_sigpending_trampoline_addr uintptr

//go:cgo_import_dynamic libc_sigpending sigpending "/usr/lib/libSystem.B.dylib"

// darwinPathMax is MAXPATHLEN, the size F_GETPATH writes into; proc_pidpath
// takes up to four times that (PROC_PIDPATHINFO_MAXSIZE).
const darwinPathMax = 1024

// The "how" of pthread_sigmask in <sys/signal.h>.
const (
	darwinSigBlock   = 1
	darwinSigSetmask = 3
)

// descriptorPath asks fcntl(F_GETPATH) for the path of fd's object.
func descriptorPath(fd int) (string, error) {
	buf := make([]byte, darwinPathMax)
	r, _, errno := syscall_syscall(libc_fcntl_trampoline_addr, uintptr(fd), unix.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	if int32(r) == -1 {
		return "", fmt.Errorf("fcntl F_GETPATH: %w", errno)
	}
	return nameFromBuffer(buf)
}

// processPath is proc_pidpath(3): the resolved path of pid's executable,
// which the kernel reports (not the string its parent passed to execve).
func processPath(pid int) (string, error) {
	buf := make([]byte, 4*darwinPathMax)
	r, _, _ := syscall_syscall(libc_proc_pidpath_trampoline_addr, uintptr(pid), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return pidpathResult(pid, r, buf)
}

// threadSigmask changes the calling thread's mask; pthread_sigmask returns
// its error number rather than setting errno.
func threadSigmask(how int, set, old *uint32) error {
	r, _, _ := syscall_syscall(libc_pthread_sigmask_trampoline_addr, uintptr(how), uintptr(unsafe.Pointer(set)), uintptr(unsafe.Pointer(old)))
	return pthreadResult(r)
}

// raiseOnThisThread makes sig pending on the calling thread only:
// pthread_kill(pthread_self(), sig), macOS's raise(3). The caller holds the
// thread (runtime.LockOSThread), and the runtime's syscall runs the call on
// that same thread's system stack.
func raiseOnThisThread(sig syscall.Signal) error {
	self, _, _ := syscall_syscall(libc_pthread_self_trampoline_addr, 0, 0, 0)
	r, _, _ := syscall_syscall(libc_pthread_kill_trampoline_addr, self, uintptr(sig), 0)
	return pthreadResult(r)
}

// threadPendingSignals is sigpending(2). On macOS it reports the calling
// thread's pending set only (XNU's sigpending copies out the uthread's
// uu_siglist). XNU hands a process-directed signal, when it is sent, to the
// first thread that does not block it, else to the first thread
// (get_signalthread, bsd/kern/kern_sig.c), and every other Go thread leaves
// SIGINT and SIGTERM unblocked; so what this sees is a signal directed at
// this thread (pthread_kill, as the test approval's raise_after_block
// sends). A process-directed signal after the block goes to another
// thread, where, once signal.Stop has run, Go's handler ends the process
// by that signal, as it would end the command.
func threadPendingSignals() (uint32, error) {
	var set uint32
	r, _, errno := syscall_syscall(libc_sigpending_trampoline_addr, uintptr(unsafe.Pointer(&set)), 0, 0)
	if int32(r) == -1 {
		return 0, errno
	}
	return set, nil
}

// setDisposition installs handler (SIG_DFL or SIG_IGN) for sig behind the
// runtime's back, as Linux's raw rt_sigaction does: the runtime's own table
// is not consulted again before execve.
func setDisposition(sig syscall.Signal, handler uint64) error {
	act := darwinSigaction{Handler: handler}
	r, _, errno := syscall_syscall(libc_sigaction_trampoline_addr, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0)
	if int32(r) == -1 {
		return errno
	}
	return nil
}
