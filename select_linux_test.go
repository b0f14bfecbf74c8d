// Selection, inspection, revalidation and approval context
// (command-execution.md, "Working directory and search path", "Selected
// executable", "Executable inspection and revalidation", "Approval
// context"), with real processes and files.

package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
	// A socket and a FIFO of the command's name: execvp(3) skips both (and
	// opening the FIFO must not block).
	os.MkdirAll(filepath.Join(dir, "s"), 0o755)
	ln, err := net.Listen("unix", filepath.Join(dir, "s", "tool"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.MkdirAll(filepath.Join(dir, "f"), 0o755)
	if err := unix.Mkfifo(filepath.Join(dir, "f", "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(dir, "c", "tool"), "#!/bin/sh\necho executable\n")
	path := strings.Join([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "s"), filepath.Join(dir, "f"), filepath.Join(dir, "c")}, ":")
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
		{"not found", "no-such-command-here", `command "no-such-command-here" wasn't found`, []string{"PATH=" + dir}},
		{"not executable in PATH", "plain", "cannot run " + dir + "/plain: permission denied", []string{"PATH=" + dir}},
		{"not executable by path", "./plain", "cannot run ./plain", nil},
		{"directory", dir, "cannot run " + dir, nil},
		{"missing path", "./nothing", `command "./nothing" wasn't found`, nil},
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
	if !strings.Contains(string(out), "AGENTKNOCK: can't resolve working directory") || !strings.Contains(string(out), "did not contact the device") {
		t.Fatalf("output %q", out)
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
// hash and still runs through the retained descriptor. The probe that
// found it a binary ran none of it: the tool is a copy of this test binary,
// which leaves probe-ran beside itself when it runs with the probe's
// marker as argv[0] (TestMain), checked first by running it so. Needs root
// to run the launcher as another user (root itself can read any file).
func TestExecuteOnlyBinaryHasNoHash(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-xonly-")
	os.Chmod(dir, 0o777) // for probe-ran
	tool := filepath.Join(dir, "tool")
	copyTestBinary(t, tool)
	os.Chmod(tool, 0o711)
	ran := filepath.Join(dir, "probe-ran")
	direct := exec.Command(tool)
	direct.Args[0] = probeMarkerPrefix + "direct"
	direct.Env = []string{}
	direct.SysProcAttr = nobody
	direct.Run()
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("run as the probe's child would be, the tool left no mark (%v): this test would prove nothing", err)
	}
	os.Remove(ran)
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777)

	cmd := exec.Command(testBinary, "-s", "x", "--", tool)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval, "AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=ran")
	cmd.SysProcAttr = nobody
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
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the probe's child ran the tool")
	}
}

// An execute-only #! script (issue 30, finding 6): its interpreter could
// not read it, so the run would fail after the approval. The probe finds
// it a script before the request: the run stops with the interpreter
// named, no request is sent, and the suggested action gives the fix (the
// chmod when the file is the user's own, else its owner's part).
func TestExecuteOnlyScriptStopsBeforeTheRequest(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "root's file", true: "own file"}[own], func(t *testing.T) {
			dir := unprivilegedDir(t, "agentknock-xonly-script-")
			script := filepath.Join(dir, "tool")
			writeExecutable(t, script, "#!/bin/sh\necho ran\n")
			if own {
				os.Chown(script, 65534, 65534)
			}
			os.Chmod(script, 0o111)
			cmd, approval, stderr := runAsNobody(t, dir, nil, "-s", "x", "--", "./tool")
			stopsBeforeTheRequest(t, cmd, approval)
			out := stderr.String()
			if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out, "cannot run "+script+": it is a script (the kernel starts it with /bin/sh) that this user may execute but not read") ||
				!strings.Contains(out, "did not contact the device") {
				t.Fatalf("%v: %q", cmd.ProcessState, out)
			}
			want := "Suggested action: Ask the file's owner to give this user read permission"
			if own {
				want = "Suggested action: Give yourself read permission on the file (its interpreter reads it as you), then run the command again:\nAGENTKNOCK: chmod u+r " + script + "\n"
			}
			if !strings.Contains(out, want) {
				t.Fatalf("want %q in %q", want, out)
			}
		})
	}
}

// stopsBeforeTheRequest waits until the launcher ends, failing the test if
// it sends its request first (the launcher is then left to the cleanup).
func stopsBeforeTheRequest(t *testing.T, cmd *exec.Cmd, approval approvalDir) {
	t.Helper()
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	deadline := time.After(time.Minute)
	for {
		select {
		case <-ended:
			if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
				t.Fatal("the request was sent")
			}
			return
		case <-deadline:
			t.Fatal("the launcher neither stopped nor asked")
		case <-time.After(2 * time.Millisecond):
		}
		if _, err := os.Stat(filepath.Join(string(approval), "request.json")); err == nil {
			t.Fatal("the request was sent")
		}
	}
}

