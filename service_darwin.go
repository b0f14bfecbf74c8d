// macOS parts of the invocation service: its executable by path and the
// owner watch through kqueue EVFILT_PROC/NOTE_EXIT (command-execution.md,
// "macOS implementation", "Invocation service").
package main

import (
	"os"

	"golang.org/x/sys/unix"
)

func serviceExecutable() (string, error) { return os.Executable() }

// installGitSignHelper copies the service's executable into its private
// directory (macOS has no /proc to link to); the copy holds no secret.
func installGitSignHelper(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o700)
}

// watchOwner returns a channel closed when the owner process exits.
func watchOwner(pid int) (<-chan struct{}, error) {
	gone := make(chan struct{})
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	change := unix.Kevent_t{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}
	if _, err := unix.Kevent(kq, []unix.Kevent_t{change}, nil, nil); err != nil {
		unix.Close(kq)
		if err == unix.ESRCH {
			close(gone)
			return gone, nil
		}
		return nil, err
	}
	go func() {
		defer close(gone)
		defer unix.Close(kq)
		events := make([]unix.Kevent_t, 1)
		for {
			if _, err := unix.Kevent(kq, nil, events, nil); err != unix.EINTR {
				return
			}
		}
	}()
	return gone, nil
}
