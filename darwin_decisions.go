// What the macOS launch path decides, kept apart from its libSystem calls
// so that every platform compiles and tests it (darwin_decisions_test.go,
// fed with what macOS returns): command-execution.md, "macOS
// implementation" and "Platform implementations". The _darwin files call
// these; nothing here makes a system call.

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// darwinMinimumRelease is the first Darwin kernel of the supported macOS:
// the specification supports macOS 15 or later (command-execution.md,
// "Platform implementations"), which is Darwin 24, and nothing older is
// tested, so an older kernel is refused as unsupported. It is not the
// first kernel with the facilities selection needs: O_EXEC and O_SEARCH
// appear in xnu-8792, macOS 13 (Darwin 22)
// (https://github.com/apple-oss-distributions/xnu/blob/xnu-8792.41.9/bsd/sys/fcntl.h);
// before that (macOS 12, Darwin 21) open(2) drops the bits without an error
// and opens for reading, so selection would pick a readable file that is
// not executable and skip an execute-only one. Lowering the floor to 22
// would need the spec's supported release lowered first.
const (
	darwinMinimumRelease = 24
	darwinMinimumProduct = "15"
)

// checkDarwinRelease refuses a kernel older than the supported macOS.
// release is sysctl kern.osrelease (the Darwin version, which
// SYSTEM_VERSION_COMPAT does not rewrite); product is kern.osproductversion,
// used only in the message.
func checkDarwinRelease(release, product string) error {
	release = strings.TrimRight(release, "\x00 \n")
	product = strings.TrimRight(product, "\x00 \n")
	major, _, _ := strings.Cut(release, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return fmt.Errorf("cannot tell the macOS version (kern.osrelease %q); agentknock supports macOS %s or later", release, darwinMinimumProduct)
	}
	if n < darwinMinimumRelease {
		name := "Darwin " + release
		if product != "" {
			name = "macOS " + product + " (" + name + ")"
		}
		return fmt.Errorf("this is %s; agentknock supports macOS %s or later and does not run on older releases", name, darwinMinimumProduct)
	}
	return nil
}

// searchGoesOnFor reports the errors after which a PATH search on goos
// tries the next entry although the generic list (missingCandidate) stops:
// macOS's execvP(3) (from FreeBSD) and zsh go on after ELOOP and
// ENAMETOOLONG, where glibc's execvp(3) stops.
func searchGoesOnFor(goos string, err error) bool {
	return goos == "darwin" && (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENAMETOOLONG))
}

// searchGoesOnUnreachable reports whether a PATH search on goos tries the
// next entry after an error that missingCandidate and searchGoesOnFor
// would stop at, because the candidate cannot be stat'ed either. macOS's
// execvP(3) (FreeBSD's lib/libc/gen/exec.c, which Apple's Libc carries:
// https://github.com/apple-oss-distributions/Libc/blob/main/gen/FreeBSD/exec.c)
// stats the path after any other execve error and goes on when that fails
// too: a directory in PATH that TCC protects (~/Documents, a removable
// volume) answers EPERM to both the open and the stat, a failing network
// volume EIO. When the stat succeeds the file is there and the error
// stands (execvP reports it). stat is only called on darwin.
func searchGoesOnUnreachable(goos string, err error, stat func() error) bool {
	return goos == "darwin" && err != nil && stat() != nil
}

// namingFailure is a candidate that opened for execution but could not be
// named (fcntl F_GETPATH failed). The shell would have run it, so the
// search must not go on to a later entry: the errno is kept in the text but
// not wrapped, so an ENOENT here is never taken for a missing candidate.
func namingFailure(candidate string, err error) error {
	return fmt.Errorf("cannot determine the path of %s (fcntl F_GETPATH: %v)", candidate, err)
}

// pidpathResult is proc_pidpath(3)'s outcome: the length of the path, or
// 0 on failure. Its errno is not available here (the runtime fetches errno
// only for a -1 result), so a failure is reported without one.
func pidpathResult(pid int, r uintptr, buf []byte) (string, error) {
	if int32(r) <= 0 {
		return "", fmt.Errorf("proc_pidpath(%d) failed", pid)
	}
	return nameFromBuffer(buf)
}

// sigmaskResult is pthread_sigmask(2)'s outcome: an int error number in
// the low 32 bits of the return register; the upper bits are undefined.
func sigmaskResult(r uintptr) error {
	if n := int32(r); n != 0 {
		return syscall.Errno(n)
	}
	return nil
}

// darwinExecPath is the pathname macOS executes: the candidate that
// selected the command, as a shell's execvp would pass it (relative ones
// resolve against the process's directory, the retained one, since
// agentknock never changes directory). macOS records that string as the
// program's own path: CPython takes it as sys.executable, so a
// virtualenv's bin/python, a symbolic link, finds its pyvenv.cfg, and a
// script gets it as $0. The resolved path (F_GETPATH) is what the device
// is shown; the last check requires both to name the retained object.
func darwinExecPath(x *executable) string { return x.candidate }

// openNamed opens the name that will be executed with the given flags.
type openNamed func(flags int) (int, error)

// openChecked opens through open and requires the retained identity.
func (x *executable) openChecked(open openNamed, flags int) (*os.File, error) {
	fd, err := open(flags)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := x.checkIdentity(&st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), x.candidate), nil
}

// revalidateNamed is macOS's last check: the name that will be executed,
// opened with execFlags (O_EXEC, which checks execute access), is the
// retained object and, when a hash was reported, opened again for reading
// it is still that object with the same bytes.
func (x *executable) revalidateNamed(open openNamed, execFlags int) error {
	f, err := x.openChecked(open, execFlags)
	if err != nil {
		return fmt.Errorf("cannot run %s as approved: %v", x.candidate, err)
	}
	f.Close()
	if x.hash == nil {
		return nil
	}
	if f, err = x.openChecked(open, unix.O_RDONLY); err != nil {
		return fmt.Errorf("cannot read %s again before running it: %v", x.candidate, err)
	}
	defer f.Close()
	return x.revalidateHash(f)
}

// darwinMaxSocketPath is the longest Unix socket path on macOS: its
// sun_path is 104 bytes with the NUL.
const darwinMaxSocketPath = 103

// darwinSigIgn is SIG_IGN in <sys/signal.h>.
const darwinSigIgn = 1

// darwinEntryState decodes what agentknock_rt0 saved on macOS: the
// disposition of signals 1-31 (macOS has 31), the main thread's mask and
// the closed standard descriptors.
func darwinEntryState(actions [31]darwinSigaction, mask uint32, closed uint64) (ignored [65]bool, blocked uint64, closedStd uint8) {
	for i, a := range actions {
		ignored[i+1] = a.Handler == darwinSigIgn
	}
	return ignored, uint64(mask), uint8(closed & 7)
}

// darwinSigaction is the user struct sigaction of macOS's <sys/signal.h>,
// as sigaction(2) reads and writes it: the handler, then sa_mask and
// sa_flags (16 bytes; agentknock_rt0 writes an array of them).
type darwinSigaction struct {
	Handler uint64
	Mask    uint32
	Flags   uint32
}
