// The macOS launch path with real processes, run on a Mac (scripts/check-mac):
// the client is built with the agentknock_testapproval tag (and, on arm64,
// the release entry hook), its approval driven through files as in the
// Linux launch tests (run_linux_test.go, whose harness this mirrors),
// while a test changes files and sends signals. Second review, items 1, 3,
// 4 and 5.

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

// withEntryHook is whether testBinary enters through agentknock_rt0.
var withEntryHook = runtime.GOARCH == "arm64" && os.Getenv("AGENTKNOCK_TEST_NO_ENTRY_HOOK") != "1"

func TestMain(m *testing.M) {
	if os.Getenv("AGENTKNOCK_TEST_ROLE") == "caller" {
		becomeDarwinCaller()
		return
	}
	dir, err := os.MkdirTemp("", "agentknock-test-")
	if err != nil {
		panic(err)
	}
	testBinary = filepath.Join(dir, "agentknock")
	args := []string{"build", "-trimpath", "-tags", "agentknock_testapproval", "-o", testBinary}
	if withEntryHook {
		args = append(args, "-ldflags=-E=agentknock_rt0")
	}
	build := exec.Command("go", append(args, ".")...)
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

// becomeDarwinCaller ignores the signals in AGENTKNOCK_TEST_IGNORE, sets the
// mask to AGENTKNOCK_TEST_BLOCK on its locked thread and execs
// AGENTKNOCK_TEST_EXEC, so the launcher inherits that state.
func becomeDarwinCaller() {
	runtime.LockOSThread()
	for _, s := range strings.Fields(os.Getenv("AGENTKNOCK_TEST_IGNORE")) {
		n, _ := strconv.Atoi(s)
		signal.Ignore(syscall.Signal(n))
	}
	var block uint32
	for _, s := range strings.Fields(os.Getenv("AGENTKNOCK_TEST_BLOCK")) {
		n, _ := strconv.Atoi(s)
		block |= 1 << (n - 1)
	}
	if err := threadSigmask(darwinSigSetmask, &block, nil); err != nil {
		panic(err)
	}
	argv := strings.Split(os.Getenv("AGENTKNOCK_TEST_EXEC"), "\x1f")
	panic(syscall.Exec(argv[0], argv, os.Environ()))
}

type approvalDir string

func (d approvalDir) waitRequest(t *testing.T) invocationRequest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a deadlock guard only
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(string(d), "request.json")); err == nil {
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

func (d approvalDir) respond(t *testing.T, reply map[string]any) {
	t.Helper()
	data, _ := json.Marshal(reply)
	tmp := filepath.Join(string(d), "response.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(string(d), "response.json")); err != nil {
		t.Fatal(err)
	}
}

type darwinLaunch struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	approval       approvalDir
}

