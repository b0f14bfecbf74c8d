// Unit tests for the macOS launch-path decisions, run on every platform:
// the system-call wrappers in the _darwin files are thin, and what they
// decide is here, fed with what macOS returns (recorded buffers, errno
// classes, process tables). Each test names the defect of the first macOS
// review that it guards against.

package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Defect 1: getcwd(3) on macOS returns a pointer, so the path must come
// from the buffer's NUL, never from a returned length; F_GETPATH and
// proc_pidpath return no length at all.
func TestNameFromBuffer(t *testing.T) {
	full := make([]byte, 16)
	copy(full, "/Users/ana/src/x")
	cases := []struct {
		buf     []byte
		want    string
		wantErr bool
	}{
		{[]byte("/Users/ana/src/agentknock\x00\x00\x00\x00"), "/Users/ana/src/agentknock", false},
		{[]byte("/private/var/folders/zz/T/x\x00stale bytes after the NUL\x00"), "/private/var/folders/zz/T/x", false},
		{[]byte("/\x00"), "/", false},
		{full, "", true},                         // no NUL: truncated
		{[]byte("\x00/Users/ana\x00"), "", true}, // empty
		{[]byte("zsh\x00"), "", true},            // not absolute
	}
	for _, c := range cases {
		got, err := nameFromBuffer(c.buf)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("nameFromBuffer(%q) = %q, %v; want %q, error %v", c.buf, got, err, c.want, c.wantErr)
		}
	}
}

// Defect 1: a working directory is named from its retained descriptor and
// the name is checked by identity; a removed or replaced directory stops
// the run before the device is contacted.
func TestCheckWorkdirName(t *testing.T) {
	retained := unix.Stat_t{Dev: 16777232, Ino: 4242}
	same := retained
	moved := unix.Stat_t{Dev: 16777232, Ino: 9999}
	if err := checkWorkdirName(&retained, &same, nil); err != nil {
		t.Errorf("same directory: %v", err)
	}
	cases := []struct {
		named  unix.Stat_t
		lookup error
		want   string
	}{
		{moved, nil, "was moved or replaced"},
		{unix.Stat_t{}, unix.ENOENT, "no longer exists"},
		{unix.Stat_t{}, unix.EACCES, "cannot determine the working directory"},
	}
	for _, c := range cases {
		err := workdirError(checkWorkdirName(&retained, &c.named, c.lookup))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("named %+v, lookup %v: %v; want an error with %q", c.named.Ino, c.lookup, err, c.want)
		}
	}
	if err := workdirError(errPathNotUTF8); !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("non-UTF-8 working directory: %v", err)
	}
}

// handOffRecorder records the steps darwinReplaceProcess takes.
type handOffRecorder struct {
	steps           []string
	caught, pending syscall.Signal
	checkErr, block error
}

func (r *handOffRecorder) blockTermination() error {
	r.steps = append(r.steps, "block")
	return r.block
}
func (r *handOffRecorder) stopWatching() syscall.Signal {
	r.steps = append(r.steps, "stop")
	return r.caught
}
func (r *handOffRecorder) pendingTermination() syscall.Signal {
	r.steps = append(r.steps, "pending")
	return r.pending
}
func (r *handOffRecorder) restoreCallerState() error {
	r.steps = append(r.steps, "restore")
	return nil
}
func (r *handOffRecorder) connectStdin() error {
	r.steps = append(r.steps, "stdin")
	return nil
}
func (r *handOffRecorder) lastCheck() error {
	r.steps = append(r.steps, "check")
	return r.checkErr
}
func (r *handOffRecorder) exec() error {
	r.steps = append(r.steps, "exec")
	return unix.ENOEXEC
}

