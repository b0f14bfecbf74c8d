// Linux approval context: launcher executables from /proc
// (command-execution.md, "Approval context").
package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

const ioctlGetTermios = unix.TCGETS

// launcherChain reports up to four ancestor executable paths, oldest first.
// Missing, inaccessible or non-UTF-8 information ends the chain there.
func launcherChain() []string {
	var chain []string
	pid := os.Getppid()
	for len(chain) < maxLauncherDepth && pid > 0 {
		path, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if err != nil || !utf8.ValidString(path) {
			break
		}
		chain = append(chain, path)
		if pid, err = parentPID(pid); err != nil {
			break
		}
	}
	return reverseStrings(chain)
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
