// Process replacement (command-execution.md, "Native executable
// replacement"): the exec happens under the Go runtime's exec lock.

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A setuid program keeps its privilege through the launcher: exec happens
// under the runtime's exec lock, so no thread is being created at the
// moment of exec (which makes the kernel drop setuid). Without the lock a
// setuid target lost root in about 3% of runs (docs/launch-path.md).
func TestSetuidTargetKeepsItsPrivilege(t *testing.T) {
	idPath, err := exec.LookPath("id")
	if err != nil {
		t.Skip("no id(1)")
	}
	dir := unprivilegedDir(t, "agentknock-setuid-")
	data, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	setuidID := filepath.Join(dir, "id")
	if err := os.WriteFile(setuidID, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(setuidID, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777) // the launcher runs as nobody and writes its request here
	os.WriteFile(filepath.Join(approval, "response.json"), []byte(`{"secrets":{"x":{}},"thread_churn":true}`), 0o644)

	// The control: the copy really is setuid here (no nosuid mount).
	direct := exec.Command(setuidID, "-u")
	direct.SysProcAttr = nobody
	if out, err := direct.Output(); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Skipf("setuid programs do not work in %s (%v, %q)", dir, err, out)
	}
	lost := 0
	const runs = 200
	for i := 0; i < runs; i++ {
		cmd := exec.Command(testBinary, "--quiet", "-s", "x", "--", setuidID, "-u")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval)
		cmd.SysProcAttr = nobody
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v %q %s", i, err, out, stderr.String())
		}
		if strings.TrimSpace(string(out)) != "0" {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("the setuid program ran without its privilege in %d of %d runs", lost, runs)
	}
}

// Signal state and termination signals across the hand-off
// (command-execution.md, "Signals and process state"), with real processes.

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

// SIGPIPE is the default in the command even when the caller ignores it
// (and although Go's runtime ignores broken pipes on its own behalf).
func TestSigpipeIsDefaultInTheCommand(t *testing.T) {
	approval := newApprovalDir(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_IGNORE=13",
		"AGENTKNOCK_TEST_EXEC="+strings.Join(append([]string{testBinary, "-s", "x", "--"}, signalProbe...), "\x1f"),
		"AGENTKNOCK_TEST_APPROVAL="+string(approval))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	approval.waitRequest(t)
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	_, ign, _ := parseProbe(t, stdout.String())
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
	qemu, bin := arm64Launcher(t)
	dir := t.TempDir()
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

// arm64Launcher builds the test-approval launcher for arm64 with the release
// flags, for qemu-user, once per test binary run; it skips without qemu.
func arm64Launcher(t *testing.T) (qemu, bin string) {
	t.Helper()
	qemu = needProgram(t, "qemu-aarch64-static", "qemu-user-static")
	arm64Build.once.Do(func() {
		// Beside the amd64 test binary, in the directory TestMain removes.
		arm64Build.bin = filepath.Join(filepath.Dir(testBinary), "agentknock-arm64")
		build := exec.Command("go", "build", "-trimpath", "-tags", "agentknock_testapproval", "-ldflags", releaseLdflags, "-o", arm64Build.bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH=arm64")
		if msg, err := build.CombinedOutput(); err != nil {
			arm64Build.err = fmt.Errorf("%v: %s", err, msg)
		}
	})
	if arm64Build.err != nil {
		t.Fatal(arm64Build.err)
	}
	return qemu, arm64Build.bin
}

// arm64Build is the one arm64 build the qemu tests share.
var arm64Build struct {
	once sync.Once
	bin  string
	err  error
}

// Finding 9: every open-file limit too low for a run gets the figure to
// raise it to, the one the check really asks: from the entry hook (hard
// limit 4, before the runtime starts), before any descriptor is opened
// (5 to 8, which said "too many open files" from whichever open came
// first), and from the full check (9 and more). The hook's sentence names
// the figures the checks ask for a plain run and for one that may start
// the invocation service.
func TestOpenFileLimitMessagesNameTheCheckedFigure(t *testing.T) {
	figure := regexp.MustCompile(`raise it to at least ([0-9]+)`)
	asked := func(limit int, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(limit), testBinary}, args...)...)
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		m := figure.FindStringSubmatch(string(out))
		if cmd.ProcessState.ExitCode() != 1 || m == nil {
			t.Fatalf("limit %d %v: %v %q", limit, args, cmd.ProcessState, out)
		}
		n, _ := strconv.Atoi(m[1])
		return string(out), n
	}
	plain := []string{"-s", "x", "--no-ssh-agent", "--no-git-sign", "--", "true"}
	service := []string{"-s", "x", "--", "true"}
	_, plainFigure := asked(9, plain...)
	_, serviceFigure := asked(20, service...)
	for limit := 5; limit <= 8; limit++ {
		if out, n := asked(limit, service...); n != plainFigure || strings.Contains(out, "too many open files") {
			t.Fatalf("limit %d: %q, want the plain run's %d", limit, out, plainFigure)
		}
	}
	hook, n := asked(4, service...)
	if n != plainFigure || !strings.Contains(hook, "("+strconv.Itoa(serviceFigure)+" for a run that may start the invocation service") {
		t.Fatalf("the entry hook says %q; the checks ask %d and %d", hook, plainFigure, serviceFigure)
	}
}

// runtimeUnblockedSet, which agentknock_rt0 dequeues at entry, is exactly
// what this Go version's runtime unblocks on every thread: a Go program
// started with every signal blocked (this test binary, from a caller that
// blocks 1-64) keeps all the others blocked on each of its threads.
func TestRuntimeUnblockedSet(t *testing.T) {
	var all []string
	for n := 1; n <= 64; n++ {
		all = append(all, strconv.Itoa(n))
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_BLOCK="+strings.Join(all, " "),
		"AGENTKNOCK_TEST_EXEC="+os.Args[0], "AGENTKNOCK_TEST_ROLE_AFTER=sigblk")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(strings.ReplaceAll(string(out), "SigBlk:", ""))
	if len(lines) < 5 {
		t.Fatalf("the probe printed %q", out)
	}
	const never = 1<<(9-1) | 1<<(19-1) // SIGKILL and SIGSTOP cannot be blocked
	for _, l := range lines {
		blocked, err := strconv.ParseUint(l, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if unblocked := ^blocked &^ never; unblocked != runtimeUnblockedSet {
			t.Errorf("a thread unblocks %016x; runtimeUnblockedSet is %016x", unblocked, runtimeUnblockedSet)
		}
	}
}