// Defects 2 and 3: the Go handler is stopped only after the block (a
// reset before Stop dropped caught signals), a caught or pending signal
// prevents the exec; and the spec's order: the identity and hash check
// before the pending check, the caller's state restored after both (so the
// check runs with the launcher's own limits), then the standard-input dup2.
func TestReplaceProcessOrder(t *testing.T) {
	cases := []struct {
		name  string
		rec   handOffRecorder
		steps string
		check func(error) bool
	}{
		{"approved", handOffRecorder{}, "block hook stop check pending restore stdin exec",
			func(err error) bool { return errors.Is(err, unix.ENOEXEC) }},
		{"caught while waiting", handOffRecorder{caught: syscall.SIGINT}, "block hook stop",
			func(err error) bool { var i *interrupted; return errors.As(err, &i) && i.sig == syscall.SIGINT }},
		{"pending at the hand-off", handOffRecorder{pending: syscall.SIGTERM}, "block hook stop check pending",
			func(err error) bool { var i *interrupted; return errors.As(err, &i) && i.sig == syscall.SIGTERM }},
		{"replaced during approval", handOffRecorder{checkErr: errors.New("/usr/local/bin/gh is no longer the file that was selected")},
			"block hook stop check",
			func(err error) bool { var r *revalidationError; return errors.As(err, &r) }},
		{"cannot block", handOffRecorder{block: unix.EINVAL}, "block",
			func(err error) bool { return errors.Is(err, unix.EINVAL) }},
	}
	for _, c := range cases {
		rec := c.rec
		err := darwinReplaceProcess(&rec, func() { rec.steps = append(rec.steps, "hook") })
		if got := strings.Join(rec.steps, " "); got != c.steps {
			t.Errorf("%s: steps %q, want %q", c.name, got, c.steps)
		}
		if !c.check(err) {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
}

// The pending check: a SIGINT or SIGTERM the caller neither ignores nor
// blocks means the command must not start (macOS's sigset_t numbers SIGINT
// and SIGTERM as Linux does). On macOS the set comes from sigpending(2),
// which reports the calling thread's pending signals only: what is decided
// here is the same, but it sees a signal directed at the exec thread
// (TestDarwinPendingIsThreadDirected on a Mac shows which).
func TestPendingTermination(t *testing.T) {
	const sigint, sigterm = 1 << 1, 1 << 14
	var plain, ignoring, blocking callerState
	ignoring.ignored[syscall.SIGINT] = true
	blocking.mask = sigint
	cases := []struct {
		pending uint64
		cs      callerState
		want    syscall.Signal
	}{
		{0, plain, 0},
		{sigint, plain, syscall.SIGINT},
		{sigterm, plain, syscall.SIGTERM},
		{sigint, ignoring, 0},
		{sigint, blocking, 0},
		{sigint | sigterm, blocking, syscall.SIGTERM},
		{1 << 29, plain, 0}, // SIGUSR1 on macOS: not a termination signal here
	}
	for _, c := range cases {
		if got := pendingTermination(c.pending, c.cs); got != c.want {
			t.Errorf("pendingTermination(%#x) = %v, want %v", c.pending, got, c.want)
		}
	}
}

// Defect 4: macOS's O_EXEC open of a directory answers EISDIR and of a
// socket EOPNOTSUPP; execvp(3) gets EACCES from execve for both and goes
// on to the next PATH entry, and so must the search. Second review, item
// 3: macOS's execvP(3) and zsh also go on after ELOOP and ENAMETOOLONG
// (glibc's execvp stops), and EIO stops both.
func TestNotExecutableOpen(t *testing.T) {
	for _, errno := range []syscall.Errno{unix.EISDIR, unix.EOPNOTSUPP, unix.ENOTSUP} {
		err := notExecutableOpen(errno)
		if !errors.Is(err, errNotExecutable) || !missingCandidate(err) {
			t.Errorf("%v: %v is not a missing candidate", errno, err)
		}
	}
	if err := notExecutableOpen(unix.EIO); missingCandidate(err) {
		t.Errorf("EIO must stop the search")
	}
	for _, errno := range []syscall.Errno{unix.ELOOP, unix.ENAMETOOLONG} {
		if !searchGoesOnFor("darwin", notExecutableOpen(errno)) {
			t.Errorf("%v must not stop a macOS search", errno)
		}
		if searchGoesOnFor("linux", notExecutableOpen(errno)) {
			t.Errorf("%v must stop a Linux search, as glibc's execvp does", errno)
		}
		if searchGoesOnFor("darwin", namingFailure("/usr/local/bin/gh", errno)) {
			t.Errorf("%v from F_GETPATH must stop the search", errno)
		}
	}
	if err := notExecutableOpen(unix.ENOENT); !errors.Is(err, unix.ENOENT) {
		t.Errorf("ENOENT changed to %v", err)
	}
}

// Third review, item 5: EPERM (a TCC-protected directory such as
// ~/Documents in PATH) or EIO from a candidate whose stat fails too does
// not stop a macOS search, as execvP(3) goes on; when the stat succeeds
// the file is there and the error stands; Linux keeps glibc's rule and
// never stats for this. The stat is a real fstatat of a path under a
// directory that does not exist, and of this test's own source.
func TestSearchGoesOnUnreachable(t *testing.T) {
	wd := workdir{fd: unix.AT_FDCWD}
	stat := func(candidate string) func() error {
		return func() error { _, err := statAt(wd, candidate); return err }
	}
	missing, present := filepath.Join(t.TempDir(), "absent", "gh"), "darwin_decisions_test.go"
	for _, errno := range []syscall.Errno{unix.EPERM, unix.EIO} {
		if missingCandidate(errno) {
			t.Fatalf("%v is already a missing candidate; the test shows nothing", errno)
		}
		if !searchGoesOnUnreachable("darwin", errno, stat(missing)) {
			t.Errorf("%v with a failing stat stops a macOS search", errno)
		}
		if searchGoesOnUnreachable("darwin", errno, stat(present)) {
			t.Errorf("%v from a file that stat finds goes on", errno)
		}
		if searchGoesOnUnreachable("linux", errno, func() error { t.Error("Linux stats the candidate"); return errno }) {
			t.Errorf("%v goes on in a Linux search", errno)
		}
	}
	if searchGoesOnUnreachable("darwin", nil, stat(missing)) {
		t.Error("no error goes on")
	}
}

// Second review, item 3: a candidate that opened for execution but whose
// F_GETPATH failed is there (a shell would run it); its ENOENT must not
// send the search to a later PATH entry.
func TestNamingFailureStopsTheSearch(t *testing.T) {
	for _, errno := range []syscall.Errno{unix.ENOENT, unix.ENOTDIR, unix.EACCES, unix.ENAMETOOLONG} {
		err := namingFailure("/opt/homebrew/bin/gh", errno)
		if missingCandidate(err) {
			t.Errorf("F_GETPATH %v: %v continues the search", errno, err)
		}
		if !strings.Contains(err.Error(), "/opt/homebrew/bin/gh") || !strings.Contains(err.Error(), errno.Error()) {
			t.Errorf("F_GETPATH %v: %q names neither the file nor the error", errno, err)
		}
	}
}

// Second review, item 2: recorded kern.osrelease / kern.osproductversion
// pairs; macOS 12-14 are below the supported release, 15 and later run.
// Third review, item 4: the refusal names the supported release, not a
// missing facility (macOS 13 and 14 have O_EXEC and O_SEARCH).
func TestCheckDarwinRelease(t *testing.T) {
	cases := []struct {
		release, product string
		ok               bool
	}{
		{"21.6.0", "12.7.6", false},
		{"22.6.0", "13.6.9", false},
		{"23.6.0\x00", "14.7.1\x00", false},
		{"24.1.0", "15.1", true},
		{"24.6.0\x00", "15.6.1\x00", true},
		{"25.0.0", "26.0", true},
		{"", "", false},
		{"Darwin", "15.0", false},
	}
	for _, c := range cases {
		err := checkDarwinRelease(c.release, c.product)
		if (err == nil) != c.ok {
			t.Errorf("kern.osrelease %q, product %q: %v", c.release, c.product, err)
		}
		if err != nil && !strings.Contains(err.Error(), "supports macOS 15 or later") {
			t.Errorf("%q: %v does not say what is supported", c.release, err)
		}
		if err != nil && strings.Contains(err.Error(), "O_EXEC") {
			t.Errorf("%q: %v gives a missing facility as the reason", c.release, err)
		}
	}
	if err := checkDarwinRelease("21.6.0", "12.7.6"); !strings.Contains(err.Error(), "macOS 12.7.6 (Darwin 21.6.0)") {
		t.Errorf("macOS 12: %v", err)
	}
}

// Third review, item 1: with the entry snapshot, the signals the runtime
// would act on (SIGHUP, SIGINT, SIGQUIT, SIGTERM) that the caller blocks
// and does not ignore are caught for the command on macOS; never on Linux
// (forwarded there) nor without the snapshot (the blocks are not known).
func TestDeferredTermination(t *testing.T) {
	bit := func(sigs ...syscall.Signal) (m uint64) {
		for _, sig := range sigs {
			m |= 1 << (uint(sig) - 1)
		}
		return m
	}
	cs := callerState{exact: true, mask: bit(unix.SIGINT, unix.SIGTERM, unix.SIGQUIT, unix.SIGUSR1, unix.SIGCHLD)}
	cs.ignored[unix.SIGQUIT] = true
	if got, want := deferredTermination("darwin", cs), []syscall.Signal{unix.SIGINT, unix.SIGTERM}; !slices.Equal(got, want) {
		t.Errorf("darwin, exact: %v, want %v", got, want)
	}
	cs.mask |= bit(unix.SIGHUP)
	cs.ignored[unix.SIGQUIT] = false
	if got, want := deferredTermination("darwin", cs), []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM}; !slices.Equal(got, want) {
		t.Errorf("darwin, all four blocked: %v, want %v", got, want)
	}
	if got := deferredTermination("linux", cs); got != nil {
		t.Errorf("linux: %v, want none (agentknock_forward keeps them)", got)
	}
	cs.exact = false
	if got := deferredTermination("darwin", cs); got != nil {
		t.Errorf("darwin without the snapshot: %v, want none", got)
	}
}

// Third review, item 1: the deferred set is caught by real signals sent to
// this process: repeated SIGINTs fill one slot and do not crowd out a
// later SIGTERM, and collect reports each once, in signal order; a set
// nothing arrived for reports nothing. A second channel (sentinel) is
// notified of the same signals: each is sent only once the one before has
// reached it, so every signal has been through os/signal's delivery
// before collect (kill(2) to the own PID goes to the main thread first,
// not the sender, so it may arrive later), and it keeps a late one from
// ending the test after collect has stopped the set.
func TestCatchDeferredKeepsEachSignal(t *testing.T) {
	sentinel := make(chan os.Signal, 1)
	signal.Notify(sentinel, unix.SIGINT, unix.SIGTERM)
	defer signal.Stop(sentinel)
	d := catchDeferred([]syscall.Signal{unix.SIGINT, unix.SIGTERM})
	for _, sig := range []syscall.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGINT, unix.SIGINT, unix.SIGINT, unix.SIGINT} {
		if err := unix.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sentinel:
		case <-time.After(10 * time.Second): // a deadlock guard only
			t.Fatalf("%v never arrived", sig)
		}
	}
	if got, want := d.collect(), []syscall.Signal{unix.SIGINT, unix.SIGTERM}; !slices.Equal(got, want) {
		t.Errorf("collected %v, want %v", got, want)
	}
	quiet := catchDeferred([]syscall.Signal{unix.SIGTERM})
	if got := quiet.collect(); got != nil {
		t.Errorf("nothing sent, collected %v", got)
	}
	if got := deferredSignals(nil).collect(); got != nil {
		t.Errorf("no set, collected %v", got)
	}
}

