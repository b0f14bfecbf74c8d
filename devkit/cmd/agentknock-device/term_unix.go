//go:build linux || darwin

// Terminal detection: serve prompts on its standard input only when it is a
// terminal (not a pipe or /dev/null) and serve is in that terminal's
// foreground process group, so `agentknock-device serve &` never competes
// with the shell for input.
package main

import (
	"os"

	"golang.org/x/sys/unix"
)

func foregroundTerminal(f *os.File) bool {
	// TIOCGPGRP fails with ENOTTY on anything but a terminal.
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
