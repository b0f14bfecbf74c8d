// Process replacement on Linux, in the order it runs: the host facilities
// checked before the request (command-execution.md, "Platform
// implementations" and "Linux implementation"), the caller's state that
// the entry hook (entry_linux_*.s) saved before the runtime started, and
// the hand-off and exec ("Common execution semantics" 6, 8 and 9,
// "Native executable replacement", "Script execution", "Signals and
// process state"), which execCommand holds whole, in the order it runs,
// stated once in its comment; docs/launch-path.md has the measurements
// behind it.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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
	if err := checkProcessLimit(n.service, n.probe); err != nil {
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

// Threads and processes a run needs under the process limit (RLIMIT_NPROC,
// `ulimit -u`, which counts every thread of every process of the user):
// the launcher's runtime threads with GOMAXPROCS at most 2 (main, sysmon,
// the template thread, one per P, and those blocked in system calls) and,
// with an invocation service, its process and runtime threads (the Git
// signing helper's run only once the launcher's have gone with the exec). Measured as an ordinary user on Go 1.26 with 2 cores: a plain
// run needs 9, one with --stdin 14 (below, the runtime dies with "failed to
// create new OS thread" or the service cannot start, after the approval),
// and more under load, when more threads wait in system calls; these keep
// a margin. agentknock_rt0 already stops, with one line, below
// launcherTasks, where the runtime may not even reach this check.
const (
	launcherTasks = 12
	serviceTasks  = 7
	// The execute-only probe's child (checkExecuteOnly, select_linux.go), which lives for
	// about a millisecond before the request, while the launcher's own
	// threads are still few; counted all the same, so that a fork this
	// check allowed is not refused then (which would lose the prediction).
	probeTasks = 1
	// Below this much room the launcher runs with GOMAXPROCS 2, so that
	// its threads stay within launcherTasks on any number of cores.
	processRoomTight = 64
)

// checkProcessLimit requires room under the soft process limit for the
// threads and processes the run will start (the service's, the probe's
// child): the user's tasks now (all of
// /proc/loadavg's when that is already small enough, else those /proc
// shows for this real user ID), with this process's own, plus what is
// still to come. A process the kernel exempts (processLimitExempt) and an
// unlimited limit pass at once. Without /proc only this process's threads
// are known.
func checkProcessLimit(service, probe bool) error {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &lim) != nil || lim.Cur == unix.RLIM_INFINITY || processLimitExempt() {
		return nil
	}
	own := ownThreads()
	plain := max(launcherTasks-own, 1)
	if probe {
		plain += probeTasks
	}
	need := plain
	if service {
		need += serviceTasks
	}
	running := systemTasks()
	if running < 0 || uint64(running+need) > lim.Cur {
		running = userTasks(unix.Getuid())
	}
	if running < 0 {
		running = own
	}
	if uint64(running+need) <= lim.Cur {
		if lim.Cur-uint64(running) < processRoomTight && runtime.GOMAXPROCS(0) > 2 {
			runtime.GOMAXPROCS(2)
		}
		return nil
	}
	err := fmt.Errorf("the process limit (ulimit -u, %d) leaves too little room: agentknock needs %d more threads and processes, and this user already runs %d (agentknock's own %d threads among them)",
		lim.Cur, need, running, own)
	if service && uint64(running+plain) <= lim.Cur {
		err = fmt.Errorf("%v. The invocation service (for --stdin and SSH secrets) needs %d of them; if no requested secret is an SSH key and --stdin is not used, --no-ssh-agent --no-git-sign run with fewer", err, serviceTasks)
	}
	return classifyWithFix(failProcessLimit, fmt.Sprintf("ulimit -u %d", running+need), err)
}

