// The termios write request of secret_prompt.go on Linux (the read request
// is context_linux.go's).

package main

import "golang.org/x/sys/unix"

const ioctlSetTermios = unix.TCSETS
