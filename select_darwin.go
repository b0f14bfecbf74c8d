// macOS selection primitives: command-execution.md, "macOS implementation",
// "Selection and inspection". macOS has no descriptor execution, so the
// retained O_EXEC descriptor pins an identity (device and inode) that the
// captured absolute path must have when it is read, and that the candidate
// pathname must still have when it is checked last and executed
// (darwinExecPath, darwin_decisions.go).

package main

import (
	"os"

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

// openForReading opens the captured path for inspection and requires the
// retained identity.
func openForReading(x *executable) (*os.File, error) {
	open := func(flags int) (int, error) {
		return unix.Open(x.path, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	}
	return x.openChecked(open, unix.O_RDONLY)
}

// revalidate opens the candidate pathname, the one execve will be given,
// from the retained directory with O_EXEC and requires the retained
// object, then, when a hash was reported, reads it again by that name. It
// is the last step before execve (replaceProcess), so that nothing between
// the check and the call waits on anything.
func (x *executable) revalidate(wd workdir) error {
	name := darwinExecPath(x)
	open := func(flags int) (int, error) {
		return unix.Openat(dirfdFor(wd, name), name, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	}
	return x.revalidateNamed(open, unix.O_EXEC)
}