// processLimitExempt is the kernel's own exemption from RLIMIT_NPROC when
// it creates a process or thread (kernel/fork.c, copy_process: over the
// limit, clone fails with EAGAIN unless the real user is root of the
// initial user namespace, the ucounts "init_ucounts", or the task has
// CAP_SYS_RESOURCE or CAP_SYS_ADMIN in the initial user namespace;
// setrlimit(2), fork(2)). Inside another user namespace neither a mapped
// uid 0 nor that namespace's capabilities count. When /proc cannot say
// which namespace this is, the initial one is assumed, the common case.
func processLimitExempt() bool {
	if !inInitialUserNamespace() {
		return false
	}
	if unix.Getuid() == 0 {
		return true
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return capsExemptFromProcessLimit(uint64(data[1].Effective)<<32 | uint64(data[0].Effective))
}

// capsExemptFromProcessLimit is the kernel's capability half of the rule:
// either capability in the effective set exempts the task.
func capsExemptFromProcessLimit(effective uint64) bool {
	return effective&(1<<unix.CAP_SYS_RESOURCE|1<<unix.CAP_SYS_ADMIN) != 0
}

// initialUserNamespaceInode is the initial user namespace's fixed inode
// number (include/linux/proc_ns.h, PROC_USER_INIT_INO), what
// /proc/self/ns/user names there.
const initialUserNamespaceInode = 0xEFFFFFFD

// inInitialUserNamespace reports whether this process is in the initial
// user namespace; true when /proc cannot tell.
func inInitialUserNamespace() bool {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/user", &st) != nil {
		return true
	}
	return st.Ino == initialUserNamespaceInode
}

// ownThreads counts this process's threads (/proc/self/task), or assumes
// the few the runtime has started by now.
func ownThreads() int {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil || len(entries) == 0 {
		return 4
	}
	return len(entries)
}

// systemTasks is the number of threads on the system (the fourth field of
// /proc/loadavg, "running/total"), or -1.
func systemTasks() int {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(data))
	if len(fields) < 4 {
		return -1
	}
	_, total, ok := strings.Cut(fields[3], "/")
	n, err := strconv.Atoi(total)
	if !ok || err != nil {
		return -1
	}
	return n
}

// userTasks sums the threads of the processes /proc shows whose real user
// ID is uid (the limit's count), or -1 without /proc.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	total, seen := 0, false
	want := strconv.Itoa(uid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue // ended since the listing
		}
		var real string
		threads := 0
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == want {
			total += threads
			seen = true
		}
	}
	if !seen {
		return -1
	}
	return total
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
	// The signals pending at entry among runtimeUnblockedSet, each as the
	// kernel's 128-byte siginfo, for finishCallerSignals.
	callerPending      [callerPendingSlots][128]byte
	callerPendingCount uint64
	//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
	zeroTimeout [2]int64 // rt_sigtimedwait's: do not wait
)

// callerPendingSlots holds both instances (one sent to the thread, one to
// the process) of every signal in runtimeUnblockedSet (18); as in
// entry_linux_*.s.
const callerPendingSlots = 40

// runtimeUnblockedSet is what the runtime unblocks on every thread whatever
// the caller blocked (runtime/signal_unix.go, blockableSig: SIGHUP, SIGINT,
// SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGTERM,
// SIGSTKFLT, SIGCHLD, SIGURG, SIGPROF, SIGSYS, 32, 33 and 34;
// TestRuntimeUnblockedSet measures it). A signal of this set pending at
// entry is one the caller blocked, which the runtime would take at once.
// Read by agentknock_rt0; never changed.
//
//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
var runtimeUnblockedSet uint64 = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 |
	1<<7 | 1<<10 | 1<<14 | 1<<15 | 1<<16 | 1<<22 | 1<<26 | 1<<30 | 1<<31 | 1<<32 | 1<<33 // bit n-1: signal n

// lowLimitMessage is what agentknock_rt0 writes before exiting when the
// open-file limit leaves the runtime no room to start. Never changed.
//
//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
var lowLimitMessage = messagePrefix + "the open-file limit (ulimit -n) is too low for agentknock to start; raise it to at least 17 (25 for a run that may start the invocation service: --stdin, or an SSH secret without --no-ssh-agent --no-git-sign).\n"

