//go:build !linux

// The benchmark measures on Linux only (peer credentials, /proc).
package main

import "errors"

func peerPID(string) (int, error) { return 0, errors.New("linux only") }