// The probe runs none of an execute-only script: its interpreter is a
// script of the test's own that leaves a mark, which it does when the
// execute-only script is run directly (the interpreter needs nothing from
// the file it cannot read); through the probe it must not. The kernel
// starts the interpreter's interpreter, and the message names what it
// starts.
func TestExecuteOnlyProbeRunsNoCode(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-xonly-nocode-")
	os.Chmod(dir, 0o777)
	mark := filepath.Join(dir, "ran")
	helper := filepath.Join(dir, "helper")
	writeExecutable(t, helper, "#!/bin/sh\n: > "+mark+"\n")
	script := filepath.Join(dir, "tool")
	writeExecutable(t, script, "#!"+helper+"\n")
	os.Chmod(script, 0o111)
	direct := exec.Command(script)
	direct.SysProcAttr = nobody
	if out, err := direct.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("run directly, the script left no mark (%v): this test would prove nothing", err)
	}
	os.Remove(mark)
	cmd, approval, stderr := runAsNobody(t, dir, nil, "-s", "x", "--", script)
	stopsBeforeTheRequest(t, cmd, approval)
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "it is a script (the kernel starts it with /bin/sh "+helper+")") {
		t.Fatalf("%v: %q", cmd.ProcessState, stderr.String())
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the probe ran the script's interpreter")
	}
}

// Where the probe cannot be made, the run goes on as before: the file is
// reported as a binary without a hash (README, "Limits and bounds"), and
// --verbose says why. PTRACE_TRACEME is refused by a seccomp filter that
// the caller installs before it execs the launcher; /proc is hidden by a
// tmpfs in a mount namespace of the launcher's own.
func TestExecuteOnlyScriptWhereTheProbeIsImpossible(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-xonly-noprobe-")
	script := filepath.Join(dir, "tool")
	writeExecutable(t, script, "#!/bin/sh\necho ran\n")
	os.Chmod(script, 0o111)
	caller := filepath.Join(dir, "caller")
	copyTestBinary(t, caller)
	launcher := []string{testBinary, "--verbose", "-s", "x", "--", script}
	cases := []struct {
		name string
		cmd  func() *exec.Cmd
		why  string
	}{
		{"ptrace refused", func() *exec.Cmd {
			cmd := exec.Command(caller)
			cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_REFUSE_PTRACE=1", "AGENTKNOCK_TEST_EXEC="+strings.Join(launcher, "\x1f"))
			cmd.SysProcAttr = nobody
			return cmd
		}, "the traced child could not start (operation not permitted)"},
		{"without /proc", func() *exec.Cmd {
			unshare := needProgram(t, "unshare", "util-linux")
			setpriv := needProgram(t, "setpriv", "util-linux")
			cmd := exec.Command(unshare, append([]string{"-m", "--propagation", "private", "sh", "-c", `mount -t tmpfs none /proc && exec "$@"`, "sh",
				setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, launcher...)...)
			cmd.Env = os.Environ()
			return cmd
		}, "no /proc of this PID namespace shows the child's arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := os.MkdirTemp(dir, "approval-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(d, 0o777)
			approval := approvalDir(d)
			cmd := c.cmd()
			cmd.Dir = dir
			cmd.Env = append(cmd.Env, "AGENTKNOCK_TEST_APPROVAL="+d)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			req := approval.waitRequest(t)
			approval.respond(t, testApprovalReply{Deny: "no"})
			cmd.Wait()
			if req.Operation.ExecutableHash != nil || req.Operation.ExecutableMode != "BINARY" {
				t.Fatalf("reported with hash %x, mode %s", req.Operation.ExecutableHash, req.Operation.ExecutableMode)
			}
			if !strings.Contains(stderr.String(), "execute-only file not probed: "+c.why) {
				t.Fatalf("--verbose does not say %q: %q", c.why, stderr.String())
			}
		})
	}
}

// An interpreter that runs with other credentials (set-ID, or file
// capabilities) may read an execute-only script, so nothing is predicted:
// the run goes on as before, and --verbose says why. The interpreter is a
// copy of sh, set-user-ID to nobody (its bit is what counts; it is never
// run).
func TestExecuteOnlyScriptWithASetIDInterpreter(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-xonly-setid-")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	interp := filepath.Join(dir, "sh")
	if err := os.WriteFile(interp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(interp, 65534, 65534)
	if err := os.Chmod(interp, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "tool")
	writeExecutable(t, script, "#!"+interp+"\necho ran\n")
	os.Chmod(script, 0o111)
	cmd, approval, stderr := runAsNobody(t, dir, nil, "--verbose", "-s", "x", "--", script)
	req := approval.waitRequest(t)
	approval.respond(t, testApprovalReply{Deny: "no"})
	cmd.Wait()
	if req.Operation.ExecutableHash != nil || req.Operation.ExecutableMode != "BINARY" {
		t.Fatalf("reported with hash %x, mode %s", req.Operation.ExecutableHash, req.Operation.ExecutableMode)
	}
	if want := "execute-only file probed: a script whose interpreter " + interp + " runs with other credentials"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("--verbose does not say %q: %q", want, stderr.String())
	}
}