// lowProcessLimitMessage is what agentknock_rt0 writes before exiting when
// the soft process limit is below launcherTasks for a user other than
// root. Never changed.
//
//lint:ignore U1000 read by agentknock_rt0 (entry_linux_*.s)
var lowProcessLimitMessage = messagePrefix + "the process limit (ulimit -u) is too low for agentknock to start: it needs 12 threads besides the user's other processes.\n" +
	messagePrefix + "Agentknock did not contact the device.\n" + messagePrefix + "The command didn't run.\n" +
	messagePrefix + "Suggested action: Raise the process limit in the shell that runs agentknock (ulimit -u), then run the command again.\n"

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
//     direct exec. That holds also for one the caller blocked and ignored:
//     the kernel discards an ignored signal when it is sent only if its
//     target does not block it, so after a direct exec it stays pending
//     (TestCallerBlockedAndIgnoredSignalsStayPending measures it), and
//     here an ignore would let another thread discard it; its ignore is set
//     again only at the exec (finishCallerSignals).
//
// A build without the entry hook knows only SIGHUP's and SIGINT's ignores
// and nothing of the blocks; it only replaces SIGQUIT's dump by the
// default.
func applyCallerSignals(cs callerState) {
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if cs.ignored[sig] && ignorableEarly(sig) && !cs.forwarded(sig) {
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
		if cs.forwarded(sig) {
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
			_ = forwardToMainThread(sig)
		}
	}
}

// forwarded reports whether sig, one of runtimeUnblocked that the caller
// blocked (ignored or not), is sent on to the main thread
// (applyCallerSignals), so that nothing else may change its disposition
// before the exec.
func (cs callerState) forwarded(sig syscall.Signal) bool {
	return cs.exact && cs.blocks(sig) && slices.Contains(runtimeUnblocked, sig)
}

