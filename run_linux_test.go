// Tests of the launch path (command-execution.md, steps 1-2 and 6-9) with
// real processes: the client is built once with the release linker flags
// plus the agentknock_testapproval tag, whose approval step is driven
// through files, so a test can change the file system and send signals
// while the launcher waits, then watch it replace itself.

package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

var testBinary string // agentknock built for the tests

const releaseLdflags = "-E=agentknock_rt0"

func TestMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Args[0]), probeMarkerPrefix) {
		// A copy of this binary probed as an execute-only file ran: the
		// probe's child, with its marker as argv[0] and an empty
		// environment, was meant to stop before its first instruction.
		// Say so beside the executable, for the test to find.
		if exe, err := os.Executable(); err == nil {
			os.WriteFile(filepath.Join(filepath.Dir(exe), "probe-ran"), nil, 0o666)
		}
		os.Exit(3)
	}
	switch os.Getenv("AGENTKNOCK_TEST_ROLE") {
	case "caller":
		becomeCaller()
		return
	case "print":
		fmt.Println(os.Getenv("AGENTKNOCK_TEST_PRINT"))
		os.Exit(0)
	case "sigblk":
		// Start threads, then print every thread's mask.
		for i := 0; i < 4; i++ {
			go func() { runtime.LockOSThread(); time.Sleep(time.Hour) }()
		}
		time.Sleep(20 * time.Millisecond)
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			data, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			for _, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "SigBlk:") {
					fmt.Println(line)
				}
			}
		}
		os.Exit(0)
	case "hog":
		//lint:ignore SA5002 the role is to keep a core busy until killed
		for {
		}
	}
	dir, err := os.MkdirTemp("", "agentknock-test-")
	if err != nil {
		panic(err)
	}
	testBinary = filepath.Join(dir, "agentknock")
	// Release flags (see .goreleaser.yaml) plus the test-only tag.
	build := exec.Command("go", "build", "-trimpath", "-tags", "agentknock_testapproval", "-ldflags", releaseLdflags, "-o", testBinary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test client:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// becomeCaller sets up the signal state and file limit a caller can give
// its children (from AGENTKNOCK_TEST_IGNORE, _BLOCK and _NOFILE) and then
// execs its arguments, so the launcher and a direct probe inherit the same.
func becomeCaller() {
	runtime.LockOSThread()
	for _, s := range strings.Fields(os.Getenv("AGENTKNOCK_TEST_IGNORE")) {
		n, _ := strconv.Atoi(s)
		signal.Ignore(syscall.Signal(n))
	}
	var block unix.Sigset_t
	for _, s := range strings.Fields(os.Getenv("AGENTKNOCK_TEST_BLOCK")) {
		n, _ := strconv.Atoi(s)
		block.Val[0] |= 1 << (n - 1)
	}
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &block, nil); err != nil {
		panic(err)
	}
	if s := os.Getenv("AGENTKNOCK_TEST_NOFILE"); s != "" {
		n, _ := strconv.ParseUint(s, 10, 64)
		var lim syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		lim.Cur = n
		// syscall.Setrlimit also stops syscall.Exec from restoring its own
		// saved limit, so the child sees exactly this one.
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			panic(err)
		}
	}
	argv := strings.Split(os.Getenv("AGENTKNOCK_TEST_EXEC"), "\x1f")
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "AGENTKNOCK_TEST_ROLE=") {
			env = append(env, e)
		}
	}
	if role := os.Getenv("AGENTKNOCK_TEST_ROLE_AFTER"); role != "" {
		env = append(env, "AGENTKNOCK_TEST_ROLE="+role) // what this binary execs is itself, in that role
	}
	if os.Getenv("AGENTKNOCK_TEST_REFUSE_PTRACE") != "" {
		if err := refusePtrace(); err != nil {
			panic(err)
		}
	}
	panic(syscall.Exec(argv[0], argv, env))
}

// refusePtrace installs, on this thread (which then execs, keeping it for
// the new program and its children), a seccomp filter that answers every
// ptrace system call with EPERM, as a container's default profile or Yama
// ptrace_scope 3 refuses PTRACE_TRACEME.
func refusePtrace() error {
	arch := uint32(unix.AUDIT_ARCH_X86_64)
	if runtime.GOARCH == "arm64" {
		arch = unix.AUDIT_ARCH_AARCH64
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 3, K: arch},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 0, Jf: 1, K: uint32(unix.SYS_PTRACE)},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// approvalDir stands in for the device of one launch.
type approvalDir string

func newApprovalDir(t *testing.T) approvalDir {
	return approvalDir(t.TempDir())
}

// waitRequest waits until the launcher asks for approval and returns the
// request it reported.
func (d approvalDir) waitRequest(t *testing.T) invocationRequest {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(filepath.Join(string(d), "request.json"))
		if err == nil {
			var req invocationRequest
			if err := json.Unmarshal(data, &req); err != nil {
				t.Fatal(err)
			}
			return req
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("the launcher never asked for approval")
	return invocationRequest{}
}

func (d approvalDir) approve(t *testing.T, secrets map[string]map[string]string) {
	t.Helper()
	d.respond(t, testApprovalReply{Secrets: secrets})
}

type testApprovalReply struct {
	Deny        string                       `json:"deny,omitempty"`
	Secrets     map[string]map[string]string `json:"secrets"`
	RaiseSignal int                          `json:"raise_after_block,omitempty"`
	Plaintext   json.RawMessage              `json:"plaintext,omitempty"` // a device response plaintext, used as is
}

func (d approvalDir) respond(t *testing.T, r testApprovalReply) {
	t.Helper()
	data, _ := json.Marshal(r)
	tmp := filepath.Join(string(d), "response.tmp")
	// Readable by the launcher when a test runs it as another user.
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(string(d), "response.json")); err != nil {
		t.Fatal(err)
	}
}

// launch starts the client with args in dir, with env added to the
// test's environment.
type launch struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	approval       approvalDir
}

func startLaunch(t *testing.T, dir string, env []string, args ...string) *launch {
	t.Helper()
	l := &launch{approval: newApprovalDir(t)}
	l.cmd = exec.Command(testBinary, args...)
	l.cmd.Dir = dir
	l.cmd.Env = append(append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(l.approval)), env...)
	l.cmd.Stdout = &l.stdout
	l.cmd.Stderr = &l.stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.cmd.Process.Kill() })
	return l
}

