// Linux approval context: launcher executables from /proc
// (command-execution.md, "Approval context").
package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const ioctlGetTermios = unix.TCGETS

// launcherChain reports up to four ancestor executable paths, oldest first,
// as the kernel resolved them (/proc/PID/exe).
func launcherChain() []string {
	return walkLaunchers(os.Getppid(), func(pid int) (string, error) {
		return os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	}, parentPID)
}

// parentPID reads PPid from /proc/PID/status.
func parentPID(pid int) (int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, os.ErrNotExist
}

// osVersion is the kernel release uname reports.
func osVersion() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return strings.TrimRight(string(u.Release[:]), "\x00")
}
