//go:build !unix

// What the analysis asks the operating system elsewhere: no CPU time (the
// budget is counted on the wall clock) and no inode (the hash cache is not
// used).
package commands

import (
	"io/fs"
	"time"
)

func processCPU() (time.Duration, bool) { return 0, false }

func fileIdentity(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
