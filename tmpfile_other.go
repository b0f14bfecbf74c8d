//go:build !linux

// Systems without O_TMPFILE write the pairing through a named temporary
// file (state.go, writeFileAtomic).

package main

import "os"

func writeUnnamed(dir *os.File, name, tmpName string, data []byte) error {
	return errUnnamedUnsupported
}
