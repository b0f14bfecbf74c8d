// A pseudo-terminal for `secret upload --from-prompt` (Linux ptmx ioctls):
// agentknock gets it as its controlling terminal, and the test types into
// the master side once echo is off.
package e2e

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const havePty = true

// pty is one pseudo-terminal pair.
type pty struct {
	master, slave *os.File
}

func openPty() (*pty, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, err
	}
	return &pty{master: m, slave: s}, nil
}

// echoOn reports whether the terminal echoes input.
func (p *pty) echoOn() (bool, error) {
	t, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		return false, err
	}
	return t.Lflag&unix.ECHO != 0, nil
}

// sysProcAttr makes the child a session leader whose controlling terminal
// is its standard input, which must be p.slave.
func (p *pty) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}

func (p *pty) close() {
	p.slave.Close()
	p.master.Close()
}