// wait returns the exit status (128+N for death by signal N).
func (l *launch) wait(t *testing.T) int {
	t.Helper()
	err := l.cmd.Wait()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatal(err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// runApproved launches, approves with secrets and waits.
func runApproved(t *testing.T, dir string, env []string, secrets map[string]map[string]string, args ...string) (*launch, int) {
	t.Helper()
	l := startLaunch(t, dir, env, args...)
	l.approval.waitRequest(t)
	l.approval.approve(t, secrets)
	return l, l.wait(t)
}

func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// copyTestBinary copies this test binary, which prints
// $AGENTKNOCK_TEST_PRINT when run with AGENTKNOCK_TEST_ROLE=print.
func copyTestBinary(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestPIDAndExitStatusAreTheCommands(t *testing.T) {
	l := startLaunch(t, t.TempDir(), nil, "-s", "demo", "--", "sh", "-c", `echo "$$ $DEMO_TOKEN"; exit 7`)
	req := l.approval.waitRequest(t)
	if req.Operation.Command != "sh" || req.Operation.Arguments[0] != "-c" || len(req.Operation.ExecutableHash) != 32 || req.Operation.ExecutableMode != "BINARY" {
		t.Fatalf("request: %+v", req)
	}
	l.approval.approve(t, map[string]map[string]string{"demo": {"DEMO_TOKEN": "s3cr3t-value"}})
	if status := l.wait(t); status != 7 {
		t.Fatalf("exit status %d, want 7; stderr: %s", status, l.stderr.String())
	}
	want := fmt.Sprintf("%d s3cr3t-value\n", l.cmd.Process.Pid)
	if l.stdout.String() != want {
		t.Fatalf("stdout %q, want %q (same PID, secret delivered)", l.stdout.String(), want)
	}
	if strings.Contains(l.stderr.String(), "s3cr3t-value") {
		t.Fatal("the secret value appears in agentknock's stderr")
	}
}

func TestNonUTF8InheritedVariablesSurvive(t *testing.T) {
	odd := "ODD_\xff_NAME=value \xfe\x80 bytes"
	l, status := runApproved(t, t.TempDir(), []string{odd, "PLAIN=1"}, map[string]map[string]string{"x": {"ADDED": "yes"}},
		"-s", "x", "--", "cat", "/proc/self/environ")
	if status != 0 {
		t.Fatalf("status %d: %s", status, l.stderr.String())
	}
	entries := strings.Split(l.stdout.String(), "\x00")
	for _, want := range []string{odd, "PLAIN=1", "ADDED=yes"} {
		found := 0
		for _, e := range entries {
			if e == want {
				found++
			}
		}
		if found != 1 {
			t.Fatalf("entry %q found %d times in %q", want, found, entries)
		}
	}
}

// The file-driven approval exists only in builds with the test tag.
func TestReleaseBuildHasNoTestApproval(t *testing.T) {
	out := filepath.Join(t.TempDir(), "agentknock")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", releaseLdflags, "-o", out, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("AGENTKNOCK_TEST_APPROVAL")) {
		t.Fatal("the release build contains the test approval")
	}
	test, _ := os.ReadFile(testBinary)
	if !bytes.Contains(test, []byte("AGENTKNOCK_TEST_APPROVAL")) {
		t.Fatal("the marker is not in the test build either; this test proves nothing")
	}
	version, err := exec.Command(out, "--version", "--verbose").Output()
	if err != nil || !strings.Contains(string(version), "signal state: exact") {
		t.Fatalf("release build: %v %q", err, version)
	}
}

// Resolving the state home never changes what the command receives.
func TestStateHomeLeavesTheEnvironmentAlone(t *testing.T) {
	l, status := runApproved(t, t.TempDir(), []string{"AGENTKNOCK_HOME=/from/env"}, nil,
		"-s", "x", "--agentknock-home", "/from/flag", "--", "sh", "-c", `echo "${AGENTKNOCK_HOME-unset}"`)
	if status != 0 || l.stdout.String() != "/from/env\n" {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
}

// nobody is the unprivileged user a test runs the launcher as.
var nobody = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}

// unprivilegedDir is a directory, and a test client, that nobody can reach;
// the test needs root to set that up.
func unprivilegedDir(t *testing.T, prefix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the launcher as an unprivileged user")
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(testBinary), 0o755)
	return dir
}

// The launch path keeps what its comments promise (command-execution.md,
// "Common execution semantics", "Environment construction", "Executable
// inspection and revalidation", "Signals and process state"), with real
// processes: no approval is spent on a run that cannot start, the caller's
// ignored and blocked signals act from the start of the run to the exec,
// revalidation opens only regular files, and paths in messages are escaped.

// waitBounded is launch.wait that kills a launcher still running after a
// minute: the failure of a test that must end ("fails fast") is a report,
// not a hung test binary.
func (l *launch) waitBounded(t *testing.T) int {
	t.Helper()
	timer := time.AfterFunc(time.Minute, func() { l.cmd.Process.Kill() })
	defer timer.Stop()
	status := l.wait(t)
	if status == 128+int(syscall.SIGKILL) {
		t.Fatalf("the launcher did not end within a minute: stdout %q stderr %q", l.stdout.String(), l.stderr.String())
	}
	return status
}

// paddedCopy copies src to dst and extends it, sparsely, to size bytes: an
// ELF program ignores trailing bytes, so it runs as before while each hash
// of it takes long.
func paddedCopy(t *testing.T, src, dst string, size int64) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(dst, size); err != nil {
		t.Fatal(err)
	}
}

// procStatusMasks reads hexadecimal mask lines (SigIgn, SigCgt, SigPnd,
// ShdPnd, SigBlk) of /proc/PID/status in one read, so that they describe
// one moment; ok is false once the process is gone.
func procStatusMasks(pid int, fields ...string) (masks []uint64, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, false
	}
	for _, field := range fields {
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err != nil {
					return nil, false
				}
				masks, found = append(masks, n), true
			}
		}
		if !found {
			return nil, false
		}
	}
	return masks, true
}

// ended reports whether process pid has exited (a zombie, or gone).
func ended(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(stat), ") Z ")
}

