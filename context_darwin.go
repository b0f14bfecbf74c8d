// macOS approval context (command-execution.md, "Approval context"):
// launcher executables as the kernel resolved them (proc_pidpath), parents
// from sysctl kern.proc.pid, and the macOS product version.
//
// kern.procargs2 is not used for paths: its executable path is the string
// the parent passed to execve (possibly relative or a symbolic link) and it
// lives in the process's own writable memory.

package main

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

const ioctlGetTermios = unix.TIOCGETA

func launcherChain() []string {
	return walkLaunchers(os.Getppid(), processPath, parentPID)
}

// parentPID reads the parent from the kernel's process information.
func parentPID(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	return int(kp.Eproc.Ppid), nil
}

// pairingHost is the host's pairing metadata as the reference client sends
// it on macOS: kern.hostname, no machine id, and the product version users
// know ("macOS 15.1", not the Darwin kernel release that uname reports).
func pairingHost() hostInfo {
	// The metadata is advisory: a value the kernel does not give is left
	// out, as the reference client leaves it out.
	h, _ := unix.Sysctl("kern.hostname")
	v, _ := unix.Sysctl("kern.osproductversion")
	return hostInfo{Hostname: strings.TrimSpace(h), OSVersion: macOSVersionText(v)}
}
