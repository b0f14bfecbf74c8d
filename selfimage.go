// agentknock's own executable, which the invocation service and the Git
// signing helper run after approval (command-execution.md, "Invocation
// service, standard input, and SSH operations"; on macOS "Invocation
// service"). Linux starts them from /proc/self/exe, the running image
// itself. macOS has no such name, so the path is identified (device and
// inode) before the request and checked each time it is used: an upgrade of
// agentknock during the approval wait stops the run instead of starting a
// different program with the approved SSH key.

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// selfImage names agentknock's executable and the identity it had before
// the request. The zero value means "the running image" (Linux).
type selfImage struct {
	Path string `json:"path,omitempty"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
}

// identifySelf records what path names now.
func identifySelf(path string) (selfImage, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return selfImage{}, fmt.Errorf("cannot identify agentknock's own executable %s: %v", path, err)
	}
	return selfImage{Path: path, Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// openChecked opens the executable for reading and requires the recorded
// identity.
func (img selfImage) openChecked() (*os.File, error) {
	f, err := os.OpenFile(img.Path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open agentknock's own executable %s: %v", img.Path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if err := img.check(&st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// check compares a file's identity with the recorded one.
func (img selfImage) check(st *unix.Stat_t) error {
	if img.Path == "" {
		return fmt.Errorf("agentknock's own executable was not identified before the request")
	}
	if uint64(st.Dev) != img.Dev || st.Ino != img.Ino || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("agentknock's executable %s was replaced while waiting for approval (an upgrade?); run the command again", img.Path)
	}
	return nil
}