// A caller's blocked SIGCHLD stays blocked, and none is left pending by
// the probe's child (its stop and its end each send one to the launcher,
// whose runtime takes them): the execute-only command, a copy of grep,
// reports its own signal state, which must be what a direct exec gives.
func TestExecuteOnlyProbeLeavesNoSIGCHLD(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-xonly-sigchld-")
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(grep)
	if err != nil {
		t.Fatal(err)
	}
	xgrep := filepath.Join(dir, "grep")
	if err := os.WriteFile(xgrep, data, 0o111); err != nil {
		t.Fatal(err)
	}
	os.Chmod(xgrep, 0o111)
	caller := filepath.Join(dir, "caller")
	copyTestBinary(t, caller)
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777)
	status := []string{xgrep, "-hE", "^(SigPnd|ShdPnd|SigBlk)", "/proc/self/status"}
	run := func(argv []string) (string, error) {
		cmd := exec.Command(caller)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_ROLE=caller", "AGENTKNOCK_TEST_BLOCK=17", "AGENTKNOCK_TEST_APPROVAL="+approval,
			"AGENTKNOCK_TEST_EXEC="+strings.Join(argv, "\x1f"))
		cmd.SysProcAttr = nobody
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		if argv[0] == testBinary {
			d := approvalDir(approval)
			d.waitRequest(t)
			d.approve(t, nil)
		}
		err := cmd.Wait()
		return stdout.String(), err
	}
	field := func(out, name string) uint64 {
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				return n
			}
		}
		t.Fatalf("no %s in %q", name, out)
		return 0
	}
	bit := sigBit(unix.SIGCHLD)
	for _, argv := range [][]string{status, append([]string{testBinary, "-s", "x", "--"}, status...)} {
		out, err := run(argv)
		if err != nil {
			t.Fatalf("%q: %v %q", argv, err, out)
		}
		if field(out, "SigBlk")&bit == 0 || (field(out, "SigPnd")|field(out, "ShdPnd"))&bit != 0 {
			t.Fatalf("%q: the command's state %q; want SIGCHLD blocked and not pending", argv, out)
		}
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

// An error that is not an ordinary miss (here a symbolic-link loop) stops
// the PATH search instead of falling through to a later directory.
func TestOtherErrorsStopTheSearch(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.Symlink("tool", filepath.Join(dir, "a", "tool")) // points at itself
	writeExecutable(t, filepath.Join(dir, "b", "tool"), "#!/bin/sh\necho later\n")
	l := startLaunch(t, dir, []string{"PATH=" + filepath.Join(dir, "a") + ":" + filepath.Join(dir, "b")}, "-s", "x", "--", "tool")
	status := l.wait(t)
	if status != 1 || strings.Contains(l.stdout.String(), "later") || !strings.Contains(l.stderr.String(), "cannot run "+filepath.Join(dir, "a", "tool")) {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
}

// Without PATH the search uses the system default (_CS_PATH).
func TestUnsetPathUsesTheSystemDefault(t *testing.T) {
	l := &launch{approval: newApprovalDir(t)}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	l.cmd = exec.Command(testBinary, "-s", "x", "--", "sh", "-c", `echo "${PATH-unset}"`)
	l.cmd.Env = append(env, "AGENTKNOCK_TEST_APPROVAL="+string(l.approval))
	l.cmd.Stdout, l.cmd.Stderr = &l.stdout, &l.stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	req := l.approval.waitRequest(t)
	l.approval.approve(t, nil)
	if status := l.wait(t); status != 0 || !strings.HasPrefix(req.Operation.ExecutablePath, "/") {
		t.Fatalf("status %d path %q stderr %q", status, req.Operation.ExecutablePath, l.stderr.String())
	}
	if dir := filepath.Dir(req.Operation.ExecutablePath); dir != "/bin" && dir != "/usr/bin" {
		t.Fatalf("sh found in %s, outside %s", dir, defaultSearchPath)
	}
}

// An empty PATH entry means the retained working directory; a symbolic
// link is followed and the object it names is reported and run.
func TestEmptyPathEntryAndSymbolicLinks(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "real", "tool-v2"), "#!/bin/sh\necho real\n")
	os.Symlink(filepath.Join("real", "tool-v2"), filepath.Join(dir, "tool"))
	l := startLaunch(t, dir, []string{"PATH=/nonexistent::/usr/bin"}, "-s", "x", "--", "tool")
	req := l.approval.waitRequest(t)
	l.approval.approve(t, nil)
	if status := l.wait(t); status != 0 || l.stdout.String() != "real\n" {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
	if want := filepath.Join(dir, "real", "tool-v2"); req.Operation.ExecutablePath != want {
		t.Fatalf("reported %q, want the link's target %q", req.Operation.ExecutablePath, want)
	}
}

// A script that cannot be read again before execution is not run.
func TestScriptRemovedDuringApprovalIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "tool"), "#!/bin/sh\necho ran\n")
	l := startLaunch(t, dir, nil, "-s", "x", "--", "./tool")
	l.approval.waitRequest(t)
	os.Remove(filepath.Join(dir, "tool"))
	l.approval.approve(t, nil)
	if status := l.wait(t); status != 1 || strings.Contains(l.stdout.String(), "ran") || !strings.Contains(l.stderr.String(), "cannot read") {
		t.Fatalf("status %d stdout %q stderr %q", status, l.stdout.String(), l.stderr.String())
	}
}

