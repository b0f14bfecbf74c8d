// Process replacement on Linux, in the order it runs: the host facilities
// checked before the request (command-execution.md, "Platform
// implementations" and "Linux implementation"), the caller's state that
// the entry hook (entry_linux_*.s) saved before the runtime started, and
// the hand-off and exec ("Native executable replacement", "Script
// execution", "Signals and process state") in the order replaceProcess
// (exec.go) gives; docs/launch-path.md has the measurements behind it.
// A binary runs from its retained descriptor (execveat with AT_EMPTY_PATH),
// a script from its candidate path, under the runtime's exec lock: without
// it a thread created during exec makes the kernel drop setuid and file
// capabilities.

package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Descriptors a run opens beyond those it holds when the check runs
// (standard streams, the runtime's cgroup files, working directory,
// executable): the runtime's poller (epoll and eventfd), the relay
// connection, state files and their temporary copies, a resolver's sockets;
// with an invocation service, its three pipes, the child's /dev/null
// streams, the runtime's start-up pipe and pidfd. Measured: a plain run
// needs 3 more, one that starts the service 14 (and the service works from a
// limit of 23, SSH login included); these keep a margin.
const (
	runDescriptors     = 8
	serviceDescriptors = 16
	// The service process itself (inherited pipes, poller, listeners, an
	// agent connection with its upstream and relay connections) needs this
	// limit.
	serviceLimit = 24
)

// refused reports an errno with which a seccomp filter or an old kernel
// refuses a system call.
func refused(errno syscall.Errno) bool {
	return errno == unix.ENOSYS || errno == unix.EPERM
}

// checkHostFacilities probes every system call the path needs, without
// effect, and the descriptors it will open.
func checkHostFacilities(n runNeeds) error {
	const serviceHint = " The invocation service (for --stdin and SSH secrets) needs it; if no requested secret is an SSH key and --stdin is not used, --no-ssh-agent --no-git-sign run without it."
	if n.script {
		// A NULL path can only fail, with EFAULT, once the call is allowed.
		_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, 0, 0, 0)
		if refused(errno) {
			return fmt.Errorf("this system refuses the execve system call (%v), so agentknock cannot run the script; the sandbox or seccomp profile must allow execve", errno)
		}
	} else {
		// Descriptor -1 and an unknown flag can only fail, with EBADF or
		// EINVAL, once the call is allowed.
		empty := []byte{0}
		_, _, errno := unix.RawSyscall6(unix.SYS_EXECVEAT, ^uintptr(0), uintptr(unsafe.Pointer(&empty[0])), 0, 0, unix.AT_EMPTY_PATH|0x80000000, 0)
		if refused(errno) {
			return fmt.Errorf("this system refuses the execveat system call (%v), which agentknock uses to run exactly the approved file; the sandbox or seccomp profile must allow execveat (Linux 3.19 or later)", errno)
		}
	}
	if err := checkCommandDescriptors(n.caller); err != nil {
		return err
	}
	need := runDescriptors
	if n.service {
		need = serviceDescriptors
	}
	if err := checkDescriptors(need, n.service); err != nil {
		if n.service && checkDescriptors(runDescriptors, false) == nil {
			return fmt.Errorf("%v. The invocation service (for --stdin and SSH secrets) needs them; if no requested secret is an SSH key and --stdin is not used, --no-ssh-agent --no-git-sign run with fewer", err)
		}
		return err
	}
	if n.service {
		fd, err := unix.PidfdOpen(unix.Getpid(), 0)
		if err != nil {
			return fmt.Errorf("this system refuses the pidfd_open system call (%v), which the invocation service uses to end with the command (Linux 5.3 or later, allowed by the seccomp profile).%s", err, serviceHint)
		}
		unix.Close(fd)
		if err := probePeerCredentials(); err != nil {
			return fmt.Errorf("this system does not provide Unix socket peer credentials (SO_PEERCRED: %v), which the invocation service uses to serve only the command's processes.%s", err, serviceHint)
		}
	}
	return nil
}

// commandLimitChecked is the largest caller's soft limit under which the
// command's free descriptors are counted (one fcntl each); above it the
// caller would have to hold that many descriptors open.
const commandLimitChecked = 256

// checkCommandDescriptors requires the command to have at least one
// descriptor of its own under the caller's soft limit, which it gets back at
// the exec: its dynamic loader opens each library, and a script's
// interpreter opens the script. Every check before the exec runs under the
// launcher's raised limit; this one is counted against the caller's soft
// limit from the entry hook's snapshot: the descriptors open now that
// survive the exec (not close-on-exec, and not a standard descriptor the
// caller had closed, which is closed again).
func checkCommandDescriptors(cs callerState) error {
	if cs.nofile == nil || cs.nofile.Cur > commandLimitChecked {
		return nil
	}
	held := 0
	for fd := 0; fd < int(cs.nofile.Cur); fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 || (fd < 3 && cs.closedStd&(1<<fd) != 0) {
			continue
		}
		held++
	}
	if held >= int(cs.nofile.Cur) {
		return fmt.Errorf("the soft open-file limit (ulimit -Sn, %d) leaves the command no descriptor to open: the %d it inherits fill it (a program cannot even load its libraries); raise it to at least %d", cs.nofile.Cur, held, held+1)
	}
	return nil
}

func probePeerCredentials() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	cred, err := unix.GetsockoptUcred(fds[0], unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return err
	}
	if int(cred.Pid) != unix.Getpid() {
		return fmt.Errorf("the kernel reported PID %d for this process", cred.Pid)
	}
	return nil
}

// checkDescriptors requires need free descriptors now and, for a service,
// a limit the service can run with. It takes them for a moment (dup of
// descriptor 0, which the runtime guarantees is open), which counts
// inherited descriptors exactly and costs 2*need system calls.
func checkDescriptors(need int, service bool) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil
	}
	tooLow := func() error {
		total := need + 9
		if service && total < serviceLimit {
			total = serviceLimit
		}
		return fmt.Errorf("the open-file limit (ulimit -n, %d) leaves too few descriptors for agentknock; raise it to at least %d", lim.Cur, total)
	}
	if service && lim.Cur < serviceLimit {
		return tooLow()
	}
	var taken []int
	defer func() {
		for _, fd := range taken {
			unix.Close(fd)
		}
	}()
	for len(taken) < need {
		fd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 0)
		if errors.Is(err, unix.EMFILE) {
			return tooLow()
		}
		if err != nil {
			return nil
		}
		taken = append(taken, fd)
	}
	return nil
}

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
var lowLimitMessage = messagePrefix + "the open-file limit (ulimit -n) is too low for agentknock to start; raise it to at least 17 (25 for a run that may start the invocation service: --stdin, or an SSH secret without --no-ssh-agent --no-git-sign).\n"

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

func (cs callerState) describe() string {
	if cs.exact {
		return "exact (captured at process entry)"
	}
	return "approximate (built without -ldflags=-E=agentknock_rt0: " + callerStateLimits + "; the caller's open-file limit is not restored, and a standard descriptor the caller closed cannot be told from /dev/null)"
}

// Process replacement on Linux: command-execution.md, "Native executable
// replacement", "Script execution" and "Signals and process state", in the
// order replaceProcess (exec.go) gives; docs/launch-path.md has the
// measurements behind it. A binary runs from its retained descriptor
// (execveat with AT_EMPTY_PATH), a script from its candidate path, under
// the runtime's exec lock: without it a thread created during exec makes
// the kernel drop setuid and file capabilities.

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