func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// Finding 1: at every soft open-file limit from 3 to 32 under a high hard
// limit, the command runs or nothing reached the device; a plain run and
// one with the invocation service (--stdin). The response is in place
// before the launcher starts, so a request that was written was answered.
func TestSoftOpenFileLimits(t *testing.T) {
	for _, path := range []struct {
		name string
		args []string
		want string
	}{
		{"plain", []string{"-s", "x", "--", "sh", "-c", "echo ran"}, "ran\n"},
		{"stdin", []string{"-s", "x", "--stdin", "x", "V", "--", "cat"}, "piped"},
	} {
		for n := 3; n <= 32; n++ {
			approval := newApprovalDir(t)
			approval.approve(t, map[string]map[string]string{"x": {"V": "piped"}})
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -S -n "$0" && exec "$@"`, strconv.Itoa(n), testBinary}, path.args...)...)
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			_, requested := os.Stat(filepath.Join(string(approval), "request.json"))
			switch {
			case err == nil && stdout.String() == path.want:
			case cmd.ProcessState.ExitCode() == 1 && requested != nil && strings.Contains(stderr.String(), "did not contact the device"):
				t.Logf("%s, soft limit %d: stopped before the request: %s", path.name, n, stderr.String())
			default:
				t.Fatalf("%s, soft limit %d: neither ran nor stopped before the request (%v, request written: %v): stdout %q stderr %q",
					path.name, n, err, requested == nil, stdout.String(), stderr.String())
			}
		}
	}
}

// Finding 2: SIGTERM and SIGQUIT that the caller ignores are ignored from
// the start of the run: during a long first hash (a 256 MiB padded binary,
// before the request) and during the wait. The test starts sending once the
// kernel shows the runtime's handlers installed (SIGUSR1 caught) and
// SIGTERM and SIGQUIT ignored, which is after agentknock's init; it fails
// if that moment comes only after the request.
func TestIgnoredTermAndQuitFromTheStart(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	paddedCopy(t, os.Args[0], big, 256<<20)
	approval := newApprovalDir(t)
	cmd := exec.Command("sh", "-c", `trap '' TERM QUIT; exec "$@"`, "sh", testBinary, "-s", "x", "--", big)
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval), "AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=ran")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	pid := cmd.Process.Pid
	requested := func() bool {
		_, err := os.Stat(filepath.Join(string(approval), "request.json"))
		return err == nil
	}
	ignoring := sigBit(syscall.SIGTERM) | sigBit(syscall.SIGQUIT)
	for {
		masks, ok := procStatusMasks(pid, "SigIgn", "SigCgt")
		if !ok || ended(pid) {
			t.Fatalf("the launcher ended before it was signalled: %s", stderr.String())
		}
		ign, cgt := masks[0], masks[1]
		if cgt&sigBit(syscall.SIGUSR1) != 0 && ign&ignoring == ignoring {
			break
		}
		if requested() {
			t.Fatalf("SIGTERM and SIGQUIT were not ignored again before the request (SigIgn %x)", ign)
		}
		time.Sleep(100 * time.Microsecond)
	}
	duringHash := 0
	for !requested() {
		if ended(pid) {
			cmd.Wait()
			t.Fatalf("the launcher ended during the first hash, after %d signals: %v stderr %q", duringHash, cmd.ProcessState, stderr.String())
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Process.Signal(syscall.SIGQUIT)
		duringHash++
		time.Sleep(2 * time.Millisecond)
	}
	if duringHash == 0 {
		t.Fatal("no signal was sent during the first hash; the test proves nothing")
	}
	for i := 0; i < 20; i++ {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(2 * time.Millisecond)
	}
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "ran\n" || strings.Contains(stderr.String(), "goroutine") {
		t.Fatalf("after %d signals during the hash: %v stdout %q stderr %q", duringHash, err, stdout.String(), stderr.String())
	}
}

// noHookLauncher is the test-approval launcher built without the entry
// hook, as a plain `go build` makes it.
var noHookLauncher struct {
	once sync.Once
	bin  string
	err  error
}

func buildNoHookLauncher(t *testing.T) string {
	t.Helper()
	noHookLauncher.once.Do(func() {
		noHookLauncher.bin = filepath.Join(filepath.Dir(testBinary), "agentknock-nohook")
		build := exec.Command("go", "build", "-trimpath", "-tags", "agentknock_testapproval", "-o", noHookLauncher.bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			noHookLauncher.err = fmt.Errorf("%v: %s", err, msg)
		}
	})
	if noHookLauncher.err != nil {
		t.Fatal(noHookLauncher.err)
	}
	return noHookLauncher.bin
}

// Finding 2, a build without the entry hook: the caller's ignores of
// SIGTERM and SIGQUIT cannot be known (the runtime replaced them before any
// Go code ran), so while it waits SIGTERM cancels the run as for a caller
// that does not ignore it (exit status 143 and a message), and SIGQUIT
// ends the launcher by its default action, never with the runtime's
// goroutine dump; the command does not run.
func TestBuildWithoutHookEndsOnIgnoredTermAndQuit(t *testing.T) {
	bin := buildNoHookLauncher(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT} {
		approval := newApprovalDir(t)
		cmd := exec.Command("sh", "-c", `ulimit -c 0; trap '' TERM QUIT; exec "$@"`, "sh", bin, "-s", "x", "--", "sh", "-c", "echo ran")
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		approval.waitRequest(t)
		cmd.Process.Signal(sig)
		cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		ended := ws.Signaled() && ws.Signal() == sig
		if sig == syscall.SIGTERM {
			ended = ws.ExitStatus() == 143 && strings.Contains(stderr.String(), "interrupted by SIGTERM")
		}
		if !ended || stdout.Len() != 0 || strings.Contains(stderr.String(), "goroutine") || strings.Contains(stderr.String(), "SIGQUIT: quit") {
			t.Fatalf("%v without the hook: %v stdout %q stderr %q", sig, cmd.ProcessState, stdout.String(), stderr.String())
		}
	}
}

// Finding 3: a SIGINT that the caller blocks stays pending from the start
// of the run to the command, as after a direct exec: sent during the wait,
// or after approval while the launcher hashes a 256 MiB binary again. The
// command is a padded grep, which leaves its mask alone; it reads a FIFO
// (which the test opens only once the signal is sent) and then prints its
// own signal state.
func TestCallerBlockedSigintStaysPending(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "grep")
	paddedCopy(t, grep, big, 256<<20)
	sigint := sigBit(syscall.SIGINT)
	for _, when := range []string{"waiting", "0ms", "50ms", "200ms"} {
		t.Run(when, func(t *testing.T) {
			p := startBlockedProbe(t, big, "2")
			p.approval.waitRequest(t)
			inLauncher := false
			if when == "waiting" {
				p.cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(20 * time.Millisecond)
				p.approval.approve(t, nil)
				inLauncher = true
			} else {
				p.approval.approve(t, nil)
				delay, _ := time.ParseDuration(when)
				time.Sleep(delay)
				inLauncher = p.inLauncher()
				p.cmd.Process.Signal(syscall.SIGINT)
			}
			state := p.finish(t)
			if (state["SigPnd"]|state["ShdPnd"])&sigint == 0 || state["SigBlk"]&sigint == 0 {
				t.Fatalf("SIGINT %s: the command's state %v; want SIGINT blocked and pending", when, state)
			}
			if !inLauncher {
				t.Logf("SIGINT %s reached the command itself, not the hand-off", when)
			}
		})
	}
}

// blockedProbe is a launch from a caller that blocks the signals in
// AGENTKNOCK_TEST_BLOCK, of grep reading a FIFO, then its own status.
type blockedProbe struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	approval       approvalDir
	fifo           string
}

func startBlockedProbe(t *testing.T, grep, block string, extraEnv ...string) *blockedProbe {
	t.Helper()
	p := &blockedProbe{approval: newApprovalDir(t), fifo: filepath.Join(t.TempDir(), "fifo")}
	if err := unix.Mkfifo(p.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{testBinary, "-s", "x", "--", grep, "-hE", "^(SigPnd|ShdPnd|SigBlk|SigIgn)", p.fifo, "/proc/self/status"}
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = append(append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_BLOCK="+block,
		"AGENTKNOCK_TEST_EXEC="+strings.Join(argv, "\x1f"), "AGENTKNOCK_TEST_APPROVAL="+string(p.approval)), extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

func (p *blockedProbe) inLauncher() bool {
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/exe")
	return exe == testBinary
}

// finish lets grep past the FIFO and returns the command's SigPnd, ShdPnd
// SigBlk and SigIgn; a launcher that ended instead fails the test.
func (p *blockedProbe) finish(t *testing.T) map[string]uint64 {
	t.Helper()
	state, err := p.result()
	if err != nil {
		t.Fatal(err)
	}
	return state
}

func (p *blockedProbe) result() (map[string]uint64, error) {
	// Opening blocks until grep opens the FIFO, unless the launcher died
	// (then the open would block for ever: open non-blocking).
	for {
		w, err := os.OpenFile(p.fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		if ended(p.cmd.Process.Pid) {
			break // Wait reports how
		}
		time.Sleep(200 * time.Microsecond)
	}
	if err := p.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%v stdout %q stderr %q", err, p.stdout.String(), p.stderr.String())
	}
	state := map[string]uint64{}
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			state[name] = n
		}
	}
	if len(state) != 4 {
		return nil, fmt.Errorf("no signal state from the command: stdout %q stderr %q", p.stdout.String(), p.stderr.String())
	}
	return state, nil
}

// Finding 4: a script replaced during the approval wait by a FIFO, by a
// symbolic link to /dev/zero or by a file that keeps growing is refused at
// once, without opening the FIFO or the device for reading and without
// reading the growing file to its end; with /proc and without it.
func TestScriptSwappedForASpecialFile(t *testing.T) {
	swaps := []struct {
		name string
		swap func(t *testing.T, path string) func()
		want string
	}{
		{"fifo", func(t *testing.T, path string) func() {
			os.Remove(path)
			if err := unix.Mkfifo(path, 0o755); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}, "no longer a regular file"},
		{"symlink to /dev/zero", func(t *testing.T, path string) func() {
			os.Remove(path)
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}, "no longer a regular file"},
		{"growing file", func(t *testing.T, path string) func() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer f.Close()
				chunk := bytes.Repeat([]byte("# more\n"), 8<<10)
				for {
					select {
					case <-stop:
						return
					default:
						f.Write(chunk)
					}
				}
			}()
			return func() { close(stop); <-done }
		}, "changed while waiting for approval"},
	}
	withoutProc := func(args ...string) []string {
		return append([]string{"unshare", "-m", "--propagation", "private", "sh", "-c", `mount -t tmpfs none /proc && exec "$@"`, "sh", testBinary}, args...)
	}
	for _, proc := range []bool{true, false} {
		if !proc && os.Geteuid() != 0 {
			t.Log("without /proc: needs root for a mount namespace")
			continue
		}
		for _, s := range swaps {
			t.Run(fmt.Sprintf("%s, /proc %v", s.name, proc), func(t *testing.T) {
				dir := t.TempDir()
				script := filepath.Join(dir, "tool")
				writeExecutable(t, script, "#!/bin/sh\necho ran\n")
				args := []string{"-s", "x", "--", script}
				var l *launch
				if proc {
					l = startLaunch(t, dir, nil, args...)
				} else {
					l = &launch{approval: newApprovalDir(t)}
					argv := withoutProc(args...)
					l.cmd = exec.Command(argv[0], argv[1:]...)
					l.cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(l.approval))
					l.cmd.Stdout, l.cmd.Stderr = &l.stdout, &l.stderr
					if err := l.cmd.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { l.cmd.Process.Kill() })
				}
				if req := l.approval.waitRequest(t); req.Operation.ExecutableMode != "SCRIPT" {
					t.Fatalf("mode %s", req.Operation.ExecutableMode)
				}
				stop := s.swap(t, script)
				l.approval.approve(t, nil)
				status := l.waitBounded(t)
				stop()
				if status != 1 || strings.Contains(l.stdout.String(), "ran") || !strings.Contains(l.stderr.String(), s.want) {
					t.Fatalf("status %d stdout %q stderr %q; want %q", status, l.stdout.String(), l.stderr.String(), s.want)
				}
			})
		}
	}
}

// Finding 5, environment rule 1: an inherited entry without "=" is passed
// on as a direct exec passes it and hides no later FOO=bar.
func TestInheritedEntryWithoutEqualsSign(t *testing.T) {
	// (os/exec keeps only the last of two FOO=... entries, so the test has
	// one, after the entry without "=".)
	env := []string{"AGENTKNOCK_BARE", "AGENTKNOCK_BARE=bar"}
	entries := func(out []byte) []string {
		var kept []string
		for _, e := range strings.Split(string(out), "\x00") {
			if strings.HasPrefix(e, "AGENTKNOCK_BARE") {
				kept = append(kept, e)
			}
		}
		return kept
	}
	direct := exec.Command("cat", "/proc/self/environ")
	direct.Env = append(os.Environ(), env...)
	out, err := direct.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := entries(out)
	if len(want) != 2 {
		t.Fatalf("the direct exec got %q; the test proves nothing", want)
	}
	l, status := runApproved(t, t.TempDir(), env, nil, "-s", "x", "--", "cat", "/proc/self/environ")
	if got := entries(l.stdout.Bytes()); status != 0 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("status %d: the command got %q, a direct exec %q; stderr %s", status, got, want, l.stderr.String())
	}
	l, status = runApproved(t, t.TempDir(), env, nil, "-s", "x", "--", "printenv", "AGENTKNOCK_BARE")
	if status != 0 || l.stdout.String() != "bar\n" {
		t.Fatalf("status %d: getenv in the command gives %q; stderr %s", status, l.stdout.String(), l.stderr.String())
	}
}

// Finding 6: GIT_CONFIG_COUNT is read as Git reads it, checked against the
// real git binary: the values Git refuses are exactly those agentknock
// refuses.
func TestGitConfigCountAsGitParsesIt(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to compare with Git's own parsing")
	}
	home := t.TempDir()
	for _, v := range []string{"1", " 1", "\t\n1", "+1", "-0", "0", "", "00", " ", "+", "-", "1 ", "0x1", "1a", "-1",
		"2147483647", "2147483648", "99999999999999999999", "١"} {
		cmd := exec.Command(git, "config", "--list")
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_COUNT=" + v, "GIT_CONFIG_KEY_0=agentknock.test", "GIT_CONFIG_VALUE_0=yes", "PATH=" + os.Getenv("PATH")}
		out, _ := cmd.CombinedOutput()
		gitRefuses := strings.Contains(string(out), "bogus count") || strings.Contains(string(out), "too many entries")
		_, ourErr := gitConfigCount(v)
		if gitRefuses != (ourErr != nil) {
			t.Errorf("GIT_CONFIG_COUNT=%q: git says %q, agentknock %v", v, out, ourErr)
		}
	}
}

// Finding 6: an inherited GIT_CONFIG_COUNT that Git refuses does not stop
// a run that adds no Git setting (here an environment-only secret; only an
// SSH secret in the response adds them, and buildEnvironment refuses the
// count then): the run is asked for and runs, with a warning before the
// request naming the fix; --no-git-sign, which never adds one, has no
// warning. One Git accepts (" 1") runs without a warning.
func TestGitConfigCountRefusesOnlyRunsThatAddGitSettings(t *testing.T) {
	for _, c := range []struct {
		count string
		args  []string
		warns bool
	}{
		{" ", nil, true},
		{"1x", nil, true},
		{"1x", []string{"--no-git-sign"}, false},
		{" 1", nil, false},
	} {
		args := append(append([]string{"-s", "x"}, c.args...), "--", "sh", "-c", "echo ran")
		l, status := runApproved(t, t.TempDir(), []string{"GIT_CONFIG_COUNT=" + c.count, "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"}, nil, args...)
		warned := strings.Contains(l.stderr.String(), "Warning: GIT_CONFIG_COUNT is") && strings.Contains(l.stderr.String(), "--no-git-sign")
		if status != 0 || l.stdout.String() != "ran\n" || warned != c.warns {
			t.Fatalf("GIT_CONFIG_COUNT=%q %v: status %d stdout %q stderr %q", c.count, c.args, status, l.stdout.String(), l.stderr.String())
		}
	}
}

// A GIT_CONFIG_COUNT Git refuses stops a run only once the response holds
// an SSH secret (before it, the run is warned: only the response says
// whether a secret is an SSH key), and then with the action that helps,
// never --verbose: for an inherited count, unset it (the line to run) or
// fix it, or --no-git-sign, the value escaped; for one a secret returned,
// leave that variable out. The benign twin, a count Git accepts, runs with
// the Git settings after it.
func TestGitConfigCountStopWithAnSSHSecretNamesTheFix(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sshSecret := map[string]any{"type": "ssh", "public_key": strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))}
	for _, c := range []struct {
		name, count string
		returned    string // a GIT_CONFIG_COUNT an environment secret returns
		runs        bool
		want        []string
	}{
		{"inherited", "1x\x1b]0;T\a", "", false, []string{`GIT_CONFIG_COUNT is "1x\u{1b}]0;T\u{7}"`, "Suggested action: Unset GIT_CONFIG_COUNT, or set it to the number", "\nAGENTKNOCK: unset GIT_CONFIG_COUNT\n"}},
		{"inherited blank", " ", "", false, []string{`GIT_CONFIG_COUNT is " "`, "Suggested action: Unset GIT_CONFIG_COUNT"}},
		{"returned", "", "x", false, []string{`GIT_CONFIG_COUNT is "x"`, "Suggested action: A secret returned GIT_CONFIG_COUNT: leave it out (--omit-env SECRET GIT_CONFIG_COUNT)"}},
		{"accepted", " 1", "", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			secrets := map[string]any{"key": sshSecret, "env": map[string]any{"type": "environment", "variables": map[string]any{}}}
			if c.returned != "" {
				secrets["env"] = map[string]any{"type": "environment", "variables": map[string]any{"GIT_CONFIG_COUNT": map[string]string{"value": c.returned}}}
			}
			plaintext, _ := json.Marshal(map[string]any{"result": "APPROVED", "secrets": secrets})
			env := []string{"GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"}
			if c.count != "" {
				env = append(env, "GIT_CONFIG_COUNT="+c.count)
			}
			l := startLaunch(t, t.TempDir(), env, "-s", "key", "-s", "env", "--", "sh", "-c", `echo "$GIT_CONFIG_COUNT $GIT_CONFIG_KEY_1"`)
			l.approval.waitRequest(t)
			l.approval.respond(t, testApprovalReply{Plaintext: plaintext})
			status := l.wait(t)
			stderr := l.stderr.String()
			if c.runs {
				if status != 0 || l.stdout.String() != "3 gpg.ssh.program\n" {
					t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), stderr)
				}
				return
			}
			if status != 1 || l.stdout.Len() != 0 || strings.Contains(stderr, "--verbose") || strings.ContainsAny(stderr, "\x1b\a") {
				t.Fatalf("status %d stdout %q stderr %q: want status 1, no --verbose, no raw control character", status, l.stdout.String(), stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// Finding 7: an executable whose only name is gone (selected through
// /dev/fd/3 after its file was removed; /proc calls it "... (deleted)") is
// not reported under that text: the run stops before the request.
func TestDeletedExecutableIsNotReported(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	writeExecutable(t, script, "#!/bin/sh\necho ran\n")
	approval := newApprovalDir(t)
	cmd := exec.Command("sh", "-c", `exec 3<"$0"; rm "$0"; exec "$@"`, script, testBinary, "-s", "x", "--", "/dev/fd/3")
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	// A launcher that sent the request would wait for ever.
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "did not contact the device") || !strings.Contains(string(out), "no name that leads to it") {
		t.Fatalf("%v: %s", cmd.ProcessState, out)
	}
	if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
		t.Fatal("the request was sent")
	}
}

// Finding 7: EACCES from opening a file that its permissions let the
// effective IDs read is not "execute-only": the refusal came from elsewhere
// (a /proc this process may not use, a security module), and the file must
// not be reported as a binary without a hash.
func TestReadRefusalOfAReadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script")
	writeExecutable(t, path, "#!/bin/sh\necho ran\n")
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, refused := range []error{unix.EACCES, unix.EPERM} {
		err := classifyReadRefusal(fd, &os.PathError{Op: "open", Path: "/proc/self/fd/3", Err: refused})
		if err == nil || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "permissions allow reading") {
			t.Fatalf("%v on a readable file: %v", refused, err)
		}
	}
	if err := classifyReadRefusal(fd, unix.EIO); !errors.Is(err, unix.EIO) {
		t.Fatalf("another error changed: %v", err)
	}
}

// Finding 7: a path in a message cannot rewrite the terminal: control
// characters and escape sequences are shown escaped.
func TestPathsInMessagesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	name := "tool\x1b[2J\x1b]0;title\x07\rname"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := startLaunch(t, dir, nil, "-s", "x", "--", "./"+name)
	if status := l.wait(t); status != 1 || !strings.Contains(l.stderr.String(), `tool\x1b[2J\x1b]0;title\x07\x0dname`) {
		t.Fatalf("status %d stderr %q", status, l.stderr.String())
	}
	if strings.ContainsAny(l.stderr.String(), "\x1b\x07\r") {
		t.Fatalf("raw control characters in %q", l.stderr.String())
	}
}

// Finding 3 under randomised timing, as the hand-off's order was measured:
// a caller-blocked SIGINT sent at one of 40 moments from the approval to
// well after the exec (0 to 5 ms, the hand-off of a small binary) is
// pending in the command every time; it never ends the launcher.
// AGENTKNOCK_TEST_RUNS raises the count for a measurement.
func TestCallerBlockedSigintAtRandomMoments(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	runs := 40
	if n, err := strconv.Atoi(os.Getenv("AGENTKNOCK_TEST_RUNS")); err == nil {
		runs = n
	}
	launched := 0
	for i := 0; i < runs; i++ {
		p := startBlockedProbe(t, grep, "2")
		p.approval.waitRequest(t)
		p.approval.approve(t, nil)
		time.Sleep(time.Duration(i%40) * 125 * time.Microsecond)
		if p.inLauncher() {
			launched++
		}
		p.cmd.Process.Signal(syscall.SIGINT)
		state, err := p.result()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if (state["SigPnd"]|state["ShdPnd"])&sigBit(syscall.SIGINT) == 0 {
			t.Fatalf("run %d: SIGINT is not pending in the command: %v", i, state)
		}
	}
	t.Logf("%d of %d signals were sent while the launcher still ran", launched, runs)
}

// Finding 8, the stress check (not part of the default run: it takes
// minutes): AGENTKNOCK_STRESS_RUNS launches, from a caller that blocks
// SIGINT, each sent a SIGINT at a random moment from 0 to 6 ms after the
// approval, with every core kept busy by NumCPU+1 spinning processes and
// 2*NumCPU launches at a time; the SIGINT must be pending in every
// command. scripts/stress-signals runs it.
func TestCallerBlockedSigintUnderLoad(t *testing.T) {
	runs, err := strconv.Atoi(os.Getenv("AGENTKNOCK_STRESS_RUNS"))
	if err != nil {
		t.Skip("a stress check that takes minutes: set AGENTKNOCK_STRESS_RUNS (scripts/stress-signals)")
	}
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= runtime.NumCPU(); i++ {
		hog := exec.Command(os.Args[0])
		hog.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=hog")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	var mu sync.Mutex
	var done, lost, launched int
	var losses []string
	workers := 2 * runtime.NumCPU()
	start := time.Now()
	t.Run("launches", func(t *testing.T) {
		for w := 0; w < workers; w++ {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				for {
					mu.Lock()
					if done == runs {
						mu.Unlock()
						return
					}
					done++
					run := done
					mu.Unlock()
					p := startBlockedProbe(t, grep, "2")
					p.approval.waitRequest(t)
					p.approval.approve(t, nil)
					time.Sleep(time.Duration(rand.Int64N(int64(6 * time.Millisecond))))
					inLauncher := p.inLauncher()
					p.cmd.Process.Signal(syscall.SIGINT)
					state, err := p.result()
					mu.Lock()
					if inLauncher {
						launched++
					}
					if err != nil || (state["SigPnd"]|state["ShdPnd"])&sigBit(syscall.SIGINT) == 0 {
						lost++
						losses = append(losses, fmt.Sprintf("run %d: %v %v", run, state, err))
					}
					mu.Unlock()
				}
			})
		}
	})
	var load []byte
	load, _ = os.ReadFile("/proc/loadavg")
	t.Logf("%d launches in %v, %d lost, %d sent while the launcher still ran; load %s", runs, time.Since(start).Round(time.Second), lost, launched, strings.TrimSpace(string(load)))
	if lost > 0 {
		t.Fatalf("%d of %d SIGINTs were not pending in the command: %s", lost, runs, strings.Join(losses, "; "))
	}
}

// The arm64 forwarding handler (agentknock_forward in entry_linux_arm64.s)
// under qemu-user: a SIGINT the caller blocks, sent while the launcher
// waits, neither cancels nor kills it, and the command runs. (qemu-user
// keeps a guest's pending signals in its own memory, which the host exec
// of the script's interpreter discards, so the pending state itself is
// checked only natively, in TestCallerBlockedSigintStaysPending.)
func TestArm64ForwardsCallerBlockedSigintUnderQemu(t *testing.T) {
	qemu, bin := arm64Launcher(t)
	script := filepath.Join(t.TempDir(), "script")
	writeExecutable(t, script, "#!/bin/sh\necho ran\n")
	approval := newApprovalDir(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_BLOCK=2",
		"AGENTKNOCK_TEST_EXEC="+strings.Join([]string{qemu, bin, "-s", "x", "--", script}, "\x1f"), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	approval.waitRequest(t)
	for i := 0; i < 5; i++ {
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(10 * time.Millisecond)
	}
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "ran\n" {
		t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
}

// Tests of the launch path in the environments agents run in
// (command-execution.md, "Approval context", "Signals and process state" and
// "Linux implementation"): standard descriptors the caller closed, and a
// mount namespace whose /proc is an empty tmpfs. The e2e package runs the
// same paths against the real device, in bubblewrap and as PID 1.

// descriptorsOf waits until process pid runs program and sleeps in it (the
// C library opens locale files while it starts), then lists its open
// descriptors as "N -> target" (pipes and sockets without inode numbers).
// The test observes from outside, so the probe itself opens nothing.
func descriptorsOf(t *testing.T, pid int, program string) string {
	t.Helper()
	proc := "/proc/" + strconv.Itoa(pid)
	sleeping := func() bool {
		data, _ := os.ReadFile(proc + "/syscall")
		nr, _, _ := strings.Cut(string(data), " ")
		return nr == strconv.Itoa(unix.SYS_CLOCK_NANOSLEEP) || nr == strconv.Itoa(unix.SYS_NANOSLEEP)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if exe, _ := os.Readlink(proc + "/exe"); exe == program && sleeping() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became %s", pid, program)
		}
		time.Sleep(2 * time.Millisecond)
	}
	entries, err := os.ReadDir(proc + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	anon := regexp.MustCompile(`^(pipe|socket):\[[0-9]+\]$`)
	var fds []string
	for _, e := range entries {
		target, err := os.Readlink(proc + "/fd/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, e.Name()+" -> "+anon.ReplaceAllString(target, "$1"))
	}
	sort.Strings(fds)
	return strings.Join(fds, ", ")
}

// closedCaller runs argv from a shell that first closes the descriptors in
// redirect (e.g. "<&- 2>&-").
func closedCaller(redirect string, argv ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `exec "$@" ` + redirect, "sh"}, argv...)...)
}

// A standard descriptor the caller closed is reported UNKNOWN (the runtime
// put /dev/null there) and the command starts with it closed: the same
// descriptors as a direct exec of the same command.
func TestClosedStandardDescriptors(t *testing.T) {
	cases := []struct {
		name, redirect string
		closed         []int
	}{
		{"stdin", "<&-", []int{0}},
		{"stdout", ">&-", []int{1}},
		{"stderr", "2>&-", []int{2}},
		{"all", "<&- >&- 2>&-", []int{0, 1, 2}},
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	if sleep, err = filepath.EvalSymlinks(sleep); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Both have the same streams otherwise (nil: /dev/null).
			probe := closedCaller(c.redirect, sleep, "60")
			if err := probe.Start(); err != nil {
				t.Fatal(err)
			}
			direct := descriptorsOf(t, probe.Process.Pid, sleep)
			probe.Process.Kill()
			probe.Wait()

			approval := newApprovalDir(t)
			cmd := closedCaller(c.redirect, testBinary, "-s", "x", "--", sleep, "60")
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			req := approval.waitRequest(t)
			approval.approve(t, nil)
			if via := descriptorsOf(t, cmd.Process.Pid, sleep); via != direct {
				t.Fatalf("the command's descriptors: %s\ndirect exec: %s", via, direct)
			}
			kinds := []string{req.Operation.Stdin, req.Operation.Stdout, req.Operation.Stderr}
			for fd, kind := range kinds {
				closed := false
				for _, c := range c.closed {
					closed = closed || c == fd
				}
				if closed != (kind == "UNKNOWN") {
					t.Fatalf("descriptor %d (closed %v) reported %s", fd, closed, kind)
				}
				// The direct exec must show what the caller did, or the
				// comparison proves nothing.
				if listed := strings.Contains(", "+direct, ", "+strconv.Itoa(fd)+" -> "); listed == closed {
					t.Fatalf("the direct exec lists descriptor %d: %v, although closed is %v: %s", fd, listed, closed, direct)
				}
			}
		})
	}

	// With --stdin the service's pipe is descriptor 0, closed or not.
	t.Run("stdin value", func(t *testing.T) {
		approval := newApprovalDir(t)
		cmd := closedCaller("<&-", testBinary, "-s", "x", "--stdin", "x", "V", "--", "cat")
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		approval.waitRequest(t)
		approval.approve(t, map[string]map[string]string{"x": {"V": "piped-value"}})
		if err := cmd.Wait(); err != nil || stdout.String() != "piped-value" {
			t.Fatalf("%v: %q", err, stdout.String())
		}
	})
}

// A build without the entry hook cannot tell a closed descriptor from the
// runtime's /dev/null, and says so.
func TestBuildWithoutHookSaysItCannotKnow(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agentknock-nohook")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	out, err := exec.Command(bin, "--version", "--verbose").Output()
	if err != nil || !strings.Contains(string(out), "approximate") || !strings.Contains(string(out), "closed cannot be told from /dev/null") {
		t.Fatalf("--version without the hook: %v %q", err, out)
	}
	out, err = exec.Command(testBinary, "--version", "--verbose").Output()
	if err != nil || strings.Contains(string(out), "cannot be told") {
		t.Fatalf("--version with the hook: %v %q", err, out)
	}
}

// With /proc replaced by an empty tmpfs the request names and hashes the
// executable exactly as with /proc (a link chain and a relative command
// included), the launcher chain is empty, and --stdin works.
func TestRunWithoutProc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	needProgram(t, "unshare", "util-linux")
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "real", "tool"), "#!/bin/sh\necho \"tool $V\"\n")
	os.Symlink("real", filepath.Join(dir, "linked"))
	os.Symlink("linked/tool", filepath.Join(dir, "tool"))
	noProc := func(args ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", `mount -t tmpfs none /proc && exec "$@"`, "sh", testBinary}, args...)...)
	}
	run := func(cmd *exec.Cmd, secrets map[string]map[string]string) (invocationRequest, string) {
		t.Helper()
		approval := newApprovalDir(t)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		req := approval.waitRequest(t)
		approval.approve(t, secrets)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		return req, stdout.String()
	}
	secrets := map[string]map[string]string{"x": {"V": "value"}}
	for _, command := range []string{"./tool", filepath.Join(dir, "tool"), "sh"} {
		args := []string{"-s", "x", "--", command, "-c", "echo tool $V"}
		withProc, _ := run(exec.Command(testBinary, args...), secrets)
		without, out := run(noProc(args...), secrets)
		if out != "tool value\n" {
			t.Fatalf("%s without /proc printed %q", command, out)
		}
		w, n := withProc.Operation, without.Operation
		if n.ExecutablePath != w.ExecutablePath || string(n.ExecutableHash) != string(w.ExecutableHash) || n.ExecutableMode != w.ExecutableMode || n.WorkingDirectory != w.WorkingDirectory {
			t.Fatalf("%s: with /proc %+v\nwithout %+v", command, w, n)
		}
		if len(without.LauncherChain) != 0 || len(withProc.LauncherChain) == 0 {
			t.Fatalf("%s: launcher chain with /proc %q, without %q", command, withProc.LauncherChain, without.LauncherChain)
		}
	}
	_, out := run(noProc("-s", "x", "--stdin", "x", "V", "--", "cat"), secrets)
	if out != "value" {
		t.Fatalf("--stdin without /proc printed %q", out)
	}
}

// The arm64 entry hook records closed descriptors too, and qemu-user, which
// lacks execveat, is a host whose missing facility stops a binary's run
// before the request.
func TestArm64UnderQemu(t *testing.T) {
	qemu, bin := arm64Launcher(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	writeExecutable(t, script, "#!/bin/sh\necho ran\n")

	approval := newApprovalDir(t)
	cmd := closedCaller("<&- 2>&-", qemu, bin, "-s", "x", "--", script)
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	req := approval.waitRequest(t)
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "ran\n" {
		t.Fatalf("%v: %q", err, stdout.String())
	}
	if req.Operation.Stdin != "UNKNOWN" || req.Operation.Stderr != "UNKNOWN" || req.Operation.Stdout == "UNKNOWN" {
		t.Fatalf("streams under qemu: %s %s %s", req.Operation.Stdin, req.Operation.Stdout, req.Operation.Stderr)
	}

	approval = newApprovalDir(t)
	cmd = exec.Command(qemu, bin, "-s", "x", "--", "true")
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "execveat") || !strings.Contains(string(out), "did not contact the device") {
		t.Fatalf("a binary under qemu-user: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
		t.Fatal("the request was sent although execveat is missing")
	}
}

// What the probes before the request cost: the system calls a path needs
// and the descriptors it takes for a moment (go test -bench HostFacilities).
func BenchmarkHostFacilities(b *testing.B) {
	for _, n := range []struct {
		name  string
		needs runNeeds
	}{{"binary", runNeeds{}}, {"binary with service", runNeeds{service: true}}} {
		b.Run(n.name, func(b *testing.B) {
			for b.Loop() {
				if err := checkHostFacilities(n.needs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Launch-path cost, as figures rather than assertions: the launcher's
// selection, inspection, test approval and exec against running the same
// command directly, and the streaming hash against a plain SHA-256 of the
// same bytes, each measured in the same run.

// BenchmarkLaunchOverhead reports how many times longer `agentknock -s x --
// true` (approval already waiting) takes than `true` run directly.
func BenchmarkLaunchOverhead(b *testing.B) {
	approval := b.TempDir()
	os.WriteFile(filepath.Join(approval, "response.json"), []byte(`{"secrets":{"x":{"TOKEN":"v"}}}`), 0o644)
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1)")
	}
	run := func(name string, args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	var direct, launched time.Duration
	for i := 0; i < b.N; i++ {
		direct += run(trueBin)
		launched += run(testBinary, "--quiet", "-s", "x", "--", trueBin)
	}
	b.ReportMetric(float64(launched)/float64(direct), "x-direct")
	b.ReportMetric(float64(launched-direct)/float64(b.N)/1e6, "ms-added/op")
}

// BenchmarkInspectHash reports the one-pass inspection (hash, shebang and
// head capture) relative to sha256.Sum256 over the same 32 MiB.
func BenchmarkInspectHash(b *testing.B) {
	data := bytes.Repeat([]byte("agentknock"), 32<<20/10)
	var plain, stream time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sha256.Sum256(data)
		plain += time.Since(start)
		start = time.Now()
		if _, _, _, err := hashStream(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		stream += time.Since(start)
	}
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(stream)/float64(plain), "x-sha256")
}

// Finding 2: a signal the caller blocked and that is already pending when
// agentknock starts stays pending for the command, in the process's queue,
// as after a direct exec: for the termination signals (which the runtime
// would take at once and die of, silently) and for SIGCHLD and SIGURG
// (which it would take and discard). The caller is a perl one-liner,
// single-threaded, so that its kill leaves the signal process-pending.
func TestSignalsPendingAtStartStayPending(t *testing.T) {
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("needs perl for a single-threaded caller that blocks and raises a signal")
	}
	grep, _ := exec.LookPath("grep")
	probe := []string{grep, "-E", "^(ShdPnd|SigBlk)", "/proc/self/status"}
	caller := func(sig syscall.Signal, argv ...string) *exec.Cmd {
		script := fmt.Sprintf(`use POSIX; sigprocmask(SIG_BLOCK, POSIX::SigSet->new(%d)) or die; kill %d, $$; exec @ARGV or die`, sig, sig)
		return exec.Command(perl, append([]string{"-e", script}, argv...)...)
	}
	field := func(out, name string) uint64 {
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				return n
			}
		}
		return 0
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGCHLD, syscall.SIGURG} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			bit := sigBit(sig)
			out, err := caller(sig, probe...).Output()
			if err != nil || field(string(out), "ShdPnd")&bit == 0 {
				t.Fatalf("a direct exec does not keep %v pending: %v %q", sig, err, out)
			}
			approval := newApprovalDir(t)
			cmd := caller(sig, append([]string{testBinary, "-s", "x", "--"}, probe...)...)
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			requested := make(chan struct{})
			go func() {
				for {
					if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
						close(requested)
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()
			select {
			case err := <-ended:
				t.Fatalf("the launcher ended before asking: %v stdout %q stderr %q", err, stdout.String(), stderr.String())
			case <-requested:
			case <-time.After(20 * time.Second):
				t.Fatal("the launcher never asked for approval")
			}
			approval.approve(t, nil)
			if err := <-ended; err != nil {
				t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
			}
			if field(stdout.String(), "ShdPnd")&bit == 0 || field(stdout.String(), "SigBlk")&bit == 0 {
				t.Fatalf("the command's state %q; want %v blocked and pending in the process's queue, as after a direct exec %q", stdout.String(), sig, out)
			}
		})
	}
}

