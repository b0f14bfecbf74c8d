// What the host must provide before the request is sent: command-execution.md,
// "Platform implementations" (Agentknock stops before sending the invocation
// request when the host cannot provide a required facility) and "Linux
// implementation". Seccomp profiles of sandboxes and older container
// runtimes refuse newer system calls with ENOSYS or EPERM, and low
// RLIMIT_NOFILE values leave no room for the run; each would otherwise be
// found only after a person approved.

package main

import (
	"errors"
	"fmt"
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
