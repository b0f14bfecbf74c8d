//go:build !linux && !darwin

// Terminal detection elsewhere: never prompt; answers come from another
// terminal through the control socket.
package main

import "os"

func foregroundTerminal(f *os.File) bool { return false }