// Finding 3: a SIGINT or SIGTERM during the last hash (of a 256 MiB
// binary) ends the run with the one line that says why the command did
// not run, and the signal's exit status; the command never starts.
func TestTerminationDuringTheLastHashIsReported(t *testing.T) {
	big := filepath.Join(t.TempDir(), "true")
	truePath, _ := exec.LookPath("true")
	paddedCopy(t, truePath, big, 256<<20)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			for attempt := 0; ; attempt++ {
				l := startLaunch(t, t.TempDir(), nil, "-s", "x", "--", big)
				l.approval.waitRequest(t)
				l.approval.approve(t, nil)
				time.Sleep(10 * time.Millisecond)
				exe, _ := os.Readlink("/proc/" + strconv.Itoa(l.cmd.Process.Pid) + "/exe")
				l.cmd.Process.Signal(sig)
				status := l.wait(t)
				if exe != testBinary {
					if attempt == 5 {
						t.Fatal("the launcher never still ran 10 ms after the approval")
					}
					continue
				}
				want := "interrupted by " + unix.SignalName(sig)
				if status != 128+int(sig) || !strings.Contains(l.stderr.String(), want) {
					t.Fatalf("status %d stderr %q; want %d and a line with %q", status, l.stderr.String(), 128+int(sig), want)
				}
				return
			}
		})
	}
}

