// Tests of the launch path (command-execution.md, steps 1-2 and 6-9) with
// real processes: the client is built once with the release linker flags
// plus the agentknock_testapproval tag, whose approval step is driven
// through files, so a test can change the file system and send signals
// while the launcher waits, then watch it replace itself.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var testBinary string // agentknock built for the tests

const releaseLdflags = "-E=agentknock_rt0"

func TestMain(m *testing.M) {
	switch os.Getenv("AGENTKNOCK_TEST_ROLE") {
	case "caller":
		becomeCaller()
		return
	case "print":
		fmt.Println(os.Getenv("AGENTKNOCK_TEST_PRINT"))
		os.Exit(0)
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
	panic(syscall.Exec(argv[0], argv, env))
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