func startDarwinLaunch(t *testing.T, dir string, env []string, argv ...string) *darwinLaunch {
	t.Helper()
	l := &darwinLaunch{approval: approvalDir(t.TempDir())}
	l.cmd = exec.Command(argv[0], argv[1:]...)
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

func (l *darwinLaunch) wait(t *testing.T) int {
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

func (l *darwinLaunch) String() string {
	return fmt.Sprintf("stdout %q stderr %q", l.stdout.String(), l.stderr.String())
}

func writeScript(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Item 1: a command found as a virtualenv's bin/python (a symbolic link
// to the base interpreter) runs by that path, as a shell would run it:
// the program sees the candidate as its own path ($0 of a script,
// sys.executable of CPython), and the device is shown the resolved file.
func TestDarwinVirtualenvKeepsItsPath(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base", "python3.13")
	writeScript(t, base, "#!/bin/sh\necho \"$0\"\n")
	venv := filepath.Join(dir, "proj", ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(venv, "python")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{venv + ":/usr/bin:/bin", filepath.Join(venv, "python")},
		{".venv/bin:/usr/bin:/bin", ".venv/bin/python"},
	} {
		l := startDarwinLaunch(t, filepath.Join(dir, "proj"), []string{"PATH=" + c.path}, testBinary, "run", "-s", "x", "--", "python")
		req := l.approval.waitRequest(t)
		l.approval.respond(t, map[string]any{})
		if status := l.wait(t); status != 0 || strings.TrimSpace(l.stdout.String()) != c.want {
			t.Errorf("PATH=%s: status %d, %s; want $0 %q", c.path, status, l, c.want)
		}
		resolved, _ := filepath.EvalSymlinks(base)
		if req.Operation.ExecutablePath != resolved {
			t.Errorf("PATH=%s: the device was shown %q, want the resolved %q", c.path, req.Operation.ExecutablePath, resolved)
		}
	}
}

// Item 1: the venv link re-pointed during approval is refused by the last
// check of that name.
func TestDarwinRepointedLinkIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, filepath.Join(dir, "a"), "#!/bin/sh\necho a\n")
	writeScript(t, filepath.Join(dir, "b"), "#!/bin/sh\necho b\n")
	link := filepath.Join(dir, "bin", "tool")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(filepath.Join(dir, "a"), link); err != nil {
		t.Fatal(err)
	}
	l := startDarwinLaunch(t, dir, []string{"PATH=" + filepath.Dir(link) + ":/usr/bin:/bin"}, testBinary, "run", "-s", "x", "--", "tool")
	l.approval.waitRequest(t)
	os.Remove(link)
	if err := os.Symlink(filepath.Join(dir, "b"), link); err != nil {
		t.Fatal(err)
	}
	l.approval.respond(t, map[string]any{})
	if status := l.wait(t); status == 0 || strings.Contains(l.stdout.String(), "b") || !strings.Contains(l.stderr.String(), "no longer the file that was selected") {
		t.Errorf("status %d, %s", status, l)
	}
}

// Item 3: a FIFO, a directory and a symbolic-link loop of the command's
// name earlier in PATH are skipped, as macOS's execvP and zsh skip them.
func TestDarwinPathSearchSkipsLikeTheShell(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"fifo", "dir", "loop", "real"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo", "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "dir", "tool"), 0o755)
	if err := os.Symlink("tool", filepath.Join(dir, "loop", "tool")); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(dir, "real", "tool"), "#!/bin/sh\necho real\n")
	path := strings.Join([]string{filepath.Join(dir, "fifo"), filepath.Join(dir, "dir"), filepath.Join(dir, "loop"), filepath.Join(dir, "real"), "/usr/bin:/bin"}, ":")
	l := startDarwinLaunch(t, dir, []string{"PATH=" + path}, testBinary, "run", "-s", "x", "--", "tool")
	l.approval.waitRequest(t)
	l.approval.respond(t, map[string]any{})
	if status := l.wait(t); status != 0 || strings.TrimSpace(l.stdout.String()) != "real" {
		t.Errorf("status %d, %s", status, l)
	}
	// What zsh does with the same PATH, for the report.
	if zsh, err := exec.LookPath("zsh"); err == nil {
		out, _ := exec.Command(zsh, "-c", "PATH='"+path+"'; tool").CombinedOutput()
		if strings.TrimSpace(string(out)) != "real" {
			t.Errorf("zsh with the same PATH: %q", out)
		}
	}
}

// Item 4: the pending check on macOS sees a signal directed at the exec
// thread (sigpending(2) is per thread there): raised with pthread_kill
// once SIGTERM is blocked, it stops the command.
func TestDarwinPendingIsThreadDirected(t *testing.T) {
	l := startDarwinLaunch(t, t.TempDir(), nil, testBinary, "run", "-s", "x", "--", "sh", "-c", "echo ran")
	l.approval.waitRequest(t)
	l.approval.respond(t, map[string]any{"raise_after_block": int(syscall.SIGTERM)})
	if status := l.wait(t); status != 143 || strings.Contains(l.stdout.String(), "ran") || !strings.Contains(l.stderr.String(), "interrupted by SIGTERM") {
		t.Errorf("status %d, %s", status, l)
	}
}