// argv[0] is the command string as given, not the path that was found.
func TestArgvZeroIsTheOriginalCommandString(t *testing.T) {
	l, status := runApproved(t, t.TempDir(), nil, nil, "-s", "x", "--", "cat", "/proc/self/cmdline")
	if status != 0 || l.stdout.String() != "cat\x00/proc/self/cmdline\x00" {
		t.Fatalf("status %d cmdline %q", status, l.stdout.String())
	}
}

// No implicit shell: an executable text file without "#!" is not handed to
// /bin/sh as execvp(3) would; the kernel would refuse it ("exec format
// error"), which is said before the device is asked (finding 6), so that
// no approval is spent on it. An empty file is the same.
func TestNoShellFallbackForFilesWithoutShebang(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for name, content := range map[string]string{"text": "touch " + marker + "\n", "empty": ""} {
		writeExecutable(t, filepath.Join(dir, name), content)
		l := startLaunch(t, dir, nil, "-s", "x", "--", "./"+name)
		status := l.waitBounded(t)
		if _, err := os.Stat(marker); err == nil || status != 1 || !strings.Contains(l.stderr.String(), "exec format error") ||
			!strings.Contains(l.stderr.String(), "did not contact the device") || !strings.Contains(l.stderr.String(), "#!/bin/sh") {
			t.Fatalf("%s: status %d stderr %q (marker created: %v)", name, status, l.stderr.String(), err == nil)
		}
		if _, err := os.Stat(filepath.Join(string(l.approval), "request.json")); err == nil {
			t.Fatalf("%s: the request was sent", name)
		}
	}
}

// A script whose #! interpreter cannot be run fails in execve (ENOENT,
// EACCES) after the approval; it is said before the device is asked, with
// the interpreter named: a missing one, a CRLF line (the interpreter is
// "/bin/sh\r"), an empty line, a file that is not executable, a directory,
// and `#!/usr/bin/env NAME` with NAME in no PATH directory. The controls,
// the same lines spelled the ways the kernel accepts, ask and run.
func TestScriptInterpreterThatCannotRunIsSaidFirst(t *testing.T) {
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\necho tool \"$@\"\n")
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ line, want string }{
		"missing":  {"#!/nonexistent/python9\n", "/nonexistent/python9, does not exist"},
		"crlf":     {"#!/bin/sh\r\necho x\r\n", `/bin/sh\x0d, does not exist (the line ends in CR LF`},
		"empty":    {"#!\necho x\n", "names no interpreter"},
		"notexec":  {"#!" + filepath.Join(dir, "plain") + "\n", "is not an executable file"},
		"dir":      {"#!" + dir + "\n", "is not an executable file"},
		"env":      {"#!/usr/bin/env agentknock-no-such-program\n", "runs /usr/bin/env agentknock-no-such-program, and agentknock-no-such-program is not found in PATH"},
		"relative": {"#!bin/missing\n", "bin/missing, does not exist"},
	} {
		writeExecutable(t, filepath.Join(dir, name), c.line)
		l := startLaunch(t, dir, nil, "-s", "x", "--", "./"+name)
		status := l.waitBounded(t)
		stderr := l.stderr.String()
		if status != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "did not contact the device") || !strings.Contains(stderr, "#!") {
			t.Errorf("%s: status %d, stderr %q, want %q", name, status, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(string(l.approval), "request.json")); err == nil {
			t.Errorf("%s: the request was sent", name)
		}
	}
	for name, line := range map[string]string{
		"blank-after":  "#! /bin/sh -e\necho ran\n",
		"tab":          "#!\t/bin/sh\necho ran\n",
		"env":          "#!/usr/bin/env sh\necho ran\n",
		"env-option":   "#!/usr/bin/env -S sh -e\necho ran\n",
		"relative":     "#!bin/tool\n",
		"env-relative": "#!/usr/bin/env bin/tool\n",
	} {
		writeExecutable(t, filepath.Join(dir, "ok-"+name), line)
		l := startLaunch(t, dir, nil, "-s", "x", "--", "./ok-"+name)
		l.approval.waitRequest(t)
		l.approval.approve(t, map[string]map[string]string{"x": {"X": "v"}})
		if status := l.waitBounded(t); status != 0 {
			t.Errorf("ok-%s: status %d, stderr %q", name, status, l.stderr.String())
		}
	}
}

