// Approval context shared by Linux and macOS: command-execution.md,
// "Approval context". Everything here is client-reported and advisory.
package main

import (
	"golang.org/x/sys/unix"
)

// maxLauncherDepth is how many ancestor executables the request reports.
const maxLauncherDepth = 4

// streamKind classifies how a standard stream is connected.
func streamKind(fd int) string {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "UNKNOWN"
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "PIPE"
	case unix.S_IFSOCK:
		return "SOCKET"
	case unix.S_IFREG:
		return "REGULAR_FILE"
	case unix.S_IFCHR:
		if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil {
			return "TERMINAL"
		}
		var null unix.Stat_t
		if unix.Stat("/dev/null", &null) == nil && null.Mode&unix.S_IFMT == unix.S_IFCHR && null.Rdev == st.Rdev {
			return "NULL_DEVICE"
		}
	}
	return "UNKNOWN"
}

// reverseStrings orders a chain collected from the direct launcher upwards
// as the protocol wants it, oldest ancestor first.
func reverseStrings(s []string) []string {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}