// Ctrl-C while waiting cancels; the command does not run.
func TestDarwinSigintWhileWaitingCancels(t *testing.T) {
	l := startDarwinLaunch(t, t.TempDir(), nil, testBinary, "run", "-s", "x", "--", "sh", "-c", "echo ran")
	l.approval.waitRequest(t)
	l.cmd.Process.Signal(syscall.SIGINT)
	if status := l.wait(t); status != 130 || strings.Contains(l.stdout.String(), "ran") {
		t.Errorf("status %d, %s", status, l)
	}
}

// Item 5: with the entry hook, a caller's SIG_IGN on SIGUSR1 (which the
// runtime overwrites) reaches the command, SIGPIPE does not stay ignored,
// and a caller's block on SIGTERM (which the runtime lifts) is back in the
// command. ps(1) reports the command's ignored set (the command is ps
// itself, with the launcher's PID); perl reports its mask.
func TestDarwinCommandInheritsTheCallersSignalState(t *testing.T) {
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("no perl to report the command's signal mask")
	}
	probe := `use POSIX; my $o = POSIX::SigSet->new; sigprocmask(SIG_BLOCK, POSIX::SigSet->new, $o); ` +
		`print join(" ", map { $o->ismember($_) ? 1 : 0 } (SIGTERM, SIGUSR2)), "\n"; exec "/bin/ps", "-o", "ignored=", "-p", $$;`
	env := []string{
		"AGENTKNOCK_TEST_ROLE=caller",
		"AGENTKNOCK_TEST_IGNORE=" + fmt.Sprint(int(syscall.SIGUSR1), " ", int(syscall.SIGPIPE)),
		"AGENTKNOCK_TEST_BLOCK=" + fmt.Sprint(int(syscall.SIGTERM), " ", int(syscall.SIGUSR2)),
		"AGENTKNOCK_TEST_EXEC=" + strings.Join([]string{testBinary, "run", "-s", "x", "--", perl, "-e", probe}, "\x1f"),
	}
	l := startDarwinLaunch(t, t.TempDir(), env, os.Args[0])
	l.approval.waitRequest(t)
	l.approval.respond(t, map[string]any{})
	if status := l.wait(t); status != 0 {
		t.Fatalf("status %d, %s", status, l)
	}
	lines := strings.Split(strings.TrimSpace(l.stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("probe output %s", l)
	}
	ignored, err := strconv.ParseUint(strings.TrimSpace(lines[1]), 16, 64)
	if err != nil {
		t.Fatalf("ps ignored %q: %v", lines[1], err)
	}
	usr1 := ignored&(1<<(syscall.SIGUSR1-1)) != 0
	pipe := ignored&(1<<(syscall.SIGPIPE-1)) != 0
	masked := lines[0]
	t.Logf("entry hook %v: command ignores %#x, blocks SIGTERM SIGUSR2 = %s", withEntryHook, ignored, masked)
	if pipe {
		t.Errorf("SIGPIPE stayed ignored in the command")
	}
	if withEntryHook {
		if !usr1 || masked != "1 1" {
			t.Errorf("with the entry hook: SIGUSR1 ignored %v (want true), SIGTERM SIGUSR2 blocked %q (want \"1 1\")", usr1, masked)
		}
	} else if usr1 || masked != "0 1" {
		t.Errorf("without the entry hook the documented limits changed: SIGUSR1 ignored %v, SIGTERM SIGUSR2 blocked %q (want false, \"0 1\"); update callerStateLimits", usr1, masked)
	}
}