// Finding 1: a process limit (ulimit -u, set by the caller's shell) too
// low for the threads and processes the run needs stops the run before the
// request, with the limit to set; at the measured need plus the margin the
// same runs start. An execute-only command needs one more, for the probe's
// child (issue 30, finding 6). As root the limit does not apply, so the
// test then runs the shell as nobody.
func TestProcessLimitStopsBeforeTheRequest(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash for ulimit -u")
	}
	dir := t.TempDir()
	var attr *syscall.SysProcAttr
	uid := os.Getuid()
	if os.Geteuid() == 0 {
		dir = unprivilegedDir(t, "agentknock-nproc-")
		attr = nobody
		uid = int(nobody.Credential.Uid)
	}
	// A run that must start gets two more, for a task of the last case (the
	// service ends a moment after its command) that others missed.
	slack := func(runs bool) int {
		if runs {
			return 2
		}
		return 0
	}
	// The limit counts the user's other tasks too: each case's limit is
	// set above those (none for nobody once the last case's have ended).
	others := func() int {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := max(userTasks(uid), 0)
			if n == 0 || uid == os.Getuid() || time.Now().After(deadline) {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	xecho := filepath.Join(dir, "xecho")
	if err := os.WriteFile(xecho, data, 0o111); err != nil {
		t.Fatal(err)
	}
	os.Chmod(xecho, 0o111)
	cases := []struct {
		limit int
		args  string
		runs  bool
		xonly bool
	}{
		{7, "", false, false},                              // the example: approved, then "fatal error: newosproc"
		{11, "--no-ssh-agent --no-git-sign", false, false}, // no service, one short
		{14, "--stdin demo TOKEN", false, false},           // approved, then the service could not start
		{12, "--no-ssh-agent --no-git-sign", true, false},  // no service
		{20, "--stdin demo TOKEN", true, false},            // with the service
		{12, "--no-ssh-agent --no-git-sign", false, true},  // execute-only: the probe's child, one short
		{13, "--no-ssh-agent --no-git-sign", true, true},   // execute-only
	}
	for _, c := range cases {
		command := "/bin/echo"
		if c.xonly {
			command = xecho
		}
		t.Run(fmt.Sprintf("%d %s %s", c.limit, c.args, filepath.Base(command)), func(t *testing.T) {
			d, err := os.MkdirTemp(dir, "approval-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(d, 0o777)
			approval := approvalDir(d)
			cmd := exec.Command(bash, "-c", fmt.Sprintf("ulimit -u %d && exec %s -s demo %s -- %s ran", c.limit+others()+slack(c.runs), testBinary, c.args, command))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval), "HOME="+dir, "GOMAXPROCS=8")
			cmd.SysProcAttr = attr
			stderr, err := launchAtProcessLimit(t, cmd, approval, c.runs)
			if c.runs {
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
				!strings.Contains(stderr, "the process limit (ulimit -u") ||
				!strings.Contains(stderr, "did not contact the device") || !strings.Contains(stderr, "Suggested action: Raise the process limit") {
				t.Fatalf("%v stderr %q; want status 1, the limit, and the suggested action", err, stderr)
			}
		})
	}
}

// A signal the caller both blocks and ignores (a background job of a
// non-interactive shell ignores SIGINT and SIGQUIT; its caller may also
// block them) stays pending on Linux after a direct exec: the kernel
// discards a signal at generation only when its target does not block it
// (kernel/signal.c, sig_ignored), and execve keeps both the ignore and
// the pending set. Measured first with a direct exec of grep, blocked on
// its FIFO, then through agentknock: sent during the approval wait and at
// two moments of the hand-off of a 256 MiB binary (its last hash). Each
// must end pending in the command, blocked and still ignored.
func TestCallerBlockedAndIgnoredSignalsStayPending(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "grep")
	paddedCopy(t, grep, big, 256<<20)
	// SIGHUP, SIGINT, SIGQUIT and SIGTERM, which the runtime unblocks on its
	// threads, and SIGUSR1, which it leaves blocked.
	const both = "1 2 3 10 15"
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGUSR1} {
		for _, when := range []string{"direct", "waiting", "0ms", "50ms"} {
			t.Run(unix.SignalName(sig)+"/"+when, func(t *testing.T) {
				var p *blockedProbe
				inLauncher := false
				if when == "direct" {
					p = startDirectProbe(t, big, both, "AGENTKNOCK_TEST_IGNORE="+both)
					p.waitExec(t, big)
					p.cmd.Process.Signal(sig)
				} else {
					p = startBlockedProbe(t, big, both, "AGENTKNOCK_TEST_IGNORE="+both)
					p.approval.waitRequest(t)
					if when == "waiting" {
						p.cmd.Process.Signal(sig)
						time.Sleep(20 * time.Millisecond)
						p.approval.approve(t, nil)
						inLauncher = true
					} else {
						p.approval.approve(t, nil)
						delay, _ := time.ParseDuration(when)
						time.Sleep(delay)
						inLauncher = p.inLauncher()
						p.cmd.Process.Signal(sig)
					}
				}
				state := p.finish(t)
				bit := sigBit(sig)
				if (state["SigPnd"]|state["ShdPnd"])&bit == 0 || state["SigBlk"]&bit == 0 || state["SigIgn"]&bit == 0 {
					t.Fatalf("%v %s: the command's state %v; want it blocked, ignored and pending", sig, when, state)
				}
				if when != "direct" && !inLauncher {
					t.Logf("%v %s reached the command itself, not the hand-off", sig, when)
				}
				t.Logf("%v %s: SigPnd %#x ShdPnd %#x", sig, when, state["SigPnd"], state["ShdPnd"])
			})
		}
	}
}