// restoreRecorder records restoreDarwinCallerState's steps.
type restoreRecorder struct {
	steps    []string
	deferred []syscall.Signal
	failMask bool
}

func (r *restoreRecorder) ignore(sig syscall.Signal) error {
	r.steps = append(r.steps, "ignore "+unix.SignalName(sig))
	return nil
}

func (r *restoreRecorder) setMask(mask uint32) error {
	r.steps = append(r.steps, fmt.Sprintf("mask %#x", mask))
	if r.failMask {
		return unix.EINVAL
	}
	return nil
}

func (r *restoreRecorder) collectDeferred() []syscall.Signal {
	r.steps = append(r.steps, "collect")
	return r.deferred
}

func (r *restoreRecorder) raiseOnThread(sig syscall.Signal) error {
	r.steps = append(r.steps, "raise "+unix.SignalName(sig))
	return nil
}

// Third review, items 1 and 3: the restore order (ignores, then the mask,
// then the deferred signals collected and raised on the exec thread, where
// the mask now blocks them), SIGPIPE and SIGURG never ignored again, and
// SIGURG never blocked: syscall.Exec on macOS waits for every preemption
// signal to be handled, which an ignored or blocked SIGURG never is.
func TestRestoreDarwinCallerState(t *testing.T) {
	bit := func(sigs ...syscall.Signal) (m uint32) {
		for _, sig := range sigs {
			m |= 1 << (uint(sig) - 1)
		}
		return m
	}
	cs := callerState{exact: true, mask: uint64(bit(unix.SIGINT, unix.SIGTERM, unix.SIGURG, unix.SIGUSR2))}
	for _, sig := range []syscall.Signal{unix.SIGUSR1, unix.SIGPIPE, unix.SIGURG, unix.SIGHUP, unix.SIGKILL} {
		cs.ignored[sig] = true
	}
	r := &restoreRecorder{deferred: []syscall.Signal{unix.SIGINT, unix.SIGTERM}}
	if err := restoreDarwinCallerState(r, cs, 0); err != nil {
		t.Fatal(err)
	}
	var want []string
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		if sig == unix.SIGHUP || sig == unix.SIGUSR1 {
			want = append(want, "ignore "+unix.SignalName(sig))
		}
	}
	want = append(want, fmt.Sprintf("mask %#x", bit(unix.SIGINT, unix.SIGTERM, unix.SIGUSR2)), "collect", "raise SIGINT", "raise SIGTERM")
	if !slices.Equal(r.steps, want) {
		t.Errorf("exact restore:\n got %q\nwant %q", r.steps, want)
	}

	// A deferred signal the mask does not block would end the launcher if
	// raised: it is not.
	r = &restoreRecorder{deferred: []syscall.Signal{unix.SIGQUIT}}
	if err := restoreDarwinCallerState(r, cs, 0); err != nil || slices.Contains(r.steps, "raise SIGQUIT") {
		t.Errorf("unblocked deferred signal: %v, %q", err, r.steps)
	}

	// Without the snapshot: no ignores, the thread's own mask less SIGURG.
	r = &restoreRecorder{}
	if err := restoreDarwinCallerState(r, callerState{}, bit(unix.SIGUSR2, unix.SIGURG)); err != nil {
		t.Fatal(err)
	}
	if want := []string{fmt.Sprintf("mask %#x", bit(unix.SIGUSR2)), "collect"}; !slices.Equal(r.steps, want) {
		t.Errorf("approximate restore: %q, want %q", r.steps, want)
	}

	// A failed mask stops before anything is raised.
	r = &restoreRecorder{deferred: []syscall.Signal{unix.SIGINT}, failMask: true}
	if err := restoreDarwinCallerState(r, cs, 0); err == nil || slices.Contains(r.steps, "raise SIGINT") {
		t.Errorf("failed mask: %v, %q", err, r.steps)
	}
}