// Third review, item 2: init puts SIGQUIT at the kernel's default (the
// caller left it there), so SIGQUIT while waiting ends the launcher by the
// signal, as it would end the command, and never prints the runtime's
// goroutine dump (exit status 2). With or without the entry hook.
func TestDarwinSigquitWhileWaitingIsNoGoroutineDump(t *testing.T) {
	l := startDarwinLaunch(t, t.TempDir(), nil, testBinary, "run", "-s", "x", "--", "sh", "-c", "echo ran")
	l.approval.waitRequest(t)
	l.cmd.Process.Signal(syscall.SIGQUIT)
	if status := l.wait(t); status != 128+int(syscall.SIGQUIT) || strings.Contains(l.stdout.String(), "ran") || strings.Contains(l.stderr.String(), "goroutine ") {
		t.Errorf("status %d (want %d), %s", status, 128+int(syscall.SIGQUIT), l)
	}
}

// Third review, item 1: a SIGINT the caller blocks, sent while the
// launcher waits, neither ends the launcher nor cancels the run: with the
// entry hook it is caught into the deferred set and made pending on the
// exec thread, so the command starts with it blocked and pending, as
// after a direct exec. Without the hook the block is not known (the
// runtime lifted it), so the SIGINT cancels as Ctrl-C does (status 130).
func TestDarwinBlockedSigintReachesTheCommand(t *testing.T) {
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("no perl to report the command's pending signals")
	}
	probe := `use POSIX; my $p = POSIX::SigSet->new; sigpending($p); print $p->ismember(SIGINT) ? "pending\n" : "none\n";`
	env := []string{
		"AGENTKNOCK_TEST_ROLE=caller",
		"AGENTKNOCK_TEST_BLOCK=" + fmt.Sprint(int(syscall.SIGINT)),
		"AGENTKNOCK_TEST_EXEC=" + strings.Join([]string{testBinary, "run", "-s", "x", "--", perl, "-e", probe}, "\x1f"),
	}
	l := startDarwinLaunch(t, t.TempDir(), env, os.Args[0])
	l.approval.waitRequest(t)
	if err := l.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Ordering only: the signal is handled by the launcher before the
	// approval arrives, not during the hand-off (which the deferred set
	// also covers up to its collection).
	time.Sleep(200 * time.Millisecond)
	l.approval.respond(t, map[string]any{})
	status := l.wait(t)
	if !withEntryHook {
		if status != 130 {
			t.Errorf("without the entry hook: status %d, want 130 (%s)", status, l)
		}
		return
	}
	if status != 0 || strings.TrimSpace(l.stdout.String()) != "pending" {
		t.Errorf("status %d, %s; want 0 and SIGINT pending in the command", status, l)
	}
}

// The signal state --version --verbose reports matches the build (plain
// --version prints the one line scripts compare).
func TestDarwinVersionReportsTheSignalState(t *testing.T) {
	out, err := exec.Command(testBinary, "--version", "--verbose").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "signal state: approximate"
	if withEntryHook {
		want = "signal state: exact"
	}
	if !strings.Contains(string(out), want) {
		t.Errorf("--version:\n%s\nwant %q", out, want)
	}
}

// Item 4 and the README's limit: a standard descriptor the caller closed
// reaches the command closed with the entry hook, as /dev/null without.
func TestDarwinClosedStdoutStaysClosed(t *testing.T) {
	dir := t.TempDir()
	l := &darwinLaunch{approval: approvalDir(t.TempDir())}
	l.cmd = exec.Command("/bin/sh", "-c", `exec "$0" run -s x -- /bin/sh -c 'if { true >&1; } 2>/dev/null; then echo open >&2; else echo closed >&2; fi' >&-`, testBinary)
	l.cmd.Dir = dir
	l.cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(l.approval))
	l.cmd.Stderr = &l.stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l.approval.waitRequest(t)
	l.approval.respond(t, map[string]any{})
	l.wait(t)
	want := "open"
	if withEntryHook {
		want = "closed"
	}
	if got := strings.TrimSpace(lastLine(l.stderr.String())); got != want {
		t.Errorf("descriptor 1 in the command: %q, want %q (%s)", got, want, l)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