// Finding 6 on Linux: a binfmt_misc handler cannot run a file executed
// through a close-on-exec descriptor, as agentknock executes binaries.
// In a user namespace of its own (Linux 6.7 gives each its own
// binfmt_misc) a handler is registered for the magic bytes AKMAGIC9: a
// direct exec of such a file runs the handler (the control), but the
// kernel refuses execveat of its close-on-exec descriptor with ENOENT
// (measured with each handler flag, see kernelMayRun); agentknock says so
// before the request instead of after the approval.
func TestBinfmtMiscHandlerCannotRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a user namespace with binfmt_misc mounted")
	}
	needProgram(t, "unshare", "util-linux")
	dir := unprivilegedDir(t, "agentknock-binfmt-")
	handler := filepath.Join(dir, "handler")
	writeExecutable(t, handler, "#!/bin/sh\necho handled\n")
	file := filepath.Join(dir, "registered")
	writeExecutable(t, file, "AKMAGIC9\x00\x01 payload\n")
	inNamespace := func(args ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-Urm", "sh", "-c",
			`mount -t binfmt_misc none /proc/sys/fs/binfmt_misc && echo ":agentknock-test:M::AKMAGIC9::` + handler + `:" > /proc/sys/fs/binfmt_misc/register || exit 97; exec "$@"`, "sh"}, args...)...)
	}
	if out, err := inNamespace(file).CombinedOutput(); err != nil || string(out) != "handled\n" {
		t.Skipf("binfmt_misc cannot be mounted in a user namespace here (Linux 6.7 or later): %v %q", err, out)
	}
	approval := newApprovalDir(t)
	cmd := inNamespace(testBinary, "-s", "x", "--", "./registered")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "exec format error") || !strings.Contains(string(out), "did not contact the device") {
		t.Fatalf("%v %q", cmd.ProcessState, out)
	}
}

// kernelMayRun on each platform: ELF (of any machine: see kernelMayRun),
// Mach-O thin or universal; text, an empty file, a header cut short and
// other magic are refused.
func TestKernelMayRunPredictsFormats(t *testing.T) {
	cases := []struct {
		goos, head string
		runs       bool
	}{
		{"linux", "\x7fELF\x02\x01\x01\x00", true},
		{"linux", "\x7fEL", false},
		{"linux", "echo hi\n", false},
		{"linux", "", false},
		{"linux", "MZ\x90\x00", false}, // a Windows program (Wine's binfmt_misc)
		{"linux", "AKMAGIC9\x00", false},
		{"linux", "\xcf\xfa\xed\xfe\x0c\x00\x00\x01", false},
		{"darwin", "\xcf\xfa\xed\xfe\x0c\x00\x00\x01", true},
		{"darwin", "\xca\xfe\xba\xbe\x00\x00\x00\x02", true},
		{"darwin", "echo hi\n", false},
		{"darwin", "\x7fELF\x02\x01\x01\x00", false},
	}
	for _, c := range cases {
		if got := kernelMayRun(c.goos, []byte(c.head)); got != c.runs {
			t.Errorf("%s %q: %v, want %v", c.goos, c.head, got, c.runs)
		}
	}
}

// The command gets the caller's descriptors (an extra one included) and
// none of agentknock's own.
func TestDescriptorsAreTheCallers(t *testing.T) {
	list := `for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -lt 10 ] && printf '%s ' "$n"; done`
	run := func(args ...string) string {
		extra, _ := os.Open(os.DevNull)
		defer extra.Close()
		approval := newApprovalDir(t)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
		cmd.ExtraFiles = []*os.File{extra}
		os.WriteFile(filepath.Join(string(approval), "response.json"), []byte(`{"secrets":{"x":{"V":"1"}}}`), 0o644)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out)
	}
	direct := run("sh", "-c", list)
	launched := run(testBinary, "--quiet", "-s", "x", "--", "sh", "-c", list)
	if direct != launched || !strings.Contains(direct, "3 ") {
		t.Fatalf("descriptors directly %q, through agentknock %q", direct, launched)
	}
}

// The two stream kinds a test's pipes do not show: a terminal and the null
// device.
func TestTerminalAndNullDeviceStreams(t *testing.T) {
	pty := openTestPTY(t)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	approval := newApprovalDir(t)
	cmd := exec.Command(testBinary, "-s", "x", "--", "true")
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, pty.slave, pty.slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	req := approval.waitRequest(t)
	approval.respond(t, testApprovalReply{Deny: "no"})
	cmd.Wait()
	if op := req.Operation; op.Stdin != "NULL_DEVICE" || op.Stdout != "TERMINAL" || op.Stderr != "TERMINAL" {
		t.Fatalf("streams %s %s %s", op.Stdin, op.Stdout, op.Stderr)
	}
}

// The pairing metadata of a Linux host comes from the files the reference
// client reads; parentPID reads /proc/PID/stat past a command name that
// holds spaces and parentheses.

func TestHostInfoFromEtc(t *testing.T) {
	etc := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := hostInfoFrom(etc); got != (hostInfo{}) {
		t.Fatalf("no files gave %+v", got)
	}
	write("hostname", "build-box\n")
	write("machine-id", "0123456789abcdef0123456789abcdef\n")
	write("os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nVERSION_ID=\"13\"\nPRETTY_NAME=\"second\"\n")
	want := hostInfo{Hostname: "build-box", MachineID: "0123456789abcdef0123456789abcdef", OSVersion: "Debian GNU/Linux 13 (trixie)"}
	if got := hostInfoFrom(etc); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	write("os-release", "ID=alpine\nPRETTY_NAME=Alpine\n")
	write("hostname", "  \n")
	if got := hostInfoFrom(etc); got.OSVersion != "Alpine" || got.Hostname != "" {
		t.Fatalf("unquoted PRETTY_NAME or blank hostname: %+v", got)
	}
}

