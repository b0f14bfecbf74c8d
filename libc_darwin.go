// The few libSystem functions the macOS launch path needs that
// golang.org/x/sys/unix does not wrap: fcntl(F_GETPATH) with a buffer,
// proc_pidpath(3), pthread_sigmask(2), sigaction(2) and sigpending(2). macOS supports
// system calls only through libSystem (Go's own syscall.Exec says raw
// system calls "should never be used" there), so these are called the way
// x/sys calls libSystem: a trampoline per function (libc_darwin.s) and the
// runtime's syscall.syscall, which switches to the system stack.

package main

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
	return sigmaskResult(r)
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
