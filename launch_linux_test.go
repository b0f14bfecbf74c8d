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

func TestReplacedPathStillRunsTheSelectedBinary(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "bin", "tool")
	os.MkdirAll(filepath.Dir(tool), 0o755)
	copyTestBinary(t, tool)
	env := []string{"AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=original", "PATH=" + filepath.Dir(tool) + ":/usr/bin:/bin"}
	l := startLaunch(t, dir, env, "-s", "x", "--", "tool")
	l.approval.waitRequest(t)
	writeExecutable(t, tool+".new", "#!/bin/sh\necho replacement\n")
	if err := os.Rename(tool+".new", tool); err != nil {
		t.Fatal(err)
	}
	l.approval.approve(t, nil)
	if status := l.wait(t); status != 0 || l.stdout.String() != "original\n" {
		t.Fatalf("status %d stdout %q stderr %s; want the originally selected file to run", status, l.stdout.String(), l.stderr.String())
	}
}

func TestChangedExecutableIsRefused(t *testing.T) {
	for _, script := range []bool{false, true} {
		t.Run(map[bool]string{false: "binary", true: "script"}[script], func(t *testing.T) {
			dir := t.TempDir()
			tool := filepath.Join(dir, "tool")
			if script {
				writeExecutable(t, tool, "#!/bin/sh\necho ran\n")
			} else {
				copyTestBinary(t, tool)
			}
			l := startLaunch(t, dir, []string{"AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=ran"}, "-s", "x", "--", "./tool")
			req := l.approval.waitRequest(t)
			if (req.Operation.ExecutableMode == "SCRIPT") != script {
				t.Fatalf("mode %s, script %v", req.Operation.ExecutableMode, script)
			}
			f, err := os.OpenFile(tool, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("\n# changed\n"))
			f.Close()
			l.approval.approve(t, nil)
			status := l.wait(t)
			if status != 1 || strings.Contains(l.stdout.String(), "ran") || !strings.Contains(l.stderr.String(), "changed while waiting for approval") {
				t.Fatalf("status %d stdout %q stderr %q; want a refusal", status, l.stdout.String(), l.stderr.String())
			}
		})
	}
}

func TestPathFromTheDeviceIsNotSearched(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "first", "tool"), "#!/bin/sh\necho first\n")
	writeExecutable(t, filepath.Join(dir, "second", "tool"), "#!/bin/sh\necho second\n")
	l, status := runApproved(t, dir, []string{"PATH=" + filepath.Join(dir, "first") + ":/usr/bin:/bin"},
		map[string]map[string]string{"x": {"PATH": filepath.Join(dir, "second") + ":/usr/bin:/bin"}}, "-s", "x", "--", "tool")
	if status != 0 || l.stdout.String() != "first\n" {
		t.Fatalf("status %d stdout %q; want the tool selected before approval", status, l.stdout.String())
	}
}

func TestRelativePathEntriesUseTheRetainedDirectory(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	writeExecutable(t, filepath.Join(work, "bin", "tool"), "#!/bin/sh\necho retained\n")
	elsewhere := filepath.Join(base, "elsewhere")
	writeExecutable(t, filepath.Join(elsewhere, "bin", "tool"), "#!/bin/sh\necho elsewhere\n")
	// PWD names another directory, as a shell's stale $PWD would; the
	// retained descriptor and the process's own directory decide.
	l := startLaunch(t, work, []string{"PATH=bin:/usr/bin:/bin", "PWD=" + elsewhere}, "-s", "x", "--", "tool")
	req := l.approval.waitRequest(t)
	if req.Operation.WorkingDirectory != work || req.Operation.ExecutablePath != filepath.Join(work, "bin", "tool") {
		t.Fatalf("request names %q and %q", req.Operation.WorkingDirectory, req.Operation.ExecutablePath)
	}
	// Move the directory away and put a different tool at the old path.
	if err := os.Rename(work, work+".moved"); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(work, "bin", "tool"), "#!/bin/sh\necho impostor\n")
	l.approval.approve(t, nil)
	if status := l.wait(t); status != 0 || l.stdout.String() != "retained\n" {
		t.Fatalf("status %d stdout %q stderr %s", status, l.stdout.String(), l.stderr.String())
	}
}

func TestNonExecutableCandidatesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a", "tool"), []byte("#!/bin/sh\necho not-executable\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "b", "tool"), 0o755) // a directory
	writeExecutable(t, filepath.Join(dir, "c", "tool"), "#!/bin/sh\necho executable\n")
	path := strings.Join([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}, ":")
	l, status := runApproved(t, dir, []string{"PATH=" + path}, nil, "-s", "x", "--", "tool")
	if status != 0 || l.stdout.String() != "executable\n" {
		t.Fatalf("status %d stdout %q stderr %s", status, l.stdout.String(), l.stderr.String())
	}
}

func TestSelectionFailuresDoNotContactTheDevice(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plain"), []byte("data"), 0o644)
	cases := []struct {
		name, command, want string
		env                 []string
	}{
		{"not found", "no-such-command-here", "command not found: no-such-command-here", []string{"PATH=" + dir}},
		{"not executable in PATH", "plain", "cannot run " + dir + "/plain: permission denied", []string{"PATH=" + dir}},
		{"not executable by path", "./plain", "cannot run ./plain", nil},
		{"directory", dir, "cannot run " + dir, nil},
		{"missing path", "./nothing", "command not found: ./nothing", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := startLaunch(t, dir, c.env, "-s", "x", "--", c.command)
			status := l.wait(t)
			stderr := l.stderr.String()
			if status != 1 || !strings.Contains(stderr, "AGENTKNOCK: "+c.want) || !strings.Contains(stderr, "did not contact the device") {
				t.Fatalf("status %d stderr %q; want %q", status, stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(string(l.approval), "request.json")); err == nil {
				t.Fatal("a request was sent")
			}
		})
	}
}

func TestRemovedWorkingDirectoryIsReported(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	os.Mkdir(gone, 0o755)
	cmd := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" -s x -- true`, "sh", gone, testBinary)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("err %v output %s", err, out)
	}
	if !strings.Contains(string(out), "AGENTKNOCK: the working directory no longer exists") || !strings.Contains(string(out), "did not contact the device") {
		t.Fatalf("output %q", out)
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

// signalProbe prints the signal state and file limit the kernel reports.
// grep changes none of them (a shell may reset its mask).
var signalProbe = []string{"grep", "-hE", "^(SigBlk|SigIgn|Max open files)", "/proc/self/status", "/proc/self/limits"}

func parseProbe(t *testing.T, out string) (blk, ign uint64, nofile string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("probe output %q", out)
	}
	blk, _ = strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(lines[0], "SigBlk:")), 16, 64)
	ign, _ = strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(lines[1], "SigIgn:")), 16, 64)
	return blk, ign, strings.Fields(lines[2])[3]
}

// callerEnv makes the test binary a caller that ignores SIGTERM, SIGINT,
// SIGQUIT and SIGPIPE, blocks SIGUSR1 and SIGHUP (which the Go runtime
// unblocks on its threads) and lowers the file limit before it
// execs argv.
func callerEnv(argv ...string) []string {
	return []string{
		"AGENTKNOCK_TEST_ROLE=caller",
		"AGENTKNOCK_TEST_IGNORE=15 2 3 13",
		"AGENTKNOCK_TEST_BLOCK=10 1",
		"AGENTKNOCK_TEST_NOFILE=200",
		"AGENTKNOCK_TEST_EXEC=" + strings.Join(argv, "\x1f"),
	}
}

func TestCommandInheritsTheCallersSignalStateAndFileLimit(t *testing.T) {
	grep, _ := exec.LookPath("grep")
	probe := append([]string{grep}, signalProbe[1:]...)

	direct := exec.Command(os.Args[0])
	direct.Env = append(os.Environ(), callerEnv(probe...)...)
	out, err := direct.Output()
	if err != nil {
		t.Fatal(err)
	}
	blk, ign, nofile := parseProbe(t, string(out))
	sigpipe := uint64(1) << (13 - 1)
	if blk != 1<<(10-1)|1 || ign&(1<<(15-1)) == 0 || ign&sigpipe == 0 || nofile != "200" {
		t.Fatalf("the caller helper did not set up its state: %q", out)
	}

	approval := newApprovalDir(t)
	viaLauncher := exec.Command(os.Args[0])
	viaLauncher.Env = append(os.Environ(), append(callerEnv(append([]string{testBinary, "-s", "x", "--"}, signalProbe...)...),
		"AGENTKNOCK_TEST_APPROVAL="+string(approval))...)
	var stdout, stderr bytes.Buffer
	viaLauncher.Stdout, viaLauncher.Stderr = &stdout, &stderr
	if err := viaLauncher.Start(); err != nil {
		t.Fatal(err)
	}
	approval.waitRequest(t)
	approval.approve(t, nil)
	if err := viaLauncher.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	gotBlk, gotIgn, gotNofile := parseProbe(t, stdout.String())
	if gotBlk != blk {
		t.Errorf("SigBlk %016x, direct %016x", gotBlk, blk)
	}
	if gotIgn != ign&^sigpipe {
		t.Errorf("SigIgn %016x, want the direct %016x without SIGPIPE", gotIgn, ign)
	}
	if gotNofile != nofile {
		t.Errorf("open-file limit %s, direct %s", gotNofile, nofile)
	}
}

