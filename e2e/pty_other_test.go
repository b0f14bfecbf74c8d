//go:build !linux

// No pseudo-terminal driver here: `--from-prompt` is left to the Linux run.
package e2e

import (
	"errors"
	"os"
	"syscall"
)

const havePty = false

type pty struct {
	master, slave *os.File
}

func openPty() (*pty, error) { return nil, errors.New("no pty support in these tests on this system") }

func (p *pty) echoOn() (bool, error) { return false, errors.New("no pty") }

func (p *pty) sysProcAttr() *syscall.SysProcAttr { return nil }

func (p *pty) close() {}
