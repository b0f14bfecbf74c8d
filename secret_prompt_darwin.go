// The termios write request of secret_prompt.go on macOS (the read request
// is context_darwin.go's).

package main

import "golang.org/x/sys/unix"

const ioctlSetTermios = unix.TIOCSETA
