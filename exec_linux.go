// Process replacement on Linux: command-execution.md, "Native executable
// replacement", "Script execution" and "Signals and process state".
//
// The hand-off order is the one measured in ../shared/notes to lose no
// signal: on a locked thread, block SIGINT/SIGTERM, give them back to the
// kernel with the caller's disposition, stop the Go handler (signal.Stop
// returns after every caught signal reached the channel), then look at the
// channel and the pending set. Only then restore the caller's ignores, file
// limit and mask, take the runtime's exec lock (without it a thread created
// during exec makes the kernel drop setuid and file capabilities) and exec.
package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

//go:linkname runtimeBeforeExec syscall.runtime_BeforeExec
func runtimeBeforeExec()

//go:linkname runtimeAfterExec syscall.runtime_AfterExec
func runtimeAfterExec()

func setDisposition(sig syscall.Signal, handler uint64) error {
	act := kernelSigaction{Handler: handler}
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func pendingSignals() uint64 {
	var set uint64
	unix.RawSyscall(unix.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&set)), 8, 0)
	return set
}

// execCommand replaces the process with the command. It returns only on
// failure, which is terminal: the caller reports it and exits.
func execCommand(wd workdir, x *executable, argv, env []string, stdin *os.File, cs callerState, watch *signalWatch) error {
	argvp, err := cStrings(argv)
	if err != nil {
		return err
	}
	envp, err := cStrings(env)
	if err != nil {
		return err
	}
	var path *byte
	if x.script {
		// The interpreter must reopen the script by name, so a script runs
		// from its candidate path; relative ones resolve against the
		// process's directory, which is the retained one (we never chdir).
		if path, err = unix.BytePtrFromString(x.candidate); err != nil {
			return err
		}
	} else {
		path = &[]byte{0}[0]
	}

	runtime.LockOSThread()
	terminating := []syscall.Signal{unix.SIGINT, unix.SIGTERM}
	var block unix.Sigset_t
	for _, sig := range terminating {
		block.Val[0] |= 1 << (uint(sig) - 1)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, nil); err != nil {
		return err
	}
	if watch.testOnlyAfterBlock != nil {
		watch.testOnlyAfterBlock()
	}
	for _, sig := range terminating {
		disposition := uint64(sigDFL)
		if cs.ignored[sig] {
			disposition = sigIGN
		}
		if err := setDisposition(sig, disposition); err != nil {
			return err
		}
	}
	if sig := watch.stop(); sig != 0 {
		return &interrupted{sig}
	}
	if sig := pendingTermination(pendingSignals(), cs); sig != 0 {
		return &interrupted{sig}
	}

	for sig := 1; sig <= 64; sig++ {
		if cs.ignored[sig] && sig != int(unix.SIGPIPE) && sig != int(unix.SIGKILL) && sig != int(unix.SIGSTOP) {
			setDisposition(syscall.Signal(sig), sigIGN)
		}
	}
	if err := setDisposition(unix.SIGPIPE, sigDFL); err != nil {
		return err
	}
	if cs.nofile != nil {
		if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, cs.nofile, nil); err != nil {
			return err
		}
	}
	mask := unix.Sigset_t{}
	mask.Val[0] = cs.mask
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &mask, nil); err != nil {
		return err
	}

	// The service's pipe becomes standard input only now, so that every
	// earlier failure leaves the caller's standard input in place.
	if err := becomeStdin(stdin); err != nil {
		return err
	}
	// The last check before exec: the same bytes as approved.
	if err := x.revalidate(wd); err != nil {
		return &revalidationError{err}
	}
	// A standard descriptor the caller left closed is closed again: the
	// runtime's /dev/null there is not the caller's (descriptor 0 stays
	// when it is the service's pipe).
	for fd := 0; fd < 3; fd++ {
		if cs.closedStd&(1<<fd) != 0 && !(fd == 0 && stdin != nil) {
			unix.Close(fd)
		}
	}

	runtimeBeforeExec()
	var errno syscall.Errno
	if x.script {
		_, _, errno = unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	} else {
		_, _, errno = unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(x.fd), uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	}
	runtimeAfterExec()
	runtime.KeepAlive(argvp)
	runtime.KeepAlive(envp)
	return execError(x, errno)
}

func execError(x *executable, errno syscall.Errno) error {
	if errors.Is(errno, unix.ENOENT) && !x.script {
		return &os.PathError{Op: "exec", Path: x.path, Err: errors.New("no such file or directory (a missing program loader or interpreter gives this error too)")}
	}
	return &os.PathError{Op: "exec", Path: x.path, Err: errno}
}

// cStrings makes a NULL-terminated array of C strings.
func cStrings(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
