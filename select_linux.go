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
// taking a terminal. The approval context (launcher executables, parents,
// the terminal requests) follows at the end of the file.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