func TestParentPIDPastAnAwkwardCommandName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	code, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "x) 1 2 (y")
	if err := os.WriteFile(odd, code, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ppid, err := parentPID(cmd.Process.Pid)
	if err != nil || ppid != os.Getpid() {
		t.Fatalf("parentPID(%d) = %d, %v; want %d", cmd.Process.Pid, ppid, err, os.Getpid())
	}
	if _, err := parentPID(1 << 30); err == nil {
		t.Fatal("parentPID of a process that does not exist succeeded")
	}
}

// escapeTitle is an OSC sequence that would set the terminal's title: ESC
// ] 0 ; TITLE BEL.
const escapeTitle = "\x1b]0;TITLE\x07"

// noRawControls fails when text holds ESC or BEL, and requires the escaped
// form of escapeTitle instead.
func noRawControls(t *testing.T, text string) {
	t.Helper()
	if strings.ContainsAny(text, "\x1b\x07") {
		t.Fatalf("raw control characters in %q", text)
	}
	if !strings.Contains(text, `\x1b]0;TITLE\x07`) {
		t.Fatalf("the escaped name is missing from %q", text)
	}
}

// Finding 5: the PATH printed when a command is not found is escaped.
func TestNotFoundMessageEscapesPATH(t *testing.T) {
	l := startLaunch(t, t.TempDir(), []string{"PATH=/nonexistent/" + escapeTitle + ":/also-not-there"}, "-s", "x", "--", "agentknock-no-such-command")
	if status := l.wait(t); status != 1 || !strings.Contains(l.stderr.String(), "wasn't found") {
		t.Fatalf("status %d stderr %q", status, l.stderr.String())
	}
	noRawControls(t, l.stderr.String())
}

// runAsNobody starts the launcher as nobody in dir with its test approval
// in dir/approval, which nobody may write.
func runAsNobody(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, approvalDir, *bytes.Buffer) {
	t.Helper()
	approval := filepath.Join(dir, "approval")
	os.Mkdir(approval, 0o777)
	os.Chmod(approval, 0o777)
	cmd := exec.Command(testBinary, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval), env...)
	cmd.SysProcAttr = nobody
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, approvalDir(approval), &stderr
}

// Finding 5: an open error after approval names the script's directory
// escaped. The script is swapped, while the request waits, for a copy that
// nobody may execute but not read, so the revalidating open is refused.
func TestOpenErrorAfterApprovalEscapesTheDirectory(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-escape-")
	sub := filepath.Join(dir, "d"+escapeTitle)
	writeExecutable(t, filepath.Join(sub, "tool"), "#!/bin/sh\necho ran\n")
	cmd, approval, stderr := runAsNobody(t, dir, nil, "-s", "x", "--", "./d"+escapeTitle+"/tool")
	approval.waitRequest(t)
	writeExecutable(t, filepath.Join(sub, "tool.new"), "#!/bin/sh\necho ran\n")
	os.Chmod(filepath.Join(sub, "tool.new"), 0o711)
	if err := os.Rename(filepath.Join(sub, "tool.new"), filepath.Join(sub, "tool")); err != nil {
		t.Fatal(err)
	}
	approval.approve(t, nil)
	cmd.Wait()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "again before running it") {
		t.Fatalf("%v: %q", cmd.ProcessState, stderr.String())
	}
	noRawControls(t, stderr.String())
}

// Finding 9: a command that may be in a PATH directory this user cannot
// search is refused as a shell refuses it ("Permission denied"), not as
// missing, and the directory is named.
func TestUnsearchablePATHDirectoryIsPermissionDenied(t *testing.T) {
	dir := unprivilegedDir(t, "agentknock-nosearch-")
	locked := filepath.Join(dir, "locked")
	writeExecutable(t, filepath.Join(locked, "tool"), "#!/bin/sh\necho ran\n")
	os.Chmod(locked, 0o700) // root's: nobody may not search it
	direct := exec.Command("sh", "-c", "tool")
	direct.Env = []string{"PATH=" + locked}
	direct.SysProcAttr = nobody
	out, _ := direct.CombinedOutput()
	if !strings.Contains(strings.ToLower(string(out)), "permission denied") {
		t.Fatalf("the shell itself says %q", out)
	}
	cmd, _, stderr := runAsNobody(t, dir, []string{"PATH=/nonexistent:" + locked}, "-s", "x", "--", "tool")
	cmd.Wait()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "permission denied (the PATH directory "+locked+" cannot be searched") || strings.Contains(stderr.String(), "wasn't found") {
		t.Fatalf("%v: %q", cmd.ProcessState, stderr.String())
	}
}

