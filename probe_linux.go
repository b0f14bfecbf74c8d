// The execute-only probe (Linux; README "Limits and bounds",
// docs/launch-path.md "The execute-only probe"). A file this user may
// execute but not read cannot be inspected, so it is reported as a binary
// without a hash; if it is in fact a #! script, its interpreter cannot
// read it either, and the run fails after the approval (run through its
// close-on-exec descriptor, as a binary is, the kernel refuses it at once
// with ENOENT, because the interpreter could not reopen it). The probe
// tells the two apart before the request without running any of either: a
// child executes the retained file under PTRACE_TRACEME, and the kernel
// stops it with SIGTRAP once execve has succeeded, before the first
// instruction of the program, of its loader or of an interpreter. At that
// stop /proc shows the child's argument list (even for a process that an
// unreadable executable made non-dumpable): the probe's own argv[0] for a
// binary; for a script, binfmt_script's interpreter, the #! line's
// optional argument and the script's path in its place. The child is then
// killed and reaped. A probe that cannot be made (no /proc of this PID
// namespace, PTRACE_TRACEME refused by Yama or a seccomp profile, the
// fork refused) or that ends any other way decides nothing: the run goes
// on as before, the file reported as a binary without a hash.

package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// probeBound is how long the child may take to reach its stop once it
	// is started, and again to be reaped once killed (measured: about
	// 1 ms from the fork to the stop, for a binary and a script alike).
	probeBound = 2 * time.Second
	// probeExecPath is how the child executes the retained file: through
	// its descriptor 3, so that the object selected (not whatever its name
	// leads to by now) is the one probed, and by a path, because a script
	// executed through a close-on-exec descriptor fails with ENOENT before
	// its interpreter is loaded, naming none (measured on Linux 6.18).
	probeExecPath = "/proc/self/fd/3"
	// probeMarkerPrefix starts the child's argv[0], a fresh random marker
	// that binfmt_script replaces for a script.
	probeMarkerPrefix = "agentknock-probe-"
)

// probeVerdict is what the probe found the file to be.
type probeVerdict int

const (
	probeUndecided probeVerdict = iota // impossible or inconclusive: the run goes on as before
	probeBinary
	probeScript
)

// probeOutcome is what the probe saw at the child's stop.
type probeOutcome struct {
	verdict probeVerdict
	// interpreter is, for a script, what the kernel put before the
	// script's path: the interpreter and the #! line's optional argument
	// (and, for an interpreter that is itself a script, the next ones).
	interpreter []string
	// setID: the program the kernel loaded for a script is set-user-ID or
	// set-group-ID or has file capabilities (setIDProgram).
	setID bool
	// why says, when nothing was decided, why (shown with --verbose).
	why string
}

// checkExecuteOnly probes an execute-only file and stops the run, before
// the request, when it is a script. It returns a line for --verbose,
// saying what was found, and an error only to stop the run.
//
// A script is refused unless the program the kernel starts for it is
// set-ID or has file capabilities: such an interpreter runs with other
// credentials (the probe, being traced, does not get them), which may read
// the script, and nothing cheap can tell; the run then goes on as before.
// Every other interpreter runs as this user, who may not read the script:
// the common case, and the one refused.
func checkExecuteOnly(x *executable) (string, error) {
	r, err := probeExecuteOnly(x.fd)
	if err != nil {
		return "", err
	}
	switch {
	case r.verdict == probeUndecided:
		return "execute-only file not probed: " + r.why + "; it is reported as a binary without a hash", nil
	case r.verdict == probeBinary:
		return "execute-only file probed: a binary", nil
	case r.setID:
		return "execute-only file probed: a script whose interpreter " + printable(strings.Join(r.interpreter, " ")) + " runs with other credentials, which may read it; it is reported as a binary without a hash", nil
	}
	err = fmt.Errorf("cannot run %s: it is a script (the kernel starts it with %s) that this user may execute but not read, so its interpreter could not read it and it would fail after the approval",
		printable(x.path), printable(strings.Join(r.interpreter, " ")))
	var st unix.Stat_t
	if unix.Fstat(x.fd, &st) == nil && int(st.Uid) == unix.Geteuid() {
		return "", classifyWithFix(failCommandUnreadable, "chmod u+r "+shellWord(x.path), err)
	}
	return "", classify(failCommandUnreadable, err)
}

// probeExecuteOnly executes the retained file fd in a traced child and
// reads what the kernel started (see the top of this file); its error, a
// child that could not be ended, stops the run.
//
// The child has an empty environment, /dev/null as its standard streams
// (descriptors the caller left inheritable it holds too, unused, until it
// is killed) and a session of its own, so that no terminal signal reaches
// it between its PTRACE_TRACEME and its exec: a traced child that takes a
// signal there stops before the exec, and the fork, which waits for the
// exec, would wait for ever. It gets SIGKILL should this thread end before
// it is reaped, because a tracee whose tracer ends is released and runs
// (measured: without that signal the probed script ran each time the
// probing process exited at the stop, with it in none of 300 tries).
//
// The child is one more process under the process limit, for about a
// millisecond (checkProcessLimit counts it). Its stop and its end each
// send SIGCHLD, which the runtime's handler takes and drops, as it does
// the invocation service's (no signal.Notify asks for SIGCHLD, and the
// runtime unblocks it on every thread): no SIGCHLD is left pending for the
// command, and the caller's mask and dispositions are not touched (the
// fork blocks every signal on this thread and restores its mask).
func probeExecuteOnly(fd int) (probeOutcome, error) {
	if !procfsMounted() || !ownProcfs() {
		return probeOutcome{why: "no /proc of this PID namespace shows the child's arguments"}, nil
	}
	// The runtime locked the main goroutine to this thread (init): the
	// child's tracer is the thread that forks it, and its mask the one the
	// child starts with.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A blocked SIGTRAP would not stop the child: it would run. The
	// runtime never blocks it on a thread; this says so before relying on
	// it.
	var mask unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, nil, &mask); err != nil || mask.Val[0]&(1<<(unix.SIGTRAP-1)) != 0 {
		return probeOutcome{why: "SIGTRAP is blocked on the launcher's main thread"}, nil
	}
	marker := probeMarkerPrefix + rand.Text()
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return probeOutcome{why: fmt.Sprintf("cannot open /dev/null (%v)", err)}, nil
	}
	defer unix.Close(null)
	pid, err := syscall.ForkExec(probeExecPath, []string{marker}, &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{uintptr(null), uintptr(null), uintptr(null), uintptr(fd)},
		Sys:   &syscall.SysProcAttr{Ptrace: true, Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		// The child reports one errno for its PTRACE_TRACEME and its exec
		// alike: EPERM or ENOSYS is usually the former (Yama
		// ptrace_scope 2 or 3, a seccomp profile, a launcher that is
		// itself traced), ENOENT a missing loader or interpreter.
		return probeOutcome{why: fmt.Sprintf("the traced child could not start (%v)", err)}, nil
	}
	r, stopped := probeStop(pid, marker)
	if stopped {
		if err := endProbe(pid); err != nil {
			return probeOutcome{}, err
		}
	}
	return r, nil
}

