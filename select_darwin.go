// macOS selection primitives: command-execution.md, "macOS implementation",
// "Selection and inspection" and "Approval context". macOS has no
// descriptor execution, so the retained O_EXEC descriptor pins an identity
// (device and inode) that the captured absolute path must have when it is
// read, and that the candidate pathname must still have when it is checked
// last and executed (darwinExecPath, darwin_decisions.go). The approval
// context (launcher executables, parents, the terminal requests) follows
// at the end of the file.

package main

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// defaultSearchPath is macOS's confstr(_CS_PATH), used when PATH is unset.
const defaultSearchPath = "/usr/bin:/bin:/usr/sbin:/sbin"

// workdirFlags retain the working directory for lookups only.
const workdirFlags = unix.O_SEARCH | unix.O_DIRECTORY | unix.O_CLOEXEC

// workdirName is the retained directory's own path (F_GETPATH), looked up
// again to check that it still leads to that directory. getcwd(3) is not
// used: it walks the tree by name, and x/sys's wrapper of it returns a
// pointer where a length is expected.
func workdirName(fd int) (string, error) {
	var retained, named unix.Stat_t
	if err := unix.Fstat(fd, &retained); err != nil {
		return "", err
	}
	path, err := descriptorPath(fd)
	if err != nil {
		return "", err
	}
	return path, checkWorkdirName(&retained, &named, unix.Stat(path, &named))
}

// openCandidate opens with O_EXEC, which itself checks execute access.
// O_NONBLOCK keeps a FIFO of the command's name from blocking the search.
func openCandidate(wd workdir, candidate string) (*executable, error) {
	fd, err := unix.Openat(dirfdFor(wd, candidate), candidate, unix.O_EXEC|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, notExecutableOpen(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		if err == nil {
			err = errNotExecutable
		}
		return nil, err
	}
	path, err := descriptorPath(fd)
	if err != nil {
		unix.Close(fd)
		return nil, namingFailure(candidate, err)
	}
	if err := checkUTF8Path(path); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &executable{fd: fd, candidate: candidate, path: path, dev: uint64(st.Dev), ino: st.Ino}, nil
}

// checkExecuteOnly predicts nothing on macOS: an execute-only file stays
// a binary without a hash, and a script among them fails after the
// approval (README, "Limits and bounds"). Linux's probe (select_linux.go)
// has no macOS counterpart: tracing a child to its exec and reading its
// arguments there was not built or measured.
func checkExecuteOnly(*executable) (string, error) {
	return "execute-only file not probed (macOS): it is reported as a binary without a hash", nil
}

// openForReading opens the captured path for inspection and requires the
// retained identity.
func openForReading(x *executable) (*os.File, error) {
	open := func(flags int) (int, error) {
		return unix.Open(x.path, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	}
	return x.openChecked(open, unix.O_RDONLY)
}

// revalidate opens the candidate pathname, the one execve will be given
// (not the captured absolute path the spec names: darwinExecPath says
// why), from the retained directory with O_EXEC and requires the retained
// object, then, when a hash was reported, reads it again by that name. It
// is the last step before execve (darwinReplaceProcess), so that nothing between
// the check and the call waits on anything.
func (x *executable) revalidate(wd workdir) error {
	name := darwinExecPath(x)
	open := func(flags int) (int, error) {
		return unix.Openat(dirfdFor(wd, name), name, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	}
	return x.revalidateNamed(open, unix.O_EXEC)
}

// macOS approval context (command-execution.md, "Approval context"):
// launcher executables as the kernel resolved them (proc_pidpath), parents
// from sysctl kern.proc.pid, and the macOS product version.
//
// kern.procargs2 is not used for paths: its executable path is the string
// the parent passed to execve (possibly relative or a symbolic link) and it
// lives in the process's own writable memory.

const ioctlGetTermios = unix.TIOCGETA

func launcherChain() []string {
	return walkLaunchers(os.Getppid(), processPath, parentPID)
}

// parentPID reads the parent from the kernel's process information.
func parentPID(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	return int(kp.Eproc.Ppid), nil
}

// pairingHost is the host's pairing metadata as the reference client sends
// it on macOS: kern.hostname, no machine id, and the product version users
// know ("macOS 15.1", not the Darwin kernel release that uname reports).
func pairingHost() hostInfo {
	// The metadata is advisory: a value the kernel does not give is left
	// out, as the reference client leaves it out.
	h, _ := unix.Sysctl("kern.hostname")
	v, _ := unix.Sysctl("kern.osproductversion")
	return hostInfo{Hostname: strings.TrimSpace(h), OSVersion: macOSVersionText(v)}
}

// The termios write request of secret.go on macOS (the read request
// is this file's).

const ioctlSetTermios = unix.TIOCSETA
