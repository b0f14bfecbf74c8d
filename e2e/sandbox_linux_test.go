// Where agents run (command-execution.md, "Platform implementations" and
// "Linux implementation"): a mount namespace without /proc (bubblewrap, as
// the reference client's tests/without_procfs.py builds it,
// https://github.com/agentknock/agentknock-cli), PID 1 of a PID
// namespace, seccomp filters refusing each facility the run needs, and low
// open-file limits. Every refusal must stop before the device sees a
// request; everything else must work as it does on a plain host.
package e2e

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// needSandbox skips a test whose tool or privilege is missing, or fails it
// when AGENTKNOCK_TEST_REQUIRE_SANDBOX is set (.ci/run sets it: CI runs as
// root with the tools installed, so a skip there would hide a failure).
func needSandbox(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("AGENTKNOCK_TEST_REQUIRE_SANDBOX") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// withoutProcfs is a bubblewrap prefix for a mount namespace without /proc:
// every top-level directory except /proc, /tmp and /dev bound as it is, a
// fresh /dev and /tmp, and this test's directories.
func withoutProcfs(t *testing.T, w *world) []string {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		needSandbox(t, "bwrap is not installed (apt-get install bubblewrap)")
	}
	args := []string{bwrap, "--die-with-parent"}
	entries, err := os.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := "/" + e.Name()
		switch e.Name() {
		case "proc", "tmp", "dev":
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, "--symlink", target, p)
		} else {
			args = append(args, "--bind", p, p)
		}
	}
	args = append(args, "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", w.root, w.root, "--bind", filepath.Dir(agentknockBin), filepath.Dir(agentknockBin), "--")
	probe := exec.Command(args[0], append(args[1:], "sh", "-c", "test ! -e /proc && test ! -e /dev/fd/0")...)
	if out, err := probe.CombinedOutput(); err != nil {
		needSandbox(t, "bwrap cannot make a namespace without /proc here: "+err.Error()+" "+string(out))
	}
	return args
}

// requests counts the requests the device has received so far.
// requests counts the distinct requests the device has logged: each logs
// a line when accepted and another when answered, and the second may land
// after the client already has its answer, so lines are not a count.
func (w *world) requests() int {
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`device: request (\S+) `).FindAllStringSubmatch(w.log(), -1) {
		ids[m[1]] = true
	}
	return len(ids)
}

func TestRunWithoutProcfs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "noproc")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	key := deviceSSHKey(t, w, "login", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"demo":"approve","login":"approve"}}`, "")
	w.pair()
	sandbox := runOpts{wrap: withoutProcfs(t, w)}

	// A value in the environment; the command is what was approved, and
	// the request named it exactly as a host with /proc would.
	r := w.agentknockWith(sandbox, "-s", "demo", "--", "sh", "-c", `test ! -e /proc && `+envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run without /proc: %s", r)
	}
	sh, err := filepath.EvalSymlinks(mustLookPath(t, "sh"))
	if err != nil {
		t.Fatal(err)
	}
	w.waitLog(`executable +` + regexp.QuoteMeta(sh) + `$`)
	w.waitLog(`launched by +\(none reported\)`)

	// A value on standard input, through the invocation service.
	r = w.agentknockWith(sandbox, "-s", "demo", "--stdin", "demo", "DEMO_TOKEN", "--", "sh", "-c", `test ! -e /proc && `+envReport("DEMO_TOKEN")+`wc -c`)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || lines[0] != "DEMO_TOKEN=unset" || strings.TrimSpace(lines[1]) != strconv.Itoa(len(value)) {
		t.Fatalf("--stdin without /proc: %s", r)
	}

	// An SSH login with the device's key through the temporary agent.
	srv := startSSHServer(t, w, key)
	r = w.agentknockWith(sandbox, append([]string{"-s", "login", "--"}, srv.sshArgs("echo", "logged-in")...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "logged-in" {
		t.Fatalf("ssh without /proc: %s\nserve log:\n%s", r, clip(w.log()))
	}
	w.waitLog(`completion .*: SshAuthenticate APPROVED$`)

	// A commit signed through the Git helper, verified outside.
	repo := gitRepo(t, w, key)
	os.WriteFile(filepath.Join(repo, "sandboxed.txt"), []byte("no /proc here\n"), 0o644)
	w.git(t, "-C", repo, "add", "sandboxed.txt")
	r = w.agentknockWith(sandbox, "-s", "login", "--", "git", "-C", repo, "commit", "-q", "-S", "-m", "signed without /proc")
	if r.code != 0 {
		t.Fatalf("git commit -S without /proc: %s\nserve log:\n%s", r, clip(w.log()))
	}
	verify := exec.Command("git", "-C", repo, "verify-commit", "HEAD")
	verify.Env = w.baseEnv()
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), `Good "git" signature`) {
		t.Fatalf("verify-commit: %v\n%s", err, out)
	}
	w.waitLog(`completion .*: GitSign APPROVED$`)
	w.leakCheck(value)
}

// Without /proc on a kernel that cannot report parents (PIDFD_GET_INFO
// refused as before Linux 6.13), the service accepts peers of the command's
// session only: the login works, a client in a session of its own is
// refused, which a descendant check would have accepted.
func TestSessionPeerCheckWithoutParentRecords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := deviceSSHKey(t, w, "login", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"login":"approve"}}`, "")
	w.pair()
	if _, err := exec.LookPath("setsid"); err != nil {
		needSandbox(t, "setsid is not installed (util-linux)")
	}
	srv := startSSHServer(t, w, key)
	probe := `ssh-add -L >/dev/null && echo same-session; setsid -w ssh-add -L >/dev/null 2>&1 && echo own-session; exec "$@"`
	args := append([]string{"-s", "login", "--", "sh", "-c", probe, "sh"}, srv.sshArgs("echo", "logged-in")...)

	r := w.agentknockWith(runOpts{wrap: withoutProcfs(t, w)}, args...)
	if r.code != 0 || r.stdout != "same-session\nown-session\nlogged-in\n" {
		t.Fatalf("descendant check without /proc: %s", r)
	}
	old := runOpts{wrap: append([]string{os.Args[0]}, withoutProcfs(t, w)...), env: []string{seccompEnv + "=PIDFD_GET_INFO 25"}}
	r = w.agentknockWith(old, args...)
	if r.code != 0 || r.stdout != "same-session\nlogged-in\n" {
		t.Fatalf("session check without parent records: %s\nserve log:\n%s", r, clip(w.log()))
	}
}

