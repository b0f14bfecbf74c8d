// macOS parts of the invocation service: its executable checked against
// the identity recorded before the request (service.go), and the owner
// watch through kqueue EVFILT_PROC/NOTE_EXIT (command-execution.md, "macOS
// implementation", "Invocation service").

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// retainSelfImage identifies the path the service will be started from.
func retainSelfImage() (selfImage, error) {
	path, err := os.Executable()
	if err != nil {
		return selfImage{}, err
	}
	return identifySelf(path)
}

// serviceExecutable is the recorded path, if it still names the recorded
// file. The path can change between this check and execve: macOS has no
// descriptor execution.
func serviceExecutable(img selfImage) (string, error) {
	f, err := img.openChecked()
	if err != nil {
		return "", err
	}
	f.Close()
	return img.Path, nil
}

// installGitSignHelper copies the recorded executable into the service's
// private directory (macOS has no /proc to link to); the copy holds no
// secret. It is copied from the descriptor that passed the identity check.
func installGitSignHelper(path string, img selfImage) error {
	src, err := img.openChecked()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
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

// maxSocketPath is the longest Unix socket path (darwinMaxSocketPath).
const maxSocketPath = darwinMaxSocketPath

// The peer PID of a Unix socket on macOS: LOCAL_PEERPID.
//
// LOCAL_PEERTOKEN (the peer's audit token, whose PID version would tell a
// reused PID apart) can be read cgo-free (x/sys has the constant; a
// getsockopt of 32 bytes), but it is not used, because nothing cgo-free
// can compare it with anything: the check walks parent records from that
// PID (descendsFrom, service.go), and the version of the process now
// holding a PID, or of each parent on the way, comes only from a task port
// (task_name_for_pid with task_info TASK_AUDIT_TOKEN) or from
// proc_pidinfo's PROC_PIDUNIQIDENTIFIERINFO, whose p_idversion is not part
// of the documented <libproc.h> interface. The token alone would guard one
// link of the chain at most, so the check stays best effort (peerPID,
// service.go): the service's directory (mode 0700) is the boundary, and a
// PID reused between connect and the walk needs macOS's sequential PIDs to
// wrap in that time.

func socketPeerPID(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
}
