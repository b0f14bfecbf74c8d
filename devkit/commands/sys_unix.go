//go:build unix

// What the analysis asks the operating system (Unix): the process's CPU
// time, which the time budget counts (so a host busy with other work does
// not cut an analysis short), and a file's device and inode, which key the
// hash cache.
package commands

import (
	"io/fs"
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// fileIdentity is a file's device and inode.
func fileIdentity(st fs.FileInfo) (dev, ino uint64, ok bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(sys.Dev), uint64(sys.Ino), true
}
