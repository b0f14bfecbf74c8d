// An unnamed file for the atomic pairing write (state.go, writeFileAtomic):
// the file holding the PSK is opened with O_TMPFILE, written and synced
// while it has no name, so a process killed meanwhile leaves nothing on
// disk; only then is it linked under a temporary name and renamed over the
// pairing file. Linux cannot link an unnamed file over an existing name,
// so a named copy exists only between linkat(2) and rename(2), two system
// calls with no I/O wait between them. open(2), "O_TMPFILE", and
// linkat(2), "AT_EMPTY_PATH": https://man7.org/linux/man-pages/man2/open.2.html

package main

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data to an unnamed file in dir and renames it over
// name (a name in dir). errUnnamedUnsupported says nothing was written and
// the named fallback should be used: a file system without O_TMPFILE, or
// no way to link the file (no /proc and no CAP_DAC_READ_SEARCH).
func writeUnnamed(dir *os.File, name, tmpName string, data []byte) error {
	return writeUnnamedThen(dir, name, tmpName, data, nil)
}

// writeUnnamedThen is writeUnnamed; synced, when set, runs once the data
// is on disk and before the file gets a name (for tests).
func writeUnnamedThen(dir *os.File, name, tmpName string, data []byte, synced func()) error {
	dirfd := int(dir.Fd())
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return errUnnamedUnsupported
		}
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	// The umask may have narrowed the mode; the reference requires 0600.
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if synced != nil {
		synced()
	}
	// Through /proc (any user), else AT_EMPTY_PATH (CAP_DAC_READ_SEARCH,
	// or Linux 6.10 and later for a file the caller opened itself).
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, tmpName, unix.AT_SYMLINK_FOLLOW)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		err = unix.Linkat(fd, "", dirfd, tmpName, unix.AT_EMPTY_PATH)
	}
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return err
		}
		return errUnnamedUnsupported
	}
	if err := unix.Renameat(dirfd, tmpName, dirfd, name); err != nil {
		_ = unix.Unlinkat(dirfd, tmpName, 0)
		return err
	}
	return nil
}