// Finding 4, with a real special file that reports itself regular: a
// script swapped, while the request waits, for a symbolic link to a
// tracefs trace_pipe (a regular file of size 0 whose read waits for trace
// events, for ever on an idle system). The launcher runs in a mount
// namespace of its own with tracefs mounted at /sys/kernel/tracing; the
// trace_pipe is that of a tracing instance made for the test (a
// trace_pipe has one reader at a time, so the global one may be busy).
// The revalidating read answers at once that the file would wait, instead
// of holding the run (with the approval spent) until something is traced.
func TestRevalidationDoesNotWaitOnTracePipe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount tracefs in a mount namespace")
	}
	needProgram(t, "unshare", "util-linux")
	instance := "/sys/kernel/tracing/instances/agentknock-test-" + strconv.Itoa(os.Getpid())
	withTracefs := func(script string, args ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c",
			`mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || exit 97; ` + script, "sh"}, args...)...)
	}
	if out, err := withTracefs(`mkdir "$1" && test -f "$1/trace_pipe"`, instance).CombinedOutput(); err != nil {
		t.Skipf("no tracefs instance can be made here: %v %s", err, out)
	}
	t.Cleanup(func() { withTracefs(`rmdir "$1"`, instance).Run() })
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool")
	writeExecutable(t, tool, "#!/bin/sh\necho ran\n")
	approval := newApprovalDir(t)
	cmd := withTracefs(`exec "$@"`, testBinary, "-s", "x", "--", "./tool")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	approval.waitRequest(t)
	if err := os.Symlink(instance+"/trace_pipe", tool+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tool+".new", tool); err != nil {
		t.Fatal(err)
	}
	approval.approve(t, nil)
	cmd.Wait()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "again before running it: it reports itself as a regular file, but reading it would wait") {
		t.Fatalf("%v (killed after a minute if it waited): %q", cmd.ProcessState, stderr.String())
	}
}

// Finding 4, the read itself: a descriptor whose read would wait (the
// empty end of a non-blocking pipe stands in for the pseudo-file) answers
// errReadWouldWait at once, and a file read past its time bound answers
// errReadTooSlow, each with nothing hashed.
func TestRawFileReadIsBounded(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	waiting := &rawFile{fd: p[0], deadline: time.Now().Add(time.Minute)}
	defer waiting.Close()
	if _, _, _, err := hashStream(waiting); !errors.Is(err, errReadWouldWait) {
		t.Fatalf("an empty non-blocking pipe: %v", err)
	}

	path := filepath.Join(t.TempDir(), "file")
	os.WriteFile(path, []byte("contents"), 0o644)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	late := &rawFile{fd: fd, deadline: time.Now().Add(-time.Second)}
	defer late.Close()
	if _, _, _, err := hashStream(late); !errors.Is(err, errReadTooSlow) {
		t.Fatalf("past the deadline: %v", err)
	}
	late.deadline = time.Now().Add(time.Minute)
	if _, _, size, err := hashStream(late); err != nil || size != int64(len("contents")) {
		t.Fatalf("within the deadline: %d bytes, %v", size, err)
	}
	if hashReadBound(0) != 10*time.Second || hashReadBound(1<<30) != 112*time.Second {
		t.Fatalf("hashReadBound: %v, %v", hashReadBound(0), hashReadBound(1<<30))
	}
}

