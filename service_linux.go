// Linux parts of the invocation service: its executable through /proc and
// the owner watch through a pidfd (command-execution.md, "Invocation
// service, standard input, and SSH operations").
package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// retainSelfImage has nothing to record: /proc/self/exe is the running
// image, whatever its path names now.
func retainSelfImage() (selfImage, error) { return selfImage{}, nil }

// serviceExecutable is this very executable file, even if its path was
// replaced since the launcher started.
func serviceExecutable(selfImage) (string, error) { return "/proc/self/exe", nil }

// installGitSignHelper links the helper to the service's own executable:
// Git runs the same agentknock binary, with nothing installed or added to
// PATH.
func installGitSignHelper(path string, _ selfImage) error {
	return os.Symlink("/proc/"+strconv.Itoa(os.Getpid())+"/exe", path)
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
