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

	"golang.org/x/sys/unix"
)

// defaultSearchPath is glibc's confstr(_CS_PATH), used when PATH is unset.
const defaultSearchPath = "/bin:/usr/bin"

// workdirFlags retain the working directory without opening it for reading.
const workdirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

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