// Third review, item 3: SIGURG, SIGPIPE, SIGKILL and SIGSTOP are not
// ignored again before the exec; every other ignore is.
func TestDarwinIgnoredAtExec(t *testing.T) {
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		want := sig != unix.SIGURG && sig != unix.SIGPIPE && sig != unix.SIGKILL && sig != unix.SIGSTOP
		if got := darwinIgnoredAtExec(sig); got != want {
			t.Errorf("%v: %v, want %v", unix.SignalName(sig), got, want)
		}
	}
	if darwinExecMask(^uint32(0))&(1<<(uint(unix.SIGURG)-1)) != 0 || darwinExecMask(^uint32(0))|(1<<(uint(unix.SIGURG)-1)) != ^uint32(0) {
		t.Error("darwinExecMask must clear SIGURG and only SIGURG")
	}
}

// Third review, item 2: at init macOS ignores again what the caller
// ignored, except the signals the runtime needs, and gives SIGQUIT its
// default unless the caller ignored or blocked it (never a goroutine dump).
func TestDarwinEarlySignals(t *testing.T) {
	var cs callerState
	for _, sig := range []syscall.Signal{unix.SIGTERM, unix.SIGHUP, unix.SIGPIPE, unix.SIGUSR1, unix.SIGURG, unix.SIGCHLD, unix.SIGSEGV, unix.SIGPROF} {
		cs.ignored[sig] = true
	}
	ignore, quitDefault := darwinEarlySignals(cs)
	var want []syscall.Signal
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		if sig == unix.SIGTERM || sig == unix.SIGHUP || sig == unix.SIGPIPE || sig == unix.SIGUSR1 {
			want = append(want, sig)
		}
	}
	if !slices.Equal(ignore, want) || !quitDefault {
		t.Errorf("ignore %v (want %v), SIGQUIT default %v (want true)", ignore, want, quitDefault)
	}
	cs.ignored[unix.SIGQUIT] = true
	if ignore, quitDefault = darwinEarlySignals(cs); quitDefault || !slices.Contains(ignore, unix.SIGQUIT) {
		t.Errorf("caller ignores SIGQUIT: ignore %v, default %v", ignore, quitDefault)
	}
	cs.ignored[unix.SIGQUIT] = false
	cs.mask = 1 << (uint(unix.SIGQUIT) - 1)
	if _, quitDefault = darwinEarlySignals(cs); quitDefault {
		t.Error("caller blocks SIGQUIT: it is set to its default")
	}
}