// ownProcfs reports whether /proc is the one of this process's PID
// namespace (/proc/self is this PID): another namespace's numbers would
// name another process.
func ownProcfs() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(unix.Getpid())
}

// probeStop waits, within probeBound, for the child's stop after its exec
// and reads it; stopped is false when the child was reaped instead (it
// ended), and the caller kills and reaps a stopped child.
func probeStop(pid int, marker string) (r probeOutcome, stopped bool) {
	start := time.Now()
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return probeOutcome{why: fmt.Sprintf("waiting for the child failed (%v)", err)}, !errors.Is(err, unix.ECHILD)
		case got == pid && !ws.Stopped():
			return probeOutcome{why: "the child ended before its stop"}, false
		case got == pid && ws.StopSignal() != unix.SIGTRAP:
			return probeOutcome{why: "the child stopped with " + unix.SignalName(ws.StopSignal()) + ", not at its exec"}, true
		case got == pid:
			return readProbe(pid, marker), true
		case time.Since(start) > probeBound:
			return probeOutcome{why: fmt.Sprintf("the child did not stop within %v", probeBound)}, true
		}
		probePause(start)
	}
}

// probePause waits before the next look at the child: briefly at first
// (the stop and the reap each come within a millisecond or two), then
// longer on a loaded machine.
func probePause(start time.Time) {
	if time.Since(start) < 50*time.Millisecond {
		time.Sleep(50 * time.Microsecond)
	} else {
		time.Sleep(5 * time.Millisecond)
	}
}

// readProbe reads the stopped child's arguments and, for a script, the
// program the kernel loaded.
func readProbe(pid int, marker string) probeOutcome {
	proc := "/proc/" + strconv.Itoa(pid)
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return probeOutcome{why: fmt.Sprintf("cannot read the child's arguments (%v)", err)}
	}
	verdict, interpreter := readProbeArgs(cmdline, marker)
	r := probeOutcome{verdict: verdict, interpreter: interpreter}
	switch verdict {
	case probeUndecided:
		r.why = fmt.Sprintf("the child's arguments %q are neither a binary's nor a script's", cmdline)
	case probeScript:
		r.setID = setIDProgram(proc+"/exe") || setIDProgram(interpreter[0])
	}
	return r
}

// readProbeArgs reads the child's argument list at its stop (cmdline, as
// /proc gives it: each argument ends with a NUL). A binary keeps the
// probe's only argument, marker. binfmt_script replaces argv[0] with the
// script's path and puts the interpreter, and the #! line's optional
// argument, in front of it (again for each interpreter that is itself a
// script): a list ending with probeExecPath whose first argument is not
// the marker is a script, and what precedes that path is what runs it.
// Anything else decides nothing.
func readProbeArgs(cmdline []byte, marker string) (probeVerdict, []string) {
	if len(cmdline) == 0 || cmdline[len(cmdline)-1] != 0 {
		return probeUndecided, nil
	}
	args := strings.Split(string(cmdline[:len(cmdline)-1]), "\x00")
	switch {
	case len(args) == 1 && args[0] == marker:
		return probeBinary, nil
	case len(args) >= 2 && args[0] != marker && args[0] != "" && args[len(args)-1] == probeExecPath:
		return probeScript, args[:len(args)-1]
	}
	return probeUndecided, nil
}

// setIDProgram reports whether path is a file that execve runs with other
// credentials: set-user-ID, set-group-ID (with group execute, as the
// kernel requires) or with file capabilities. A file that cannot be
// examined is taken as an ordinary one.
func setIDProgram(path string) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return false
	}
	if st.Mode&unix.S_ISUID != 0 || st.Mode&(unix.S_ISGID|unix.S_IXGRP) == unix.S_ISGID|unix.S_IXGRP {
		return true
	}
	_, err := unix.Getxattr(path, "security.capability", nil)
	return err == nil
}

// endProbe kills the stopped child and reaps it within probeBound. A child
// that cannot be reaped stops the run: the command, which replaces this
// process, would inherit it as a child of its own.
func endProbe(pid int) error {
	unix.Kill(pid, unix.SIGKILL)
	start := time.Now()
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil || got == pid:
			return nil
		case time.Since(start) > probeBound:
			return fmt.Errorf("the probe's child (PID %d) did not end within %v of SIGKILL, and the command would inherit it", pid, probeBound)
		}
		probePause(start)
	}
}
