// macOS approval context: launcher executables from sysctl
// (kern.proc.pid for the parent, kern.procargs2 for the executable path).
package main

import (
	"bytes"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

const ioctlGetTermios = unix.TIOCGETA

func launcherChain() []string {
	var chain []string
	pid := os.Getppid()
	for len(chain) < maxLauncherDepth && pid > 0 {
		args, err := unix.SysctlRaw("kern.procargs2", pid)
		if err != nil || len(args) < 5 {
			break
		}
		path := args[4:]
		if i := bytes.IndexByte(path, 0); i >= 0 {
			path = path[:i]
		}
		if len(path) == 0 || !utf8.Valid(path) {
			break
		}
		chain = append(chain, string(path))
		if pid, err = parentPID(pid); err != nil {
			break
		}
	}
	return reverseStrings(chain)
}

// parentPID reads the parent from the kernel's process information.
func parentPID(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	return int(kp.Eproc.Ppid), nil
}