// Finding 7: without /proc the selected file is named and read through its
// candidate name, and each proves identity with the retained O_PATH
// descriptor: a name that leads to another file by then (here a file
// renamed over the candidate after it was opened) is neither reported nor
// read. The same calls accept the name while it still leads there.
func TestWithoutProcNamesAndOpensOnlyTheRetainedFile(t *testing.T) {
	dir := t.TempDir()
	candidate := filepath.Join(dir, "tool")
	writeExecutable(t, candidate, "#!/bin/sh\necho selected\n")
	os.Symlink("tool", filepath.Join(dir, "link"))
	link := filepath.Join(dir, "link")
	fd, err := unix.Open(link, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var retained unix.Stat_t
	if err := unix.Fstat(fd, &retained); err != nil {
		t.Fatal(err)
	}
	if name, err := nameWithoutProc(link, &retained); err != nil || name != candidate {
		t.Fatalf("nameWithoutProc before the swap: %q, %v", name, err)
	}
	rfd, err := openByName(unix.AT_FDCWD, link, &retained)
	if err != nil {
		t.Fatalf("openByName before the swap: %v", err)
	}
	unix.Close(rfd)

	writeExecutable(t, candidate+".new", "#!/bin/sh\necho another\n")
	if err := os.Rename(candidate+".new", candidate); err != nil {
		t.Fatal(err)
	}
	if name, err := nameWithoutProc(link, &retained); err == nil || !strings.Contains(err.Error(), "its path now names another file") {
		t.Fatalf("nameWithoutProc after the swap: %q, %v", name, err)
	}
	if rfd, err := openByName(unix.AT_FDCWD, link, &retained); err == nil || !strings.Contains(err.Error(), "was replaced") {
		unix.Close(rfd)
		t.Fatalf("openByName after the swap: %v", err)
	}
}

// Finding 7, in a mount namespace whose /proc is an empty tmpfs: a binary
// replaced at its path while the request waits is not what runs; the
// retained descriptor's file is (read, hashed and executed through what
// was retained, with identity checked at each open by name).
func TestWithoutProcReplacedPathStillRunsTheSelectedBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	needProgram(t, "unshare", "util-linux")
	dir := t.TempDir()
	tool := filepath.Join(dir, "bin", "tool")
	os.MkdirAll(filepath.Dir(tool), 0o755)
	copyTestBinary(t, tool)
	approval := newApprovalDir(t)
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", `mount -t tmpfs none /proc && exec "$@"`, "sh", testBinary, "-s", "x", "--", "bin/tool")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+string(approval), "AGENTKNOCK_TEST_ROLE=print", "AGENTKNOCK_TEST_PRINT=original")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	req := approval.waitRequest(t)
	if req.Operation.ExecutablePath != tool || req.Operation.ExecutableHash == nil || len(req.LauncherChain) != 0 {
		t.Fatalf("without /proc: path %q, hash %x, chain %v", req.Operation.ExecutablePath, req.Operation.ExecutableHash, req.LauncherChain)
	}
	writeExecutable(t, tool+".new", "#!/bin/sh\necho replacement\n")
	if err := os.Rename(tool+".new", tool); err != nil {
		t.Fatal(err)
	}
	approval.approve(t, nil)
	if err := cmd.Wait(); err != nil || stdout.String() != "original\n" {
		t.Fatalf("%v stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
}

// The probe's reading of the child's arguments: the marker alone is a
// binary; a list that ends with the probed path and starts with something
// else is a script, run by what precedes the path; anything else decides
// nothing, and the run goes on as before.
func TestReadProbeArgs(t *testing.T) {
	const m = probeMarkerPrefix + "X"
	cases := []struct {
		cmdline string
		verdict probeVerdict
		interp  []string
	}{
		{m + "\x00", probeBinary, nil},
		{"/bin/sh\x00" + probeExecPath + "\x00", probeScript, []string{"/bin/sh"}},
		{"/usr/bin/env\x00-S sh -e\x00" + probeExecPath + "\x00", probeScript, []string{"/usr/bin/env", "-S sh -e"}},
		{"/bin/sh\x00/d/helper\x00" + probeExecPath + "\x00", probeScript, []string{"/bin/sh", "/d/helper"}}, // an interpreter that is a script
		{"", probeUndecided, nil},                                  // a zombie, or no arguments
		{m, probeUndecided, nil},                                   // not as /proc gives it
		{m + "\x00extra\x00", probeUndecided, nil},                 // more than the probe gave
		{"other\x00", probeUndecided, nil},                         // another process
		{"/bin/sh\x00/elsewhere\x00", probeUndecided, nil},         // not the probed path
		{m + "\x00" + probeExecPath + "\x00", probeUndecided, nil}, // the marker kept
		{"\x00" + probeExecPath + "\x00", probeUndecided, nil},     // an empty interpreter
		{probeExecPath + "\x00", probeUndecided, nil},              // the path alone
	}
	for _, c := range cases {
		verdict, interp := readProbeArgs([]byte(c.cmdline), m)
		if verdict != c.verdict || strings.Join(interp, "|") != strings.Join(c.interp, "|") {
			t.Errorf("%q: %d %q, want %d %q", c.cmdline, verdict, interp, c.verdict, c.interp)
		}
	}
}

// The probe itself, in this process (root may read the files, which
// changes nothing for the probe): a script is found a script, with its
// interpreter and the #! line's argument, a binary a binary, and neither
// leaves a child behind.
func TestProbeTellsScriptFromBinary(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	writeExecutable(t, script, "#!/bin/sh -e\necho ran\n")
	binary := filepath.Join(dir, "binary")
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(truePath)
	os.WriteFile(binary, data, 0o755)
	for _, c := range []struct {
		path    string
		verdict probeVerdict
		interp  string
	}{{script, probeScript, "/bin/sh|-e"}, {binary, probeBinary, ""}} {
		fd, err := unix.Open(c.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := probeExecuteOnly(fd)
		unix.Close(fd)
		if err != nil || r.verdict != c.verdict || strings.Join(r.interpreter, "|") != c.interp || r.setID {
			t.Fatalf("%s: %+v %v", c.path, r, err)
		}
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) && pid != 0 {
			t.Fatalf("%s: a child is left: %d %v", c.path, pid, err)
		}
	}
}

// What the probe costs, for a script and a binary (go test -bench
// ExecuteOnlyProbe): a fork, an exec to its stop, a read of /proc, a kill
// and a reap.
func BenchmarkExecuteOnlyProbe(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\necho ran\n"), 0o755)
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1)")
	}
	for _, path := range []string{script, truePath} {
		b.Run(filepath.Base(path), func(b *testing.B) {
			fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(fd)
			for b.Loop() {
				if r, err := probeExecuteOnly(fd); err != nil || r.verdict == probeUndecided {
					b.Fatalf("%+v %v", r, err)
				}
			}
		})
	}
}
