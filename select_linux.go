// Linux selection primitives: command-execution.md, "Linux implementation",
// "Working directory and search path", "Selected executable" and
// "Executable inspection and revalidation". Requires Linux 5.8
// (faccessat2) and a mounted /proc (descriptor paths).
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// defaultSearchPath is glibc's confstr(_CS_PATH), used when PATH is unset.
const defaultSearchPath = "/bin:/usr/bin"

// retainWorkdir opens the current directory as the base of every relative
// lookup. A removed directory can still be opened, so getcwd decides.
func retainWorkdir() (workdir, error) {
	fd, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return workdir{}, selectionErrorf("the working directory no longer exists")
		}
		return workdir{}, selectionErrorf("cannot open the working directory: %v", err)
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Getcwd(buf)
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) {
			return workdir{}, selectionErrorf("the working directory no longer exists")
		}
		return workdir{}, selectionErrorf("cannot determine the working directory: %v", err)
	}
	path := strings.TrimRight(string(buf[:n]), "\x00")
	if checkUTF8Path(path) != nil {
		unix.Close(fd)
		return workdir{}, selectionErrorf("the working directory path is not valid UTF-8, so it cannot be shown to the device")
	}
	return workdir{fd: fd, path: path}, nil
}

func dirfdFor(wd workdir, candidate string) int {
	if strings.HasPrefix(candidate, "/") {
		return unix.AT_FDCWD
	}
	return wd.fd
}

func statAt(wd workdir, candidate string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfdFor(wd, candidate), candidate, &st, 0)
	return st, err
}

// openCandidate opens one candidate with O_PATH (a FIFO or device is never
// really opened), requires a regular file the effective IDs may execute, and
// names it through /proc.
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
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil, fmt.Errorf("cannot name the selected file through /proc (is /proc mounted?): %w", err)
	}
	if err := checkUTF8Path(path); err != nil {
		return nil, err
	}
	return &executable{fd: fd, candidate: candidate, path: path, dev: st.Dev, ino: st.Ino}, nil
}

// openForReading reads the retained object itself: an O_PATH descriptor
// cannot be read, but its /proc link reopens exactly that object.
func openForReading(x *executable) (*os.File, error) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(x.fd), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), x.path), nil
}

// openPathForReading reads what the kernel will execute for a script: the
// candidate pathname, relative ones from the retained directory.
func openPathForReading(wd workdir, x *executable) (*os.File, error) {
	fd, err := unix.Openat(dirfdFor(wd, x.candidate), x.candidate, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), x.candidate), nil
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
		open = func(x *executable) (*os.File, error) { return openPathForReading(wd, x) }
	}
	f, err := open(x)
	if err != nil {
		return fmt.Errorf("cannot read %s again before running it: %v", x.path, err)
	}
	defer f.Close()
	return x.revalidateHash(f)
}