// keepsPendingIgnored reports whether sig is one the caller both blocked
// and ignored, whose ignore is set again only at the exec, with any
// instance pending then taken out first and queued again after
// (finishCallerSignals): setting SIG_IGN discards a pending signal, even a
// blocked one. SIGPIPE is not (the command gets its default, which does
// not discard), nor SIGKILL and SIGSTOP.
func (cs callerState) keepsPendingIgnored(sig syscall.Signal) bool {
	return cs.exact && cs.blocks(sig) && cs.ignored[sig] && sig != unix.SIGPIPE && sig != unix.SIGKILL && sig != unix.SIGSTOP
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

// The hand-off and the exec: command-execution.md, "Common execution
// semantics" steps 6, 8 and 9, "Signals and process state", "Native
// executable replacement" and "Script execution"; docs/launch-path.md has
// the measurements behind each step. execCommand is the whole of it, in the
// order it runs; the helpers after it are in the same order.

//go:linkname runtimeBeforeExec syscall.runtime_BeforeExec
func runtimeBeforeExec()

//go:linkname runtimeAfterExec syscall.runtime_AfterExec
func runtimeAfterExec()

// execCommand replaces the process with the command. It returns only on
// failure, which is terminal: the caller reports it and exits. The order,
// the spec's block, check, restore:
//
//  1. Block: SIGINT and SIGTERM are blocked on this thread (the main
//     thread, which execs) and every other thread sends them on to it
//     (agentknock_forward); then the wait's Go handler is stopped, which
//     returns once every signal it caught reached the channel. From here
//     no termination signal is consumed by the launcher.
//  2. The last check of the executable, still under the launcher's own
//     limits, so it cannot fail for a descriptor the caller's would not give.
//  3. When the caller blocked a signal the runtime unblocks, every other
//     thread blocks every signal but the synchronous faults (the thread
//     hold): none can take a signal any more, so a signal sent to the
//     process stays pending in it through execve, and every signal taken
//     before has been sent on to this thread.
//  4. The pending check: a SIGINT or SIGTERM that the caller neither
//     ignores nor blocks means the command does not run.
//  5. The caller's dispositions, file limit and standard descriptors.
//  6. Under the runtime's exec lock (no thread can start): threads started
//     since step 3 are held too, the ignores of signals the caller also
//     blocked are set with their pending instances kept, the signals
//     pending at entry are queued again, the caller's mask; then execveat
//     of the descriptor (a binary) or execve of the candidate path (a
//     script).
func execCommand(wd workdir, x *executable, argv, env []string, stdin *os.File, cs callerState, watch *signalWatch) error {
	argvp, err := cStrings(argv)
	if err != nil {
		return err
	}
	envp, err := cStrings(env)
	if err != nil {
		return err
	}
	path := &[]byte{0}[0] // "" for execveat
	if x.script {
		// The interpreter must reopen the script by name, so a script runs
		// from its candidate path; relative ones resolve against the
		// process's directory, which is the retained one (we never chdir).
		if path, err = unix.BytePtrFromString(x.candidate); err != nil {
			return err
		}
	}
	hold, err := newThreadHold()
	if err != nil {
		return err
	}
	kept := new(keptSignals)

	// 1. Block.
	if err := blockTermination(cs); err != nil {
		return err
	}
	if watch.testOnlyAfterBlock != nil {
		watch.testOnlyAfterBlock()
	}
	if sig := watch.stop(); sig != 0 {
		return &interrupted{sig}
	}
	// 2. The last check.
	if err := x.revalidate(wd); err != nil {
		return &revalidationError{err}
	}
	// 3. Every thread blocks, when the caller blocked a signal that the
	// runtime's threads do not: otherwise no signal is meant to stay
	// pending, and one that another thread takes meanwhile acts as it would
	// on the command (a SIGINT or SIGTERM it takes before step 5 is sent on
	// and reaches this thread, after which it follows the restored
	// disposition), so the wait for every thread (about 2 ms of a launch
	// here) is spared. Without a usable /proc the threads cannot be listed;
	// the forwarding of step 1 then remains, whose only gap is a signal
	// another thread took but had not yet sent on when execve ends that
	// thread (docs/launch-path.md).
	held := cs.exact && cs.mask&runtimeUnblockedSet != 0 && hold.everyThread()
	// 4. The pending check.
	if sig := pendingTermination(pendingSignals(), cs); sig != 0 {
		return &interrupted{sig}
	}
	// 5. The caller's state. The pipe becomes standard input only now, so
	// that every earlier failure leaves the caller's standard input in place.
	if err := restoreCallerState(cs); err != nil {
		return err
	}
	traceStep("signals handed off")
	if err := becomeStdin(stdin); err != nil {
		return err
	}
	closeCallerClosedStd(cs, stdin)
	traceFlush()
	// 6. The exec, under the lock; raw system calls only from here, so the
	// runtime never needs a new thread while it cannot start one.
	runtimeBeforeExec()
	if held {
		hold.everyThread()
	}
	finishCallerSignals(cs, kept, held)
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

var terminationSignals = []syscall.Signal{unix.SIGINT, unix.SIGTERM}

// blockTermination (step 1) blocks SIGINT and SIGTERM on this thread, to
// which init locked the main goroutine, and gives each the caller neither
// ignores nor blocks the forwarding disposition (one the caller blocks has
// had it since init; one it ignores stays ignored). A SIGINT during the
// last hash therefore waits, pending, for the check of step 4, which says
// why the command did not run, instead of ending the launcher with no word.
// The disposition is set before the Go handler is stopped: between the two
// a signal would otherwise meet the runtime's handler with no channel,
// which ends the process.
func blockTermination(cs callerState) error {
	runtime.LockOSThread()
	var block unix.Sigset_t
	for _, sig := range terminationSignals {
		block.Val[0] |= 1 << (uint(sig) - 1)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, nil); err != nil {
		return err
	}
	for _, sig := range terminationSignals {
		if cs.ignored[sig] || cs.forwarded(sig) {
			continue
		}
		if err := forwardToMainThread(sig); err != nil {
			return err
		}
	}
	return nil
}

// forwardToMainThread makes agentknock_forward sig's disposition: a thread
// that takes sig sends it to the main thread, where it is blocked.
func forwardToMainThread(sig syscall.Signal) error {
	act := kernelSigaction{Handler: uint64(forwardHandler), Flags: saOnstack | saRestart | saRestorer,
		Restorer: uint64(forwardRestorer), Mask: ^uint64(0)}
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// The thread hold (steps 3 and 6). Blocking a signal on one thread does
// nothing for a process-directed signal while another thread has it
// unblocked, and the runtime unblocks SIGINT, SIGTERM and others on every
// thread it starts. syscall.AllThreadsSyscall cannot block them for good:
// the other threads run the call inside a signal handler, whose mask
// rt_sigreturn puts back (measured on Go 1.26: after an AllThreadsSyscall
// of rt_sigprocmask, 1 thread of 8 had the signal blocked, the caller).
// So each thread is sent a SIGPROF whose handler, agentknock_hold
// (entry_linux_*.s), changes the mask that rt_sigreturn restores. SIGPROF
// because the runtime unblocks it on every thread whatever the caller
// blocked (so every thread, also one still starting, takes it) and uses it
// only for profiling, which a release build never starts (the diagnostic
// trace build's CPU profile loses its last samples; agentknock_hold ignores
// a SIGPROF it did not send).
//
// Threads the runtime starts after step 3 are listed and held at step 6,
// under the runtime's exec lock, which stops any new clone and waits for
// one in progress (so every thread is in /proc/self/task); until then the
// forwarding of step 1 covers them: a termination signal they take reaches
// the main thread before they acknowledge the SIGPROF (both handlers run
// with every signal blocked).

// holdMask is every signal but the synchronous faults (SIGILL, SIGTRAP,
// SIGBUS, SIGFPE, SIGSEGV, SIGSYS), which the kernel delivers to the
// faulting thread anyway. Read by agentknock_hold; never changed.
var holdMask uint64 = ^uint64(1<<(4-1) | 1<<(5-1) | 1<<(7-1) | 1<<(8-1) | 1<<(11-1) | 1<<(31-1))

// holdHandler is the address of agentknock_hold (entry_linux_*.s).
var holdHandler uintptr

// holdTids[:holdAcks] are the threads that hold, written by agentknock_hold
// (atomically, from signal handlers) and read with atomic loads.
var (
	holdAcks uint64
	holdTids [holdSlots]uint32
)

const (
	holdSlots = 256 // as in entry_linux_*.s
	saSiginfo = 0x4
	siTkill   = -6
	// holdPatience bounds the wait for one round of acknowledgements; a
	// loaded machine takes milliseconds to schedule every thread.
	holdPatience = 2 * time.Second
	// holdSilence is how long a thread may stay silent before its mask is
	// read (blocksAll).
	holdSilence = 100 * time.Millisecond
)

// atFDCWD is AT_FDCWD (-100) as a raw system call argument.
const atFDCWD = ^uintptr(99)

// threadHold is the state of the hold, allocated before step 1 so that
// step 6 needs no allocation.
type threadHold struct {
	pid     int
	dir     *byte  // "/proc/self/task"
	buf     []byte // getdents64, a thread's status
	status  []byte // a thread's status path
	waiting []uint32
}

func newThreadHold() (*threadHold, error) {
	dir, err := unix.BytePtrFromString("/proc/self/task")
	if err != nil {
		return nil, err
	}
	return &threadHold{pid: unix.Getpid(), dir: dir, buf: make([]byte, 8192), status: make([]byte, 0, 64), waiting: make([]uint32, 0, holdSlots)}, nil
}

// everyThread blocks holdMask on this thread and has every other thread
// that does not hold yet block it too. It reports false when the threads
// cannot be listed (no /proc, or a /proc of another PID namespace, where
// this process is not the thread group it names) or one did not answer
// within holdPatience; the forwarding then remains the only cover.
func (h *threadHold) everyThread() bool {
	act := kernelSigaction{Handler: uint64(holdHandler), Flags: saSiginfo | saOnstack | saRestart | saRestorer,
		Restorer: uint64(forwardRestorer), Mask: ^uint64(0)}
	if _, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGPROF), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0); errno != 0 {
		return false
	}
	mask := holdMask
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
	fd, _, errno := unix.RawSyscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(h.dir)), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return false
	}
	self := false
	h.waiting = h.waiting[:0]
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_GETDENTS64, fd, uintptr(unsafe.Pointer(&h.buf[0])), uintptr(len(h.buf)))
		if errno != 0 || n == 0 {
			break
		}
		for off := 0; off < int(n); {
			reclen := int(*(*uint16)(unsafe.Pointer(&h.buf[off+16])))
			tid, ok := parseTid(h.buf[off+19 : off+reclen])
			off += reclen
			switch {
			case !ok:
			case int(tid) == h.pid:
				self = true
			case !holds(tid) && len(h.waiting) < cap(h.waiting):
				_, _, errno := unix.RawSyscall(unix.SYS_TGKILL, uintptr(h.pid), uintptr(tid), uintptr(unix.SIGPROF))
				if errno == 0 {
					h.waiting = append(h.waiting, tid)
				}
			}
		}
	}
	unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	if !self {
		return false
	}
	deadline := time.Now().Add(holdPatience)
	silent := time.Now().Add(holdSilence)
	pause := unix.Timespec{Nsec: 20_000}
	for i := 0; i < len(h.waiting); {
		tid := h.waiting[i]
		if holds(tid) {
			i++
			continue
		}
		if _, _, errno := unix.RawSyscall(unix.SYS_TGKILL, uintptr(h.pid), uintptr(tid), 0); errno == unix.ESRCH {
			i++ // the thread ended
			continue
		}
		if now := time.Now(); now.After(deadline) {
			return false
		} else if now.After(silent) && h.blocksAll(tid) {
			i++ // not the runtime's: see blocksAll
			continue
		}
		unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&pause)), 0, 0)
	}
	return true
}

