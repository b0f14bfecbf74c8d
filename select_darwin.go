// macOS selection primitives: command-execution.md, "macOS implementation",
// "Selection and inspection". macOS has no descriptor execution, so the
// retained O_EXEC descriptor pins an identity (device and inode) that the
// captured absolute path must still have when it is read and executed.

package main

import (
	"fmt"
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
	if err == nil {
		err = checkUTF8Path(path)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &executable{fd: fd, candidate: candidate, path: path, dev: uint64(st.Dev), ino: st.Ino}, nil
}

// openIdentified opens the captured path and requires the retained identity.
func openIdentified(x *executable, flags int) (int, error) {
	fd, err := unix.Open(x.path, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := x.checkIdentity(&st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func openForReading(x *executable) (*os.File, error) {
	fd, err := openIdentified(x, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), x.path), nil
}

// revalidate requires the captured path to name the retained object, both
// for execution and, when a hash was reported, for reading it again. It is
// the last step before execve (execCommand), so that nothing between the
// check and the call waits on anything.
func (x *executable) revalidate(wd workdir) error {
	fd, err := openIdentified(x, unix.O_EXEC)
	if err != nil {
		return fmt.Errorf("cannot run %s as approved: %v", x.path, err)
	}
	unix.Close(fd)
	if x.hash == nil {
		return nil
	}
	f, err := openForReading(x)
	if err != nil {
		return fmt.Errorf("cannot read %s again before running it: %v", x.path, err)
	}
	defer f.Close()
	return x.revalidateHash(f)
}
