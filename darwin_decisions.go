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
	"os/signal"
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
// execvP(3) is FreeBSD's (lib/libc/gen/exec.c, execvPe:
// https://github.com/freebsd/freebsd-src/blob/main/lib/libc/gen/exec.c),
// which stats the path after any other execve error and goes on when that
// fails too: a directory in PATH that TCC protects (~/Documents, a removable
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

// pthreadResult is the outcome of pthread_sigmask(2) and pthread_kill(2):
// an int error number (not errno) in the low 32 bits of the return
// register; the upper bits are undefined.
func pthreadResult(r uintptr) error {
	if n := int32(r); n != 0 {
		return syscall.Errno(n)
	}
	return nil
}

// darwinHandOffSteps are macOS's primitives for the hand-off from the
// approval wait to the command (darwinHandOff in exec_darwin.go; a recorder
// in the tests).
type darwinHandOffSteps interface {
	// blockTermination blocks SIGINT and SIGTERM on the calling (locked)
	// thread and, where the platform needs it, gives them back to the
	// caller's disposition.
	blockTermination() error
	// stopWatching ends Go's handling of SIGINT and SIGTERM once every
	// signal already caught has been delivered, and reports one.
	stopWatching() syscall.Signal
	// pendingTermination reports a SIGINT or SIGTERM pending on the thread.
	pendingTermination() syscall.Signal
	// restoreCallerState puts back the caller's ignores, file limit and
	// mask as far as the platform knows them, with SIGPIPE at its default.
	restoreCallerState() error
	// connectStdin makes the service's pipe descriptor 0.
	connectStdin() error
	// lastCheck requires the retained executable to be what was approved.
	lastCheck() error
	// exec replaces the process; it returns only on failure.
	exec() error
}

// darwinReplaceProcess runs macOS's hand-off in the spec's order ("Common
// execution semantics": revalidate, then check for a pending signal, then
// replace; "Signals and process state": block, check, restore); it makes
// no system call itself, so Linux tests the order (TestReplaceProcessOrder).
// The order also loses no
// signal: the Go handler is stopped only after the signals are blocked on
// this thread (signal.Stop waits for every caught signal to reach the
// channel; resetting a signal first would drop the channel and any signal
// still in flight); the executable is checked while the launcher still
// runs with its own limits, so no check can fail for want of a descriptor
// the command's limit would not give; the pending set is read after the
// check, so a signal that arrived during a long hash stops the run; and the
// caller's state is restored last, after which only the standard-input
// dup2 runs before execve. Linux's execCommand (exec_linux.go) keeps the
// same order with the thread hold added. testOnlyAfterBlock lets a test make a signal pending at exactly that point.
func darwinReplaceProcess(s darwinHandOffSteps, testOnlyAfterBlock func()) error {
	if err := s.blockTermination(); err != nil {
		return err
	}
	if testOnlyAfterBlock != nil {
		testOnlyAfterBlock()
	}
	if sig := s.stopWatching(); sig != 0 {
		return &interrupted{sig}
	}
	if err := s.lastCheck(); err != nil {
		return &revalidationError{err}
	}
	if sig := s.pendingTermination(); sig != 0 {
		return &interrupted{sig}
	}
	if err := s.restoreCallerState(); err != nil {
		return err
	}
	traceStep("signals handed off")
	// The pipe becomes standard input only now, so that every earlier
	// failure leaves the caller's standard input in place.
	if err := s.connectStdin(); err != nil {
		return err
	}
	traceFlush()
	return s.exec()
}

// darwinExecPath is the pathname macOS executes: the candidate that
// selected the command, as a shell's execvp would pass it (relative ones
// resolve against the process's directory, the retained one, since
// agentknock never changes directory). macOS records that string as the
// program's own path: CPython takes it as sys.executable, so a
// virtualenv's bin/python, a symbolic link, finds its pyvenv.cfg, and a
// script gets it as $0. The resolved path (F_GETPATH) is what the device
// is shown; the last check requires both to name the retained object.
//
// This departs on purpose from the spec's macOS "Process replacement",
// which has execve run "the captured absolute path" (and the last check
// reopen it): run by its resolved path, a virtualenv's python is the base
// interpreter outside the virtualenv, and a script's $0 is not what the
// user typed. The candidate is checked by the same identity and hash, so
// what runs is still the object the device was shown.
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