func TestSigpipeIsDefaultInTheCommand(t *testing.T) {
	l, status := runApproved(t, t.TempDir(), nil, nil, append([]string{"-s", "x", "--"}, signalProbe...)...)
	if status != 0 {
		t.Fatal(l.stderr.String())
	}
	_, ign, _ := parseProbe(t, l.stdout.String())
	if ign&(1<<(13-1)) != 0 {
		t.Fatalf("SIGPIPE is ignored in the command: SigIgn %016x", ign)
	}
}

// A SIGINT at any moment of the hand-off either stops the launcher before
// the command runs or reaches the command; it never vanishes.
func TestSigintDuringHandOffIsNeverLost(t *testing.T) {
	script := `trap 'echo got-int; exit 0' INT; echo started; i=0; while [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done; echo finished`
	for i := 0; i < 40; i++ {
		l := startLaunch(t, t.TempDir(), nil, "-s", "x", "--", "sh", "-c", script)
		l.approval.waitRequest(t)
		l.approval.approve(t, nil)
		time.Sleep(time.Duration(i%20) * 250 * time.Microsecond)
		l.cmd.Process.Signal(syscall.SIGINT)
		status := l.wait(t)
		out := l.stdout.String()
		switch {
		case strings.Contains(out, "finished"):
			t.Fatalf("run %d: the SIGINT vanished: stdout %q stderr %q", i, out, l.stderr.String())
		case strings.Contains(out, "got-int"), status == 130:
		default:
			t.Fatalf("run %d: status %d stdout %q stderr %q", i, status, out, l.stderr.String())
		}
	}
}

func TestPendingSigintPreventsExec(t *testing.T) {
	l := startLaunch(t, t.TempDir(), nil, "-s", "x", "--", "sh", "-c", "echo ran")
	l.approval.waitRequest(t)
	l.approval.respond(t, testApprovalReply{RaiseSignal: int(syscall.SIGINT)})
	status := l.wait(t)
	if status != 130 || strings.Contains(l.stdout.String(), "ran") || !strings.Contains(l.stderr.String(), "interrupted by SIGINT") {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
}

func TestSigintWhileWaitingCancels(t *testing.T) {
	l := startLaunch(t, t.TempDir(), nil, "-s", "x", "--", "sh", "-c", "echo ran")
	l.approval.waitRequest(t)
	l.cmd.Process.Signal(syscall.SIGINT)
	if status := l.wait(t); status != 130 || strings.Contains(l.stdout.String(), "ran") {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
}

func TestScriptContentsAreReported(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "small"), "#!/bin/sh\necho caf\xe9\n")
	writeExecutable(t, filepath.Join(dir, "large"), "#!/bin/sh\n"+strings.Repeat("# padding\n", 2000))
	for name, want := range map[string]*string{"small": ptr("#!/bin/sh\necho caf\uFFFD\n"), "large": nil} {
		l := startLaunch(t, dir, nil, "-s", "x", "--", "./"+name)
		req := l.approval.waitRequest(t)
		l.approval.respond(t, testApprovalReply{Deny: "no"})
		l.wait(t)
		got := req.Operation.ScriptContents
		if req.Operation.ExecutableMode != "SCRIPT" || (want == nil) != (got == nil) || (want != nil && *got != *want) {
			t.Fatalf("%s: mode %s contents %v", name, req.Operation.ExecutableMode, got)
		}
	}
}

func ptr(s string) *string { return &s }

