// Tests of the launch path in the environments agents run in
// (command-execution.md, "Approval context", "Signals and process state" and
// "Linux implementation"): standard descriptors the caller closed, and a
// mount namespace whose /proc is an empty tmpfs. The e2e package runs the
// same paths against the real device, in bubblewrap and as PID 1.

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