// SIG_DFL and SIG_IGN in <sys/signal.h>.
const (
	darwinSigDfl = 0
	darwinSigIgn = 1
)

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

// The caller's signal state on macOS, as decisions (exec_darwin.go applies
// them): command-execution.md, "Signals and process state". The Go runtime
// installs its handler over most inherited ignores and unblocks SIGHUP,
// SIGINT, SIGQUIT and SIGTERM on every thread before main; Linux undoes
// that at init and forwards a caller-blocked signal to the exec thread from
// an assembly handler (exec_linux.go, applyCallerSignals). macOS gets the
// same three things here: the early ignores, SIGQUIT at its default, and
// the caller-blocked signals caught into a deferred set that is made
// pending on the exec thread just before execve.

// darwinDeferrable are the signals the runtime unblocks on every thread and
// acts on itself: it ends the process by SIGHUP, SIGINT or SIGTERM and
// dumps the goroutines on SIGQUIT. One the caller blocks would have stayed
// pending for the command; the launcher catches it instead (deferred).
var darwinDeferrable = []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM}

// deferredTermination is what the approval wait catches for the command on
// goos (watchTermination): on macOS with the entry snapshot, each of
// darwinDeferrable that the caller blocks and does not ignore. Linux needs
// none (its init forwards them to the exec thread), nor does a macOS build
// without the snapshot, which cannot see the caller's blocks on these.
func deferredTermination(goos string, cs callerState) []syscall.Signal {
	if goos != "darwin" || !cs.exact {
		return nil
	}
	var sigs []syscall.Signal
	for _, sig := range darwinDeferrable {
		if cs.blocks(sig) && !cs.ignored[sig] {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// deferredSignals catch signals for the command instead of letting the
// runtime act on them: one channel of one slot per signal, since a
// pending signal is a set (a second SIGINT while one is deferred adds
// nothing, and a full slot for one signal must not drop another).
type deferredSignals []deferredSignal

type deferredSignal struct {
	sig syscall.Signal
	ch  chan os.Signal
}

func catchDeferred(sigs []syscall.Signal) deferredSignals {
	var d deferredSignals
	for _, sig := range sigs {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, sig)
		d = append(d, deferredSignal{sig, ch})
	}
	return d
}

// collect ends the catching and reports the signals that arrived, in
// signal-number order. signal.Stop returns only once every signal already
// caught has reached its channel, so none caught before collect is lost.
// One that reaches the runtime's handler after it (sent after it, or sent
// just before and not yet handled by the thread the kernel chose) is not
// notified any more, and the runtime ends the process by it: a window of the few libSystem calls
// between collect and execve (restoreDarwinCallerState), which Linux closes
// with its forwarding handler and macOS would need an assembly signal
// handler calling pthread_kill for.
func (d deferredSignals) collect() []syscall.Signal {
	var got []syscall.Signal
	for _, ds := range d {
		signal.Stop(ds.ch)
		select {
		case <-ds.ch:
			got = append(got, ds.sig)
		default:
		}
	}
	return got
}

// darwinEarlySignals is what init sets on macOS (exec_darwin.go) before
// the run does anything, so that from selection on a signal acts on the
// launcher as on the command: each ignorable signal the caller ignored is
// ignored again (ignorableEarly: SIGTERM, SIGQUIT, SIGPIPE, SIGUSR1...;
// SIGHUP and SIGINT the runtime left ignored anyway; the others just
// before the exec, darwinIgnoredAtExec), and SIGQUIT goes to the kernel's
// default, not the runtime's goroutine dump, unless the caller ignored or
// blocked it. Without the entry snapshot only SIGHUP's and SIGINT's
// ignores are known, and SIGQUIT still gets its default.
func darwinEarlySignals(cs callerState) (ignore []syscall.Signal, quitDefault bool) {
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		if cs.ignored[sig] && ignorableEarly(sig) {
			ignore = append(ignore, sig)
		}
	}
	return ignore, !cs.ignored[unix.SIGQUIT] && !cs.blocks(unix.SIGQUIT)
}

// darwinIgnoredAtExec reports whether the caller's SIG_IGN on sig is put
// back just before execve. SIGPIPE is not (the spec gives the command its
// default), nor SIGKILL and SIGSTOP (the kernel refuses), nor SIGURG: on
// macOS syscall.Exec's runtime_BeforeExec waits until no preemption signal
// is pending (runtime/proc.go, syscall_runtime_BeforeExec, Go issue 41702:
// https://github.com/golang/go/blob/go1.26.0/src/runtime/proc.go), and a
// SIGURG the runtime sent between the restore and that wait would be
// discarded by the ignore, never decrementing the count: the launcher
// would spin there for ever. Left caught, execve resets it to SIG_DFL,
// whose action is to discard it, as the ignore would.
func darwinIgnoredAtExec(sig syscall.Signal) bool {
	return sig != unix.SIGPIPE && sig != unix.SIGKILL && sig != unix.SIGSTOP && sig != unix.SIGURG
}

// darwinExecMask is the mask the exec thread gets from restoreCallerState:
// the caller's, except SIGURG, for the same wait: a preemption signal sent
// to this thread while it blocks SIGURG would stay pending, and
// runtime_BeforeExec would wait for it for ever. The command therefore
// starts with SIGURG unblocked, which only a command that inspects its mask
// or waits for SIGURG with sigwait can tell.
func darwinExecMask(mask uint32) uint32 {
	return mask &^ (1 << (uint(unix.SIGURG) - 1))
}

// darwinRestoreSteps are the primitives of macOS's restoreCallerState
// (darwinHandOff in exec_darwin.go; a recorder in the tests).
type darwinRestoreSteps interface {
	// ignore sets sig to SIG_IGN behind the runtime's back.
	ignore(sig syscall.Signal) error
	// setMask sets the exec thread's mask.
	setMask(mask uint32) error
	// collectDeferred ends the deferred catching (deferredSignals.collect).
	collectDeferred() []syscall.Signal
	// raiseOnThread makes sig pending on the exec thread (pthread_kill of
	// pthread_self).
	raiseOnThread(sig syscall.Signal) error
}

// restoreDarwinCallerState gives the command the caller's state, in this
// order: the ignores (darwinIgnoredAtExec); the mask (the caller's from the
// snapshot, else threadMask, the thread's own before the hand-off blocked
// SIGINT and SIGTERM, less darwinExecMask's SIGURG); then the deferred
// signals, collected only now, so that one caught at any time until here is
// kept, and raised on this thread only now that the caller's mask blocks
// them: pending on the thread that calls execve, they are pending in the
// command (XNU's execsigs keeps the thread's pending signals, dropping
// only those whose default is to ignore:
// https://github.com/apple-oss-distributions/xnu/blob/main/bsd/kern/kern_sig.c).
// A deferred signal the mask would not block (it cannot happen: it was
// deferred because the caller blocks it) is not raised, since it would end
// the launcher instead.
func restoreDarwinCallerState(s darwinRestoreSteps, cs callerState, threadMask uint32) error {
	mask := threadMask
	if cs.exact {
		for sig := syscall.Signal(1); sig <= 31; sig++ {
			if cs.ignored[sig] && darwinIgnoredAtExec(sig) {
				if err := s.ignore(sig); err != nil {
					return err
				}
			}
		}
		mask = uint32(cs.mask)
	}
	mask = darwinExecMask(mask)
	if err := s.setMask(mask); err != nil {
		return err
	}
	for _, sig := range s.collectDeferred() {
		if mask&(1<<(uint(sig)-1)) == 0 {
			continue
		}
		if err := s.raiseOnThread(sig); err != nil {
			return err
		}
	}
	return nil
}