// Second review, item 4: proc_pidpath returns 0 (not -1) on failure, so
// no errno reaches Go; the error must not claim one.
func TestPidpathResult(t *testing.T) {
	buf := []byte("/Applications/Ghostty.app/Contents/MacOS/ghostty\x00\x00")
	if got, err := pidpathResult(700, 48, buf); err != nil || got != "/Applications/Ghostty.app/Contents/MacOS/ghostty" {
		t.Errorf("success: %q, %v", got, err)
	}
	for _, r := range []uintptr{0, 0xffffffff00000000} {
		_, err := pidpathResult(700, r, make([]byte, 16))
		if err == nil || strings.Contains(err.Error(), "errno") || strings.Contains(err.Error(), "operation") {
			t.Errorf("result %#x: %v", r, err)
		}
	}
}

// Second review, item 4: pthread_sigmask's int result is the low 32 bits;
// what the upper bits of the register hold is not part of it.
func TestPthreadResult(t *testing.T) {
	for r, want := range map[uintptr]error{
		0:                  nil,
		0xdeadbeef00000000: nil,
		22:                 unix.EINVAL,
		0x1234567800000016: unix.EINVAL,
	} {
		if got := pthreadResult(r); got != want {
			t.Errorf("pthreadResult(%#x) = %v, want %v", r, got, want)
		}
	}
}

// Second review, item 5: what agentknock_rt0 saves, decoded (SIG_IGN is 1;
// handlers are addresses; signals 1-31).
func TestDarwinEntryState(t *testing.T) {
	var actions [31]darwinSigaction
	actions[unix.SIGPIPE-1].Handler = darwinSigIgn
	actions[unix.SIGUSR1-1].Handler = darwinSigIgn
	actions[unix.SIGINT-1].Handler = 0x1000a2b40 // a caught signal
	ignored, mask, closed := darwinEntryState(actions, 1<<(unix.SIGUSR2-1)|1<<(unix.SIGTERM-1), 0b101)
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		want := sig == unix.SIGPIPE || sig == unix.SIGUSR1
		if ignored[sig] != want {
			t.Errorf("%v: ignored %v", sig, ignored[sig])
		}
	}
	cs := callerState{ignored: ignored, mask: mask}
	if !cs.blocks(unix.SIGUSR2) || !cs.blocks(unix.SIGTERM) || cs.blocks(unix.SIGINT) {
		t.Errorf("mask %#x", mask)
	}
	if closed != 0b101 {
		t.Errorf("closed %b", closed)
	}
}

