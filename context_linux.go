// Linux approval context: launcher executables from /proc
// (command-execution.md, "Approval context"); the host's pairing metadata
// from /etc. Without /proc the chain is empty (nothing else names another
// process's executable), and parent records come from PIDFD_GET_INFO
// (Linux 6.13,
// https://man7.org/linux/man-pages/man2/PIDFD_GET_INFO.2const.html) for the
// service's peer check.

package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

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

// parentPID reads the parent from /proc/PID/stat: the fourth field, after
// the command name in parentheses (which may itself hold spaces and ")");
// stat costs the kernel less to produce than status. Without /proc it asks
// a pidfd of the process (errNoParentRecords when the kernel cannot tell).
func parentPID(pid int) (int, error) {
	if !procfsMounted() {
		return pidfdParent(pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, os.ErrNotExist
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return 0, os.ErrNotExist
	}
	return strconv.Atoi(fields[1])
}

// pairingHost reads the files the reference client reads: /etc/hostname,
// /etc/machine-id (sent as it is, trimmed, not hashed; no D-Bus fallback)
// and PRETTY_NAME of /etc/os-release.
func pairingHost() hostInfo {
	return hostInfoFrom("/etc")
}

// hostInfoFrom reads the three files under etc (a test gives a directory
// of its own).
func hostInfoFrom(etc string) hostInfo {
	read := func(name string) string {
		b, err := os.ReadFile(etc + "/" + name)
		if err != nil || !utf8.Valid(b) {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	h := hostInfo{Hostname: read("hostname"), MachineID: read("machine-id")}
	for line := range strings.SplitSeq(read("os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			h.OSVersion = strings.Trim(v, `"`)
			break
		}
	}
	return h
}

func pidfdParent(pid int) (int, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_PID}
	switch err := unix.IoctlPidfdInfo(fd, &info); {
	case errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return 0, errNoParentRecords
	case err != nil:
		return 0, err
	}
	return int(info.Ppid), nil
}
