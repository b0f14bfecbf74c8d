// macOS selection primitives: command-execution.md, "macOS implementation",
// "Selection and inspection". macOS has no descriptor execution, so the
// retained O_EXEC descriptor pins an identity (device and inode) that the
// captured absolute path must still have when it is read and executed.
package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// defaultSearchPath is macOS's confstr(_CS_PATH), used when PATH is unset.
const defaultSearchPath = "/usr/bin:/bin:/usr/sbin:/sbin"

// workdirFlags retain the working directory for lookups only.
const workdirFlags = unix.O_SEARCH | unix.O_DIRECTORY | unix.O_CLOEXEC

// openCandidate opens with O_EXEC, which itself checks execute access.
func openCandidate(wd workdir, candidate string) (*executable, error) {
	fd, err := unix.Openat(dirfdFor(wd, candidate), candidate, unix.O_EXEC|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
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

// descriptorPath asks fcntl(F_GETPATH) for the absolute path of fd.
func descriptorPath(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), unix.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return "", fmt.Errorf("fcntl F_GETPATH: %w", errno)
	}
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf), nil
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
	if uint64(st.Dev) != x.dev || st.Ino != x.ino {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is no longer the file that was selected", x.path)
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
// for execution and, when a hash was reported, for reading it again.
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