// Second review, item 1: the last check and execve use the candidate (a
// virtualenv's .venv/bin/python, a symbolic link to the base interpreter),
// not the resolved path the device is shown; the check still requires the
// retained object and hash, through that name. Real files and links.
func TestRevalidateNamedVirtualenv(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "Cellar", "python3.13")
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, base, "#!/bin/sh\necho base\n")
	venvBin := filepath.Join(dir, "proj", ".venv", "bin")
	if err := os.MkdirAll(venvBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(venvBin, "python")); err != nil {
		t.Fatal(err)
	}
	wdfd, err := unix.Open(filepath.Join(dir, "proj"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(wdfd)
	wd := workdir{fd: wdfd, path: filepath.Join(dir, "proj")}
	var st unix.Stat_t
	if err := unix.Stat(base, &st); err != nil {
		t.Fatal(err)
	}
	x := &executable{candidate: ".venv/bin/python", path: base, dev: uint64(st.Dev), ino: st.Ino}
	f, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	x.hash, _, x.size, err = hashStream(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := darwinExecPath(x); got != ".venv/bin/python" {
		t.Fatalf("exec path %q, want the candidate", got)
	}
	open := func(flags int) (int, error) {
		name := darwinExecPath(x)
		return unix.Openat(dirfdFor(wd, name), name, flags|unix.O_CLOEXEC, 0)
	}
	// Linux has no O_EXEC; a read open stands in for the execute probe.
	if err := x.revalidateNamed(open, unix.O_RDONLY); err != nil {
		t.Fatalf("unchanged venv: %v", err)
	}
	// The venv's link now leads elsewhere: another interpreter.
	other := filepath.Join(dir, "Cellar", "python3.12")
	writeTestFile(t, other, "#!/bin/sh\necho base\n")
	link := filepath.Join(venvBin, "python")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if err := x.revalidateNamed(open, unix.O_RDONLY); err == nil || !strings.Contains(err.Error(), "no longer the file that was selected") {
		t.Errorf("re-pointed venv link: %v", err)
	}
	// Back to the base, whose bytes changed in place.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, []byte("#!/bin/sh\necho changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := x.revalidateNamed(open, unix.O_RDONLY); err == nil || !strings.Contains(err.Error(), "changed while waiting for approval") {
		t.Errorf("changed bytes: %v", err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := x.revalidateNamed(open, unix.O_RDONLY); err == nil || !strings.Contains(err.Error(), "cannot run .venv/bin/python as approved") {
		t.Errorf("removed link: %v", err)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Defect 5: launcher paths are the kernel's resolved paths (proc_pidpath),
// walked through the parent table; a path that is not absolute (what
// kern.procargs2 can hold) or unreadable information ends the chain.
func TestWalkLaunchers(t *testing.T) {
	// A Terminal session on macOS 15: launchd, Terminal, login, zsh, make.
	paths := map[int]string{
		812: "/usr/bin/make",
		700: "/bin/zsh",
		699: "/usr/bin/login",
		650: "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal",
		1:   "/sbin/launchd",
	}
	parents := map[int]int{812: 700, 700: 699, 699: 650, 650: 1, 1: 0}
	path := func(pid int) (string, error) {
		p, ok := paths[pid]
		if !ok {
			return "", unix.ESRCH
		}
		return p, nil
	}
	parent := func(pid int) (int, error) { return parents[pid], nil }
	got := walkLaunchers(812, path, parent)
	want := []string{paths[650], paths[699], paths[700], paths[812]}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chain %q, want %q (four, oldest first)", got, want)
	}
	paths[699] = "-zsh"
	if got := walkLaunchers(812, path, parent); strings.Join(got, " ") != "/bin/zsh /usr/bin/make" {
		t.Errorf("relative path: chain %q", got)
	}
	paths[700] = "/bin/\xffzsh"
	if got := walkLaunchers(812, path, parent); strings.Join(got, " ") != "/usr/bin/make" {
		t.Errorf("non-UTF-8 path: chain %q", got)
	}
	if got := walkLaunchers(999, path, parent); len(got) != 0 {
		t.Errorf("unreadable process: chain %q", got)
	}
}

// Defect 7: the service and the Git helper are started from the
// executable identified before the request; a replaced file stops them.
func TestSelfImageCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agentknock")
	if err := os.WriteFile(path, []byte("version 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := identifySelf(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := img.openChecked()
	if err != nil {
		t.Fatalf("unchanged executable: %v", err)
	}
	f.Close()
	// An upgrade during the approval wait: a new file renamed over the path.
	next := filepath.Join(dir, "agentknock.new")
	if err := os.WriteFile(next, []byte("version 2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if _, err := img.openChecked(); err == nil || !strings.Contains(err.Error(), "was replaced while waiting for approval") {
		t.Errorf("replaced executable: %v", err)
	}
	if _, err := (selfImage{}).openChecked(); err == nil {
		t.Error("an unidentified executable was accepted")
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	if err := (selfImage{Path: dir, Dev: uint64(st.Dev), Ino: st.Ino}).check(&st); err == nil {
		t.Error("a directory with the recorded identity was accepted as the executable")
	}
}

// Defect 8: macOS's sun_path holds 103 bytes and its per-user TMPDIR is
// already about 50; the service falls back to a shorter base or says why.
func TestFitSocketBase(t *testing.T) {
	const darwinLimit, linuxLimit = darwinMaxSocketPath, 107
	tmpdir := "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/"
	long := "/Users/ana/Library/Containers/com.example.agent/Data/tmp/" + strings.Repeat("x", 30)
	cases := []struct {
		candidates []string
		limit      int
		want       string
	}{
		{[]string{tmpdir, "/tmp"}, darwinLimit, tmpdir},
		{[]string{long, tmpdir, "/tmp"}, darwinLimit, tmpdir},
		{[]string{long, long + "y", "/tmp"}, darwinLimit, "/tmp"},
		{[]string{"/run/user/1000", "/tmp"}, linuxLimit, "/run/user/1000"},
	}
	for _, c := range cases {
		got, err := fitSocketBase(c.candidates, c.limit)
		if err != nil || got != c.want {
			t.Errorf("fitSocketBase(%q, %d) = %q, %v; want %q", c.candidates, c.limit, got, err, c.want)
		}
		if len(got)+longestServiceSocket > c.limit {
			t.Errorf("%q leaves no room for the socket", got)
		}
	}
	_, err := fitSocketBase([]string{long, long}, darwinLimit)
	if err == nil || !strings.Contains(err.Error(), "set TMPDIR to a shorter directory") {
		t.Errorf("no candidate fits: %v", err)
	}
}

// Defect 8: pairing metadata names the macOS release, not the kernel's.
func TestMacOSVersionText(t *testing.T) {
	for in, want := range map[string]string{"15.1": "macOS 15.1", "26.0.1\x00": "macOS 26.0.1", "": "", " \x00": ""} {
		if got := macOSVersionText(in); got != want {
			t.Errorf("macOSVersionText(%q) = %q, want %q", in, got, want)
		}
	}
}

// The identity the macOS path checks before reading and executing: device
// and inode of the retained descriptor (macOS reports dev_t as int32).
func TestExecutableIdentity(t *testing.T) {
	x := &executable{path: "/opt/homebrew/bin/gh", dev: uint64(16777232), ino: 31337}
	if err := x.checkIdentity(&unix.Stat_t{Dev: 16777232, Ino: 31337}); err != nil {
		t.Errorf("same object: %v", err)
	}
	for _, st := range []unix.Stat_t{{Dev: 16777232, Ino: 31338}, {Dev: 16777233, Ino: 31337}} {
		if err := x.checkIdentity(&st); err == nil || !strings.Contains(err.Error(), "no longer the file that was selected") {
			t.Errorf("%+v: %v", st, err)
		}
	}
}

// The declared minimum macOS of the client (command-execution.md,
// "Platform implementations": macOS 15 or later) and the darwin/arm64
// entry hook, measured on binaries built here for darwin with a Mach-O
// reader. Go's internal linker writes LC_BUILD_VERSION minos 12.0 for a
// cgo-free darwin binary and has no flag to change it, but it copies the
// platform load command of the first host object it links
// (cmd/link/internal/ld/macho.go, domacho); the minos_darwin_*.syso files
// are such objects, holding nothing but that command, and
// TestMinimumOSObjects writes them (AGENTKNOCK_UPDATE_SYSO=1) and checks
// that the committed ones are its output.

const (
	machoBuildVersion = 0x32       // LC_BUILD_VERSION
	machoMain         = 0x80000028 // LC_MAIN
	machoPlatformMac  = 1
)

// darwinMinimumOS is what the client declares: macOS 15.0, for minos and
// the SDK field alike.
const darwinMinimumOS = 15<<16 | 0<<8

// minimumOSObject is a Mach-O MH_OBJECT for cpu with an empty LC_SEGMENT_64
// (the linker's loader requires one segment) and one LC_BUILD_VERSION.
func minimumOSObject(cpu macho.Cpu, subtype uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	u32 := func(v uint32) { b = le.AppendUint32(b, v) }
	u64 := func(v uint64) { b = le.AppendUint64(b, v) }
	const segmentSize, buildVersionSize = 72, 24
	// mach_header_64: magic, cputype, cpusubtype, MH_OBJECT, ncmds, sizeofcmds, flags, reserved
	u32(macho.Magic64)
	u32(uint32(cpu))
	u32(subtype)
	u32(uint32(macho.TypeObj))
	u32(2)
	u32(segmentSize + buildVersionSize)
	u32(0)
	u32(0)
	// segment_command_64 with no sections: cmd, cmdsize, segname[16],
	// vmaddr, vmsize, fileoff, filesize, maxprot, initprot, nsects, flags
	u32(uint32(macho.LoadCmdSegment64))
	u32(segmentSize)
	b = append(b, make([]byte, 16)...)
	u64(0)
	u64(0)
	u64(0)
	u64(0)
	u32(7)
	u32(7)
	u32(0)
	u32(0)
	// build_version_command: cmd, cmdsize, platform, minos, sdk, ntools
	u32(machoBuildVersion)
	u32(buildVersionSize)
	u32(machoPlatformMac)
	u32(darwinMinimumOS)
	u32(darwinMinimumOS)
	u32(0)
	return b
}

func TestMinimumOSObjects(t *testing.T) {
	for name, obj := range map[string][]byte{
		"minos_darwin_arm64.syso": minimumOSObject(macho.CpuArm64, 0),
		"minos_darwin_amd64.syso": minimumOSObject(macho.CpuAmd64, 3), // CPU_SUBTYPE_X86_64_ALL
	} {
		if os.Getenv("AGENTKNOCK_UPDATE_SYSO") == "1" {
			if err := os.WriteFile(name, obj, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, obj) {
			t.Errorf("%s is not what minimumOSObject writes (AGENTKNOCK_UPDATE_SYSO=1 go test -run TestMinimumOSObjects rewrites it)", name)
		}
		f, err := macho.NewFile(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if minos, _, ok := buildVersion(f); !ok || minos != darwinMinimumOS {
			t.Errorf("%s: minos %#x, %v", name, minos, ok)
		}
	}
}

// buildVersion is LC_BUILD_VERSION's minos and sdk for macOS.
func buildVersion(f *macho.File) (minos, sdk uint32, ok bool) {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && f.ByteOrder.Uint32(raw) == machoBuildVersion && f.ByteOrder.Uint32(raw[8:]) == machoPlatformMac {
			return f.ByteOrder.Uint32(raw[12:]), f.ByteOrder.Uint32(raw[16:]), true
		}
	}
	return 0, 0, false
}

// mainEntry is LC_MAIN's entryoff.
func mainEntry(f *macho.File) (uint64, bool) {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 16 && f.ByteOrder.Uint32(raw) == machoMain {
			return f.ByteOrder.Uint64(raw[8:]), true
		}
	}
	return 0, false
}

func buildDarwin(t *testing.T, arch string, ldflags ...string) *macho.File {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentknock")
	args := []string{"build", "-trimpath", "-o", bin}
	for _, l := range ldflags {
		args = append(args, "-ldflags="+l)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+arch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	f, err := macho.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The linked client, not only the object, must declare macOS 15.
func TestDarwinBinaryDeclaresMacOS15(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client for darwin; not in -short")
	}
	for _, arch := range []string{"arm64", "amd64"} {
		f := buildDarwin(t, arch)
		minos, sdk, ok := buildVersion(f)
		if !ok || minos != darwinMinimumOS || sdk != darwinMinimumOS {
			t.Errorf("darwin/%s: LC_BUILD_VERSION minos %#x sdk %#x (found %v), want macOS 15.0", arch, minos, sdk, ok)
		}
	}
}

// With -E=agentknock_rt0 the darwin/arm64 binary's LC_MAIN entry is the
// hook (entryoff is the entry's offset from the start of the __TEXT
// segment), the hook calls libSystem's sigaction, pthread_sigmask and
// fcntl through the stubs dyld binds (sigaction's the very stub the
// runtime's own sigaction_trampoline calls) and ends by branching to the
// runtime's entry; a build without the flag enters at _rt0_arm64_darwin.
func TestDarwinEntryHookIsTheEntryPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client for darwin; not in -short")
	}
	for _, c := range []struct {
		ldflags []string
		entry   string
	}{
		{[]string{"-E=agentknock_rt0"}, "_agentknock_rt0"},
		{nil, "__rt0_arm64_darwin"},
	} {
		f := buildDarwin(t, "arm64", c.ldflags...)
		off, ok := mainEntry(f)
		if !ok {
			t.Fatalf("%v: no LC_MAIN", c.ldflags)
		}
		text := f.Segment("__TEXT")
		if text == nil || f.Symtab == nil {
			t.Fatal("no __TEXT segment or symbol table")
		}
		var at string
		for _, s := range f.Symtab.Syms {
			if s.Value == text.Addr+off && (s.Name == "_agentknock_rt0" || s.Name == "__rt0_arm64_darwin") {
				at = s.Name
			}
		}
		if at != c.entry {
			t.Errorf("%v: LC_MAIN entryoff %#x is at %q, want %s", c.ldflags, off, at, c.entry)
		}
		if c.entry != "_agentknock_rt0" {
			continue
		}
		// What the hook calls: each BL goes to a libSystem stub, the same
		// one the runtime's sigaction_trampoline uses, and it ends with a
		// branch to the runtime's entry.
		calls, last := branchTargets(t, f, "_agentknock_rt0")
		var names []string
		for _, target := range calls {
			names = append(names, stubImport(t, f, target))
		}
		if want := []string{"_sigaction", "_pthread_sigmask", "_fcntl"}; !slices.Equal(names, want) {
			t.Errorf("the hook calls %q, want %q", names, want)
		}
		runtimeCalls, _ := branchTargets(t, f, "runtime.sigaction_trampoline.abi0")
		if len(calls) == 0 || len(runtimeCalls) == 0 || calls[0] != runtimeCalls[0] {
			t.Errorf("the hook's sigaction stub %#x is not the runtime's %#x", calls, runtimeCalls)
		}
		if got := hookPrologue(t, f); !slices.Equal(got, armFramePrologue) {
			t.Errorf("the hook starts %#x, want %#x (sub sp, stp x29/x30, mov x29, sp: a frame a backtrace can walk)", got, armFramePrologue)
		}
		if at := symbolAt(f, last); at != "__rt0_arm64_darwin" {
			t.Errorf("the hook ends with a branch to %q, want __rt0_arm64_darwin", at)
		}
	}
}

// armFramePrologue is the hook's first three instructions: sub sp, sp,
// #48; stp x29, x30, [sp]; mov x29, sp (third review, item 7).
var armFramePrologue = []uint32{0xd100c3ff, 0xa9007bfd, 0x910003fd}

// hookPrologue is the first three instructions of _agentknock_rt0.
func hookPrologue(t *testing.T, f *macho.File) []uint32 {
	t.Helper()
	text := f.Section("__text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Symtab.Syms {
		if s.Name == "_agentknock_rt0" && s.Value >= text.Addr && s.Value+12 <= text.Addr+text.Size {
			at := data[s.Value-text.Addr:]
			return []uint32{binary.LittleEndian.Uint32(at), binary.LittleEndian.Uint32(at[4:]), binary.LittleEndian.Uint32(at[8:])}
		}
	}
	t.Fatal("_agentknock_rt0 not found in __text")
	return nil
}

// branchTargets decodes the arm64 BL instructions of the function name
// (up to the next symbol) and the target of its last instruction, a B.
func branchTargets(t *testing.T, f *macho.File, name string) (calls []uint64, last uint64) {
	t.Helper()
	start, end := uint64(0), uint64(0)
	for _, s := range f.Symtab.Syms {
		if s.Name == name {
			start = s.Value
		}
	}
	for _, s := range f.Symtab.Syms {
		if s.Value > start && (end == 0 || s.Value < end) {
			end = s.Value
		}
	}
	text := f.Section("__text")
	if start == 0 || text == nil || start < text.Addr || end > text.Addr+text.Size {
		t.Fatalf("%s not found in __text", name)
	}
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	target := func(pc uint64, insn uint32) uint64 {
		imm := int64(insn&0x03ffffff) << 38 >> 36 // imm26, signed, times 4
		return uint64(int64(pc) + imm)
	}
	for pc := start; pc+4 <= end; pc += 4 {
		insn := binary.LittleEndian.Uint32(data[pc-text.Addr:])
		switch insn & 0xfc000000 {
		case 0x94000000: // BL
			calls = append(calls, target(pc, insn))
		case 0x14000000: // B
			last = target(pc, insn)
		}
	}
	return calls, last
}

// stubImport is the imported symbol a __symbol_stub1 entry at addr binds
// (arm64 stubs are 12 bytes; the section's reserved1 indexes the indirect
// symbol table, whose entries index the symbol table).
func stubImport(t *testing.T, f *macho.File, addr uint64) string {
	t.Helper()
	le := binary.LittleEndian
	for _, l := range f.Loads {
		seg, ok := l.(*macho.Segment)
		if !ok {
			continue
		}
		raw := seg.Raw()
		for i := uint32(0); i < seg.Nsect; i++ {
			sh := raw[72+80*i:] // section_64 headers follow segment_command_64
			name := string(bytes.TrimRight(sh[:16], "\x00"))
			base, size, first := le.Uint64(sh[32:]), le.Uint64(sh[40:]), le.Uint32(sh[68:])
			if name == "__symbol_stub1" && addr >= base && addr < base+size {
				return f.Symtab.Syms[f.Dysymtab.IndirectSyms[first+uint32((addr-base)/12)]].Name
			}
		}
	}
	t.Fatalf("%#x is not a stub", addr)
	return ""
}

func symbolAt(f *macho.File, addr uint64) string {
	for _, s := range f.Symtab.Syms {
		if s.Value == addr && strings.HasPrefix(s.Name, "_") {
			return s.Name
		}
	}
	return ""
}
