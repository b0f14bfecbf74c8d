// Approval context shared by Linux and macOS: command-execution.md,
// "Approval context". Everything here is client-reported and advisory.

package main

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// reportedStream is what the request says about standard descriptor fd: a
// descriptor the caller closed is UNKNOWN (the protocol has no kind for it;
// the runtime put /dev/null there, which the command will not get).
func (cs callerState) reportedStream(fd int) string {
	if cs.closedStd&(1<<fd) != 0 {
		return "UNKNOWN"
	}
	return streamKind(fd)
}

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

// walkLaunchers collects the executable paths of pid and its ancestors, up
// to maxLauncherChain, oldest first, as the request reports them. Missing,
// inaccessible or non-UTF-8 information, or a path that is not absolute,
// ends the chain there: the device is told less, never a guess.
func walkLaunchers(pid int, executablePath func(pid int) (string, error), parentOf func(pid int) (int, error)) []string {
	var chain []string
	for len(chain) < maxLauncherChain && pid > 0 {
		path, err := executablePath(pid)
		if err != nil || !utf8.ValidString(path) || !strings.HasPrefix(path, "/") {
			break
		}
		chain = append(chain, path)
		if pid, err = parentOf(pid); err != nil {
			break
		}
	}
	return reverseStrings(chain)
}

// reverseStrings orders a chain collected from the direct launcher upwards
// as the protocol wants it, oldest ancestor first.
func reverseStrings(s []string) []string {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}

// macOSVersionText is how the pairing metadata names a macOS release, the
// way the reference client does: "macOS" and kern.osproductversion.
func macOSVersionText(productVersion string) string {
	v := strings.TrimSpace(strings.TrimRight(productVersion, "\x00"))
	if v == "" || !utf8.ValidString(v) {
		return ""
	}
	return "macOS " + v
}

// hostInfo is what the pairing metadata tells the device about this host
// (client-device-protocol.md, "Initial pairing"); an empty member is left out.
// pairingHost (context_linux.go, context_darwin.go) takes each from the
// same source as the reference client, so the device shows the same client
// whichever of the two paired.
type hostInfo struct {
	Hostname  string
	MachineID string
	OSVersion string
}