// As PID 1 of a new PID namespace (a container's entrypoint), the service
// starts and serves, and the command is PID 1 itself.
func TestRunAsPID1(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		needSandbox(t, "unshare -pf needs root here")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		needSandbox(t, "unshare is not installed (util-linux)")
	}
	pid1 := runOpts{wrap: []string{unshare, "-pf", "--mount-proc"}}
	if out, err := exec.Command(unshare, "-pf", "--mount-proc", "sh", "-c", `test $$ = 1`).CombinedOutput(); err != nil {
		needSandbox(t, "unshare -pf does not work here: "+err.Error()+" "+string(out))
	}
	w := newWorld(t)
	value := secretValue(t, "pid1")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	key := deviceSSHKey(t, w, "login", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"demo":"approve","login":"approve"}}`, "")
	w.pair()

	r := w.agentknockWith(pid1, "-s", "demo", "--stdin", "demo", "DEMO_TOKEN", "--", "sh", "-c", `echo "pid $$"; wc -c`)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || lines[0] != "pid 1" || strings.TrimSpace(lines[1]) != strconv.Itoa(len(value)) {
		t.Fatalf("--stdin as PID 1: %s", r)
	}

	srv := startSSHServer(t, w, key)
	r = w.agentknockWith(pid1, append([]string{"-s", "login", "--", "sh", "-c", `echo "pid $$"; exec "$@"`, "sh"}, srv.sshArgs("echo", "logged-in")...)...)
	if r.code != 0 || r.stdout != "pid 1\nlogged-in\n" {
		t.Fatalf("ssh as PID 1: %s\nserve log:\n%s", r, clip(w.log()))
	}
	w.waitLog(`completion .*: SshAuthenticate APPROVED$`)
	w.leakCheck(value)
}

// A seccomp filter installed by this test binary (re-executed with
// AGENTKNOCK_E2E_SECCOMP="NAME ERRNO") refuses one system call, then runs
// the rest of its arguments; the filter stays through every exec.
const seccompEnv = "AGENTKNOCK_E2E_SECCOMP"

func init() {
	if spec := os.Getenv(seccompEnv); spec != "" {
		os.Unsetenv(seccompEnv)
		if err := refuseAndExec(spec, os.Args[1:]); err != nil {
			os.Stderr.WriteString("seccomp helper: " + err.Error() + "\n")
			os.Exit(99)
		}
	}
}

// seccompTargets are the facilities a run needs, as system call numbers;
// a nonzero value limits the refusal to calls whose argument arg is value.
var seccompTargets = map[string]struct {
	nr         uint32
	arg, value uint32
}{
	"execveat":    {uint32(unix.SYS_EXECVEAT), 0, 0},
	"pidfd_open":  {uint32(unix.SYS_PIDFD_OPEN), 0, 0},
	"faccessat2":  {uint32(unix.SYS_FACCESSAT2), 0, 0},
	"SO_PEERCRED": {uint32(unix.SYS_GETSOCKOPT), 2, unix.SO_PEERCRED},
	// A kernel before 6.13 answers ENOTTY.
	"PIDFD_GET_INFO": {uint32(unix.SYS_IOCTL), 1, unix.PIDFD_GET_INFO},
}

func refuseAndExec(spec string, argv []string) error {
	name, errnoText, _ := strings.Cut(spec, " ")
	target, ok := seccompTargets[name]
	if !ok {
		return syscall.EINVAL
	}
	errno, err := strconv.Atoi(errnoText)
	if err != nil {
		return err
	}
	arch := uint32(unix.AUDIT_ARCH_X86_64)
	if runtime.GOARCH == "arm64" {
		arch = unix.AUDIT_ARCH_AARCH64
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		nrAt = 0
		arAt = 4
	)
	argAt := 16 + 8*target.arg // seccomp_data.args[arg], low half on little-endian
	deny := unix.SECCOMP_RET_ERRNO | uint32(errno)
	prog := []unix.SockFilter{
		{Code: ld, K: arAt},
		{Code: jeq, Jt: 0, Jf: 4, K: arch},
		{Code: ld, K: nrAt},
		{Code: jeq, Jt: 0, Jf: 2, K: target.nr},
		{Code: ld, K: argAt},
		{Code: jeq, Jt: 1, Jf: 0, K: target.value},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: deny},
	}
	if target.value == 0 {
		// Any arguments: straight to the refusal.
		prog[4] = unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: 2}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	// The filter binds this thread; exec keeps only this thread.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// Each refused facility stops the run before the request, naming it; the
// same filter leaves a run that does not need the facility alone, so the
// filter is known to be in force and the refusal to be the only cause.
func TestRefusedFacilitiesStopBeforeTheRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "seccomp")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"demo":"approve"}}`, "")
	w.pair()
	script := filepath.Join(w.work, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"script ${#DEMO_TOKEN}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	envOnly := []string{"-s", "demo", "--no-ssh-agent", "--no-git-sign", "--"}
	stdin := []string{"-s", "demo", "--stdin", "demo", "DEMO_TOKEN", "--", "wc", "-c"}
	cases := []struct {
		facility, errno string
		refused         []string // stops before the request
		unaffected      []string // runs under the same filter
		want            string   // its output
	}{
		{"execveat", "38", append(envOnly, "true"), append(envOnly, script), "script " + strconv.Itoa(len(value))},
		{"execveat", "1", append(envOnly, "true"), append(envOnly, script), "script " + strconv.Itoa(len(value))},
		{"pidfd_open", "38", stdin, append(envOnly, script), "script " + strconv.Itoa(len(value))},
		{"pidfd_open", "1", stdin, append(envOnly, script), "script " + strconv.Itoa(len(value))},
		{"SO_PEERCRED", "1", stdin, append(envOnly, script), "script " + strconv.Itoa(len(value))},
		{"faccessat2", "38", append(envOnly, "true"), nil, ""},
	}
	for _, c := range cases {
		filtered := runOpts{wrap: []string{os.Args[0]}, env: []string{seccompEnv + "=" + c.facility + " " + c.errno}}
		before := w.requests()
		r := w.agentknockWith(filtered, c.refused...)
		if r.code != 1 || !strings.Contains(r.stderr, c.facility) || !strings.Contains(r.stderr, "did not contact the device") {
			t.Fatalf("%s refused with errno %s: %s", c.facility, c.errno, r)
		}
		// The message, the not-contacted line, "The command didn't run."
		// and the suggested action (diagnose.go).
		if strings.Count(strings.TrimSpace(r.stderr), "\n") != 3 || !strings.Contains(r.stderr, "\nAGENTKNOCK: The command didn't run.\nAGENTKNOCK: Suggested action: ") {
			t.Errorf("%s: want one message, the not-contacted line, the didn't-run line and a suggested action: %s", c.facility, r)
		}
		if n := w.requests(); n != before {
			t.Fatalf("%s refused: the device saw %d requests; serve log:\n%s", c.facility, n-before, clip(w.log()))
		}
		if c.unaffected == nil {
			continue
		}
		r = w.agentknockWith(filtered, c.unaffected...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != c.want {
			t.Fatalf("%s refused, a run that does not need it: %s", c.facility, r)
		}
	}
	w.leakCheck(value)
}

// Every open-file limit from 5 to 32 (soft and hard together, then the soft
// one alone from 3) either runs the command or stops before the request
// with one message; none prints a runtime stack trace or fails after the
// device answered.
func TestLowOpenFileLimits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "limits")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	key := deviceSSHKey(t, w, "login", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"demo":"approve","login":"approve"}}`, "")
	w.pair()
	type path struct {
		name string
		args []string
		want string
	}
	paths := []path{
		{"environment only", []string{"-s", "demo", "--no-ssh-agent", "--no-git-sign", "--", "sh", "-c", `echo "${#DEMO_TOKEN}"`}, strconv.Itoa(len(value))},
		{"environment", []string{"-s", "demo", "--", "sh", "-c", `echo "${#DEMO_TOKEN}"`}, strconv.Itoa(len(value))},
		{"stdin", []string{"-s", "demo", "--stdin", "demo", "DEMO_TOKEN", "--", "wc", "-c"}, strconv.Itoa(len(value))},
	}
	if os.Geteuid() == 0 {
		srv := startSSHServer(t, w, key)
		paths = append(paths, path{"ssh", append([]string{"-s", "login", "--"}, srv.sshArgs("echo", "logged-in")...), "logged-in"})
	}
	ran := map[string][]int{}
	for n := 5; n <= 32; n++ {
		limited := runOpts{wrap: []string{"sh", "-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(n)}}
		for _, p := range paths {
			before := w.requests()
			r := w.agentknockWith(limited, p.args...)
			for _, trace := range []string{"goroutine ", "fatal error", "panic:", "runtime:"} {
				if strings.Contains(r.stderr, trace) {
					t.Fatalf("limit %d, %s: a runtime failure: %s", n, p.name, r)
				}
			}
			if r.code == 0 {
				if strings.TrimSpace(r.stdout) != p.want {
					t.Fatalf("limit %d, %s: %s", n, p.name, r)
				}
				ran[p.name] = append(ran[p.name], n)
				continue
			}
			if r.code != 1 || !strings.Contains(r.stderr, "did not contact the device") || w.requests() != before {
				t.Fatalf("limit %d, %s: neither ran nor stopped before the request: %s\nserve log:\n%s", n, p.name, r, clip(w.log()))
			}
		}
		// The other subcommands that talk to the relay: a result or one
		// message, never a runtime failure.
		for _, args := range [][]string{{"pairing", "status"}, {"secret", "list"}} {
			r := w.agentknockWith(limited, args...)
			if (r.code != 0 && r.code != 1) || strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "runtime:") || strings.Contains(r.stderr, "fatal error") {
				t.Fatalf("limit %d, %s: %s", n, strings.Join(args, " "), r)
			}
			if r.code == 0 {
				ran[strings.Join(args, " ")] = append(ran[strings.Join(args, " ")], n)
			}
		}
	}
	// The soft limit alone (ulimit -S -n) under a high hard limit: the
	// launcher runs with the hard limit until the exec, and the command
	// gets the caller's soft limit back, so every path runs; in no case is
	// an approval spent on a run that then fails.
	for n := 3; n <= 32; n++ {
		limited := runOpts{wrap: []string{"sh", "-c", `ulimit -S -n "$0" && exec "$@"`, strconv.Itoa(n)}}
		for _, p := range paths {
			before := w.requests()
			r := w.agentknockWith(limited, p.args...)
			if r.code == 0 && strings.TrimSpace(r.stdout) == p.want {
				continue
			}
			if r.code != 0 && !strings.Contains(r.stderr, "AGENTKNOCK") {
				// The command started and failed on its own, as it does
				// when run directly under that limit (ssh cannot read
				// the user database with one free descriptor).
				t.Logf("soft limit %d, %s: the command ran and failed by itself: exit %d, %s", n, p.name, r.code, strings.TrimSpace(r.stderr))
				continue
			}
			if r.code != 1 || !strings.Contains(r.stderr, "did not contact the device") || w.requests() != before {
				t.Fatalf("soft limit %d, %s: neither ran nor stopped before the request: %s\nserve log:\n%s", n, p.name, r, clip(w.log()))
			}
			t.Logf("soft limit %d, %s: stopped before the request", n, p.name)
		}
	}
	for _, name := range []string{"pairing status", "secret list"} {
		if got := ran[name]; len(got) == 0 || got[len(got)-1] != 32 {
			t.Fatalf("%s never worked, or not at 32: %v", name, got)
		}
	}
	for _, p := range paths {
		got := ran[p.name]
		if len(got) == 0 || got[len(got)-1] != 32 {
			t.Fatalf("%s never ran, or not at 32: %v", p.name, got)
		}
		t.Logf("%s: runs from limit %d", p.name, got[0])
	}
	w.leakCheck(value)
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
