// Linux parts of the invocation service (command-execution.md, "Invocation
// service, standard input, and SSH operations"): its executable, the Git
// helper's link to it, and the owner watch through a pidfd. With /proc
// mounted the executable is /proc/self/exe, the exact file that is running;
// without it (bubblewrap, minimal containers) it is the path the kernel
// executed, identified by device and inode before the request (service.go)
// and checked again before the service starts and the Git helper links to it.

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// atExecFn is the auxiliary-vector entry holding the pathname given to
// execve (https://man7.org/linux/man-pages/man3/getauxval.3.html); x/sys
// has no constant for it.
const atExecFn = 31

// retainSelfImage has nothing to record with /proc: /proc/self/exe is the
// running image, whatever its path names now. Without /proc it identifies
// the path the kernel executed.
func retainSelfImage() (selfImage, error) {
	if procfsMounted() {
		return selfImage{}, nil
	}
	path, err := ownExecutablePath()
	if err != nil {
		return selfImage{}, err
	}
	return identifySelf(path)
}

// serviceExecutable is this very executable file: the running image, or
// the path identified before the request while it still names that file.
func serviceExecutable(img selfImage) (string, error) {
	if img.Path == "" {
		return "/proc/self/exe", nil
	}
	var st unix.Stat_t
	if err := unix.Stat(img.Path, &st); err != nil {
		return "", fmt.Errorf("cannot find agentknock's own executable %s: %v", img.Path, err)
	}
	if err := img.check(&st); err != nil {
		return "", err
	}
	return img.Path, nil
}

// ownExecutablePath finds this program without /proc: the pathname the
// kernel executed (AT_EXECFN), else argv[0] as execvp(3) would have found
// it. Relative names start at the process's directory, which agentknock
// never changes.
func ownExecutablePath() (string, error) {
	var candidates []string
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atExecFn && kv[1] != 0 {
				candidates = append(candidates, cString(*(*unsafe.Pointer)(unsafe.Pointer(&kv[1]))))
			}
		}
	}
	if arg0 := os.Args[0]; strings.Contains(arg0, "/") {
		candidates = append(candidates, arg0)
	} else if p, err := exec.LookPath(arg0); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		// A descriptor execution (fexecve) names /dev/fd/N, which needs
		// /proc and would not stay valid anyway.
		if strings.HasPrefix(c, "/dev/fd/") || strings.HasPrefix(c, "/proc/") {
			continue
		}
		abs, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(abs, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && unix.Access(abs, unix.X_OK) == nil {
			return abs, nil
		}
	}
	return "", errors.New("cannot find agentknock's own executable without /proc (it was started through a descriptor, or its path no longer exists); mount /proc or start agentknock by its path")
}

// cString copies the NUL-terminated string at p (at most PATH_MAX bytes).
func cString(p unsafe.Pointer) string {
	var b []byte
	for i := 0; i < unix.PathMax; i++ {
		c := *(*byte)(unsafe.Add(p, i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// installGitSignHelper links the helper to the service's own executable:
// Git runs the same agentknock binary, with nothing installed or added to
// PATH. Without /proc the link names the identified path.
func installGitSignHelper(path string, img selfImage) error {
	if img.Path == "" {
		return os.Symlink("/proc/"+strconv.Itoa(os.Getpid())+"/exe", path)
	}
	target, err := serviceExecutable(img)
	if err != nil {
		return err
	}
	return os.Symlink(target, path)
}

// watchOwner returns a channel closed when the owner process exits. The
// pidfd refers to that process even if its PID is later reused.
func watchOwner(pid int) (<-chan struct{}, error) {
	gone := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		close(gone)
		return gone, nil
	}
	if err != nil {
		return nil, err
	}
	go func() {
		defer close(gone)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return gone, nil
}

// maxSocketPath is the longest Unix socket path, leaving sun_path's NUL.
const maxSocketPath = 107

// The peer PID of a Unix socket on Linux: SO_PEERCRED.

func socketPeerPID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}