// blocksAll reports whether thread tid, which has not acknowledged, has
// SIGPROF and the termination signals (SIGHUP, SIGINT, SIGQUIT, SIGTERM)
// blocked (its SigBlk in /proc): a thread that is not the runtime's, such
// as qemu-user's own RCU thread, which never runs agentknock_hold and
// cannot take those signals (measured under qemu-user 7.2: without this
// every run waited holdPatience for it). A runtime thread blocks them only
// inside a signal handler or between its clone and its first instructions,
// each a matter of microseconds; it is asked only after holdSilence.
func (h *threadHold) blocksAll(tid uint32) bool {
	path := append(h.status[:0], "/proc/self/task/"...)
	path = strconv.AppendUint(path, uint64(tid), 10)
	path = append(path, "/status\x00"...)
	fd, _, errno := unix.RawSyscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return false
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&h.buf[0])), uintptr(len(h.buf)))
	unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	if errno != 0 {
		return false
	}
	text := h.buf[:n]
	const field = "\nSigBlk:\t"
	i := bytes.Index(text, []byte(field))
	if i < 0 || len(text) < i+len(field)+16 {
		return false
	}
	var blocked uint64
	for _, c := range text[i+len(field) : i+len(field)+16] {
		switch {
		case c >= '0' && c <= '9':
			blocked = blocked<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			blocked = blocked<<4 | uint64(c-'a'+10)
		default:
			return false
		}
	}
	const need = 1<<(unix.SIGHUP-1) | 1<<(unix.SIGINT-1) | 1<<(unix.SIGQUIT-1) | 1<<(unix.SIGTERM-1) | 1<<(unix.SIGPROF-1)
	return blocked&need == need
}

