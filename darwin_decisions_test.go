// Unit tests for the macOS launch-path decisions, run on every platform:
// the system-call wrappers in the _darwin files are thin, and what they
// decide is here, fed with what macOS returns (recorded buffers, errno
// classes, process tables). Each test names the defect of the first macOS
// review that it guards against.

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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

// handOffRecorder records the steps replaceProcess takes.
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
		err := replaceProcess(&rec, func() { rec.steps = append(rec.steps, "hook") })
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
// pairs; macOS 12-14 lack (12) or are below the supported O_EXEC/O_SEARCH
// release, 15 and later run.
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
		if err != nil && !strings.Contains(err.Error(), "macOS 15 or later") {
			t.Errorf("%q: %v does not say what is needed", c.release, err)
		}
	}
	if err := checkDarwinRelease("21.6.0", "12.7.6"); !strings.Contains(err.Error(), "macOS 12.7.6 (Darwin 21.6.0)") {
		t.Errorf("macOS 12: %v", err)
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
func TestSigmaskResult(t *testing.T) {
	for r, want := range map[uintptr]error{
		0:                  nil,
		0xdeadbeef00000000: nil,
		22:                 unix.EINVAL,
		0x1234567800000016: unix.EINVAL,
	} {
		if got := sigmaskResult(r); got != want {
			t.Errorf("sigmaskResult(%#x) = %v, want %v", r, got, want)
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
