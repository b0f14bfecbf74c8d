// Process replacement on Linux: command-execution.md, "Native executable
// replacement", "Script execution" and "Signals and process state", in the
// order replaceProcess (exec.go) gives; docs/launch-path.md has the
// measurements behind it. A binary runs from its retained descriptor
// (execveat with AT_EMPTY_PATH), a script from its candidate path, under
// the runtime's exec lock: without it a thread created during exec makes
// the kernel drop setuid and file capabilities.

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
	h := &linuxHandOff{wd: wd, x: x, stdin: stdin, cs: cs, watch: watch}
	var err error
	if h.argvp, err = cStrings(argv); err != nil {
		return err
	}
	if h.envp, err = cStrings(env); err != nil {
		return err
	}
	if x.script {
		// The interpreter must reopen the script by name, so a script runs
		// from its candidate path; relative ones resolve against the
		// process's directory, which is the retained one (we never chdir).
		if h.path, err = unix.BytePtrFromString(x.candidate); err != nil {
			return err
		}
	} else {
		h.path = &[]byte{0}[0]
	}
	return replaceProcess(h, watch.testOnlyAfterBlock)
}

type linuxHandOff struct {
	wd          workdir
	x           *executable
	argvp, envp []*byte
	path        *byte // the script's candidate path, or "" for execveat
	stdin       *os.File
	cs          callerState
	watch       *signalWatch
}

var terminationSignals = []syscall.Signal{unix.SIGINT, unix.SIGTERM}

// blockTermination blocks SIGINT and SIGTERM on this thread (the main
// thread, to which init locked the main goroutine), then gives those the
// caller neither ignores nor blocks back to the kernel's default: from here
// such a signal ends the launcher as it would end the command (exit status
// 128+N, by the signal itself), and one already caught is reported by
// stopWatching. A signal the caller ignores has been ignored since init; one
// the caller blocks keeps its forwarding disposition (applyCallerSignals),
// because at the default a thread of the runtime, which never blocks it,
// would be killed by it instead of leaving it pending for the command.
func (h *linuxHandOff) blockTermination() error {
	runtime.LockOSThread()
	var block unix.Sigset_t
	for _, sig := range terminationSignals {
		block.Val[0] |= 1 << (uint(sig) - 1)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, nil); err != nil {
		return err
	}
	for _, sig := range terminationSignals {
		if h.cs.forwarded(sig) {
			continue
		}
		disposition := uint64(sigDFL)
		if h.cs.ignored[sig] {
			disposition = sigIGN
		}
		if err := setDisposition(sig, disposition); err != nil {
			return err
		}
	}
	return nil
}

func (h *linuxHandOff) stopWatching() syscall.Signal { return h.watch.stop() }

func (h *linuxHandOff) pendingTermination() syscall.Signal {
	return pendingTermination(pendingSignals(), h.cs)
}

// restoreCallerState puts back the snapshot taken at process entry (or what
// a build without it knows): ignores with SIGPIPE at its default, the file
// limit, then the mask. It runs after the last check, so nothing the
// launcher opens is counted against the caller's (possibly low) soft file
// limit; only the standard-input dup2 onto descriptor 0 and the exec follow.
func (h *linuxHandOff) restoreCallerState() error {
	for sig := 1; sig <= 64; sig++ {
		if h.cs.ignored[sig] && sig != int(unix.SIGPIPE) && sig != int(unix.SIGKILL) && sig != int(unix.SIGSTOP) {
			// A signal the kernel will not let us ignore stays at the
			// default; nothing better can be done for it.
			_ = setDisposition(syscall.Signal(sig), sigIGN)
		}
	}
	if err := setDisposition(unix.SIGPIPE, sigDFL); err != nil {
		return err
	}
	if h.cs.nofile != nil {
		if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, h.cs.nofile, nil); err != nil {
			return err
		}
	}
	mask := unix.Sigset_t{}
	mask.Val[0] = h.cs.mask
	return unix.PthreadSigmask(unix.SIG_SETMASK, &mask, nil)
}

func (h *linuxHandOff) connectStdin() error { return becomeStdin(h.stdin) }

func (h *linuxHandOff) lastCheck() error { return h.x.revalidate(h.wd) }

// exec closes again a standard descriptor the caller left closed (the
// runtime's /dev/null there is not the caller's; descriptor 0 stays when it
// is the service's pipe), then executes.
func (h *linuxHandOff) exec() error {
	for fd := 0; fd < 3; fd++ {
		if h.cs.closedStd&(1<<fd) != 0 && !(fd == 0 && h.stdin != nil) {
			// Closing a descriptor the runtime opened cannot fail in a way
			// that matters: the command must not inherit it either way.
			_ = unix.Close(fd)
		}
	}
	runtimeBeforeExec()
	var errno syscall.Errno
	if h.x.script {
		_, _, errno = unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(h.path)), uintptr(unsafe.Pointer(&h.argvp[0])), uintptr(unsafe.Pointer(&h.envp[0])))
	} else {
		_, _, errno = unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(h.x.fd), uintptr(unsafe.Pointer(h.path)), uintptr(unsafe.Pointer(&h.argvp[0])), uintptr(unsafe.Pointer(&h.envp[0])), unix.AT_EMPTY_PATH, 0)
	}
	runtimeAfterExec()
	runtime.KeepAlive(h.argvp)
	runtime.KeepAlive(h.envp)
	return execError(h.x, errno)
}

func execError(x *executable, errno syscall.Errno) error {
	if errors.Is(errno, unix.ENOENT) && !x.script {
		return &os.PathError{Op: "exec", Path: printable(x.path), Err: errors.New("no such file or directory (a missing program loader or interpreter gives this error too)")}
	}
	return &os.PathError{Op: "exec", Path: printable(x.path), Err: errno}
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