// holds reports whether thread tid acknowledged the hold.
func holds(tid uint32) bool {
	n := min(atomic.LoadUint64(&holdAcks), holdSlots)
	for i := range n {
		if atomic.LoadUint32(&holdTids[i]) == tid {
			return true
		}
	}
	return false
}

// parseTid reads a directory entry's NUL-terminated decimal name.
func parseTid(name []byte) (uint32, bool) {
	var n uint32
	digits := 0
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || digits == 9 {
			return 0, false
		}
		n = n*10 + uint32(c-'0')
		digits++
	}
	return n, digits > 0
}

func pendingSignals() uint64 {
	var set uint64
	unix.RawSyscall(unix.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&set)), 8, 0)
	return set
}

// restoreCallerState (step 5) puts back the snapshot taken at process entry
// (or what a build without it knows): a SIGINT or SIGTERM the caller
// neither ignores nor blocks at the default, so that from here it acts on
// the launcher as it would on the command; the caller's ignores, with
// SIGPIPE at its default; the file limit. A signal the caller blocks keeps
// the forwarding disposition, which execve resets to the default as it
// would the caller's handler: a thread started since step 3 may still take
// it, and must send it on, not die of it. SIGPROF is left to step 6, and
// the mask too, and so is the ignore of a signal the caller also blocked
// (keepsPendingIgnored), so that one pending now is not discarded.
func restoreCallerState(cs callerState) error {
	for _, sig := range terminationSignals {
		if !cs.ignored[sig] && !cs.forwarded(sig) {
			if err := setDisposition(sig, sigDFL); err != nil {
				return err
			}
		}
	}
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if cs.ignored[sig] && sig != unix.SIGPIPE && sig != unix.SIGKILL && sig != unix.SIGSTOP && sig != unix.SIGPROF && !cs.keepsPendingIgnored(sig) {
			// A signal the kernel will not let us ignore stays at the
			// default; nothing better can be done for it.
			_ = setDisposition(sig, sigIGN)
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
	return nil
}

func setDisposition(sig syscall.Signal, handler uint64) error {
	act := kernelSigaction{Handler: handler}
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// closeCallerClosedStd closes again a standard descriptor the caller left
// closed (the runtime's /dev/null there is not the caller's; descriptor 0
// stays when it is the service's pipe). Closing a descriptor the runtime
// opened cannot fail in a way that matters: the command must not inherit
// it either way.
func closeCallerClosedStd(cs callerState, stdin *os.File) {
	for fd := 0; fd < 3; fd++ {
		if cs.closedStd&(1<<fd) != 0 && !(fd == 0 && stdin != nil) {
			unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
		}
	}
}

// finishCallerSignals (step 6, raw system calls under the exec lock):
// the ignores of the signals the caller both blocked and ignored
// (keepsPendingIgnored) and SIGPROF back to the caller's ignore or the
// default, then the caller's mask on this thread. Setting SIG_IGN discards
// a pending signal, so each instance pending before is taken out first
// (rt_sigtimedwait without waiting, with its siginfo) and queued again
// after, as are the signals pending at process entry (agentknock_rt0
// dequeued them so that the runtime would not take them). Queued again as
// they came: one sent to the thread (SI_TKILL, which is also how
// agentknock_forward sends on) to this thread, the others to the process,
// with the sender's siginfo; when no hold was possible, to this thread
// too, where no other thread can take them. They stay pending: the caller
// blocks them, and the kernel discards an ignored signal at sending only
// when its target does not block it.
func finishCallerSignals(cs callerState, kept *keptSignals, held bool) {
	set := uint64(0)
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if cs.keepsPendingIgnored(sig) {
			set |= 1 << (uint(sig) - 1)
		}
	}
	n := 0
	for set != 0 && n < keptSlots {
		_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&set)), uintptr(unsafe.Pointer(&kept[n])), uintptr(unsafe.Pointer(&zeroTimeout)), 8, 0, 0)
		if errno != 0 {
			break // EAGAIN: none left
		}
		n++
	}
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if set&(1<<(uint(sig)-1)) != 0 && sig != unix.SIGPROF {
			_ = setDisposition(sig, sigIGN)
		}
	}
	prof := uint64(sigDFL)
	if cs.ignored[unix.SIGPROF] {
		prof = sigIGN
	}
	_ = setDisposition(unix.SIGPROF, prof)
	for i := range n {
		queueAgain(&kept[i], held)
	}
	for i := range min(callerPendingCount, callerPendingSlots) {
		queueAgain(&callerPending[i], held)
	}
	mask := cs.mask
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
}

// keptSignals holds the siginfo of the blocked and ignored signals pending
// at the exec (finishCallerSignals), allocated before the hand-off so that
// step 6 allocates nothing. One instance of each standard signal can be
// pending on the thread and one on the process; a real-time signal queued
// more often than the slots left loses the rest.
type keptSignals [keptSlots][128]byte

const keptSlots = 64

// queueAgain sends the signal described by the kernel's siginfo info to
// this process again: to this thread when it was sent to a thread or no
// other thread is held, else to the process.
func queueAgain(info *[128]byte, held bool) {
	pid := uintptr(unix.Getpid())
	sig := uintptr(*(*int32)(unsafe.Pointer(&info[0])))
	if *(*int32)(unsafe.Pointer(&info[8])) == siTkill || !held {
		unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, pid, pid, sig, uintptr(unsafe.Pointer(info)), 0, 0)
	} else {
		unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, pid, sig, uintptr(unsafe.Pointer(info)))
	}
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
