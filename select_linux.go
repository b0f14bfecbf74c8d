// Linux selection primitives: command-execution.md, "Linux implementation",
// "Working directory and search path", "Selected executable",
// "Executable inspection and revalidation" and "Approval context".
// Requires Linux 5.8 (faccessat2). With /proc mounted, the selected
// descriptor names and reopens itself through /proc/self/fd; without it
// (bubblewrap sandboxes, minimal containers) the name is the candidate with
// its symbolic links resolved, and the file is opened once by the
// candidate name: both are used only when they lead to the device and
// inode of the retained descriptor (nameWithoutProc, openByName), and the
// opened descriptor itself is what is checked. Only
// regular files are ever opened for reading, non-blocking and without
// taking a terminal. A file this user may execute but not read is probed
// by a traced child that stops at its exec (checkExecuteOnly). The
// approval context (launcher executables, parents, the terminal requests)
// follows at the end of the file.

package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// procfsMounted reports whether /proc is a proc file system (not missing,
// not an empty tmpfs put over it).
func procfsMounted() bool {
	var fs unix.Statfs_t
	return unix.Statfs("/proc/self", &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// defaultSearchPath is glibc's confstr(_CS_PATH), used when PATH is unset.
const defaultSearchPath = "/bin:/usr/bin"

// workdirFlags retain the working directory without opening it for reading.
const workdirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

// openCandidate opens one candidate with O_PATH (a FIFO or device is never
// really opened), requires a regular file the effective IDs may execute, and
// names it.
func openCandidate(wd workdir, candidate string) (*executable, error) {
	fd, err := unix.Openat(dirfdFor(wd, candidate), candidate, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	x, err := describeCandidate(fd, candidate)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return x, nil
}

func describeCandidate(fd int, candidate string) (*executable, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errNotExecutable
	}
	// unix.Faccessat would emulate AT_EMPTY_PATH badly when faccessat2 is
	// refused; call the system call itself and say what is missing.
	switch err := unix.Faccessat2(fd, "", unix.X_OK, unix.AT_EMPTY_PATH|unix.AT_EACCESS); {
	case err == nil:
	case errors.Is(err, unix.EACCES):
		return nil, errNotExecutable
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return nil, fmt.Errorf("this system does not provide faccessat2 (Linux 5.8 or later is required): %w", err)
	default:
		return nil, err
	}
	path, err := nameDescriptor(fd, candidate, &st)
	if err != nil {
		return nil, err
	}
	if err := checkUTF8Path(path); err != nil {
		return nil, err
	}
	return &executable{fd: fd, candidate: candidate, path: path, dev: st.Dev, ino: st.Ino}, nil
}

// nameDescriptor is the absolute path reported for the retained object: a
// name that leads to that object now. /proc gives any object a link text
// ("/tmp/x (deleted)" for an unlinked file, "/memfd:x (deleted)",
// "anon_inode:..."), so the text is required to be an absolute path that
// names the same device and inode.
func nameDescriptor(fd int, candidate string, st *unix.Stat_t) (string, error) {
	if procfsMounted() {
		path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			return "", fmt.Errorf("cannot name the selected file through /proc: %w", err)
		}
		var named unix.Stat_t
		if !filepath.IsAbs(path) || unix.Stat(path, &named) != nil || !sameObject(&named, st) {
			return "", fmt.Errorf("the selected file has no name that leads to it (the kernel calls it %s: deleted, or not on a file system)", printable(path))
		}
		return path, nil
	}
	return nameWithoutProc(candidate, st)
}

// nameWithoutProc names the retained object (st) without /proc: the
// candidate with its symbolic links resolved. command-execution.md asks
// not to name a file by a canonical path and reopen that name, because the
// name can lead elsewhere by then; this fallback is kept because nothing
// else names a descriptor without /proc, and it proves identity instead:
// the name is reported only if it leads, now, to the retained descriptor's
// device and inode, and the file is later opened by the candidate name
// only to be kept if the opened descriptor has them too (openRegular).
func nameWithoutProc(candidate string, st *unix.Stat_t) (string, error) {
	// Relative names resolve from the process's directory, which is the
	// retained one: agentknock never changes directory.
	path, err := filepath.EvalSymlinks(candidate)
	if err == nil && !filepath.IsAbs(path) {
		var dir string
		if dir, err = workdirName(unix.AT_FDCWD); err == nil {
			path = filepath.Join(dir, path)
		}
	}
	var named unix.Stat_t
	if err == nil {
		err = unix.Stat(path, &named)
	}
	if err == nil && !sameObject(&named, st) {
		err = errors.New("its path now names another file")
	}
	if err != nil {
		return "", fmt.Errorf("cannot name the selected file without /proc: %w", err)
	}
	return path, nil
}

// openForReading reads the retained object itself. An O_PATH descriptor
// cannot be read, so the first call opens the object for reading (through
// its /proc link, else by name, requiring the same device and inode) and
// keeps that descriptor: revalidation reads the object that was inspected
// even if its name changed meanwhile. Each call returns a duplicate at
// offset 0 for the caller to read and close.
func openForReading(x *executable) (*rawFile, error) {
	if x.readable == nil {
		var want unix.Stat_t
		if err := unix.Fstat(x.fd, &want); err != nil {
			return nil, err
		}
		fd, err := openRegular(x.fd, unix.AT_FDCWD, x.candidate, &want)
		if err != nil {
			return nil, classifyReadRefusal(x.fd, err)
		}
		x.readable = &rawFile{fd: fd}
	}
	fd, err := unix.FcntlInt(uintptr(x.readable.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return newRawFile(fd)
}

// newRawFile reads fd within the time bound for its current size.
func newRawFile(fd int) (*rawFile, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &rawFile{fd: fd, deadline: time.Now().Add(hashReadBound(st.Size))}, nil
}

// classifyReadRefusal keeps EACCES or EPERM, which inspect takes for an
// execute-only file, only when the file's own permissions refuse reading
// to the effective IDs (faccessat2 R_OK on the retained descriptor). When
// they allow it, something else refused (a /proc that this process may
// not use, a security module): the file is readable, may be a script, and
// must not be reported as a binary without a hash.
func classifyReadRefusal(pathFd int, err error) error {
	if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
		return err
	}
	if unix.Faccessat2(pathFd, "", unix.R_OK, unix.AT_EMPTY_PATH|unix.AT_EACCESS) != nil {
		return err
	}
	var errno syscall.Errno
	errors.As(err, &errno)
	return fmt.Errorf("its permissions allow reading it, but opening it for reading was refused (%v)", errno)
}

// openRegular opens for reading the regular file that pathFd (an O_PATH
// descriptor) refers to: through /proc/self/fd, which reopens that very
// object, or without /proc by name (openByName).
// O_NONBLOCK keeps a FIFO from blocking the open and O_NOCTTY keeps a
// terminal from becoming the controlling one; O_NONBLOCK stays set, and
// the descriptor is read only through rawFile, never the runtime's poller.
func openRegular(pathFd, dirfd int, name string, want *unix.Stat_t) (int, error) {
	if !procfsMounted() {
		return openByName(dirfd, name, want)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pathFd), readFlags, 0)
	return keepIfSame(fd, err, name, want)
}

const readFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK

// openByName is the fallback without /proc: it opens name (from dirfd)
// once and keeps the descriptor only if it is a regular file with want's
// device and inode, the identity of the retained O_PATH descriptor; a name
// that leads to another file by now is refused, never read.
func openByName(dirfd int, name string, want *unix.Stat_t) (int, error) {
	fd, err := unix.Openat(dirfd, name, readFlags, 0)
	return keepIfSame(fd, err, name, want)
}

// keepIfSame checks a descriptor just opened (or the open's error) against
// want: the opened descriptor itself is what is checked.
func keepIfSame(fd int, err error, name string, want *unix.Stat_t) (int, error) {
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: printable(name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || !sameObject(&st, want) {
		unix.Close(fd)
		return -1, fmt.Errorf("%s was replaced while it was being read", printable(name))
	}
	return fd, nil
}

// openPathForReading reads what the kernel will execute for a script: the
// candidate pathname, relative ones from the retained directory. The name
// is looked up with O_PATH first, which opens nothing, and only a regular
// file is then opened for reading: a FIFO, a device or a terminal put at
// the name during the approval wait is refused without being opened.
func openPathForReading(wd workdir, x *executable) (*rawFile, error) {
	dirfd := dirfdFor(wd, x.candidate)
	pathFd, err := unix.Openat(dirfd, x.candidate, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pathFd)
	var st unix.Stat_t
	if err := unix.Fstat(pathFd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is no longer a regular file", printable(x.candidate))
	}
	fd, err := openRegular(pathFd, dirfd, x.candidate, &st)
	if err != nil {
		return nil, err
	}
	return newRawFile(fd)
}

// revalidate repeats the hash observation just before execution: a binary
// through the retained descriptor, a script through the pathname the kernel
// will use. Without a reported hash there is nothing to compare.
func (x *executable) revalidate(wd workdir) error {
	if x.hash == nil {
		return nil
	}
	open := openForReading
	if x.script {
		open = func(x *executable) (*rawFile, error) { return openPathForReading(wd, x) }
	}
	f, err := open(x)
	if err != nil {
		return fmt.Errorf("cannot read %s again before running it: %v", printable(x.path), err)
	}
	defer f.Close()
	return x.revalidateHash(f)
}

// The execute-only probe (README "Limits and bounds", docs/launch-path.md
// "The execute-only probe"). A file this user may execute but not read
// cannot be inspected, so it is reported as a binary without a hash; if
// it is in fact a #! script, its interpreter cannot read it either, and
// the run fails after the approval (run through its close-on-exec
// descriptor, as a binary is, the kernel refuses it at once with ENOENT,
// because the interpreter could not reopen it). The probe
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

const (
	// probeBound is how long the child may take to reach its stop once it
	// is started, and again to be reaped once killed (measured: 1 to 2 ms
	// from the fork to the stop, for a binary and a script alike).
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
		ws, got, err := waitNoHang(pid)
		switch {
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

// waitNoHang is wait4(pid, WNOHANG), taken again when a signal
// interrupts it: got is 0 while the child has nothing to report.
func waitNoHang(pid int) (ws unix.WaitStatus, got int, err error) {
	for {
		got, err = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if !errors.Is(err, unix.EINTR) {
			return ws, got, err
		}
	}
}

// endProbe kills the stopped child and reaps it within probeBound. A child
// that cannot be reaped stops the run: the command, which replaces this
// process, would inherit it as a child of its own.
func endProbe(pid int) error {
	unix.Kill(pid, unix.SIGKILL)
	start := time.Now()
	for {
		_, got, err := waitNoHang(pid)
		switch {
		case err != nil || got == pid:
			return nil
		case time.Since(start) > probeBound:
			return fmt.Errorf("the probe's child (PID %d) did not end within %v of SIGKILL, and the command would inherit it", pid, probeBound)
		}
		probePause(start)
	}
}

// workdirName is getcwd(2) of the process, whose directory is the retained
// one (agentknock never changes directory). A removed directory gives
// ENOENT.
func workdirName(int) (string, error) {
	buf := make([]byte, unix.PathMax)
	if _, err := unix.Getcwd(buf); err != nil {
		return "", err
	}
	return nameFromBuffer(buf)
}

// Linux approval context: launcher executables from /proc
// (command-execution.md, "Approval context"); the host's pairing metadata
// from /etc. Without /proc the chain is empty (nothing else names another
// process's executable), and parent records come from PIDFD_GET_INFO
// (Linux 6.13,
// https://man7.org/linux/man-pages/man2/PIDFD_GET_INFO.2const.html) for the
// service's peer check.

const ioctlGetTermios = unix.TCGETS

// launcherChain reports up to four ancestor executable paths, oldest first,
// as the kernel resolved them (/proc/PID/exe).
func launcherChain() []string {
	return walkLaunchers(os.Getppid(), func(pid int) (string, error) {
		return os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	}, parentPID)
}

// parentPID reads the parent from /proc/PID/stat: the fourth field, after
// the command name in parentheses (which may itself hold spaces and ")");
// stat costs the kernel less to produce than status. Without /proc it asks
// a pidfd of the process (errNoParentRecords when the kernel cannot tell).
func parentPID(pid int) (int, error) {
	if !procfsMounted() {
		return pidfdParent(pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, os.ErrNotExist
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return 0, os.ErrNotExist
	}
	return strconv.Atoi(fields[1])
}

// pairingHost reads the files the reference client reads: /etc/hostname,
// /etc/machine-id (sent as it is, trimmed, not hashed; no D-Bus fallback)
// and PRETTY_NAME of /etc/os-release.
func pairingHost() hostInfo {
	return hostInfoFrom("/etc")
}

// hostInfoFrom reads the three files under etc (a test gives a directory
// of its own).
func hostInfoFrom(etc string) hostInfo {
	read := func(name string) string {
		b, err := os.ReadFile(etc + "/" + name)
		if err != nil || !utf8.Valid(b) {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	h := hostInfo{Hostname: read("hostname"), MachineID: read("machine-id")}
	for line := range strings.SplitSeq(read("os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			h.OSVersion = strings.Trim(v, `"`)
			break
		}
	}
	return h
}

func pidfdParent(pid int) (int, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_PID}
	switch err := unix.IoctlPidfdInfo(fd, &info); {
	case errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return 0, errNoParentRecords
	case err != nil:
		return 0, err
	}
	return int(info.Ppid), nil
}

// The termios write request of secret.go on Linux (the read request
// is this file's).

const ioctlSetTermios = unix.TCSETS