// startDirectProbe is startBlockedProbe without agentknock: the caller
// execs grep itself.
func startDirectProbe(t *testing.T, grep, block string, extraEnv ...string) *blockedProbe {
	t.Helper()
	p := &blockedProbe{fifo: filepath.Join(t.TempDir(), "fifo")}
	if err := unix.Mkfifo(p.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{grep, "-hE", "^(SigPnd|ShdPnd|SigBlk|SigIgn)", p.fifo, "/proc/self/status"}
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = append(append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_BLOCK="+block,
		"AGENTKNOCK_TEST_EXEC="+strings.Join(argv, "\x1f")), extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// waitExec waits until the probe's process runs exe (the caller, a Go
// program whose runtime unblocks these signals, has execed it).
func (p *blockedProbe) waitExec(t *testing.T, exe string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got, _ := os.Readlink("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/exe"); got == exe {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the caller never ran %s", exe)
}

// Finding 1, the kernel's exemption: a task with CAP_SYS_RESOURCE (or
// CAP_SYS_ADMIN) in the initial user namespace may create processes and
// threads above RLIMIT_NPROC (kernel/fork.c, copy_process), so the
// launcher, run as nobody with that capability ambient, runs at a limit
// far below its need; its benign twin, the same user and limit without the
// capability, stops before the request. Needs root to grant it.
func TestProcessLimitExemptsCapSysResource(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("needs bash for ulimit -u")
	}
	dir := unprivilegedDir(t, "agentknock-nproc-cap-")
	for _, c := range []struct {
		name string
		caps []uintptr
		runs bool
	}{
		{"CAP_SYS_RESOURCE", []uintptr{unix.CAP_SYS_RESOURCE}, true},
		{"CAP_SYS_ADMIN", []uintptr{unix.CAP_SYS_ADMIN}, true},
		{"none", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A container's bounding set may lack the capability (this
			// machine's lacks CAP_SYS_RESOURCE): then no process here can
			// have it, so the case checks the rule the launcher applies to
			// the capabilities it reads, and CAP_SYS_ADMIN's case runs a
			// real process.
			for _, cp := range c.caps {
				if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, cp, 0, 0, 0); err != nil || in != 1 {
					t.Logf("capability %d is not in this host's bounding set: checking the rule on that capability set", cp)
					if !capsExemptFromProcessLimit(1 << cp) {
						t.Fatalf("capability %d does not exempt the launcher from the process limit", cp)
					}
					if capsExemptFromProcessLimit(1<<unix.CAP_NET_ADMIN | 1<<unix.CAP_SYS_PTRACE) {
						t.Fatal("capabilities the kernel does not exempt exempt the launcher")
					}
					return
				}
			}
			d, err := os.MkdirTemp(dir, "approval-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(d, 0o777)
			approval := approvalDir(d)
			// A limit of 3 is below any run's need, and below the tasks a
			// busy nobody may already have.
			cmd := exec.Command(bash, "-c", "ulimit -u 3 && exec "+testBinary+" -s demo --no-ssh-agent --no-git-sign -- /bin/echo ran")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval), "HOME="+dir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody.Credential, AmbientCaps: c.caps}
			stderr, err := launchAtProcessLimit(t, cmd, approval, c.runs)
			if c.runs {
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "the process limit (ulimit -u") {
				t.Fatalf("%v stderr %q; want status 1 and the limit", err, stderr)
			}
		})
	}
}

// launchAtProcessLimit starts cmd (a launch under a process limit). When
// it should run, it waits for the request, approves it and checks the
// command ran; otherwise it waits for the launcher to stop, checks no
// request was sent, and returns its standard error and how it ended.
func launchAtProcessLimit(t *testing.T, cmd *exec.Cmd, approval approvalDir, runs bool) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	if runs {
		for {
			if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
				break
			}
			select {
			case err := <-ended:
				t.Fatalf("the launcher ended before asking: %v stdout %q stderr %q", err, stdout.String(), stderr.String())
			case <-time.After(2 * time.Millisecond):
			}
		}
		approval.respond(t, testApprovalReply{Secrets: map[string]map[string]string{"demo": {"TOKEN": "v"}}})
		if err := <-ended; err != nil || stdout.String() != "ran\n" {
			t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
		}
		return "", nil
	}
	var err error
	select {
	case err = <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the launcher neither stopped nor ran")
	}
	if _, statErr := os.Stat(filepath.Join(string(approval), "request.json")); statErr == nil {
		t.Fatal("the request was sent")
	}
	return stderr.String(), err
}