func TestStreamKindsAndLauncherChain(t *testing.T) {
	dir := t.TempDir()
	approval := newApprovalDir(t)
	cmd := exec.Command(testBinary, "-s", "x", "--", "true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	defer pw.Close()
	file, _ := os.Create(filepath.Join(dir, "out"))
	defer file.Close()
	pair, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	sock := os.NewFile(uintptr(pair[0]), "sock")
	defer sock.Close()
	defer unix.Close(pair[1])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, file, sock
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	req := approval.waitRequest(t)
	approval.respond(t, testApprovalReply{Deny: "no"})
	cmd.Wait()
	if op := req.Operation; op.Stdin != "PIPE" || op.Stdout != "REGULAR_FILE" || op.Stderr != "SOCKET" {
		t.Fatalf("streams %s %s %s", op.Stdin, op.Stdout, op.Stderr)
	}
	self, _ := os.Executable()
	if n := len(req.LauncherChain); n == 0 || n > 4 || req.LauncherChain[n-1] != self {
		t.Fatalf("launcher chain %q should end with this test binary %q", req.LauncherChain, self)
	}
	if got := streamKind(-1); got != "UNKNOWN" {
		t.Fatalf("closed stream is %s", got)
	}
}

// An execute-only file cannot be read: it is reported as a binary without a
// hash and still runs through the retained descriptor. Needs root to run
// the launcher as another user (root itself can read any file).
func TestExecuteOnlyBinaryHasNoHash(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the launcher as an unprivileged user")
	}
	dir, err := os.MkdirTemp("", "agentknock-xonly-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	tool := filepath.Join(dir, "tool")
	copyTestBinary(t, tool)
	os.Chmod(tool, 0o711)
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777)
	os.Chmod(filepath.Dir(testBinary), 0o755)

	cmd := exec.Command(testBinary, "-s", "x", "--", tool)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval, "AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=ran")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := approvalDir(approval)
	req := d.waitRequest(t)
	if req.Operation.ExecutableHash != nil || req.Operation.ExecutableMode != "BINARY" {
		t.Fatalf("execute-only file reported with hash %x, mode %s", req.Operation.ExecutableHash, req.Operation.ExecutableMode)
	}
	d.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "ran\n" {
		t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
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
	version, err := exec.Command(out, "--version").Output()
	if err != nil || !strings.Contains(string(version), "signal state: exact") {
		t.Fatalf("release build: %v %q", err, version)
	}
}

// A caller that ignores SIGTERM gets a launcher that ignores it too while it
// waits, as the command itself would.
func TestIgnoredSigtermDoesNotCancel(t *testing.T) {
	approval := newApprovalDir(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(callerEnv(testBinary, "-s", "x", "--", "sh", "-c", "echo ran"),
		"AGENTKNOCK_TEST_APPROVAL="+string(approval))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	approval.waitRequest(t)
	cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(20 * time.Millisecond)
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "ran\n" {
		t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
}

// The arm64 entry hook, run under qemu-user when it is installed. qemu-user
// lacks execveat, so the probe is a script (path execve).
func TestArm64EntryHookUnderQemu(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentknock-arm64")
	build := exec.Command("go", "build", "-trimpath", "-tags", "agentknock_testapproval", "-ldflags", releaseLdflags, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH=arm64")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	probe := filepath.Join(dir, "probe")
	writeExecutable(t, probe, "#!/bin/sh\nexec grep -hE '^(SigBlk|SigIgn|Max open files)' /proc/self/status /proc/self/limits\n")

	direct := exec.Command(os.Args[0])
	direct.Env = append(os.Environ(), callerEnv(probe)...)
	out, err := direct.Output()
	if err != nil {
		t.Fatal(err)
	}
	_, ign, nofile := parseProbe(t, string(out))

	approval := newApprovalDir(t)
	via := exec.Command(os.Args[0])
	via.Env = append(os.Environ(), append(callerEnv(qemu, bin, "-s", "x", "--", probe), "AGENTKNOCK_TEST_APPROVAL="+string(approval))...)
	var stdout, stderr bytes.Buffer
	via.Stdout, via.Stderr = &stdout, &stderr
	if err := via.Start(); err != nil {
		t.Fatal(err)
	}
	approval.waitRequest(t)
	approval.approve(t, nil)
	if err := via.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	_, gotIgn, gotNofile := parseProbe(t, stdout.String())
	if gotIgn != ign&^(1<<(13-1)) || gotNofile != nofile {
		t.Fatalf("arm64: SigIgn %016x limit %s; direct %016x limit %s", gotIgn, gotNofile, ign, nofile)
	}
}

func TestNonUTF8ExecutablePathStopsBeforeTheRequest(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "bin\xff", "tool"), "#!/bin/sh\necho ran\n")
	l := startLaunch(t, dir, []string{"PATH=" + filepath.Join(dir, "bin\xff")}, "-s", "x", "--", "tool")
	if status := l.wait(t); status != 1 || !strings.Contains(l.stderr.String(), "not valid UTF-8") || !strings.Contains(l.stderr.String(), "did not contact the device") {
		t.Fatalf("status %d stderr %q", status, l.stderr.String())
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
